//! Example adapters for lostreply: deliberately naive ones (one per
//! lost-response case), each caught by its case's scenario. The correct
//! reference adapter lives in the harness (`harness::reference`); a Python
//! adapter speaking the process protocol lives in `examples/python`.
#![deny(missing_docs)]

pub mod naive;

pub use naive::{naive_adapter, naive_adapters};

//! Example adapters for lostreply: deliberately naive ones (one per
//! lost-response case), each caught by its case's scenario, and a family of
//! designs (correct ones and flawed variants) sharing one kit. The correct
//! reference adapter is its own crate (`lostreply_reference`); a Python
//! adapter speaking the process protocol lives in `examples/python`.
//! [`prove`] runs a user's scenario files against these adapters
//! (`lostreply validate --prove`).
#![deny(missing_docs)]

pub mod designs;
pub mod naive;
pub mod naive_mcp;
pub mod prove;

pub use designs::{correct_designs, design, flawed_designs};
pub use naive::{naive_adapter, naive_adapters};

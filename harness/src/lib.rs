//! Runs adapters through lost-response scenarios against the simulator and
//! checks what they claimed against the provider's ledger.
#![deny(missing_docs)]

pub mod adapter;
pub mod builtin;
pub mod check;
pub mod cli;
pub mod driver;
pub mod exit;
pub mod protocol;
pub mod reference;
pub mod report_build;
pub mod run;
pub mod scenario;
pub mod serve_call;
pub mod testing;

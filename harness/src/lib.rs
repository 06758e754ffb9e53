//! The engine: runs adapters through lost-response scenarios against the
//! simulator and checks what they claimed against the provider's ledger. It
//! holds no adapter of its own and no command line: the `lostreply` crate is
//! the facade users add and the binary; the reference adapter is a user of
//! this crate like any other.
#![deny(missing_docs)]

pub mod adapter;
pub mod builtin;
pub mod check;
pub mod driver;
pub mod exit;
pub mod protocol;
pub mod report_build;
pub mod run;
pub mod scenario;
pub mod serve_call;
pub mod testing;

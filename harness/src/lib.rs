//! Runs adapters through lost-response scenarios against the simulator and
//! checks what they claimed against the provider's ledger.
#![deny(missing_docs)]

pub mod adapter;
pub mod protocol;
pub mod reference;
pub mod scenario;
pub mod serve_call;

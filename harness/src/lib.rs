//! The engine: runs adapters through lost-response scenarios against the
//! simulator and checks what they claimed against the provider's ledger. It
//! holds no adapter of its own and no command line: the `lostreply` crate is
//! the facade users add and the binary; the reference adapter is a user of
//! this crate like any other.
//!
//! Data flows one way: a [`scenario`] is observed by [`run`] (which drives the
//! adapter through [`driver`]) into an [`run::observation::Observation`];
//! [`check`] reads that observation, [`report_build`] reads it and the checks'
//! results, and [`suite`], above all three, puts them together.
#![deny(missing_docs)]

pub mod adapter;
pub mod builtin;
mod by_key;
pub mod check;
pub mod dispatch;
pub mod driver;
pub mod exit;
pub mod phase;
mod position;
pub mod profile_file;
pub mod protocol;
pub mod report_build;
pub mod run;
pub mod scenario;
pub mod seed;
mod seq_positions;
pub mod serve_call;
pub mod signals;
mod split_body;
pub mod suite;
#[cfg(feature = "testing")]
pub mod testing;
pub mod two_threads;

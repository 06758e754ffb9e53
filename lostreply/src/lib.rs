//! lostreply: when the response is lost, does your code still do each thing
//! at most once, and does it tell the truth about what happened?
//!
//! This is the crate an adapter author adds. It gathers what the inner crates
//! offer under one name:
//!
//! - [`Adapter`], [`AdapterFactory`], [`AdapterFailure`] and the protocol's
//!   types in [`protocol`]: the in-process form of the adapter protocol.
//! - [`testing::main`]: one `cargo test` per built-in scenario, through
//!   libtest-mimic (`--list`, `--exact`, `--ignored`, filters).
//! - [`simulator`]: the fake provider, for hand-written tests.
//! - [`report`]: the report model and its writers.
//! - [`engine`]: the harness itself (scenarios, runs, checks), for tools built
//!   on top of lostreply.
//! - [`bundled`]: the adapters the `lostreply` binary ships (the reference,
//!   and the example designs and naive adapters `validate --prove` runs).
//!
//! ```no_run
//! // tests/lostreply.rs, with `harness = false` in Cargo.toml:
//! # struct MyAdapterFactory;
//! # impl lostreply::AdapterFactory for MyAdapterFactory {
//! #     fn name(&self) -> String { "mine".into() }
//! #     fn build(&self, _: &std::path::Path)
//! #         -> Result<Box<dyn lostreply::Adapter>, lostreply::AdapterFailure> { todo!() }
//! # }
//! fn main() -> std::process::ExitCode {
//!     lostreply::testing::main(std::sync::Arc::new(MyAdapterFactory))
//! }
//! ```
#![deny(missing_docs)]

pub mod allocator;
pub mod bundled;
pub mod cli;

pub use lostreply_harness::adapter::{Adapter, AdapterFactory, AdapterFailure};

/// The attribute the [`Adapter`] trait's implementations need (`#[lostreply::async_trait]`),
/// so an adapter crate does not have to add `async-trait` itself.
pub use async_trait::async_trait;
pub use lostreply_harness::{protocol, testing};

/// The simulated provider: start one on 127.0.0.1:0 with a [`simulator::Plan`].
pub use lostreply_simulator as simulator;

/// The report model ([`report::model::Report`]) and its writers.
pub use lostreply_reports as report;

/// The engine: scenario parsing, runs, checks, report building.
pub use lostreply_harness as engine;

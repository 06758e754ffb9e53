//! Benchmarks for lostreply: the simulator measured against a bare hyper server
//! (the practical limit) and wiremock (what a Rust user would pick instead), and
//! the harness's checking and reporting measured as observations grow.
//!
//! The benchmark reports; it never asserts a timing. `docs/benchmarks.md` says
//! how to run it and what each figure means.
//!
//! Map of the crate:
//! - [`servers`]: the servers under load (simulator, bare hyper, wiremock),
//!   each on 127.0.0.1:0 in this process, answering or losing the response;
//!   the simulator on the generic wire or on Stripe's.
//! - [`client`] and [`load`]: a closed-loop hyper HTTP/1.1 client: keep-alive
//!   create-then-retrieve rounds, or one connection per create that the server
//!   closes or resets after committing; exact percentiles in [`stats`].
//! - [`synthetic`]: observations of any size; [`cost`] times checking and
//!   reporting over them, one child process per size (peak memory, a budget).
//! - [`cases`]: wall time of the lost-response scenarios with the reference
//!   adapter in process and the Python adapter as processes.
//! - [`serve_mem`]: resident memory of the `lostreply serve` binary.
//! - [`explore`]: `lostreply explore`'s search timed on each wire: the
//!   generic one and MCP in process, a provider profile's against an adapter
//!   on its SDK.
//! - [`soak`]: `lostreply serve` under a long load of mixed faults, its
//!   journal and ledger compared at the end, its memory sampled throughout.
//! - [`procfs`]: memory and machine facts from `/proc`.
//! - [`figures`]: JSON lines and tables; [`suite`]: the run; [`targets`]:
//!   where every target stands after it.
#![deny(missing_docs)]

pub mod cases;
pub mod client;
pub mod cost;
pub mod explore;
pub mod figures;
pub mod load;
pub mod procfs;
pub mod serve_mem;
pub mod servers;
pub mod soak;
pub mod stats;
pub mod suite;
pub mod synthetic;
pub mod targets;

/// Why a benchmark part could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O operation failed (the text says which).
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// An HTTP client operation failed.
    #[error("{0}: {1}")]
    Http(String, #[source] hyper::Error),
    /// The simulator would not start.
    #[error("cannot start the simulator: {0}")]
    Start(String),
    /// A scenario would not load.
    #[error("{0}")]
    Scenario(String),
    /// Something this part needs is missing or cannot be done.
    #[error("{0}")]
    Unsupported(String),
}

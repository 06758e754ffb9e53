//! The command line's integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-cli -- shard::` runs one). The fixtures
//! stay in tests/openmetrics/.
#![allow(clippy::unwrap_used)]

mod certify_cli;
mod end_to_end;
mod explore_cli;
mod library_correct_adapters;
mod openmetrics;
mod profile_cli;
mod prove_cli;
mod proxy_cli;
mod serve_objects;
mod shard;
mod signals_cli;
mod upstream_cli;
// The loopback TLS server certify's own HTTPS tests use (one server for both
// crates); this crate's tests need only part of it.
#[allow(dead_code)]
#[path = "../../../certify/tests/it/tls_server.rs"]
mod tls_server;

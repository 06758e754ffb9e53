//! The command line's integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-cli -- shard::` runs one). The fixtures
//! stay in tests/openmetrics/.
#![allow(clippy::unwrap_used)]

mod certify_cli;
mod end_to_end;
mod library_correct_adapters;
mod openmetrics;
mod profile_cli;
mod prove_cli;
mod shard;
mod signals_cli;

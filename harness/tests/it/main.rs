//! The harness's integration tests, in one binary: each module is one subject
//! (`cargo test -p lostreply-harness -- scenario_parse::` runs one). Shared:
//! `support` (adapter processes), `located` (diagnostics read back by line and
//! column), `json_schema` (a small JSON Schema checker). The fixtures stay in
//! tests/scenario/.
#![allow(clippy::unwrap_used)]

mod json_schema;
mod located;
mod support;

mod derived_bodies;
mod persistent_adapters;
mod process_adapters;
mod profile_file;
mod profile_file_errors;
mod profile_file_wire;
mod profile_runs;
mod scenario_errors;
mod scenario_mcp;
mod scenario_parse;
mod scenario_profiles;
mod scenario_schema;
mod scenario_select;
mod scenario_situations;

//! The example adapters' integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-examples -- naive_flaws::` runs one), and
//! `common` holds what they share. The modules run one at a time
//! (`common::module_alone`), as the binaries they would otherwise be.
//! `reference_scenarios` stays a binary of its own: it is the libtest-mimic
//! harness an adapter author copies (one `cargo test` per scenario).
#![allow(clippy::unwrap_used)]

mod common;

mod mcp_client_adapters;
mod mcp_client_facts;
mod mcp_client_library;
mod mcp_verdicts;
mod naive_flaws;
mod persistent_form;
mod python_adapter;
mod sdk_facts;
mod sdk_verdicts;
mod verdict_matrix;

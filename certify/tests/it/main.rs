//! The certify crate's integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-certify -- snapshots::` runs one), and
//! `common` holds the hand-built certifications the writer tests share.
#![allow(clippy::unwrap_used)]

mod common;

mod contract_file;
mod fake_middleware;
mod hostile_text;
mod html_browser;
mod https;
mod mcp_simulator;
mod mcp_variants;
mod probes_exact;
mod proxy_client_left;
mod proxy_https;
mod proxy_simulator;
mod proxy_thirdparty;
mod simulator_modes;
mod snapshots;
mod stripe_wire;
mod thirdparty;
mod thirdparty_express;
mod thirdparty_fastapi;
mod thirdparty_fastapi_key;
mod thirdparty_nest;
mod thirdparty_python;
mod tls_server;
mod upstream_run;

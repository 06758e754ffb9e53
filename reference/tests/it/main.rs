//! The reference adapter's integration tests, in one binary: each module is
//! one subject (`cargo test -p lostreply-reference -- mcp_reference::` runs
//! one).
#![allow(clippy::unwrap_used)]

mod identical_arguments;
mod mcp_reference;
mod recorded_requests;
mod reference_adapter;
mod scenario_capabilities;

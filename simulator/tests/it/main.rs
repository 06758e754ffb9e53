//! The simulator's integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-simulator -- faults::` runs one), and
//! `common` holds what they share.
#![allow(clippy::unwrap_used)]

mod common;

mod answered_after_client_left;
mod bounded_store;
mod control_and_webhooks;
mod events_paging;
mod faults;
mod generic_api;
mod idempotency;
mod mcp_bounded;
mod mcp_cancel_race;
mod mcp_fault;
mod mcp_retrieval;
mod mcp_sessions;
mod mcp_tasks;
mod mcp_wire;
mod profiles;
mod slow_clients;
mod steps;

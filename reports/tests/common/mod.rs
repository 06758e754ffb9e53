//! Shared by the integration tests: realistic report fixtures.
#![allow(dead_code, clippy::unwrap_used)]

pub mod fixtures;

//! Shared by the integration tests: realistic report fixtures, and headless
//! Chromium for the HTML tests.
#![allow(dead_code, clippy::unwrap_used)]

pub mod browser;
pub mod fixtures;

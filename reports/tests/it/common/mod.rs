//! Shared by the integration tests: realistic report fixtures, and headless
//! Chromium for the HTML tests.

pub mod browser;
pub mod fixtures;

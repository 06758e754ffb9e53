//! The reports crate's integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-reports -- snapshots::` runs one), and
//! `common` holds the fixtures and the headless browser they share.
#![allow(clippy::unwrap_used)]

mod common;

mod hostile_text;
mod html_browser;
mod html_layout;
mod invariants_doc;
mod json_roundtrip;
mod junit_xml;
mod snapshots;

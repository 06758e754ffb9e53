//! Pure writers from a [`model::Report`] to a `Write`: terminal summary, JSON,
//! JUnit XML, Markdown and a self-contained HTML page. No clock, no file system.
#![deny(missing_docs)]

pub mod model;

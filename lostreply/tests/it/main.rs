//! The facade's integration tests, in one binary: each module is one subject
//! (`cargo test -p lostreply -- architecture::` runs one).
#![allow(clippy::unwrap_used)]

mod architecture;
mod readme_snippet;

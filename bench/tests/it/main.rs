//! The benchmark crate's integration tests, in one binary: each module is one
//! subject (`cargo test -p lostreply-bench -- smoke::` runs one).
#![allow(clippy::unwrap_used)]

mod flags;
mod smoke;
mod soak;

//! The adapter protocol v1 (docs/adapter-protocol.md): the wire types of the
//! process protocol and the arguments of the in-process
//! [`crate::adapter::Adapter`] trait, from `lostreply-protocol`, at the path
//! the harness's callers know them by.

pub use lostreply_protocol::*;

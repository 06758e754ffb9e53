//! `lostreply explore`: fault schedules nobody wrote, generated from a
//! grammar over what the simulator and the harness can do, run against an
//! adapter, judged by the seven invariants alone, and each violation shrunk
//! to a minimal scenario file that reproduces it.
//!
//! Map: [`situation`] (a generated situation and its scenario file),
//! [`grammar`] (the proptest strategies that make and shrink situations,
//! fair by construction), [`search`] (the runs, the judging and the
//! shrinking), [`write`](mod@write) (the findings' files and pages, the summary).
#![deny(missing_docs)]

pub mod grammar;
pub mod mcp;
pub mod mcp_grammar;
pub mod search;
pub mod shape;
pub mod situation;
pub mod space;
pub mod tag;
pub mod write;

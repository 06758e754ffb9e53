//! How a held request ends, for a `/v1` fault and an MCP fault alike: the
//! vocabulary both faces' plans share, apart from either, so that the MCP
//! plan (`super::mcp`) builds on it without reaching back into the plan.

/// When a stall ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// When the client leaves (or `Limits::stall_cap` passes).
    ClientGone,
    /// When harness step N has ended ([`crate::Simulator::end_step`]), whether or
    /// not the client is still there; at most `Limits::hold_cap`. Holds an
    /// idempotency key "in flight" across the adapter's own retries and across
    /// steps, so a retry meets its original still running on every run.
    StepEnd(u32),
}

/// What a `before_commit` stall does once the client has left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallThen {
    /// The provider abandons the work: no effect.
    Abandon,
    /// The provider kept working: the effect commits after the client left.
    Commit,
}

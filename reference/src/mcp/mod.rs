//! The reference adapter's MCP side: paid tool calls (`action: call_tool`)
//! handled as docs/mcp.md says a careful agent host handles them.
//!
//! - [`wire`]: an MCP client (Streamable HTTP) that applies the contract's
//!   client windows and reports how an answer was lost.
//! - [`classify`]: what an answer means (pure): the four shapes.
//! - `calls`: execute and reconcile of a tool-call operation.

pub(crate) mod calls;
pub mod classify;
pub mod wire;

/// The operation action of a paid MCP tool call.
pub const CALL_TOOL: &str = "call_tool";

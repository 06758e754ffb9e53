//! The MCP face of the provider: a fake MCP server (Streamable HTTP) whose paid
//! tools commit into the same ledger as `/v1`, and whose answers get lost in
//! the four ways agent tool calls lose them (see docs/mcp.md).

pub mod plan;

pub use plan::*;

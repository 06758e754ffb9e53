//! The MCP face of the provider: a fake MCP server (Streamable HTTP, revisions
//! 2025-06-18 and 2025-11-25) at `/mcp` on the simulator's own listener, whose
//! paid tools commit into the same ledger and journal as `/v1`, and whose
//! answers get lost in the four ways agent tool calls lose them (see docs/mcp.md).
//!
//! Map, in a request's order:
//! - [`plan`]: the typed input (tools, retrieval, answer style, tasks, defects, faults).
//! - `endpoint`: the `/mcp` handler: journal, credential, body, JSON-RPC,
//!   session and protocol version, the method.
//! - `jsonrpc`: messages in, results and errors out.
//! - `wire`: JSON or SSE, SSE event text, HTTP-level refusals.
//! - `tools`: what `tools/list` says, result and payload shapes, defects.
//! - `call`: one `tools/call`: intake (arguments, key), the rule, the commit,
//!   the fault relative to the commit, cancels reaching a held call.
//! - `sse`: the body of a streamed answer and its writer.
//! - `retrieval`: `get_operation` and `list_recent_operations`.
//! - `tasks`: background tasks on the simulator clock.
//! - `faults`: rule selection and counting.
//! - what the face remembers lives in the core's state
//!   (`crate::shared::mcp_state`), inside the simulator's one state lock.
//!
//! The plan ([`plan`], re-exported from `crate::plan::mcp`) and its checks
//! at start (`crate::validate`) belong to the core, which never imports this
//! module: the face builds on the core, not the other way round.

mod call;
pub(crate) mod endpoint;
mod faults;
mod jsonrpc;
mod retrieval;
mod sse;
pub(crate) mod tasks;
mod tools;
mod wire;

pub use crate::plan::mcp as plan;
pub use plan::*;

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
//! - `state`: what the face remembers, inside the simulator's state lock.
//! - `validate`: plan checks at start.

mod call;
pub(crate) mod endpoint;
mod faults;
mod jsonrpc;
pub mod plan;
mod retrieval;
mod sse;
pub(crate) mod state;
pub(crate) mod tasks;
mod tools;
pub(crate) mod validate;
mod wire;

pub use plan::*;

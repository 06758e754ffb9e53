//! The bundled reference adapter: one correct adapter, in process and as a
//! process (`lostreply adapter reference <call>`). It is a user of the engine
//! (`lostreply-harness`), like any adapter under test, and one correct design
//! among several (examples/src/designs has others).
//!
//! It implements the reference algorithm shared with the Python adapter
//! (docs/writing-an-adapter.md), so both behave the same on every scenario:
//! the intent is durable before the first request, every create attempt carries
//! the same key and the same body, only evidence makes an outcome terminal, a
//! lost answer is `unknown` until a replay or a lookup says more, and a person
//! is asked when nothing can tell.
//!
//! Map:
//! - [`store`]: durable records (atomic replace) and per-operation locks.
//! - [`client`]: bounded HTTP requests to the provider; reports how an answer was lost.
//! - [`classify`]: what an answer or a lookup means (pure).
//! - [`calls`]: a create operation's calls, and those every operation
//!   answers alike (webhook, resolve, status), tying the above together; a webhook delivery
//!   is verified by `lostreply_simulator::standard_webhooks`, the one
//!   implementation of the scheme the simulator signs with.
//! - [`mcp`]: paid MCP tool calls (`call_tool` operations): client, meaning, calls.
//! - `adapter`: the protocol's five calls, routing each operation to
//!   [`calls`] or to the MCP side: the MCP side builds on `calls`, never
//!   the other way round.
#![deny(missing_docs)]

use std::path::Path;

use lostreply_harness::adapter::{Adapter, AdapterFactory, AdapterFailure};

mod adapter;
pub mod calls;
pub mod classify;
pub mod client;
pub mod mcp;
pub mod store;

pub use calls::ReferenceAdapter;

/// Builds reference adapters: `reference` on the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReferenceFactory;

impl AdapterFactory for ReferenceFactory {
    fn name(&self) -> String {
        "reference".to_owned()
    }

    fn build(&self, state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
        let store = store::Store::open(state_dir).map_err(AdapterFailure::new)?;
        Ok(Box::new(ReferenceAdapter::new(store)))
    }
}

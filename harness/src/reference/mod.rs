//! The bundled reference adapter: a correct adapter, in process and as a process.
//!
//! It implements the reference algorithm shared with the Python reference
//! adapter (docs: the adapter guide), so both behave the same on every scenario:
//! the intent is durable before the first request, every create attempt carries
//! the same key and the same body, only evidence makes an outcome terminal, a
//! lost answer is `unknown` until a replay or a lookup says more, and a person
//! is asked when nothing can tell.
//!
//! Map:
//! - [`store`]: durable records (atomic replace) and per-operation locks.
//! - [`client`]: bounded HTTP requests to the provider; reports how an answer was lost.
//! - [`classify`]: what an answer or a lookup means (pure).
//! - [`webhook`]: Standard Webhooks signature verification (pure).
//! - [`calls`]: the five calls, tying the above together.

use std::path::Path;

use crate::adapter::{Adapter, AdapterFactory, AdapterFailure};

pub mod calls;
pub mod classify;
pub mod client;
pub mod store;
pub mod webhook;

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

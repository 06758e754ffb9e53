//! The fake provider: a ledger of effects behind an HTTP API whose responses
//! get lost exactly where a [`Plan`] says.
//!
//! Map of the crate:
//! - [`plan`]: the typed input (tenants, idempotency mode, lookups, faults, limits).
//! - [`record`]: what it remembers (ledger, journal, events).
//!
//! The harness owns the clock: it moves only through [`Simulator::advance`] or the
//! control API, never with tokio's paused time (real sockets, real client timeouts).
#![deny(missing_docs)]

pub mod plan;
pub mod record;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

pub use plan::*;
pub use record::*;

/// Called after an effect commits and before its response leaves; the response
/// waits for the returned future. The harness uses it to kill an adapter "right
/// after the remote commit".
pub type CommitHook = Arc<dyn Fn(Effect) -> BoxFuture<'static, ()> + Send + Sync>;

/// Where and how the simulator listens.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Listen address. Loopback and port 0 (any free port) by default.
    pub bind: SocketAddr,
    /// Required when `bind` is not loopback: the control API then wants
    /// `Authorization: Bearer <token>`.
    pub control_token: Option<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { bind: SocketAddr::from(([127, 0, 0, 1], 0)), control_token: None }
    }
}

/// Why a simulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The plan is inconsistent (e.g. a bad webhook secret, an empty tenant list).
    #[error("invalid plan: {0}")]
    InvalidPlan(String),
    /// A non-loopback address without a control token.
    #[error("refusing to bind {0} without a control token: the control API would be open")]
    ControlUnguarded(SocketAddr),
    /// The socket could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A running simulator. Dropping it without [`Simulator::shutdown`] aborts its tasks.
pub struct Simulator {
    _private: (),
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator").finish_non_exhaustive()
    }
}

impl Simulator {
    /// Binds, seeds the objects and starts serving.
    pub async fn start(plan: Plan, options: ServeOptions) -> Result<Simulator, StartError> {
        let _ = (plan, options);
        unimplemented!("simulator under construction")
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        unimplemented!()
    }

    /// `http://127.0.0.1:PORT`: what adapters call.
    pub fn base_url(&self) -> String {
        unimplemented!()
    }

    /// `http://127.0.0.1:PORT/_lostreply`: the control API.
    pub fn control_url(&self) -> String {
        unimplemented!()
    }

    /// The simulator clock, ms since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        unimplemented!()
    }

    /// Moves the clock forward; settles asynchronous objects whose time has come
    /// (producing their events) and forgets expired idempotency keys.
    pub fn advance(&self, by: Duration) {
        let _ = by;
        unimplemented!()
    }

    /// Every effect, in commit order.
    pub fn ledger(&self) -> Vec<Effect> {
        unimplemented!()
    }

    /// Every request, in arrival order.
    pub fn journal(&self) -> Vec<JournalEntry> {
        unimplemented!()
    }

    /// Every event produced so far, in order.
    pub fn events(&self) -> Vec<Event> {
        unimplemented!()
    }

    /// Signs a delivery of `event` at the current clock; `None` without webhooks.
    pub fn sign(&self, event: &Event) -> Option<Delivery> {
        let _ = event;
        unimplemented!()
    }

    /// Installs (or removes) the hook run between commit and response.
    pub fn set_commit_hook(&self, hook: Option<CommitHook>) {
        let _ = hook;
        unimplemented!()
    }

    /// Stops accepting, closes connections, waits for the tasks to end.
    pub async fn shutdown(self) {
        let _ = Duration::ZERO;
    }
}

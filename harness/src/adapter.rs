//! The in-process form of the adapter protocol: a Rust trait with the five calls.
//!
//! The harness builds one instance per scenario run through an [`AdapterFactory`],
//! over that run's state directory. A `crash` step aborts the task of the call in
//! flight and builds a fresh instance over the same directory, so whatever the
//! adapter kept only in memory is gone, as it would be after a SIGKILL.

use std::path::Path;

use crate::protocol::{
    ExecuteRequest, OperationRequest, OutcomeReply, ResolveRequest, WebhookReply, WebhookRequest,
};

/// An adapter's own failure: the harness reports it as an adapter error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AdapterFailure(pub String);

impl AdapterFailure {
    /// Wraps any displayable error.
    pub fn new(message: impl std::fmt::Display) -> Self {
        AdapterFailure(message.to_string())
    }
}

/// The code under test, in process. Each method is one call of the protocol.
#[async_trait::async_trait]
pub trait Adapter: Send + Sync {
    /// Perform the operation.
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure>;
    /// Find out what happened to a known operation and finish it if that is safe.
    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure>;
    /// Handle a delivered provider event.
    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure>;
    /// Apply an operator's decision.
    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure>;
    /// Report the stored record. Must not call the provider.
    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure>;
}

/// Builds adapter instances over a state directory.
pub trait AdapterFactory: Send + Sync {
    /// A short display name (`reference`).
    fn name(&self) -> String;
    /// A fresh instance whose durable store lives in `state_dir`.
    fn build(&self, state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure>;
}

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

/// The code under test, in process. Each method is one call of the adapter
/// protocol (docs/adapter-protocol.md is the same contract over JSON).
///
/// What every reply must be: the truth as the adapter knows it. An outcome
/// is `succeeded` or `failed` only when the adapter holds evidence of it
/// (the provider's answer, a replay, a lookup, a verified event, or a
/// person's decision); otherwise `pending` (the provider said the work is
/// still running) or `unknown` (the adapter cannot tell whether the
/// provider acted). The harness checks every reply against the provider's
/// ledger, and each logical operation may cause at most one effect, across
/// retries, crashes and racing reconcilers.
///
/// Returning `Err` is the adapter's own failure (a bug, a broken store): the
/// harness reports an adapter error, never a verdict about the provider.
#[async_trait::async_trait]
pub trait Adapter: Send + Sync {
    /// Perform the operation, at most once: record the intent durably
    /// before any request, send one idempotency key per logical operation,
    /// and answer `unknown` (never `failed`) when the response was lost,
    /// since the provider may have committed. Calling it again for the same
    /// operation id must not create a second effect.
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure>;
    /// Find out what happened to a known operation from evidence (an
    /// idempotent replay with the same key, a lookup by id or client
    /// reference) and finish it when that is safe. Absence of evidence is
    /// not evidence of absence: a lookup that finds nothing while a request
    /// may still be in flight leaves the operation `unknown` or `pending`.
    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure>;
    /// Take a delivered provider event: verify its signature, correlate it
    /// with an operation, and move that operation only when the event proves
    /// something. A forged, stale or unknown event is not accepted.
    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure>;
    /// Apply an operator's decision: it is the person's word and final. A
    /// genuine event that later contradicts it keeps the outcome and raises
    /// the operation for review again (`needs_review`).
    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure>;
    /// Report the stored record as it stands. Must not call the provider.
    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure>;
}

/// Builds adapter instances over a state directory.
pub trait AdapterFactory: Send + Sync {
    /// A short display name (`reference`).
    fn name(&self) -> String;
    /// A fresh instance whose durable store lives in `state_dir`.
    fn build(&self, state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure>;
}

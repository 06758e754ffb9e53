//! What an adapter answers: an operation's outcome (to `execute`,
//! `reconcile`, `resolve` and `status`) or a webhook's acceptance.

use serde::{Deserialize, Serialize};

use crate::SharedStr;

/// The four outcomes of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// Confirmed by evidence. Terminal.
    Succeeded,
    /// Confirmed by evidence. Terminal.
    Failed,
    /// The provider has it and is still working.
    Pending,
    /// No evidence either way yet.
    Unknown,
}

impl OutcomeKind {
    /// The protocol's name: `succeeded`, `failed`, `pending`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Succeeded => "succeeded",
            OutcomeKind::Failed => "failed",
            OutcomeKind::Pending => "pending",
            OutcomeKind::Unknown => "unknown",
        }
    }
}

/// The reply to `execute`, `reconcile`, `resolve` and `status`. Fields
/// beyond these are ignored (a later protocol version, or an adapter's own
/// notes); the harness names them in the report rather than failing the call.
///
/// Its text is shared ([`SharedStr`]): the report's records take it by a
/// reference count, and a large run holds two replies per operation. Serde
/// writes its fields in the protocol's order, `provider_ref` as `null` when
/// absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutcomeReply {
    /// The operation's id.
    pub operation_id: SharedStr,
    /// What the adapter claims.
    pub outcome: OutcomeKind,
    /// Provider object id, if known.
    #[serde(default)]
    pub provider_ref: Option<SharedStr>,
    /// True when automation stopped and a person must decide.
    #[serde(default)]
    pub needs_review: bool,
    /// What the claim rests on.
    #[serde(default)]
    pub evidence: SharedStr,
}

impl OutcomeReply {
    /// A claim about `operation_id` resting on `evidence`, with no provider
    /// object and no call for a person (add them with
    /// [`OutcomeReply::with_provider_ref`] and [`OutcomeReply::with_needs_review`]).
    pub fn new(
        operation_id: impl Into<SharedStr>,
        outcome: OutcomeKind,
        evidence: impl Into<SharedStr>,
    ) -> OutcomeReply {
        OutcomeReply {
            operation_id: operation_id.into(),
            outcome,
            provider_ref: None,
            needs_review: false,
            evidence: evidence.into(),
        }
    }

    /// The same claim naming the provider object it is about (or none).
    pub fn with_provider_ref(mut self, provider_ref: Option<SharedStr>) -> OutcomeReply {
        self.provider_ref = provider_ref;
        self
    }

    /// The same claim, with automation stopped for a person to decide (or not).
    pub fn with_needs_review(mut self, needs_review: bool) -> OutcomeReply {
        self.needs_review = needs_review;
        self
    }

    /// The same claim resting on other `evidence`.
    pub fn with_evidence(mut self, evidence: impl Into<SharedStr>) -> OutcomeReply {
        self.evidence = evidence.into();
        self
    }

    /// True when `text` is exactly this reply's compact JSON (so the parsed
    /// reply may stand for its text).
    pub fn writes_as(&self, text: &str) -> bool {
        serde_json::to_string(self).is_ok_and(|written| written == text)
    }
}

/// The reply to `webhook`. Fields beyond these are ignored, as for [`OutcomeReply`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WebhookReply {
    /// False for a rejected event (bad signature, unknown, duplicate is still `true`).
    pub accepted: bool,
    /// The operation the event was correlated with.
    #[serde(default)]
    pub operation_id: Option<String>,
}

impl WebhookReply {
    /// An event refused (a bad signature, an unknown event).
    pub const REJECTED: WebhookReply = WebhookReply {
        accepted: false,
        operation_id: None,
    };

    /// An event accepted, correlated with `operation_id` when the adapter
    /// could tell which operation it was about.
    pub const fn accepted(operation_id: Option<String>) -> WebhookReply {
        WebhookReply {
            accepted: true,
            operation_id,
        }
    }
}

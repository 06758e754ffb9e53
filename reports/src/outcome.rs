//! What an adapter claims about an operation: the protocol's four outcomes
//! and a reported outcome. Apart from the report model that holds them, so
//! that the records the model re-exports (a call's reply, an operation's
//! report, the signals) import them without importing the model.

use serde::{Deserialize, Serialize};

pub use lostreply_protocol::OutcomeKind;

use crate::shared_str::SharedStr;

/// An outcome as the adapter reported it.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// `succeeded`, `failed`, `pending` or `unknown`.
    pub outcome: OutcomeKind,
    /// Provider object id, if claimed.
    pub provider_ref: Option<SharedStr>,
    /// True when automation stopped and a person must decide.
    pub needs_review: bool,
    /// The adapter's evidence text.
    pub evidence: SharedStr,
}

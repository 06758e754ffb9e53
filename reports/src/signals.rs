//! The production signals of a run: what a team would watch to see
//! ambiguity in production (unknown outcomes, how long they stay unknown,
//! what confirms them, keys near their expiry, duplicates found after a
//! final answer, reconcile effort, escalations, the oldest unknown).
//!
//! Each scenario keeps its own [`Signals`], made by the harness from the
//! run's calls and journal (docs/report-json.md says how each is computed);
//! [`SignalTotals`] sums any set of scenarios (`crate::signal_totals` adds
//! them up and says them). The totals are a function of the scenarios'
//! signals alone, so a merged report's totals are the totals of one run
//! over the same scenarios.

use serde::{Deserialize, Serialize};

use crate::outcome::OutcomeKind;
use crate::shared_str::SharedStr;

/// One scenario's signals.
#[derive(bon::Builder, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Signals {
    /// Replies whose outcome was `unknown`, counted by tool, action and
    /// provider, sorted by the three.
    pub unknown_replies: Vec<UnknownReplies>,
    /// Each operation that was ever reported `unknown` or `pending`, in the
    /// scenario's order, with what confirmed it, if anything did.
    pub ambiguities: Vec<Ambiguity>,
    /// Requests that sent an idempotency key with less than a tenth of its
    /// retention left, or after it had expired, in journal order.
    pub keys_near_expiry: Vec<KeyNearExpiry>,
    /// Effects beyond an operation's one that the provider made after the
    /// operation had been reported final, in ledger order.
    pub late_duplicates: Vec<LateDuplicate>,
    /// `reconcile` calls made.
    pub reconcile_attempts: u64,
    /// The operation with the most `reconcile` calls (the first in the
    /// scenario's order on a tie); none without reconcile calls.
    pub most_reconciled: Option<OperationCount>,
    /// Operations whose final `status` has `needs_review`: automation gave
    /// up and a person must decide (reconcile budget exhausted or escalated).
    pub needs_review: u64,
    /// Operations whose final `status` is `unknown`.
    pub left_unknown: u64,
    /// The operation left `unknown` the longest, by the simulator clock.
    pub oldest_unknown: Option<OperationAge>,
}

/// The adapter call a reply answered, as the signals name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// `execute`.
    Execute,
    /// `reconcile`.
    Reconcile,
    /// `resolve`.
    Resolve,
    /// `status`.
    Status,
}

impl Action {
    /// The protocol's name of the call.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Execute => "execute",
            Action::Reconcile => "reconcile",
            Action::Resolve => "resolve",
            Action::Status => "status",
        }
    }
}

/// How many replies said `unknown` for one tool, action and provider.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UnknownReplies {
    /// The MCP tool an operation calls, or the resource it creates in.
    pub tool: SharedStr,
    /// The call that replied.
    pub action: Action,
    /// The provider the scenario declares (`generic`, `stripe`, a profile
    /// file's name), or `mcp` for an MCP operation.
    pub provider: SharedStr,
    /// Replies.
    pub count: u64,
}

/// An operation that was reported ambiguous, and what confirmed it.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Ambiguity {
    /// The operation.
    pub operation_id: SharedStr,
    /// Simulator clock of its first `unknown` or `pending` reply.
    pub since_sim_ms: i64,
    /// The first reply after it that said `succeeded` or `failed`, if one did.
    pub confirmed: Option<Confirmation>,
}

/// The reply that ended an ambiguity.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Confirmation {
    /// The call that replied (its `index` in `calls`).
    pub call_index: u32,
    /// `succeeded` or `failed`.
    pub outcome: OutcomeKind,
    /// Simulator time from the first ambiguous reply to this one.
    pub after_ms: u64,
    /// What the confirmation rests on.
    pub by: ConfirmedBy,
}

/// What confirmed an ambiguous operation's outcome (the rule is in
/// docs/report-json.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConfirmedBy {
    /// The provider replayed the saved answer to a create sent again with its key.
    Replay,
    /// A create sent again made the effect (the first attempt had not).
    NewAttempt,
    /// A lookup (retrieve, search, list, an MCP retrieval tool) found the answer.
    Lookup,
    /// A webhook event delivered to the adapter.
    Event,
    /// A person, through `resolve`.
    Person,
    /// None of the above: no request or delivery of the operation since it
    /// became ambiguous explains the answer.
    Other,
}

impl ConfirmedBy {
    /// Every kind, in the order writers list them.
    pub const ALL: [ConfirmedBy; 6] = [
        ConfirmedBy::Replay,
        ConfirmedBy::NewAttempt,
        ConfirmedBy::Lookup,
        ConfirmedBy::Event,
        ConfirmedBy::Person,
        ConfirmedBy::Other,
    ];

    /// The JSON name: `replay`, `new_attempt`, `lookup`, `event`, `person`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmedBy::Replay => "replay",
            ConfirmedBy::NewAttempt => "new_attempt",
            ConfirmedBy::Lookup => "lookup",
            ConfirmedBy::Event => "event",
            ConfirmedBy::Person => "person",
            ConfirmedBy::Other => "other",
        }
    }

    /// How a person would say it: `idempotent replay`, `a person (resolve)`.
    pub fn label(self) -> &'static str {
        match self {
            ConfirmedBy::Replay => "idempotent replay",
            ConfirmedBy::NewAttempt => "new attempt",
            ConfirmedBy::Lookup => "lookup",
            ConfirmedBy::Event => "event (webhook)",
            ConfirmedBy::Person => "a person (resolve)",
            ConfirmedBy::Other => "other",
        }
    }
}

/// A request that sent a key near or past the end of its retention.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KeyNearExpiry {
    /// The operation its create is attributed to, if any.
    pub operation_id: Option<SharedStr>,
    /// Its journal entry.
    pub seq: u64,
    /// Retention left when it arrived, by the simulator clock; negative:
    /// the key had expired that long before.
    pub remaining_ms: i64,
}

impl KeyNearExpiry {
    /// True when the key had already expired.
    pub fn expired(&self) -> bool {
        self.remaining_ms <= 0
    }
}

/// An effect the provider made for an operation already reported final.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LateDuplicate {
    /// The operation (the first of its group, as invariant 1 names it).
    pub operation_id: SharedStr,
    /// The effect made afterwards.
    pub effect_id: SharedStr,
    /// The call whose reply first said `succeeded` or `failed`.
    pub reported_final_call: u32,
}

/// An operation and a count.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OperationCount {
    /// The operation.
    pub operation_id: SharedStr,
    /// How many.
    pub count: u64,
}

/// An operation left `unknown`, and for how long.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OperationAge {
    /// The operation.
    pub operation_id: SharedStr,
    /// Simulator time from its first ambiguous reply to its final `status`.
    pub age_ms: u64,
}

/// Confirmations counted by what they rest on.
#[derive(bon::Builder, Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConfirmedByCounts {
    /// [`ConfirmedBy::Replay`].
    pub replay: u64,
    /// [`ConfirmedBy::NewAttempt`].
    pub new_attempt: u64,
    /// [`ConfirmedBy::Lookup`].
    pub lookup: u64,
    /// [`ConfirmedBy::Event`].
    pub event: u64,
    /// [`ConfirmedBy::Person`].
    pub person: u64,
    /// [`ConfirmedBy::Other`].
    pub other: u64,
}

impl ConfirmedByCounts {
    pub(crate) fn slot(&mut self, by: ConfirmedBy) -> &mut u64 {
        match by {
            ConfirmedBy::Replay => &mut self.replay,
            ConfirmedBy::NewAttempt => &mut self.new_attempt,
            ConfirmedBy::Lookup => &mut self.lookup,
            ConfirmedBy::Event => &mut self.event,
            ConfirmedBy::Person => &mut self.person,
            ConfirmedBy::Other => &mut self.other,
        }
    }

    /// The count for `by`.
    pub fn get(&self, by: ConfirmedBy) -> u64 {
        let mut copy = *self;
        *copy.slot(by)
    }

    /// All confirmations.
    pub fn total(&self) -> u64 {
        ConfirmedBy::ALL.iter().map(|&by| self.get(by)).sum()
    }
}

/// An operation of a scenario and a figure.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScenarioOperation {
    /// The scenario.
    pub scenario: String,
    /// The operation.
    pub operation_id: SharedStr,
    /// The figure: reconcile calls, or age in ms.
    pub value: u64,
}

/// The signals of a set of scenarios, summed (the JSON report's top-level
/// `signals`; each writer's figures).
#[derive(bon::Builder, Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SignalTotals {
    /// Replies whose outcome was `unknown`, summed by tool, action and
    /// provider, sorted by the three.
    pub unknown_replies: Vec<UnknownReplies>,
    /// Operations ever reported `unknown` or `pending`.
    pub ambiguous_operations: u64,
    /// Those later confirmed `succeeded` or `failed`, by what confirmed them.
    pub confirmed_by: ConfirmedByCounts,
    /// Median simulator time from ambiguity to confirmation (the lower
    /// middle one of an even count); none without confirmations.
    pub confirmation_median_ms: Option<u64>,
    /// The longest simulator time from ambiguity to confirmation.
    pub confirmation_max_ms: Option<u64>,
    /// Requests that sent a key with less than a tenth of its retention left
    /// (the expired ones included).
    pub keys_near_expiry: u64,
    /// Of those, requests that sent a key after it had expired.
    pub keys_expired: u64,
    /// Effects made after their operation had been reported final.
    pub late_duplicates: u64,
    /// `reconcile` calls.
    pub reconcile_attempts: u64,
    /// The operation with the most `reconcile` calls (on a tie, the smallest
    /// scenario id, then operation id).
    pub most_reconciled: Option<ScenarioOperation>,
    /// Operations whose final `status` has `needs_review`.
    pub needs_review: u64,
    /// Operations whose final `status` is `unknown`.
    pub left_unknown: u64,
    /// The operation left `unknown` the longest (ties as for `most_reconciled`).
    pub oldest_unknown: Option<ScenarioOperation>,
}

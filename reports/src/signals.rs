//! The production signals of a run: what a team would watch to see
//! ambiguity in production (unknown outcomes, how long they stay unknown,
//! what confirms them, keys near their expiry, duplicates found after a
//! final answer, reconcile effort, escalations, the oldest unknown).
//!
//! Each scenario keeps its own [`Signals`], made by the harness from the
//! run's calls and journal (docs/report-json.md says how each is computed);
//! [`SignalTotals`] sums any set of scenarios. The totals are a function of
//! the scenarios' signals alone, so a merged report's totals are the totals
//! of one run over the same scenarios.

use serde::{Deserialize, Serialize};

use crate::model::{OutcomeKind, Report, ScenarioReport, SharedStr};

/// One scenario's signals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ambiguity {
    /// The operation.
    pub operation_id: SharedStr,
    /// Simulator clock of its first `unknown` or `pending` reply.
    pub since_sim_ms: i64,
    /// The first reply after it that said `succeeded` or `failed`, if one did.
    pub confirmed: Option<Confirmation>,
}

/// The reply that ended an ambiguity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LateDuplicate {
    /// The operation (the first of its group, as invariant 1 names it).
    pub operation_id: SharedStr,
    /// The effect made afterwards.
    pub effect_id: SharedStr,
    /// The call whose reply first said `succeeded` or `failed`.
    pub reported_final_call: u32,
}

/// An operation and a count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationCount {
    /// The operation.
    pub operation_id: SharedStr,
    /// How many.
    pub count: u64,
}

/// An operation left `unknown`, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationAge {
    /// The operation.
    pub operation_id: SharedStr,
    /// Simulator time from its first ambiguous reply to its final `status`.
    pub age_ms: u64,
}

/// Confirmations counted by what they rest on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    fn slot(&mut self, by: ConfirmedBy) -> &mut u64 {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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

impl SignalTotals {
    /// The totals of every scenario of `report`.
    pub fn of_report(report: &Report) -> SignalTotals {
        SignalTotals::of(&report.scenarios)
    }

    /// The totals of `scenarios`.
    pub fn of(scenarios: &[ScenarioReport]) -> SignalTotals {
        let mut totals = SignalTotals::default();
        let mut durations = Vec::new();
        let mut unknown: std::collections::BTreeMap<(&str, Action, &str), u64> =
            std::collections::BTreeMap::new();
        for scenario in scenarios {
            let s = &scenario.signals;
            for u in &s.unknown_replies {
                *unknown
                    .entry((u.tool.as_str(), u.action, u.provider.as_str()))
                    .or_default() += u.count;
            }
            totals.ambiguous_operations += s.ambiguities.len() as u64;
            for c in s.ambiguities.iter().filter_map(|a| a.confirmed.as_ref()) {
                *totals.confirmed_by.slot(c.by) += 1;
                durations.push(c.after_ms);
            }
            totals.keys_near_expiry += s.keys_near_expiry.len() as u64;
            totals.keys_expired += s.keys_near_expiry.iter().filter(|k| k.expired()).count() as u64;
            totals.late_duplicates += s.late_duplicates.len() as u64;
            totals.reconcile_attempts += s.reconcile_attempts;
            keep_largest(
                &mut totals.most_reconciled,
                scenario,
                s.most_reconciled
                    .as_ref()
                    .map(|m| (&m.operation_id, m.count)),
            );
            totals.needs_review += s.needs_review;
            totals.left_unknown += s.left_unknown;
            keep_largest(
                &mut totals.oldest_unknown,
                scenario,
                s.oldest_unknown
                    .as_ref()
                    .map(|o| (&o.operation_id, o.age_ms)),
            );
        }
        totals.unknown_replies = unknown
            .into_iter()
            .map(|((tool, action, provider), count)| UnknownReplies {
                tool: tool.into(),
                action,
                provider: provider.into(),
                count,
            })
            .collect();
        durations.sort_unstable();
        totals.confirmation_max_ms = durations.last().copied();
        totals.confirmation_median_ms = lower_median(&durations);
        totals
    }

    /// Replies whose outcome was `unknown`, all labels together.
    pub fn unknown_reply_count(&self) -> u64 {
        self.unknown_replies.iter().map(|u| u.count).sum()
    }

    /// Ambiguous operations never confirmed.
    pub fn unconfirmed(&self) -> u64 {
        self.ambiguous_operations
            .saturating_sub(self.confirmed_by.total())
    }
}

/// One line of the signals as every writer shows them: a label and its
/// plain-text value (scenario and operation ids in it are untrusted text,
/// escaped by each writer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignalRow {
    /// What it is: `unknown replies`.
    pub label: &'static str,
    /// Its figures: `3: reconcile tickets (generic) 2, execute tickets (generic) 1`.
    pub value: String,
}

impl SignalTotals {
    /// The rows every writer shows, in order.
    pub(crate) fn rows(&self) -> Vec<SignalRow> {
        let row = |label, value| SignalRow { label, value };
        let operations = |n: u64| format!("{n} operation{}", plural(n));
        let mut rows = vec![
            row("unknown replies", self.unknown_replies_text()),
            row(
                "ambiguous operations",
                format!(
                    "{}: {} confirmed, {} never",
                    self.ambiguous_operations,
                    self.confirmed_by.total(),
                    self.unconfirmed()
                ),
            ),
            row("confirmed by", self.confirmed_by_text()),
            row(
                "ambiguity to confirmation",
                match (self.confirmation_median_ms, self.confirmation_max_ms) {
                    (Some(median), Some(max)) => format!(
                        "median {}, max {} (simulator clock)",
                        span(median),
                        span(max)
                    ),
                    _ => "no confirmation".to_owned(),
                },
            ),
            row(
                "keys near expiry",
                format!(
                    "{} request{} ({} after expiry)",
                    self.keys_near_expiry,
                    plural(self.keys_near_expiry),
                    self.keys_expired
                ),
            ),
            row(
                "late duplicates",
                format!(
                    "{} effect{} made after a final answer",
                    self.late_duplicates,
                    plural(self.late_duplicates)
                ),
            ),
        ];
        let mut reconcile = format!("{}", self.reconcile_attempts);
        if let Some(most) = &self.most_reconciled {
            reconcile += &format!(
                "; most: {} in {}, {}",
                most.operation_id, most.scenario, most.value
            );
        }
        rows.push(row("reconcile attempts", reconcile));
        rows.push(row("needs review", operations(self.needs_review)));
        let mut unknown = operations(self.left_unknown);
        if let Some(oldest) = &self.oldest_unknown {
            unknown += &format!(
                "; oldest: {} in {}, unknown for {}",
                oldest.operation_id,
                oldest.scenario,
                span(oldest.value)
            );
        }
        rows.push(row("left unknown", unknown));
        rows
    }

    /// `5s / 1h`: the median and the longest time to confirmation, or `—`
    /// without any.
    pub(crate) fn spread_text(&self) -> String {
        match (self.confirmation_median_ms, self.confirmation_max_ms) {
            (Some(median), Some(max)) => format!("{} / {}", span(median), span(max)),
            _ => "—".to_owned(),
        }
    }

    /// `3: reconcile tickets (generic) 2, execute tickets (generic) 1`, the
    /// labels by count, most first.
    fn unknown_replies_text(&self) -> String {
        let mut labels: Vec<&UnknownReplies> = self.unknown_replies.iter().collect();
        labels.sort_by_key(|u| std::cmp::Reverse(u.count));
        let parts: Vec<String> = labels
            .iter()
            .map(|u| {
                format!(
                    "{} {} ({}) {}",
                    u.action.as_str(),
                    u.tool,
                    u.provider,
                    u.count
                )
            })
            .collect();
        match parts.is_empty() {
            true => "0".to_owned(),
            false => format!("{}: {}", self.unknown_reply_count(), parts.join(", ")),
        }
    }

    /// `idempotent replay 2 (67%), lookup 1 (33%)`: the kinds that
    /// confirmed any, with their share of the confirmations.
    fn confirmed_by_text(&self) -> String {
        let total = self.confirmed_by.total();
        let parts: Vec<String> = ConfirmedBy::ALL
            .iter()
            .filter(|&&by| self.confirmed_by.get(by) > 0)
            .map(|&by| {
                let n = self.confirmed_by.get(by);
                format!("{} {n} ({}%)", by.label(), percent(n, total))
            })
            .collect();
        match parts.is_empty() {
            true => "none".to_owned(),
            false => parts.join(", "),
        }
    }
}

/// `n` of `total` in whole percent, rounded to the nearest.
pub(crate) fn percent(n: u64, total: u64) -> u64 {
    match total {
        0 => 0,
        _ => (n.saturating_mul(200) + total) / (total * 2),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A span of simulator time (`25h`, `1h30m`).
fn span(ms: u64) -> String {
    crate::text::sim_span(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// The middle value of sorted `values`, the lower of the two middle ones
/// for an even count (a value that was measured, never an average of two).
fn lower_median(sorted: &[u64]) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    sorted.get((sorted.len() - 1) / 2).copied()
}

/// Keeps in `best` the larger of it and `candidate` (the earlier on a tie).
fn keep_largest(
    best: &mut Option<ScenarioOperation>,
    scenario: &ScenarioReport,
    candidate: Option<(&SharedStr, u64)>,
) {
    let Some((operation_id, value)) = candidate else {
        return;
    };
    // Ties go to the smallest scenario and operation ids, so that the
    // totals do not depend on the order the scenarios are listed in (a run's
    // selection order, a merge's order by id).
    let wins = best.as_ref().is_none_or(|b| {
        (
            value,
            std::cmp::Reverse((scenario.id.as_str(), operation_id.as_str())),
        ) > (
            b.value,
            std::cmp::Reverse((b.scenario.as_str(), b.operation_id.as_str())),
        )
    });
    if !wins {
        return;
    }
    *best = Some(ScenarioOperation {
        scenario: scenario.id.clone(),
        operation_id: operation_id.clone(),
        value,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_a_measured_value() {
        assert_eq!(lower_median(&[]), None);
        assert_eq!(lower_median(&[5]), Some(5));
        assert_eq!(lower_median(&[1, 9]), Some(1));
        assert_eq!(lower_median(&[1, 4, 9]), Some(4));
    }

    /// A scenario whose `op` was reconciled `count` times and left unknown
    /// for `age_ms`, confirmed once after `after_ms`.
    fn scenario(id: &str, op: &str, count: u64, age_ms: u64, after_ms: u64) -> ScenarioReport {
        let mut s: ScenarioReport = serde_json::from_value(serde_json::json!({
            "id": id, "title": "t", "path": "p", "case": null, "tags": [],
            "verdict": "passed", "seed": 1, "reproduce": "r", "duration_ms": 0,
            "sim_start_ms": 0, "operations": [], "steps": [], "calls": [],
            "journal": [], "ledger": [], "deliveries": [], "violations": [],
            "errors": [],
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        s.signals = Signals {
            ambiguities: vec![Ambiguity {
                operation_id: op.into(),
                since_sim_ms: 0,
                confirmed: Some(Confirmation {
                    call_index: 0,
                    outcome: OutcomeKind::Succeeded,
                    after_ms,
                    by: ConfirmedBy::Replay,
                }),
            }],
            reconcile_attempts: count,
            most_reconciled: Some(OperationCount {
                operation_id: op.into(),
                count,
            }),
            left_unknown: 1,
            oldest_unknown: Some(OperationAge {
                operation_id: op.into(),
                age_ms,
            }),
            ..Signals::default()
        };
        s
    }

    #[test]
    fn totals_do_not_depend_on_the_order_of_the_scenarios() {
        let a = scenario("a", "op-2", 3, 10, 5);
        let b = scenario("b", "op-1", 3, 10, 1);
        let c = scenario("c", "op-1", 2, 9, 9);
        let forward = SignalTotals::of(&[a.clone(), b.clone(), c.clone()]);
        let backward = SignalTotals::of(&[c, b, a]);
        assert_eq!(forward, backward);
        // Ties go to the smallest scenario id.
        let most = forward
            .most_reconciled
            .as_ref()
            .map(|m| (m.scenario.as_str(), m.value));
        assert_eq!(most, Some(("a", 3)));
        let oldest = forward.oldest_unknown.as_ref().map(|o| o.scenario.as_str());
        assert_eq!(oldest, Some("a"));
        assert_eq!(forward.reconcile_attempts, 8);
        assert_eq!(forward.confirmation_median_ms, Some(5));
        assert_eq!(forward.confirmation_max_ms, Some(9));
        assert_eq!(forward.confirmed_by.get(ConfirmedBy::Replay), 3);
    }

    #[test]
    fn shares_round_to_the_nearest_percent() {
        assert_eq!(percent(0, 0), 0);
        assert_eq!(percent(1, 3), 33);
        assert_eq!(percent(2, 3), 67);
        assert_eq!(percent(1, 2), 50);
        assert_eq!(percent(3, 3), 100);
    }

    #[test]
    fn counts_by_confirmation_add_up() {
        let mut counts = ConfirmedByCounts::default();
        for by in ConfirmedBy::ALL {
            *counts.slot(by) += 1;
        }
        *counts.slot(ConfirmedBy::Event) += 1;
        assert_eq!(counts.total(), 7);
        assert_eq!(counts.get(ConfirmedBy::Event), 2);
    }
}

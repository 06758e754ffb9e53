//! The production signals of a set of scenarios added up
//! ([`SignalTotals::of`]) and said in words for the writers. Apart from the
//! signals' types, which the report model holds, because adding up reads
//! the model's scenario reports.

use crate::model::{Report, ScenarioReport};
use crate::shared_str::SharedStr;
use crate::signals::*;

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
    use crate::outcome::OutcomeKind;

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

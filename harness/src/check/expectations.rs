//! The scenario's own `expect` section.

use lostreply_reports::model::{Check, Evidence, Violation};

use super::attribution::Attribution;
use super::index::Index;
use super::truth::proven;
use crate::protocol::{OutcomeKind, OutcomeReply};
use crate::run::observation::{Call, Observation};

fn expectation(key: &str) -> Check {
    Check::Expectation {
        key: key.to_owned(),
    }
}

/// What the expectations are judged by: the run, its attribution and index.
struct Judge<'j, 'o> {
    obs: &'o Observation,
    a: &'j Attribution<'o>,
    ix: &'j Index<'o>,
}

impl Judge<'_, '_> {
    /// An outcome listed, or one the ledger proves true at that moment:
    /// knowing the truth sooner than a scenario's author expected is never a
    /// violation.
    fn acceptable(
        &self,
        op: &str,
        call: &Call,
        reply: &OutcomeReply,
        allowed: &[OutcomeKind],
    ) -> bool {
        allowed.contains(&reply.outcome) || proven(self.obs, self.a, self.ix, op, call, reply)
    }
}

/// One section of `expect:`, judged: its violations pushed onto `found`,
/// each under the check `expectation(key)`.
type Rule = fn(&Judge<'_, '_>, &str, &mut Vec<Violation>);

/// Every section of `expect:`, by its check's key, in the order their
/// violations are reported.
const RULES: [(&str, Rule); 5] = [
    ("final", final_outcomes),
    ("after_step", after_step),
    ("effects", effects),
    ("needs_review_from_step", needs_review_from_step),
    ("needs_review", needs_review),
];

/// Judges every expectation of the scenario.
pub(crate) fn check_all(obs: &Observation, a: &Attribution<'_>, ix: &Index<'_>) -> Vec<Violation> {
    let judge = Judge { obs, a, ix };
    let mut found = Vec::new();
    for (key, rule) in RULES {
        rule(&judge, key, &mut found);
    }
    found
}

/// `final:`: the final status call's outcome for each operation.
fn final_outcomes(j: &Judge<'_, '_>, key: &str, found: &mut Vec<Violation>) {
    for (op, allowed) in &j.obs.scenario.expect.final_outcomes {
        let call =
            j.a.op_position(op)
                .and_then(|position| j.obs.final_status.get(position));
        let evidence: Vec<Evidence> = call
            .map(|index| Evidence::Call { index })
            .into_iter()
            .collect();
        match call
            .map(|index| &j.obs.calls[index])
            .and_then(|c| c.outcome().map(|o| (c, o)))
        {
            Some((call, reply)) if j.acceptable(op, call, reply, allowed) => {}
            Some((_, reply)) => found.push(
                Violation::builder()
                    .check(expectation(key))
                    .operation_id(op.to_string())
                    .message(format!(
                        "{op}: final status is {}, expected one of {}",
                        reply.outcome.as_str(),
                        outcome_list(allowed)
                    ))
                    .evidence(evidence)
                    .build(),
            ),
            None => found.push(
                Violation::builder()
                    .check(expectation(key))
                    .operation_id(op.to_string())
                    .message(format!(
                        "{op}: the final status call gave no outcome, expected one of {}",
                        outcome_list(allowed)
                    ))
                    .evidence(evidence)
                    .build(),
            ),
        }
    }
}

/// `after_step:`: every outcome a step's calls reported for an operation.
fn after_step(j: &Judge<'_, '_>, key: &str, found: &mut Vec<Violation>) {
    for (step, ops) in &j.obs.scenario.expect.after_step {
        for (op, allowed) in ops {
            let calls = j.ix.step_calls(*step, op);
            let reported: Vec<_> = calls
                .iter()
                .filter_map(|c| c.outcome().map(|o| (c, o)))
                .collect();
            if reported.is_empty() {
                found.push(
                    Violation::builder()
                        .check(expectation(key))
                        .operation_id(op.to_string())
                        .message(format!(
                            "{op}: step {step} reported no outcome, expected one of {}",
                            outcome_list(allowed)
                        ))
                        .evidence(calls.iter().map(|c| c.evidence()).collect())
                        .build(),
                );
            }
            for (call, reply) in reported {
                if !j.acceptable(op, call, reply, allowed) {
                    found.push(
                        Violation::builder()
                            .check(expectation(key))
                            .operation_id(op.to_string())
                            .message(format!(
                                "{op}: step {step} ({}) reported {}, expected one of {}",
                                call.name.as_str(),
                                reply.outcome.as_str(),
                                outcome_list(allowed)
                            ))
                            .evidence(vec![call.evidence()])
                            .build(),
                    );
                }
            }
        }
    }
}

/// `effects:`: the ledger's effects of each operation's group.
fn effects(j: &Judge<'_, '_>, key: &str, found: &mut Vec<Violation>) {
    let expect = &j.obs.scenario.expect;
    for (op, expected) in &expect.effects {
        let Some(g) = j.a.group(op) else { continue };
        // A group of repeated operations is counted as a whole against the sum of
        // its members' expectations (effects cannot be told apart by arguments).
        if j.a.first_op(g) != Some(op.as_str()) {
            continue;
        }
        // A single operation (the common case) is its own expectation: no map lookup.
        let expected_total: u32 = if j.a.ops_of_group(g).len() == 1 {
            *expected
        } else {
            j.a.ops_of_group(g)
                .map(|o| expect.effects.get(&o.id).copied().unwrap_or(*expected))
                .sum()
        };
        // Counted first: the effects are gathered only for a breach.
        if j.a.effect_positions(g).len() as u32 != expected_total {
            let effects = j.a.effects_of_group(g, &j.obs.ledger);
            let who = j.a.group_label(g);
            found.push(
                Violation::builder()
                    .check(expectation(key))
                    .operation_id(op.to_string())
                    .message(format!(
                        "{who}: {} effect(s) in the ledger, expected exactly {expected_total}",
                        effects.len()
                    ))
                    .evidence(
                        effects
                            .iter()
                            .flat_map(|e| {
                                e.request()
                                    .map(|seq| Evidence::Request { seq })
                                    .into_iter()
                                    .chain([Evidence::Effect {
                                        id: e.id.to_string(),
                                    }])
                            })
                            .collect(),
                    )
                    .build(),
            );
        }
    }
}

/// `needs_review_from_step:`: from that step on, every reply that is not
/// terminal asks for a person.
fn needs_review_from_step(j: &Judge<'_, '_>, key: &str, found: &mut Vec<Violation>) {
    for (op, &from) in &j.obs.scenario.expect.needs_review_from_step {
        // From that step on (the final sweep included), every reply that is not
        // terminal must ask for a person: no rung of the ladder is left.
        let late = j.ix.outcome_calls(op).find(|call| {
            (call.step_number() >= from || call.step == 0)
                && call.outcome().is_some_and(|r| {
                    matches!(r.outcome, OutcomeKind::Unknown | OutcomeKind::Pending)
                        && !r.needs_review
                })
        });
        if let Some(call) = late {
            let outcome = call.outcome().map_or("no outcome", |r| r.outcome.as_str());
            let when = if call.step == 0 {
                "the final status".to_owned()
            } else {
                format!("step {} ({})", call.step, call.name.as_str())
            };
            found.push(
                Violation::builder()
                    .check(expectation(key))
                    .operation_id(op.to_string())
                    .message(format!(
                    "{op}: {when} reported {outcome} without needs_review; from step {from} on \
                     nothing the contract offers can give evidence, so a person must be asked"
                ))
                    .evidence(vec![call.evidence()])
                    .build(),
            );
        }
    }
}

/// `needs_review:`: the final status call's flag for each operation.
fn needs_review(j: &Judge<'_, '_>, key: &str, found: &mut Vec<Violation>) {
    for (op, expected) in &j.obs.scenario.expect.needs_review {
        let position = j.a.op_position(op);
        let call = position.and_then(|p| j.obs.final_status.get(p));
        let actual = position
            .and_then(|p| j.obs.final_outcome(p))
            .map(|o| o.needs_review);
        if actual != Some(*expected) {
            found.push(
                Violation::builder()
                    .check(expectation(key))
                    .operation_id(op.to_string())
                    .message(format!(
                        "{op}: needs_review is {}, expected {expected}",
                        actual
                            .map(|b| b.to_string())
                            .unwrap_or_else(|| "not reported".to_owned())
                    ))
                    .evidence(
                        call.map(|index| Evidence::Call { index })
                            .into_iter()
                            .collect(),
                    )
                    .build(),
            );
        }
    }
}

/// `[succeeded, unknown]`.
fn outcome_list(outcomes: &[OutcomeKind]) -> String {
    format!(
        "[{}]",
        outcomes
            .iter()
            .map(|o| o.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

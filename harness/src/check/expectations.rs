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

pub(crate) fn check_all(obs: &Observation, a: &Attribution<'_>, ix: &Index<'_>) -> Vec<Violation> {
    let mut v = Vec::new();
    let expect = &obs.scenario.expect;
    // An outcome listed, or one the ledger proves true at that moment: knowing
    // the truth sooner than a scenario's author expected is never a violation.
    let acceptable = |op: &str, call: &Call, reply: &OutcomeReply, allowed: &[OutcomeKind]| {
        allowed.contains(&reply.outcome) || proven(obs, a, ix, op, call, reply)
    };
    for (op, allowed) in &expect.final_outcomes {
        let call = a
            .op_position(op)
            .and_then(|position| obs.final_status.get(position));
        let evidence: Vec<Evidence> = call
            .map(|index| Evidence::Call { index })
            .into_iter()
            .collect();
        match call
            .map(|index| &obs.calls[index])
            .and_then(|c| c.outcome().map(|o| (c, o)))
        {
            Some((call, reply)) if acceptable(op, call, reply, allowed) => {}
            Some((_, reply)) => v.push(Violation {
                check: expectation("final"),
                operation_id: Some(op.to_string()),
                message: format!(
                    "{op}: final status is {}, expected one of {}",
                    reply.outcome.as_str(),
                    outcome_list(allowed)
                ),
                evidence,
            }),
            None => v.push(Violation {
                check: expectation("final"),
                operation_id: Some(op.to_string()),
                message: format!(
                    "{op}: the final status call gave no outcome, expected one of {}",
                    outcome_list(allowed)
                ),
                evidence,
            }),
        }
    }
    for (step, ops) in &expect.after_step {
        for (op, allowed) in ops {
            let calls = ix.step_calls(*step, op);
            let reported: Vec<_> = calls
                .iter()
                .filter_map(|c| c.outcome().map(|o| (c, o)))
                .collect();
            if reported.is_empty() {
                v.push(Violation {
                    check: expectation("after_step"),
                    operation_id: Some(op.to_string()),
                    message: format!(
                        "{op}: step {step} reported no outcome, expected one of {}",
                        outcome_list(allowed)
                    ),
                    evidence: calls.iter().map(|c| c.evidence()).collect(),
                });
            }
            for (call, reply) in reported {
                if !acceptable(op, call, reply, allowed) {
                    v.push(Violation {
                        check: expectation("after_step"),
                        operation_id: Some(op.to_string()),
                        message: format!(
                            "{op}: step {step} ({}) reported {}, expected one of {}",
                            call.name.as_str(),
                            reply.outcome.as_str(),
                            outcome_list(allowed)
                        ),
                        evidence: vec![call.evidence()],
                    });
                }
            }
        }
    }
    for (op, expected) in &expect.effects {
        let Some(g) = a.group(op) else { continue };
        // A group of repeated operations is counted as a whole against the sum of
        // its members' expectations (effects cannot be told apart by arguments).
        if a.first_op(g) != Some(op.as_str()) {
            continue;
        }
        // A single operation (the common case) is its own expectation: no map lookup.
        let expected_total: u32 = if a.ops_of_group(g).len() == 1 {
            *expected
        } else {
            a.ops_of_group(g)
                .map(|o| expect.effects.get(&o.id).copied().unwrap_or(*expected))
                .sum()
        };
        // Counted first: the effects are gathered only for a breach.
        if a.effect_positions(g).len() as u32 != expected_total {
            let effects = a.effects_of_group(g, &obs.ledger);
            let who = a.group_label(g);
            v.push(Violation {
                check: expectation("effects"),
                operation_id: Some(op.to_string()),
                message: format!(
                    "{who}: {} effect(s) in the ledger, expected exactly {expected_total}",
                    effects.len()
                ),
                evidence: effects
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
            });
        }
    }
    for (op, &from) in &expect.needs_review_from_step {
        // From that step on (the final sweep included), every reply that is not
        // terminal must ask for a person: no rung of the ladder is left.
        let late = ix.outcome_calls(op).find(|call| {
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
            v.push(Violation {
                check: expectation("needs_review_from_step"),
                operation_id: Some(op.to_string()),
                message: format!(
                    "{op}: {when} reported {outcome} without needs_review; from step {from} on \
                     nothing the contract offers can give evidence, so a person must be asked"
                ),
                evidence: vec![call.evidence()],
            });
        }
    }
    for (op, expected) in &expect.needs_review {
        let position = a.op_position(op);
        let call = position.and_then(|p| obs.final_status.get(p));
        let actual = position
            .and_then(|p| obs.final_outcome(p))
            .map(|o| o.needs_review);
        if actual != Some(*expected) {
            v.push(Violation {
                check: expectation("needs_review"),
                operation_id: Some(op.to_string()),
                message: format!(
                    "{op}: needs_review is {}, expected {expected}",
                    actual
                        .map(|b| b.to_string())
                        .unwrap_or_else(|| "not reported".to_owned())
                ),
                evidence: call
                    .map(|index| Evidence::Call { index })
                    .into_iter()
                    .collect(),
            });
        }
    }
    v
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

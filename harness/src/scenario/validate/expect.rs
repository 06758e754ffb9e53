//! `expect:` -> expectations, each naming declared operations and real steps.

use std::collections::BTreeMap;

use super::declared::Declared;
use super::steps::undeclared;
use crate::protocol::OutcomeKind;
use crate::scenario::error::Diagnostics;
use crate::scenario::model::{Allowed, Expectations, OpId, Step};
use crate::scenario::raw::{RawExpect, RawOutcome, RawOutcomes};
use crate::scenario::span::{OneOrMany, Sp, SpMap};

pub(super) fn expectations(
    d: &mut Diagnostics,
    raw: Option<&Sp<RawExpect>>,
    steps: &[Option<Step>],
    declared: &Declared,
) -> Expectations {
    let Some(raw) = raw.map(|e| &e.value) else {
        return Expectations::default();
    };
    let mut expect = Expectations::default();

    if let Some(map) = &raw.final_outcomes {
        expect.final_outcomes = outcome_map(d, map, declared);
    }

    if let Some(by_step) = &raw.after_step {
        for (number, map) in &by_step.0 {
            let step = usize::try_from(number.value)
                .ok()
                .filter(|n| (1..=steps.len()).contains(n))
                .map(|n| (n, steps.get(n - 1)));
            let Some((n, step)) = step else {
                d.error(
                    number.pos,
                    format!(
                        "after_step {}: there is no such step (steps are numbered 1 to {})",
                        number.value,
                        steps.len()
                    ),
                );
                continue;
            };
            let outcomes = outcome_map(d, map, declared);
            // A step too broken to build was already reported; judging it again would
            // only add noise.
            if let Some(Some(step)) = step {
                for (op, _) in &map.0 {
                    if let Err(why) = reports_outcome(step, &op.value) {
                        d.error(
                            op.pos,
                            format!("after_step {n}: {why}, so it has no outcome to check"),
                        );
                    }
                }
            }
            expect.after_step.insert(n, outcomes);
        }
    }

    if let Some(effects) = &raw.effects {
        for (op, count) in &effects.0 {
            known(d, op, declared);
            if count.value > 1 {
                d.error(
                    count.pos,
                    format!(
                        "{} effects for `{}` can never hold: at most one effect per operation is \
                         always checked (expect 0 or 1)",
                        count.value, op.value
                    ),
                );
            }
            expect
                .effects
                .insert(declared.op_id(&op.value), count.value);
        }
    }

    if let Some(review) = &raw.needs_review {
        for (op, flag) in &review.0 {
            known(d, op, declared);
            expect
                .needs_review
                .insert(declared.op_id(&op.value), flag.value);
        }
    }

    if let Some(from) = &raw.needs_review_from_step {
        for (op, number) in &from.0 {
            known(d, op, declared);
            match usize::try_from(number.value)
                .ok()
                .filter(|n| (1..=steps.len()).contains(n))
            {
                Some(n) => {
                    expect.needs_review_from_step.insert(declared.op_id(&op.value), n);
                }
                None => d.error(
                    number.pos,
                    format!(
                        "needs_review_from_step {}: there is no such step (steps are numbered 1 to {})",
                        number.value,
                        steps.len()
                    ),
                ),
            }
        }
    }
    expect
}

fn outcome_map(
    d: &mut Diagnostics,
    map: &SpMap<String, RawOutcomes>,
    declared: &Declared,
) -> BTreeMap<OpId, Allowed> {
    let mut result = BTreeMap::new();
    for (op, outcomes) in &map.0 {
        known(d, op, declared);
        let listed: Vec<RawOutcome> = match &outcomes.value {
            OneOrMany::One(one) => vec![*one],
            OneOrMany::Many(many) => many.iter().map(|o| o.value).collect(),
        };
        if listed.is_empty() {
            d.error(
                outcomes.pos,
                format!(
                    "no outcome is allowed for `{}`: list at least one",
                    op.value
                ),
            );
        }
        // A repeated name changes nothing: it keeps its first place.
        let allowed: Allowed = listed.into_iter().map(outcome_kind).collect();
        result.insert(declared.op_id(&op.value), allowed);
    }
    result
}

fn outcome_kind(raw: RawOutcome) -> OutcomeKind {
    match raw {
        RawOutcome::Succeeded => OutcomeKind::Succeeded,
        RawOutcome::Failed => OutcomeKind::Failed,
        RawOutcome::Pending => OutcomeKind::Pending,
        RawOutcome::Unknown => OutcomeKind::Unknown,
    }
}

fn known(d: &mut Diagnostics, op: &Sp<String>, declared: &Declared) {
    if !declared.operations.contains_key(op.value.as_str()) {
        d.error(op.pos, undeclared(&op.value, declared));
    }
}

/// Does `step` get an outcome for `op` back from the adapter? `Err` says why not.
fn reports_outcome(step: &Step, op: &str) -> Result<(), String> {
    match step {
        Step::Execute { op: target, crash } | Step::Reconcile { op: target, crash } => {
            if target != op {
                Err(format!("that step is about `{target}`, not `{op}`"))
            } else if crash.is_some() {
                Err("that step crashes the adapter before it can answer".to_owned())
            } else {
                Ok(())
            }
        }
        Step::Status { op: target } | Step::Resolve { op: target, .. } => {
            if target == op {
                Ok(())
            } else {
                Err(format!("that step is about `{target}`, not `{op}`"))
            }
        }
        Step::Advance { .. } => Err("that step moves the clock and calls no adapter".to_owned()),
        Step::Webhook { .. } => Err("a webhook step answers only accepted or not".to_owned()),
        Step::During { call, .. } => reports_outcome(call, op),
        Step::Parallel(calls) => {
            if calls.iter().any(|call| reports_outcome(call, op).is_ok()) {
                Ok(())
            } else {
                Err(format!("no call in that parallel step answers for `{op}`"))
            }
        }
    }
}

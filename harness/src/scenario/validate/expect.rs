//! `expect:` -> expectations, each naming declared operations and real steps.

use std::collections::BTreeMap;

use super::declared::Declared;
use super::steps::undeclared;
use crate::protocol::OutcomeKind;
use crate::scenario::error::Diagnostics;
use crate::scenario::model::{Allowed, Expectations, OpId, Step};
use crate::scenario::raw::{RawExpect, RawOutcome, RawOutcomes};
use crate::scenario::span::{OneOrMany, Sp, SpMap};

/// Checks `expect:` section by section (none: no expectations).
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
        after_step(d, by_step, steps, declared, &mut expect);
    }
    if let Some(effects) = &raw.effects {
        effect_counts(d, effects, declared, &mut expect);
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
        needs_review_from_step(d, from, steps, declared, &mut expect);
    }
    expect
}

/// `after_step:`: each step number a real step, each operation one that step
/// gets an outcome for.
fn after_step(
    d: &mut Diagnostics,
    by_step: &SpMap<u64, SpMap<String, RawOutcomes>>,
    steps: &[Option<Step>],
    declared: &Declared,
    expect: &mut Expectations,
) {
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
        // A step too broken to build is reported already; judging it again
        // would only add noise.
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

/// `effects:`: 0 or 1 per declared operation (more can never hold).
fn effect_counts(
    d: &mut Diagnostics,
    effects: &SpMap<String, Sp<u32>>,
    declared: &Declared,
    expect: &mut Expectations,
) {
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

/// `needs_review_from_step:`: each step number a real step.
fn needs_review_from_step(
    d: &mut Diagnostics,
    from: &SpMap<String, Sp<u64>>,
    steps: &[Option<Step>],
    declared: &Declared,
    expect: &mut Expectations,
) {
    for (op, number) in &from.0 {
        known(d, op, declared);
        match usize::try_from(number.value)
            .ok()
            .filter(|n| (1..=steps.len()).contains(n))
        {
            Some(n) => {
                expect
                    .needs_review_from_step
                    .insert(declared.op_id(&op.value), n);
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

/// Why a step gets no outcome for an operation back from the adapter.
#[derive(Debug, thiserror::Error)]
enum NoOutcome<'s> {
    /// The step calls for another operation.
    #[error("that step is about `{target}`, not `{op}`")]
    OtherOperation {
        /// The step's operation.
        target: &'s str,
        /// The operation the expectation names.
        op: &'s str,
    },
    /// The step kills the adapter mid-call.
    #[error("that step crashes the adapter before it can answer")]
    Crashes,
    /// `advance:` calls no adapter.
    #[error("that step moves the clock and calls no adapter")]
    MovesClock,
    /// A webhook's answer is accepted or not, never an outcome.
    #[error("a webhook step answers only accepted or not")]
    Webhook,
    /// No call of a parallel step answers for the operation.
    #[error("no call in that parallel step answers for `{op}`")]
    NoParallelCall {
        /// The operation the expectation names.
        op: &'s str,
    },
}

/// Does `step` get an outcome for `op` back from the adapter? `Err` says why not.
fn reports_outcome<'s>(step: &'s Step, op: &'s str) -> Result<(), NoOutcome<'s>> {
    match step {
        Step::Execute { op: target, crash } | Step::Reconcile { op: target, crash } => {
            if target != op {
                Err(NoOutcome::OtherOperation { target, op })
            } else if crash.is_some() {
                Err(NoOutcome::Crashes)
            } else {
                Ok(())
            }
        }
        Step::Status { op: target } | Step::Resolve { op: target, .. } => {
            if target == op {
                Ok(())
            } else {
                Err(NoOutcome::OtherOperation { target, op })
            }
        }
        Step::Advance { .. } => Err(NoOutcome::MovesClock),
        Step::Webhook { .. } => Err(NoOutcome::Webhook),
        Step::During { call, .. } => reports_outcome(call, op),
        Step::Parallel(calls) => {
            if calls.iter().any(|call| reports_outcome(call, op).is_ok()) {
                Ok(())
            } else {
                Err(NoOutcome::NoParallelCall { op })
            }
        }
    }
}

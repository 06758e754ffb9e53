//! What the ledger proves about an operation at the moment of a reply.
//!
//! Verdicts judge truth, not a design: an outcome the ledger proves true is
//! never a violation for coming early (an adapter that climbs the ladder inside
//! `execute` knows more, sooner, than one that leaves it to `reconcile`), and a
//! claim is judged at the simulator time it was made, because an asynchronous
//! object that settles later was still `processing` when the claim was made.

use lostreply_simulator::{Effect, ObjectStatus, Plan};

use super::attribution::Attribution;
use super::index::Index;
use crate::protocol::{OutcomeKind, OutcomeReply};
use crate::run::observation::{Call, Observation};

/// An object's status at simulator time `at_ms`: `processing` until its settle
/// time on an asynchronous provider, then what it settled to.
pub(crate) fn status_at(plan: &Plan, effect: &Effect, at_ms: i64) -> ObjectStatus {
    effect.status_at(plan.asynchronous, at_ms)
}

/// True when the ledger proves `reply` (made in `call`) true for `op`:
/// - `succeeded`: it names an effect of the operation that was done by then;
/// - `pending`: an effect of the operation was still processing then (and a
///   named ref, if any, is that effect);
/// - `failed`: the operation has effects and every one had settled `failed` by then;
/// - `unknown`: never proves anything.
pub(crate) fn proven(
    obs: &Observation,
    a: &Attribution<'_>,
    ix: &Index<'_>,
    op: &str,
    call: &Call,
    reply: &OutcomeReply,
) -> bool {
    let Some(group) = a.group(op) else {
        return false;
    };
    let effects = a.effects_of_group(group, &obs.ledger);
    let plan = &obs.scenario.plan;
    let at = call.sim_ms;
    match reply.outcome {
        OutcomeKind::Succeeded => reply
            .provider_ref
            .as_deref()
            .and_then(|r| ix.effect(r))
            .is_some_and(|(position, e)| {
                a.group_of_effect(position) == Some(group)
                    && status_at(plan, e, at) == ObjectStatus::Succeeded
            }),
        OutcomeKind::Pending => effects.iter().any(|e| {
            status_at(plan, e, at) == ObjectStatus::Processing
                && reply.provider_ref.as_deref().is_none_or(|r| r == e.id)
        }),
        OutcomeKind::Failed => {
            !effects.is_empty()
                && effects
                    .iter()
                    .all(|e| status_at(plan, e, at) == ObjectStatus::Failed)
        }
        OutcomeKind::Unknown => false,
    }
}

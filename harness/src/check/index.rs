//! Lookups the checks need, built once per run so that every check is a walk
//! over the data plus map lookups, never a scan per operation. Hash maps: no
//! iteration over them reaches output.
//!
//! Operations are known by a slot: their position in the scenario (the
//! attribution's), or for an id no operation has (a call the scenario did not
//! make, which the checks never ask about but must not lose), a slot after
//! them. Per-operation lists are grouped by slot in one allocation.

use std::collections::BTreeSet;

use lostreply_simulator::fixed_map::{map_with_capacity, FixedMap};
use lostreply_simulator::Effect;

use super::attribution::Attribution;
use super::grouped::{pos, Grouped, NONE};
use crate::by_key::ByKey;
use crate::run::observation::{Call, CallAt, Observation};

/// Indexes over one observation.
pub(crate) struct Index<'o> {
    attribution: &'o Attribution<'o>,
    /// Ids that are no operation's, numbered after the operations.
    other_ops: FixedMap<&'o str, usize>,
    /// Effect id to its position in the ledger (and the ledger itself).
    effects: ByKey<'o, Effect>,
    /// The run's calls, which `outcome_calls` names by position.
    calls: &'o [Call],
    /// By slot: the positions of calls that produced an outcome, in the
    /// order they ended (a `u32` a call where a reference took 8 bytes: two
    /// million of them on a million operations, at the checks' peak).
    outcome_calls: Grouped,
    /// Calls by (step, operation), probes left out: what a step reported.
    /// Only the steps the scenario's `after_step` asks about.
    step_calls: FixedMap<usize, FixedMap<&'o str, Vec<CallAt<'o>>>>,
}

impl<'o> Index<'o> {
    pub(crate) fn new(obs: &'o Observation, attribution: &'o Attribution<'o>) -> Index<'o> {
        let operations = obs.scenario.operations.len();
        let mut other_ops: FixedMap<&'o str, usize> = map_with_capacity(0);
        let mut slot = |id: &'o str| match attribution.op_position(id) {
            Some(position) => position,
            None => {
                let next = operations + other_ops.len();
                *other_ops.entry(id).or_insert(next)
            }
        };
        let effects = ByKey::new(&obs.ledger, |effect: &Effect| effect.id.as_str());
        let asked: BTreeSet<usize> = obs.scenario.expect.after_step.keys().copied().collect();
        let mut step_calls: FixedMap<usize, FixedMap<&str, Vec<CallAt<'o>>>> = map_with_capacity(0);
        let mut outcome_slot = vec![NONE; obs.calls.len()];
        for call in CallAt::all(&obs.calls) {
            let Some(op) = call.call.operation_id.as_deref() else {
                continue;
            };
            let position = call.position;
            if call.outcome().is_some() {
                outcome_slot[position] = pos(slot(op));
            }
            if !call.probe && asked.contains(&call.step_number()) {
                step_calls
                    .entry(call.step_number())
                    .or_insert_with(|| map_with_capacity(0))
                    .entry(op)
                    .or_default()
                    .push(call);
            }
        }
        let slots = operations + other_ops.len();
        // Counted into groups, then each group put in the order its calls
        // ended where it lies (a copy made beside it would be 12 MB at a
        // million operations, at the checks' highest point).
        let mut outcome_calls = Grouped::new(&outcome_slot, slots);
        drop(outcome_slot);
        outcome_calls.sort_each_by_key(|p| obs.calls.get(p as usize).map(|c| (c.end_ms, p)));
        Index {
            attribution,
            other_ops,
            effects,
            calls: &obs.calls,
            outcome_calls,
            step_calls,
        }
    }

    /// The slot of an operation id, if it has one.
    fn slot(&self, op: &str) -> Option<usize> {
        self.attribution
            .op_position(op)
            .or_else(|| self.other_ops.get(op).copied())
    }

    /// The effect with this id and its position in the ledger.
    pub(crate) fn effect(&self, id: &str) -> Option<(usize, &'o Effect)> {
        self.effects.get(id)
    }

    /// Calls about `op` that produced an outcome, in the order they ended.
    pub(crate) fn outcome_calls(&self, op: &str) -> impl Iterator<Item = CallAt<'o>> + '_ {
        self.slot(op)
            .into_iter()
            .flat_map(|slot| self.outcome_calls_at(slot))
    }

    /// [`Index::outcome_calls`] of the operation at `position` in the scenario.
    pub(crate) fn outcome_calls_at(
        &self,
        position: usize,
    ) -> impl Iterator<Item = CallAt<'o>> + '_ {
        let positions = self.outcome_calls.of(position);
        let calls: &'o [Call] = self.calls;
        positions.iter().filter_map(move |&p| {
            let position = p as usize;
            calls.get(position).map(|call| CallAt { position, call })
        })
    }

    /// The scenario's calls about `op` in step `step` (harness probes left out).
    /// Only for the steps of the scenario's `after_step` (empty for others).
    pub(crate) fn step_calls(&self, step: usize, op: &str) -> &[CallAt<'o>] {
        self.step_calls
            .get(&step)
            .and_then(|ops| ops.get(op))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

//! Lookups the checks need, built once per run so that every check is a walk
//! over the data plus map lookups, never a scan per operation. Hash maps: no
//! iteration over them reaches output.

use std::collections::HashMap;

use lostreply_simulator::Effect;

use crate::run::observation::{Call, Observation};
use crate::scenario::model::OperationSpec;

/// Indexes over one observation.
pub(crate) struct Index<'o> {
    operations: HashMap<&'o str, &'o OperationSpec>,
    effects: HashMap<&'o str, &'o Effect>,
    /// Calls about each operation that produced an outcome, in the order they ended.
    outcome_calls: HashMap<&'o str, Vec<&'o Call>>,
    /// Calls by (step, operation), probes left out: what a step reported.
    step_calls: HashMap<usize, HashMap<&'o str, Vec<&'o Call>>>,
    /// [`Observation::final_status`] hashed: looked up once per operation, a
    /// `BTreeMap` of a million ids made every lookup some twenty string compares.
    final_status: HashMap<&'o str, usize>,
}

impl<'o> Index<'o> {
    pub(crate) fn new(obs: &'o Observation) -> Index<'o> {
        let operations = obs
            .scenario
            .operations
            .iter()
            .map(|o| (o.id.as_str(), o))
            .collect();
        let effects = obs.ledger.iter().map(|e| (e.id.as_str(), e)).collect();
        // Sized for one entry per operation, the common case, instead of growing into it.
        let mut outcome_calls: HashMap<&str, Vec<&Call>> =
            HashMap::with_capacity(obs.scenario.operations.len());
        let mut step_calls: HashMap<usize, HashMap<&str, Vec<&Call>>> = HashMap::new();
        for call in &obs.calls {
            let Some(op) = call.operation_id.as_deref() else {
                continue;
            };
            if call.outcome.is_some() {
                outcome_calls.entry(op).or_default().push(call);
            }
            if !call.probe {
                step_calls
                    .entry(call.step)
                    .or_default()
                    .entry(op)
                    .or_default()
                    .push(call);
            }
        }
        for calls in outcome_calls.values_mut() {
            calls.sort_by_key(|c| (c.end_ms, c.index));
        }
        let final_status = obs
            .final_status
            .iter()
            .map(|(op, &index)| (op.as_str(), index))
            .collect();
        Index {
            final_status,
            operations,
            effects,
            outcome_calls,
            step_calls,
        }
    }

    pub(crate) fn operation(&self, id: &str) -> Option<&'o OperationSpec> {
        self.operations.get(id).copied()
    }

    pub(crate) fn effect(&self, id: &str) -> Option<&'o Effect> {
        self.effects.get(id).copied()
    }

    /// Calls about `op` that produced an outcome, in the order they ended.
    pub(crate) fn outcome_calls(&self, op: &str) -> &[&'o Call] {
        self.outcome_calls
            .get(op)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The final `status` call about `op`, if one was made.
    pub(crate) fn final_status(&self, op: &str) -> Option<usize> {
        self.final_status.get(op).copied()
    }

    /// The scenario's calls about `op` in step `step` (harness probes left out).
    pub(crate) fn step_calls(&self, step: usize, op: &str) -> &[&'o Call] {
        self.step_calls
            .get(&step)
            .and_then(|ops| ops.get(op))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

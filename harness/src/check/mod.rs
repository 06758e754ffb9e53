//! The verdict: the seven invariants of docs/scenario-format.md, checked in every run, and
//! the scenario's own `expect`. Each violation names the rule, the operation and
//! the evidence (journal entries, effects and adapter calls) that show it.

pub mod attribution;
mod expectations;
mod grouped;
mod index;
mod invariants;
mod split_body;
mod truth;

use lostreply_reports::model::Violation;

use crate::protocol::OutcomeKind;
use crate::run::observation::Observation;
use attribution::Attribution;
pub(crate) use index::Index;

/// The invariants every run is checked against; the reports show the same enum.
pub use lostreply_reports::model::Invariant;

/// Checks one run: every invariant, then every expectation. `attribution` is
/// [`Attribution::of`] the same observation (the report reuses it).
pub fn check(obs: &Observation, attribution: &Attribution<'_>) -> Vec<Violation> {
    let index = index(obs, attribution);
    let mut violations = invariant_violations(obs, attribution, &index);
    violations.extend(expectation_violations(obs, attribution, &index));
    violations
}

/// [`check`] in parts, for a caller that runs them beside other work: the
/// lookups both parts read, built once.
pub(crate) fn index<'o>(obs: &'o Observation, attribution: &'o Attribution<'o>) -> Index<'o> {
    Index::new(obs, attribution)
}

/// The invariants' violations, first in [`check`]'s list.
pub(crate) fn invariant_violations(
    obs: &Observation,
    attribution: &Attribution<'_>,
    index: &Index<'_>,
) -> Vec<Violation> {
    invariants::check_all(obs, attribution, index)
}

/// The expectations' violations, after the invariants' in [`check`]'s list.
pub(crate) fn expectation_violations(
    obs: &Observation,
    attribution: &Attribution<'_>,
    index: &Index<'_>,
) -> Vec<Violation> {
    expectations::check_all(obs, attribution, index)
}

/// `[succeeded, unknown]`.
pub(crate) fn outcome_list(outcomes: &[OutcomeKind]) -> String {
    format!(
        "[{}]",
        outcomes
            .iter()
            .map(|o| o.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

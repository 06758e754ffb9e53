//! The verdict: the seven invariants of docs/scenario-format.md, checked in every run, and
//! the scenario's own `expect`. Each violation names the rule, the operation and
//! the evidence (journal entries, effects and adapter calls) that show it.

pub mod attribution;
// The parts of `check`, for `suite::check_and_report`, which runs them
// beside other work on a large run.
pub(crate) mod expectations;
mod group_keys;
pub(crate) mod grouped;
pub(crate) mod index;
pub(crate) mod invariants;
pub mod resolution;
mod truth;

use lostreply_reports::model::Violation;

use crate::run::observation::Observation;
use attribution::Attribution;
use index::Index;

/// The invariants every run is checked against; the reports show the same enum.
pub use lostreply_reports::model::Invariant;

/// Checks one run: every invariant, then every expectation. `attribution` is
/// [`Attribution::of`] the same observation (the report reuses it).
pub fn check(obs: &Observation, attribution: &Attribution<'_>) -> Vec<Violation> {
    let index = Index::new(obs, attribution);
    let mut violations = invariants::check_all(obs, attribution, &index);
    violations.extend(expectations::check_all(obs, attribution, &index));
    violations
}

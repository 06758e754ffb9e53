//! The verdict: the seven invariants of docs/scenario-format.md, checked in every run, and
//! the scenario's own `expect`. Each violation names the rule, the operation and
//! the evidence (journal entries, effects and adapter calls) that show it.

pub mod attribution;
mod expectations;
mod index;
mod invariants;
mod truth;

use lostreply_reports::model::{Check, Violation};

use crate::protocol::OutcomeKind;
use crate::run::observation::Observation;
use attribution::Attribution;

/// The invariants, numbered as in docs/scenario-format.md.
pub const INVARIANTS: [(u8, &str); 7] = [
    (1, "at-most-once"),
    (2, "no-success-without-effect"),
    (3, "no-failure-with-effect"),
    (4, "terminal-is-final"),
    (5, "same-key-same-args"),
    (6, "status-is-read-only"),
    (7, "forged-webhook-inert"),
];

/// Checks one run: every invariant, then every expectation. `attribution` is
/// [`Attribution::of`] the same observation (the report reuses it).
pub fn check(obs: &Observation, attribution: &Attribution) -> Vec<Violation> {
    let index = index::Index::new(obs);
    let mut violations = invariants::check_all(obs, attribution, &index);
    violations.extend(expectations::check_all(obs, attribution, &index));
    violations
}

/// The `Check` of invariant `number`.
pub(crate) fn invariant(number: u8) -> Check {
    let name = INVARIANTS
        .iter()
        .find(|(n, _)| *n == number)
        .map(|(_, name)| *name)
        .unwrap_or("unknown");
    Check::Invariant {
        number,
        name: name.to_owned(),
    }
}

/// The protocol's name of an outcome.
pub fn outcome_name(outcome: OutcomeKind) -> &'static str {
    match outcome {
        OutcomeKind::Succeeded => "succeeded",
        OutcomeKind::Failed => "failed",
        OutcomeKind::Pending => "pending",
        OutcomeKind::Unknown => "unknown",
    }
}

/// `[succeeded, unknown]`.
pub(crate) fn outcome_list(outcomes: &[OutcomeKind]) -> String {
    format!(
        "[{}]",
        outcomes
            .iter()
            .map(|o| outcome_name(*o))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

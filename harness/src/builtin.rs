//! The scenario library, embedded at build time so that an installed binary
//! carries it and `lostreply run` works from any directory.

use crate::scenario::model::Scenario;
use crate::scenario::ScenarioError;

include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));

/// The prefix that marks a built-in scenario's path in reports and commands.
pub const BUILTIN_PREFIX: &str = "scenarios/";

/// Parses every built-in scenario. They are tested, so an error here is a bug
/// in this build, reported like any scenario error.
pub fn scenarios() -> Result<Vec<Scenario>, ScenarioError> {
    BUILTIN_SCENARIOS
        .iter()
        .map(|(name, text)| crate::scenario::parse(text, &format!("{BUILTIN_PREFIX}{name}")))
        .collect()
}

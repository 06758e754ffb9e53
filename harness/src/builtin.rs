//! What ships inside the binary: the scenario library and the bundled adapters.

use std::sync::Arc;

use crate::adapter::AdapterFactory;
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

/// Names of the bundled in-process adapters.
pub const ADAPTERS: [&str; 1] = ["reference"];

/// A bundled adapter by name.
pub fn adapter(name: &str) -> Option<Arc<dyn AdapterFactory>> {
    match name {
        "reference" => Some(Arc::new(crate::reference::ReferenceFactory)),
        _ => None,
    }
}

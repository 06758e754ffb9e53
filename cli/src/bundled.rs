//! The adapters the `lostreply` binary ships: `--builtin NAME` and
//! `lostreply adapter NAME CALL`. The engine knows none of them.
//!
//! The reference adapter first, then every adapter `validate --prove` runs
//! (the example designs, correct and flawed, and the naive adapters), so that
//! each run a proof reports can be rerun, in process or as a process.

use std::sync::Arc;

use lostreply_harness::adapter::AdapterFactory;

/// Names of the bundled in-process adapters, the reference first.
pub fn names() -> Vec<String> {
    let mut names = vec!["reference".to_owned()];
    names.extend(
        lostreply_examples::prove::family::every_member()
            .into_iter()
            .map(|m| m.name)
            .filter(|name| name != "reference"),
    );
    names
}

/// A bundled adapter by name.
pub fn adapter(name: &str) -> Option<Arc<dyn AdapterFactory>> {
    match name {
        "reference" => Some(Arc::new(lostreply_reference::ReferenceFactory)),
        _ => lostreply_examples::prove::family::every_member()
            .into_iter()
            .find(|m| m.name == name)
            .map(|m| m.factory),
    }
}

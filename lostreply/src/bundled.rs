//! The adapters the `lostreply` binary ships: `--builtin NAME` and
//! `lostreply adapter NAME CALL`. The engine knows none of them.

use std::sync::Arc;

use lostreply_harness::adapter::AdapterFactory;

/// Names of the bundled in-process adapters.
pub const ADAPTERS: [&str; 1] = ["reference"];

/// A bundled adapter by name.
pub fn adapter(name: &str) -> Option<Arc<dyn AdapterFactory>> {
    match name {
        "reference" => Some(Arc::new(lostreply_reference::ReferenceFactory)),
        _ => None,
    }
}

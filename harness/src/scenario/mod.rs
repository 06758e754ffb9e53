//! Scenario files: parsing (with spans), validation, and conversion into a
//! [`model::Scenario`].
//!
//! The path through this module: [`load`] reads a file, [`parse`] reads its
//! YAML into the `raw` serde types (every value with its line and column;
//! unknown keys and wrong types stop here), then `validate` checks what needs
//! more than one value (references, impossible fault rules, step forms) and
//! builds the model, reporting every problem it finds in one pass.
//! docs/scenario-format.md is the format's reference; [`schema`] is its JSON Schema.

/// MCP client profiles: named windows with real clients' figures, and scaling.
pub mod client_profiles;
pub(crate) mod error;
pub mod model;
pub mod provider_profile;
pub(crate) mod raw;
mod schema;
pub mod select;
/// Values that remember their line and column; other YAML readers of the
/// project (certify's contract files) use them too.
pub mod span;
mod validate;
pub(crate) mod yaml;

use std::path::Path;

pub use error::{Diagnostic, ScenarioError, MAX_DIAGNOSTICS};
pub use schema::schema;
pub use validate::{
    DEFAULT_CALL_DEADLINE, DEFAULT_CLIENT_TIMEOUT, DEFAULT_EVIDENCE, DEFAULT_REVISION,
    DEFAULT_STALL_CAP,
};

use error::Diagnostics;
use model::Scenario;
use span::Pos;
use yaml::{end_of, is_blank, yaml_message, yaml_options};

/// Largest scenario file read (a scenario is a page or two of YAML).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Reads and validates the scenario file at `path` (named in diagnostics as given).
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let shown = path.display().to_string();
    let read_error = |source| ScenarioError::Read {
        path: shown.clone(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read_error)?.len();
    if size > MAX_FILE_BYTES {
        let mut d = Diagnostics::new(&shown, "");
        d.error(
            Pos { line: 0, column: 0 },
            format!("the file is {size} bytes; a scenario may have at most {MAX_FILE_BYTES}"),
        );
        return Err(d.into_error());
    }
    let bytes = std::fs::read(path).map_err(read_error)?;
    match std::str::from_utf8(&bytes) {
        Ok(text) => parse(text, &shown),
        Err(err) => {
            let valid = String::from_utf8_lossy(&bytes[..err.valid_up_to()]).into_owned();
            let pos = end_of(&valid);
            let mut d = Diagnostics::new(&shown, &valid);
            d.error(pos, "the file is not UTF-8 text (a bad byte starts here)");
            Err(d.into_error())
        }
    }
}

/// Parses and validates scenario text; `path` only names the file in diagnostics.
pub fn parse(text: &str, path: &str) -> Result<Scenario, ScenarioError> {
    let mut d = Diagnostics::new(path, text);
    if text.len() as u64 > MAX_FILE_BYTES {
        d.error(
            Pos { line: 0, column: 0 },
            format!(
                "the text is {} bytes; a scenario may have at most {MAX_FILE_BYTES}",
                text.len()
            ),
        );
        return Err(d.into_error());
    }
    if is_blank(text) {
        d.error(
            Pos::START,
            "the file is empty: a scenario starts with `version: 1`",
        );
        return Err(d.into_error());
    }
    let raw = match serde_saphyr::from_str_with_options::<raw::RawScenario>(text, yaml_options()) {
        Ok(raw) => raw,
        Err(err) => {
            let pos = err.location().map_or(Pos::START, |at| Pos {
                line: at.line(),
                column: at.column(),
            });
            d.error(pos, yaml_message(&err));
            return Err(d.into_error());
        }
    };
    let scenario = validate::scenario(&raw, path, &mut d);
    if d.is_empty() {
        Ok(scenario)
    } else {
        Err(d.into_error())
    }
}

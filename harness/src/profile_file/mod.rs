//! Profile files: a provider's wire described in YAML (docs/profiles.md), read
//! into the simulator's [`Profile`], and any [`Profile`] written back.
//!
//! The path through this module mirrors the scenario parser's: [`parse_profile`]
//! reads the YAML into the `raw` serde types (every value with its line and
//! column, through the scenario module's [`Sp`](crate::scenario::span::Sp);
//! unknown keys and wrong types stop here), then `check` validates what needs
//! more than one value's shape (paths distinct across resources, header names,
//! error kinds, template placeholders) and builds the profile, reporting every
//! problem it finds in one pass. `write` is the inverse: [`write_profile`]
//! writes the file that reads back to the same profile, which is how the
//! built-in profiles are published (`profiles/*.yaml`, `lostreply profile
//! show`). [`profile_schema`] is the format's JSON Schema.

mod builtin_files;
mod check;
mod common;
mod node;
mod raw;
mod schema;
mod write;

use std::fmt;
use std::path::Path;

use lostreply_simulator::Profile;

use common::Found;

use crate::scenario::error::Diagnostic;
use crate::scenario::span::Pos;
use crate::scenario::yaml::{end_of, is_blank, yaml_message, yaml_options};

pub use builtin_files::builtin_file;
pub use common::{
    MAX_LIST_ITEMS, MAX_PROFILE_BYTES, MAX_RESOURCES, MAX_TEMPLATE_DEPTH, MAX_TEMPLATE_NODES,
};
pub use schema::profile_schema;
pub use write::write_profile;

/// Why a profile file could not be read. Both variants are bad input (the
/// CLI's exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ProfileFileError {
    /// The file could not be read.
    #[error("{path}: cannot read the profile: {source}")]
    Read {
        /// The path given to [`read_profile_file`].
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not a valid profile.
    #[error("{}", Rendered(diagnostics, *omitted))]
    Invalid {
        /// The problems found, in file order (at most
        /// [`MAX_DIAGNOSTICS`](crate::scenario::MAX_DIAGNOSTICS)).
        diagnostics: Vec<Diagnostic>,
        /// How many more problems were found than are kept.
        omitted: usize,
    },
}

impl ProfileFileError {
    /// The problems found (empty for a read error).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            ProfileFileError::Read { .. } => &[],
            ProfileFileError::Invalid { diagnostics, .. } => diagnostics,
        }
    }
}

/// The diagnostics one per line (each with its source line and caret), as
/// the scenario parser prints them.
struct Rendered<'a>(&'a [Diagnostic], usize);

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, diagnostic) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{diagnostic}")?;
        }
        if self.1 > 0 {
            write!(f, "\n... and {} more", self.1)?;
        }
        Ok(())
    }
}

/// Reads and validates the profile file at `path` (named in diagnostics as given).
pub fn read_profile_file(path: &Path) -> Result<Profile, ProfileFileError> {
    let shown = path.display().to_string();
    let read_error = |source| ProfileFileError::Read {
        path: shown.clone(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read_error)?.len();
    if size > MAX_PROFILE_BYTES {
        let mut found = Found::new(&shown, "");
        found.error(
            Pos { line: 0, column: 0 },
            format!("the file is {size} bytes; a profile may have at most {MAX_PROFILE_BYTES}"),
        );
        return Err(into_error(found));
    }
    let bytes = std::fs::read(path).map_err(read_error)?;
    match std::str::from_utf8(&bytes) {
        Ok(text) => parse_profile(text, path),
        Err(err) => {
            let valid = String::from_utf8_lossy(&bytes[..err.valid_up_to()]).into_owned();
            let mut found = Found::new(&shown, &valid);
            found.error(
                end_of(&valid),
                "the file is not UTF-8 text (a bad byte starts here)",
            );
            Err(into_error(found))
        }
    }
}

/// Parses and validates profile text; `path` only names the file in diagnostics.
pub fn parse_profile(text: &str, path: &Path) -> Result<Profile, ProfileFileError> {
    let shown = path.display().to_string();
    let mut found = Found::new(&shown, text);
    if text.len() as u64 > MAX_PROFILE_BYTES {
        found.error(
            Pos { line: 0, column: 0 },
            format!(
                "the text is {} bytes; a profile may have at most {MAX_PROFILE_BYTES}",
                text.len()
            ),
        );
        return Err(into_error(found));
    }
    if is_blank(text) {
        found.error(
            Pos::START,
            "the file is empty: a profile starts with `version: 1` and `name:`",
        );
        return Err(into_error(found));
    }
    let raw = match serde_saphyr::from_str_with_options::<raw::RawProfile>(text, yaml_options()) {
        Ok(raw) => raw,
        Err(err) => {
            let pos = err.location().map_or(Pos::START, |at| Pos {
                line: at.line(),
                column: at.column(),
            });
            found.error(pos, yaml_message(&err));
            return Err(into_error(found));
        }
    };
    let profile = check::profile(&raw, &mut found);
    if found.is_empty() {
        Ok(profile)
    } else {
        Err(into_error(found))
    }
}

/// Whether `text` is a profile file rather than a scenario, by the rule
/// `lostreply validate` documents: a line that starts (unindented) with
/// `resources:` or `routes:`, and none that starts with `steps:`. A scenario
/// keeps its collections under `provider:`, never at the top level, and a
/// profile has no steps; a line scan decides even for a file whose YAML is
/// broken further down, so its errors come from the right parser.
pub fn is_profile_text(text: &str) -> bool {
    let top_level = |key: &str| {
        text.lines().any(|line| {
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
    };
    (top_level("resources") || top_level("routes")) && !top_level("steps")
}

/// A profile file's error for everything `found` recorded.
fn into_error(found: Found<'_>) -> ProfileFileError {
    let (diagnostics, omitted) = found.into_parts();
    ProfileFileError::Invalid {
        diagnostics,
        omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_told_from_scenarios_by_their_top_level_keys() {
        assert!(is_profile_text(
            "version: 1\nname: x\nresources:\n  - name: a\n"
        ));
        assert!(is_profile_text("version: 1\nname: x\nroutes : generic\n"));
        assert!(!is_profile_text(
            "version: 1\nid: x\nprovider:\n  resources: [a]\nsteps:\n  - execute: op-1\n"
        ));
        assert!(!is_profile_text("routes: generic\nsteps: []\n"));
        assert!(!is_profile_text("resources_x: 1\n"));
    }
}

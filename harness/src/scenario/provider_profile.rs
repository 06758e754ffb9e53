//! A provider profile as a scenario or the command line names it: a built-in
//! name (`stripe`) or a profile file (`profiles/acme.yaml`). Scenarios and
//! `lostreply serve --profile` read it the same way, here.

use std::path::{Path, PathBuf};

use lostreply_simulator::profile::PROFILE_NAMES;
use lostreply_simulator::Profile;

use crate::profile_file::{read_profile_file, ProfileFileError};

/// Why a named profile could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ProfileChoiceError {
    /// Neither a built-in profile nor a path.
    #[error(
        "unknown provider profile `{name}`: one of {}, or a profile file (a path with `/`, or \
         ending .yaml or .yml)",
        PROFILE_NAMES.join(", ")
    )]
    UnknownName {
        /// The name as written.
        name: String,
    },
    /// A profile file that could not be read into a profile: every problem
    /// at its file, line and column.
    #[error(transparent)]
    File(#[from] ProfileFileError),
}

/// How a value names a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileChoice {
    /// One of [`PROFILE_NAMES`].
    Builtin(&'static str),
    /// A profile file, as written (relative paths are the reader's to resolve).
    File(PathBuf),
}

impl ProfileChoice {
    /// Reads `value`: a path when it looks like one (it contains `/` or ends
    /// `.yaml`/`.yml`), a built-in name otherwise.
    pub fn parse(value: &str) -> Result<ProfileChoice, ProfileChoiceError> {
        if looks_like_path(value) {
            return Ok(ProfileChoice::File(PathBuf::from(value)));
        }
        PROFILE_NAMES
            .iter()
            .find(|known| **known == value)
            .map(|known| ProfileChoice::Builtin(known))
            .ok_or_else(|| ProfileChoiceError::UnknownName {
                name: value.to_owned(),
            })
    }

    /// The profile, a file read relative to `base_dir` (a scenario's
    /// directory; empty: the working directory).
    pub fn load(&self, base_dir: &Path) -> Result<Profile, ProfileChoiceError> {
        match self {
            ProfileChoice::Builtin(name) => {
                Profile::builtin(name).ok_or_else(|| ProfileChoiceError::UnknownName {
                    name: (*name).to_owned(),
                })
            }
            ProfileChoice::File(path) => load_profile_path(&base_dir.join(path)),
        }
    }
}

/// True when `value` names a file rather than a built-in profile.
pub fn looks_like_path(value: &str) -> bool {
    value.contains('/') || value.ends_with(".yaml") || value.ends_with(".yml")
}

/// Reads a profile file.
pub fn load_profile_path(path: &Path) -> Result<Profile, ProfileChoiceError> {
    Ok(read_profile_file(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert_eq!(
            ProfileChoice::parse("stripe").ok(),
            Some(ProfileChoice::Builtin("stripe"))
        );
        assert_eq!(
            ProfileChoice::parse("acme.yml").ok(),
            Some(ProfileChoice::File(PathBuf::from("acme.yml")))
        );
        assert_eq!(
            ProfileChoice::parse("profiles/acme").ok(),
            Some(ProfileChoice::File(PathBuf::from("profiles/acme")))
        );
        let unknown = ProfileChoice::parse("strpe")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            unknown.contains("one of generic, stripe, openai, anthropic"),
            "{unknown}"
        );
    }

    #[test]
    fn every_builtin_name_loads() {
        for name in PROFILE_NAMES {
            let choice = ProfileChoice::parse(name).ok();
            let profile = choice.and_then(|c| c.load(Path::new("")).ok());
            assert_eq!(profile.map(|p| p.name), Some(name.to_owned()));
        }
    }
}

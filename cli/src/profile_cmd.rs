//! `lostreply profile show NAME` and `lostreply profile schema`, and the
//! profile files `lostreply validate` finds among its paths (docs/profiles.md).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use lostreply_harness::exit;
use lostreply_harness::profile_file::{
    builtin_file, is_profile_text, profile_schema, read_profile_file, MAX_PROFILE_BYTES,
};
use lostreply_harness::scenario::select::PathError;
use lostreply_simulator::profile::{Routes, PROFILE_NAMES};

#[derive(Debug, Args)]
pub(super) struct ProfileArgs {
    #[command(subcommand)]
    command: ProfileCommand,
}

#[derive(Debug, Subcommand)]
enum ProfileCommand {
    /// Print a built-in profile as a profile file (generic, stripe, openai, anthropic), to copy and adapt.
    Show {
        /// The built-in profile's name.
        name: String,
    },
    /// Print the JSON Schema of profile files (for editors).
    Schema,
}

pub(super) fn profile(args: ProfileArgs) -> i32 {
    match args.command {
        ProfileCommand::Show { name } => match builtin_file(&name) {
            Some(text) => {
                print!("{text}");
                exit::OK
            }
            None => {
                eprintln!(
                    "lostreply: no built-in profile `{name}`: one of {}",
                    PROFILE_NAMES.join(", ")
                );
                exit::BAD_INPUT
            }
        },
        ProfileCommand::Schema => match serde_json::to_string_pretty(&profile_schema()) {
            Ok(text) => {
                println!("{text}");
                exit::OK
            }
            Err(e) => {
                eprintln!("lostreply: cannot print the schema: {e}");
                exit::ADAPTER_OR_INFRA
            }
        },
    }
}

/// The files `validate` was given, profile files apart from scenarios.
#[derive(Debug, Default)]
pub(super) struct Split {
    /// Profile files.
    pub(super) profiles: Vec<PathBuf>,
    /// Everything else: scenario files, for the scenario loader (which also
    /// reports the ones it cannot read).
    pub(super) scenarios: Vec<PathBuf>,
}

/// The paths `validate` was given that cannot be read or hold no YAML file,
/// every one reported at once, a line each (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{}", lines(.0))]
pub(super) struct PathErrors(Vec<PathError>);

/// Each error on a line of its own, in the order of the paths.
fn lines(errors: &[PathError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands directories (their `*.yaml` and `*.yml`, sorted) and tells
/// profile files from scenarios by their text ([`is_profile_text`]: a
/// top-level `resources:` or `routes:` and no `steps:`), so that one
/// `lostreply validate profiles/ scenarios/` checks both.
pub(super) fn split(paths: &[PathBuf]) -> Result<Split, PathErrors> {
    let mut split = Split::default();
    let mut errors = Vec::new();
    for path in paths {
        match lostreply_harness::scenario::select::files_of(path) {
            Ok(files) => {
                for file in files {
                    if is_profile_file(&file) {
                        split.profiles.push(file);
                    } else {
                        split.scenarios.push(file);
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(split)
    } else {
        Err(PathErrors(errors))
    }
}

/// A file too large for a profile, unreadable or not text goes to the
/// scenario loader, which says what is wrong with it.
fn is_profile_file(path: &Path) -> bool {
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_PROFILE_BYTES);
    small && std::fs::read_to_string(path).is_ok_and(|text| is_profile_text(&text))
}

/// Checks each profile file: `ok` lines on `ok` (stdout, or stderr where
/// stdout is kept for JSON), every problem as `file:line:column: message`
/// on stderr. Exit code 0, or 2 if any is invalid.
pub(super) fn validate_profiles(paths: &[PathBuf], ok: &mut dyn Write) -> i32 {
    let mut code = exit::OK;
    for path in paths {
        match read_profile_file(path) {
            Ok(profile) => {
                let routes = match &profile.routes {
                    Routes::Generic => "generic routes".to_owned(),
                    Routes::Declared(resources) if resources.len() == 1 => "1 resource".to_owned(),
                    Routes::Declared(resources) => format!("{} resources", resources.len()),
                };
                // A closed stdout is no reason to call a good file bad.
                let _ = writeln!(
                    ok,
                    "ok  {}  (profile {}, {routes})",
                    path.display(),
                    profile.name
                );
            }
            Err(e) => {
                eprintln!("{e}");
                code = exit::BAD_INPUT;
            }
        }
    }
    code
}

//! Which scenarios a run takes: files, directories of `*.yaml`, or none (the
//! built-in library), then tags. Shared by the command line (`run`, `list`)
//! and `testing::main`: [`take`] is the one place where the selection is made.
//!
//! Opt-in tags ([`OPT_IN_TAGS`]: `mcp` and the built-in provider profiles'
//! `stripe`, `openai`, `anthropic`): a scenario with one of them is taken only
//! when the run names that tag (`--tag mcp`), or when its file is named one
//! by one. An HTTP-only adapter would fail every MCP scenario, and an adapter
//! written for the generic API every Stripe one, so a default run
//! (`lostreply run`, `testing::main`) leaves them out and says so.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::error::ScenarioError;
use super::model::Scenario;

/// Tags whose scenarios a run takes only when asked for by name: `mcp`
/// (the provider is also an MCP server; the adapter must speak MCP), and
/// `stripe`, `openai`, `anthropic` (the provider speaks that provider's
/// wire; the adapter must call it, through its SDK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OptInTag {
    /// `mcp`: the adapter must speak MCP.
    Mcp,
    /// `stripe`: the adapter must call Stripe.
    Stripe,
    /// `openai`: the adapter must call OpenAI.
    Openai,
    /// `anthropic`: the adapter must call Anthropic.
    Anthropic,
}

impl OptInTag {
    /// Every opt-in tag.
    pub const ALL: [OptInTag; 4] = [
        OptInTag::Mcp,
        OptInTag::Stripe,
        OptInTag::Openai,
        OptInTag::Anthropic,
    ];

    /// The tag as scenarios write it.
    pub const fn name(self) -> &'static str {
        match self {
            OptInTag::Mcp => "mcp",
            OptInTag::Stripe => "stripe",
            OptInTag::Openai => "openai",
            OptInTag::Anthropic => "anthropic",
        }
    }

    /// What an adapter must do to run the scenarios of the tag.
    pub fn need(self) -> &'static str {
        match self {
            OptInTag::Mcp => "speaks MCP",
            OptInTag::Stripe => "calls Stripe (its SDK)",
            OptInTag::Openai => "calls OpenAI (its SDK)",
            OptInTag::Anthropic => "calls Anthropic (its SDK)",
        }
    }
}

/// A tag that is not one of [`OptInTag::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an opt-in tag")]
pub struct NotOptIn(pub String);

impl std::str::FromStr for OptInTag {
    type Err = NotOptIn;

    fn from_str(tag: &str) -> Result<OptInTag, NotOptIn> {
        OptInTag::ALL
            .into_iter()
            .find(|t| t.name() == tag)
            .ok_or_else(|| NotOptIn(tag.to_owned()))
    }
}

/// The names of [`OptInTag::ALL`].
pub const OPT_IN_TAGS: [&str; 4] = [
    OptInTag::Mcp.name(),
    OptInTag::Stripe.name(),
    OptInTag::Openai.name(),
    OptInTag::Anthropic.name(),
];

/// What a selection took, and what it left out because of an opt-in tag.
#[derive(Debug, Clone, Default)]
pub struct Selected {
    /// The scenarios to run, in selection order.
    pub scenarios: Vec<Scenario>,
    /// Scenarios that match the tags but carry an opt-in tag the run did not
    /// name (each with the opt-in tags it lacks), in selection order.
    pub left_out: Vec<(Scenario, Vec<String>)>,
}

impl Selected {
    /// One line saying what was left out and how to take it, if anything was.
    pub fn left_out_note(&self) -> Option<String> {
        if self.left_out.is_empty() {
            return None;
        }
        let mut tags: Vec<&str> = self
            .left_out
            .iter()
            .flat_map(|(_, tags)| tags.iter().map(String::as_str))
            .collect();
        tags.sort_unstable();
        tags.dedup();
        let flags: Vec<String> = tags.iter().map(|t| format!("--tag {t}")).collect();
        let count = match self.left_out.len() {
            1 => "1 scenario".to_owned(),
            n => format!("{n} scenarios"),
        };
        let needs: Vec<&str> = tags
            .iter()
            .map(|t| t.parse().map_or("asks for them", OptInTag::need))
            .collect();
        Some(format!(
            "{count} tagged {} left out: they need an adapter that {}; {} takes them",
            tags.join(", "),
            needs.join(" or "),
            flags.join(" ")
        ))
    }
}

/// The opt-in tags `scenario` carries that `tags` does not name.
pub fn missing_opt_in(scenario: &Scenario, tags: &[String]) -> Vec<String> {
    scenario
        .tags
        .iter()
        .filter(|t| t.parse::<OptInTag>().is_ok() && !tags.contains(t))
        .cloned()
        .collect()
}

/// True when a run without `--tag` takes `scenario` (it has no opt-in tag).
pub fn in_default_selection(scenario: &Scenario) -> bool {
    missing_opt_in(scenario, &[]).is_empty()
}

/// Why a path names no YAML file.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The path (or its directory listing) could not be read.
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A directory without `*.yaml` or `*.yml` files.
    #[error("{}: no *.yaml scenario or profile files in this directory", path.display())]
    EmptyDirectory {
        /// The directory as given.
        path: PathBuf,
    },
}

/// One path or file that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A path names no file.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A file is not a valid scenario.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// Why no scenarios were selected.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    /// A built-in scenario does not parse (a bug of this build).
    #[error(transparent)]
    Builtin(ScenarioError),
    /// Paths or files that could not be loaded, every one of them.
    #[error("{}", Lines(.0))]
    Load(Vec<LoadError>),
    /// Two scenarios share an id (seeds and reports are keyed by it).
    #[error("{path}: scenario id {id:?} is already used by {first}")]
    DuplicateId {
        /// The later scenario's file.
        path: String,
        /// The id both have.
        id: String,
        /// The first scenario's file.
        first: String,
    },
    /// Every scenario that matched was left out for an opt-in tag.
    #[error("no scenario selected: {note}")]
    AllLeftOut {
        /// [`Selected::left_out_note`].
        note: String,
    },
    /// No scenario has any of the tags asked for.
    #[error("no scenario has any of the tags {tags:?}")]
    NoTagMatch {
        /// The tags asked for.
        tags: Vec<String>,
    },
}

impl SelectionError {
    /// True when the files were fine but the run's tags selected nothing: a
    /// usage error rather than bad input.
    pub fn nothing_selected(&self) -> bool {
        matches!(
            self,
            SelectionError::AllLeftOut { .. } | SelectionError::NoTagMatch { .. }
        )
    }
}

/// Errors one per line.
struct Lines<'a>(&'a [LoadError]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// The built-in library as a default run takes it (no opt-in scenario).
pub fn default_library() -> Result<Vec<Scenario>, SelectionError> {
    Ok(take(&[], &[])?.scenarios)
}

/// The scenarios of `paths` (none: the built-in library) that a run with
/// `tags` takes: with tags, those that carry one of them; opt-in scenarios
/// only when their opt-in tag is among `tags` or their file is named in
/// `paths` itself (not found in a directory). An error when a tag matches
/// nothing, or when everything was left out.
pub fn take(paths: &[PathBuf], tags: &[String]) -> Result<Selected, SelectionError> {
    let loaded: Vec<(Scenario, bool)> = if paths.is_empty() {
        let scenarios = crate::builtin::scenarios().map_err(SelectionError::Builtin)?;
        check_unique_ids(&scenarios)?;
        scenarios.into_iter().map(|s| (s, false)).collect()
    } else {
        load_marked(paths)?
    };
    let mut selected = Selected::default();
    for (scenario, named) in loaded {
        if !tags.is_empty() && !scenario.tags.iter().any(|t| tags.contains(t)) {
            continue;
        }
        let missing = missing_opt_in(&scenario, tags);
        if missing.is_empty() || named {
            selected.scenarios.push(scenario);
        } else {
            selected.left_out.push((scenario, missing));
        }
    }
    if selected.scenarios.is_empty() {
        return Err(match selected.left_out_note() {
            Some(note) => SelectionError::AllLeftOut { note },
            None => SelectionError::NoTagMatch {
                tags: tags.to_vec(),
            },
        });
    }
    Ok(selected)
}

/// Loads every scenario the paths name, reporting every error (not only the first).
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Scenario>, SelectionError> {
    Ok(load_marked(paths)?.into_iter().map(|(s, _)| s).collect())
}

/// Like [`load_paths`]; each scenario says whether its file was named itself
/// (rather than found in a named directory).
fn load_marked(paths: &[PathBuf]) -> Result<Vec<(Scenario, bool)>, SelectionError> {
    let mut files = Vec::new();
    let mut errors: Vec<LoadError> = Vec::new();
    for path in paths {
        match files_of(path) {
            Ok(found) => {
                let named = found.len() == 1 && found[0] == *path;
                files.extend(found.into_iter().map(|f| (f, named)));
            }
            Err(e) => errors.push(e.into()),
        }
    }
    let mut scenarios = Vec::new();
    for (file, named) in files {
        match super::load(&file) {
            Ok(s) => scenarios.push((s, named)),
            Err(e) => errors.push(e.into()),
        }
    }
    if errors.is_empty() {
        check_unique_ids(scenarios.iter().map(|(s, _)| s))?;
        Ok(scenarios)
    } else {
        Err(SelectionError::Load(errors))
    }
}

/// The built-in library, or the given paths, every scenario (opt-in ones
/// included: [`take`] is what a run takes).
pub fn load_or_builtin(paths: &[PathBuf]) -> Result<Vec<Scenario>, SelectionError> {
    if paths.is_empty() {
        let scenarios = crate::builtin::scenarios().map_err(SelectionError::Builtin)?;
        check_unique_ids(&scenarios)?;
        Ok(scenarios)
    } else {
        load_paths(paths)
    }
}

/// A file as it is, or a directory's `*.yaml`/`*.yml` files in name order
/// (none is an error): how `run`, `list` and `validate` read their paths.
pub fn files_of(path: &Path) -> Result<Vec<PathBuf>, PathError> {
    let unreadable = |source| PathError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(unreadable)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(PathError::EmptyDirectory {
            path: path.to_path_buf(),
        });
    }
    Ok(files)
}

/// Seeds and reports are keyed by scenario id, so ids must be unique in a suite.
fn check_unique_ids<'a>(
    scenarios: impl IntoIterator<Item = &'a Scenario>,
) -> Result<(), SelectionError> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for s in scenarios {
        if let Some(first) = seen.insert(&s.id, &s.path) {
            return Err(SelectionError::DuplicateId {
                path: s.path.clone(),
                id: s.id.clone(),
                first: first.to_owned(),
            });
        }
    }
    Ok(())
}

//! Which scenarios a run takes: files, directories of `*.yaml`, or none (the
//! built-in library). Shared by the command line and `testing::main`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::Scenario;

/// Loads every scenario the paths name, reporting every error (not only the first).
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match expand(path) {
            Ok(mut found) => files.append(&mut found),
            Err(e) => errors.push(e),
        }
    }
    let mut scenarios = Vec::new();
    for file in files {
        match super::load(&file) {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if errors.is_empty() {
        check_unique_ids(&scenarios)?;
        Ok(scenarios)
    } else {
        Err(errors.join("\n"))
    }
}

/// The built-in library, or the given paths.
pub fn load_or_builtin(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    if paths.is_empty() {
        let scenarios = crate::builtin::scenarios().map_err(|e| e.to_string())?;
        check_unique_ids(&scenarios)?;
        Ok(scenarios)
    } else {
        load_paths(paths)
    }
}

fn expand(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{}: no *.yaml scenario files in this directory",
            path.display()
        ));
    }
    Ok(files)
}

/// Seeds and reports are keyed by scenario id, so ids must be unique in a suite.
fn check_unique_ids(scenarios: &[Scenario]) -> Result<(), String> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for s in scenarios {
        if let Some(first) = seen.insert(&s.id, &s.path) {
            return Err(format!(
                "{}: scenario id {:?} is already used by {first}",
                s.path, s.id
            ));
        }
    }
    Ok(())
}

//! ARCHITECTURE.md holds: every workspace crate has its section, each
//! section's "Depends on" line names exactly the workspace crates its
//! package depends on (and "Tests also use" its dev-dependencies), the
//! sections run from the bottom of the house up so that no crate depends on
//! one above it, and the facade a user adds compiles none of the command
//! line's dependencies. Read from `cargo metadata` and `cargo tree`, so a
//! dependency added to a manifest without its sentence fails here.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(workspace())
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A package's workspace dependencies by kind, from its manifest.
#[derive(Debug, Default, PartialEq, Eq)]
struct Deps {
    normal: BTreeSet<String>,
    dev: BTreeSet<String>,
}

/// Every workspace package: its folder and its workspace dependencies.
fn packages() -> BTreeMap<String, (String, Deps)> {
    let metadata: serde_json::Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
    .unwrap();
    let list = metadata["packages"].as_array().unwrap();
    let members: BTreeSet<String> = list
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    let mut packages = BTreeMap::new();
    for p in list {
        let folder = Path::new(p["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mut deps = Deps::default();
        for d in p["dependencies"].as_array().unwrap() {
            let name = d["name"].as_str().unwrap().to_owned();
            if !members.contains(&name) {
                continue;
            }
            match d["kind"].as_str() {
                None => deps.normal.insert(name),
                Some("dev") => deps.dev.insert(name),
                Some(_) => false,
            };
        }
        packages.insert(p["name"].as_str().unwrap().to_owned(), (folder, deps));
    }
    packages
}

/// One `### \`folder/\`: package` section of ARCHITECTURE.md.
#[derive(Debug)]
struct Section {
    folder: String,
    package: String,
    deps: Deps,
}

/// The backticked names on a "Depends on:" or "Tests also use:" line.
fn named(line: &str) -> BTreeSet<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn sections(document: &str) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    for line in document.lines() {
        if let Some(heading) = line.strip_prefix("### `") {
            let (folder, rest) = heading.split_once("/`").unwrap_or_else(|| {
                panic!("a crate's heading is ### `folder/`: package, not {line:?}")
            });
            let package = rest.trim_start_matches(':').trim().trim_matches('`');
            sections.push(Section {
                folder: folder.to_owned(),
                package: package.to_owned(),
                deps: Deps::default(),
            });
        } else if let Some(list) = line.strip_prefix("Depends on:") {
            sections.last_mut().unwrap().deps.normal = named(list);
        } else if let Some(list) = line.strip_prefix("Tests also use:") {
            sections.last_mut().unwrap().deps.dev = named(list);
        }
    }
    sections
}

fn document() -> String {
    std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap()
}

#[test]
fn every_crate_has_a_section_that_names_its_dependencies_exactly() {
    let packages = packages();
    let sections = sections(&document());
    let documented: BTreeSet<&str> = sections.iter().map(|s| s.package.as_str()).collect();
    let actual: BTreeSet<&str> = packages.keys().map(String::as_str).collect();
    assert_eq!(
        documented, actual,
        "ARCHITECTURE.md has one section per workspace crate"
    );
    for section in &sections {
        let (folder, deps) = &packages[&section.package];
        assert_eq!(
            &section.folder, folder,
            "{}: the section names its folder",
            section.package
        );
        assert_eq!(
            section.deps.normal, deps.normal,
            "{}: \"Depends on\" names exactly its workspace dependencies",
            section.package
        );
        assert_eq!(
            section.deps.dev, deps.dev,
            "{}: \"Tests also use\" names exactly its workspace dev-dependencies",
            section.package
        );
    }
}

#[test]
fn no_crate_depends_on_one_above_it() {
    let sections = sections(&document());
    let mut below: BTreeSet<&str> = BTreeSet::new();
    for section in &sections {
        for dep in &section.deps.normal {
            assert!(
                below.contains(dep.as_str()),
                "{} depends on {dep}, which ARCHITECTURE.md places above it (sections run from the bottom up)",
                section.package
            );
        }
        below.insert(&section.package);
    }
}

/// The packages `cargo tree` shows for the facade's normal dependencies.
fn facade_tree(features: &[&str]) -> BTreeSet<String> {
    let mut args = vec![
        "tree",
        "--offline",
        "-p",
        "lostreply",
        "-e",
        "normal",
        "--prefix",
        "none",
        "--format",
        "{p}",
    ];
    args.extend_from_slice(features);
    cargo(&args)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_facade_compiles_none_of_the_command_lines_dependencies() {
    let binary_only = [
        "clap",
        "indicatif",
        "mimalloc",
        "libmimalloc-sys",
        "lostreply-certify",
        "lostreply-cli",
        "lostreply-examples",
        "lostreply-reference",
        "reqwest",
    ];
    let lean = facade_tree(&["--no-default-features"]);
    for name in binary_only {
        assert!(
            !lean.contains(name),
            "lostreply without default features compiles {name}"
        );
    }
    // With `testing` (the default), libtest-mimic brings clap for its
    // arguments, and nothing else of the binary's.
    let default = facade_tree(&[]);
    assert!(default.contains("libtest-mimic"));
    for name in binary_only.iter().filter(|n| **n != "clap") {
        assert!(
            !default.contains(*name),
            "lostreply with default features compiles {name}"
        );
    }
}

//! ARCHITECTURE.md holds: every workspace crate has its section, each
//! section's "Depends on" line names exactly the workspace crates its
//! package depends on (and "Tests also use" its dev-dependencies), the
//! sections run from the bottom of the house up so that no crate depends on
//! one above it, and the facade a user adds compiles none of the command
//! line's dependencies. Read from `cargo metadata` and `cargo tree`, so a
//! dependency added to a manifest without its sentence fails here.

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

/// The longest a function may be, in lines from its signature to its
/// closing brace: a reader holds a unit whole.
const MAX_FUNCTION_LINES: usize = 150;

/// The Rust files of the workspace (sources, tests, examples, benches),
/// build output and installed packages left out.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                rust_files(&path, found);
            }
        } else if name.ends_with(".rs") {
            found.push(path);
        }
    }
}

/// The name of the function a line declares, if it declares one with a
/// body (rustfmt's layout: the body closes with `}` at the line's indent).
fn declared_function(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start().len();
    let mut words = line.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if word == "fn" {
            let name = words.next()?;
            let name = name.split(['(', '<']).next()?;
            return (!line.trim_end().ends_with(';')).then_some((indent, name));
        }
        let qualifier = word.starts_with("pub")
            || matches!(word, "async" | "const" | "unsafe" | "extern" | "\"C\"");
        if !qualifier {
            return None;
        }
    }
    None
}

/// Functions longer than [`MAX_FUNCTION_LINES`]: (lines, file, line, name).
fn long_functions(path: &Path) -> Vec<(usize, String, usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some((indent, name)) = declared_function(line) else {
            continue;
        };
        let end = lines[start + 1..].iter().position(|l| {
            l.len() > indent && l[..indent].trim().is_empty() && l[indent..].starts_with('}')
        });
        if let Some(offset) = end {
            let length = offset + 2;
            if length > MAX_FUNCTION_LINES {
                let shown = path.strip_prefix(workspace()).unwrap_or(path);
                long.push((
                    length,
                    shown.display().to_string(),
                    start + 1,
                    name.to_owned(),
                ));
            }
        }
    }
    long
}

#[test]
fn no_function_is_longer_than_150_lines() {
    let mut files = Vec::new();
    rust_files(&workspace(), &mut files);
    assert!(files.len() > 100, "the workspace's Rust files are found");
    let long: Vec<_> = files.iter().flat_map(|f| long_functions(f)).collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (lines, file, line, name): {long:#?}"
    );
}

/// A crate's source files by module path (`check::index` for
/// `src/check/index.rs`), the crate root as the empty path.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // Test-only modules may reach anywhere in their crate.
    files.retain(|f| {
        !matches!(
            f.file_name().and_then(|n| n.to_str()),
            Some("tests.rs" | "test_support.rs")
        )
    });
    files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts.join("::"), file)
        })
        .collect()
}

/// The module paths a file names through `crate::` and `super::` (in `use`
/// lines and in code), each cut to the longest prefix that is a module.
fn imported_modules(
    file_module: &str,
    text: &str,
    modules: &BTreeMap<String, PathBuf>,
) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for (start, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            let before = code[..start].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
            let mut base: Vec<&str> = if parts.first() == Some(&"crate") {
                parts.remove(0);
                Vec::new()
            } else {
                let mut here: Vec<&str> =
                    file_module.split("::").filter(|p| !p.is_empty()).collect();
                // `super` is the parent of the file's module, for a
                // `mod.rs` file as for any other.
                here.pop();
                while parts.first() == Some(&"super") {
                    parts.remove(0);
                    if parts.first() == Some(&"super") {
                        here.pop();
                    }
                }
                here
            };
            base.extend(parts);
            while !base.is_empty() && !modules.contains_key(&base.join("::")) {
                base.pop();
            }
            found.insert(base.join("::"));
        }
    }
    found
}

/// True when one module is the other's ancestor: a folder's `mod.rs`
/// re-exporting or declaring its children is the module tree, not a loop.
fn related(a: &str, b: &str) -> bool {
    let under = |x: &str, y: &str| x.is_empty() || y.starts_with(&format!("{x}::"));
    a == b || under(a, b) || under(b, a)
}

/// Groups of two or more files of one crate that import each other, directly
/// or through a loop (Tarjan's strongly connected components).
fn circles(src: &Path) -> Vec<Vec<String>> {
    let modules = modules(src);
    let names: Vec<&String> = modules.keys().collect();
    let index: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = names
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(&modules[*name]).unwrap();
            // A file's unit tests may reach anywhere in their crate.
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            imported_modules(name, code, &modules)
                .into_iter()
                .filter(|target| !related(name, target))
                .filter_map(|target| index.get(target.as_str()).copied())
                .collect()
        })
        .collect();
    strongly_connected(&edges)
        .into_iter()
        .filter(|group| group.len() > 1)
        .map(|group| group.into_iter().map(|i| names[i].clone()).collect())
        .collect()
}

fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        next: usize,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        groups: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.edges[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            s.groups.push(group);
        }
    }
    let n = edges.len();
    let mut state = State {
        edges,
        next: 0,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        groups: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.groups
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let mut found = Vec::new();
    for (_, (folder, _)) in packages() {
        let src = workspace().join(&folder).join("src");
        for group in circles(&src) {
            found.push(format!("{folder}: {}", group.join(" <-> ")));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other (move what both need below both): {found:#?}"
    );
}

#[test]
fn a_loop_of_imports_is_found_and_a_tree_is_not() {
    // 0 -> 1 -> 2 -> 0 is a loop; 3 -> 0 and 4 alone are not.
    let edges = vec![vec![1], vec![2], vec![0], vec![0], vec![]];
    let loops: Vec<Vec<usize>> = strongly_connected(&edges)
        .into_iter()
        .filter(|group| group.len() > 1)
        .map(|mut group| {
            group.sort();
            group
        })
        .collect();
    assert_eq!(loops, vec![vec![0, 1, 2]]);
    assert!(related("check", "check::index"));
    assert!(related("", "run"));
    assert!(!related("check", "checker"));
}

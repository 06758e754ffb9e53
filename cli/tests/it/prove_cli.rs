//! `lostreply validate --prove` end to end: a sound file lists the flaws it
//! catches, an impossible file and a design-bound file exit 1 naming the
//! designs they fail and the commands that rerun them, a file the bundled
//! designs cannot judge says so, and bad input exits 2 as `validate` does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

fn lostreply(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("lostreply runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write");
    path
}

fn library_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name);
    std::fs::read_to_string(&path).expect("a library scenario")
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf8")
}

fn correct_names() -> Vec<String> {
    let mut names = vec!["reference".to_owned()];
    names.extend(
        lostreply_examples::correct_designs()
            .iter()
            .map(|f| f.name()),
    );
    names
}

/// Expects `succeeded` for an operation whose every create is refused with a
/// 400 before anything commits: no correct adapter can claim it.
const IMPOSSIBLE: &str = "version: 1
id: rejected-yet-succeeded
title: A create refused before commit, expected to succeed
client_timeout: 1s
provider:
  idempotency: {mode: stripe, retention: 24h}
operations:
  - {id: op-1, resource: tickets, args: {title: Refused, amount: 100}}
faults:
  - when: {kind: create}
    at: before_commit
    response: {status: 400}
steps:
  - execute: op-1
  - reconcile: op-1
expect:
  final: {op-1: [succeeded]}
";

/// Case 2's lost answer, demanding `succeeded` from the execute itself:
/// the eager designs replay at once and know, the lazy ones legitimately
/// answer `unknown` and leave the evidence to the reconcile
/// (examples/src/designs/mod.rs).
fn design_bound() -> String {
    library_file("case02-lost-after-commit.yaml")
        .replace("id: case02-lost-after-commit", "id: execute-must-know")
        .replace("    2: {op-1: [succeeded]}", "    1: {op-1: [succeeded]}")
}

#[test]
fn a_sound_file_exits_0_and_lists_the_flaws_it_catches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "lost.yaml",
        &library_file("case02-lost-after-commit.yaml"),
    );
    let out = lostreply(&["validate", "--prove", path_str(&file)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("sound  "), "{stdout}");
    assert!(stdout.contains("seeds 1..=3"), "{stdout}");
    let caught = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("naive-02-fresh-key-per-attempt"))
        .unwrap_or_else(|| panic!("no row for naive-02: {stdout}"));
    assert!(caught.contains("3/3 seeds"), "{caught}");
    assert!(caught.contains("invariant 1 (at-most-once)"), "{caught}");
    let (_, missed) = stdout
        .split_once("does not catch:")
        .unwrap_or_else(|| panic!("no list of flaws missed: {stdout}"));
    assert!(missed.contains("flawed-unlocked"), "{stdout}");
}

#[test]
fn the_json_proof_names_every_flawed_design_of_the_designs_module() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "lost.yaml",
        &library_file("case02-lost-after-commit.yaml"),
    );
    let out = lostreply(&[
        "validate",
        "--prove",
        "--seeds",
        "1",
        "--format",
        "json",
        path_str(&file),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let proof: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(proof["seeds"], 1);
    let only = &proof["files"][0];
    assert_eq!(only["verdict"], "sound", "{proof:#}");
    let adapters: Vec<&str> = only["flaws"]
        .as_array()
        .expect("flaws")
        .iter()
        .filter_map(|f| f["adapter"].as_str())
        .collect();
    for flawed in lostreply_examples::flawed_designs() {
        assert!(adapters.contains(&flawed.name().as_str()), "{adapters:?}");
    }
    for (_, naive) in lostreply_examples::naive_adapters() {
        assert!(adapters.contains(&naive.name().as_str()), "{adapters:?}");
    }
}

#[test]
fn an_impossible_file_exits_1_naming_every_correct_design() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "impossible.yaml", IMPOSSIBLE);
    let out = lostreply(&["validate", "--prove", path_str(&file)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("impossible  "))
        .unwrap_or_else(|| panic!("no impossible verdict: {stdout}"));
    for name in correct_names() {
        assert!(verdict.contains(&name), "{name} not named: {verdict}");
    }
    assert!(
        stdout.contains("the final status: expect.final"),
        "{stdout}"
    );
    assert!(
        stdout.contains("reproduce: lostreply run --builtin reference --seed 1 "),
        "{stdout}"
    );
    // No flawed adapter runs against an unsound file.
    assert!(!stdout.contains("catches"), "{stdout}");
}

#[test]
fn a_design_bound_file_exits_1_naming_the_designs_it_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "bound.yaml", &design_bound());
    let out = lostreply(&["validate", "--prove", path_str(&file)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("fails lazy, try-lock but passes reference, eager, lookup-first"),
        "{stdout}"
    );
    assert!(
        stdout.contains("step 1 (execute op-1): expect.after_step"),
        "{stdout}"
    );
    assert!(
        stdout.contains("as a process: lostreply run --adapter 'lostreply adapter lazy' --seed 1 "),
        "{stdout}"
    );
}

#[test]
fn the_process_command_a_proof_prints_reproduces_the_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "bound.yaml", &design_bound());
    let adapter = format!("{BIN} adapter lazy");
    let out = lostreply(&["run", "--adapter", &adapter, "--seed", "1", path_str(&file)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("expect.after_step"), "{stdout}");
    // The design the proof passed passes as a process too.
    let adapter = format!("{BIN} adapter eager");
    let out = lostreply(&["run", "--adapter", &adapter, path_str(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn a_file_on_another_providers_wire_is_not_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stripe = write(
        dir.path(),
        "stripe.yaml",
        &library_file("stripe-case02-lost-after-commit.yaml"),
    );
    let out = lostreply(&["validate", "--prove", path_str(&stripe)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("not judged  "), "{stdout}");
    assert!(stdout.contains("provider.profile is stripe"), "{stdout}");
    // An unsound file beside it still decides the exit code.
    let impossible = write(dir.path(), "impossible.yaml", IMPOSSIBLE);
    let out = lostreply(&[
        "validate",
        "--prove",
        "--seeds",
        "1",
        path_str(&stripe),
        path_str(&impossible),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[test]
fn a_malformed_file_exits_2_with_file_line_and_column_before_any_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "bad.yaml",
        &IMPOSSIBLE.replace("  - reconcile: op-1\n", "  - reconcile: op-9\n"),
    );
    let out = lostreply(&["validate", "--prove", path_str(&file)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let located = format!("{}:15:", file.display());
    assert!(stderr.contains(&located), "{located} not in {stderr}");
    assert!(stderr.contains("op-9"), "{stderr}");
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
}

#[test]
fn prove_flags_are_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "impossible.yaml", IMPOSSIBLE);
    for args in [
        vec!["validate", "--prove", "--seeds", "0"],
        vec!["validate", "--prove", "--seeds", "1001"],
        vec!["validate", "--prove", "--jobs", "0"],
        vec!["validate", "--seeds", "2"],
        vec!["validate", "--format", "json"],
    ] {
        let mut args = args;
        args.push(path_str(&file));
        let out = lostreply(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn every_adapter_a_proof_runs_is_bundled() {
    let out = lostreply(&["adapter", "no-such-adapter", "status"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let designs = lostreply_examples::correct_designs()
        .into_iter()
        .chain(lostreply_examples::flawed_designs())
        .map(|f| f.name());
    let naive = lostreply_examples::naive_adapters()
        .into_iter()
        .map(|(_, f)| f.name());
    let mcp = lostreply_examples::naive_mcp::FACTORIES
        .iter()
        .map(|f| f.name.to_owned());
    for name in designs.chain(naive).chain(mcp) {
        assert!(
            stderr.contains(&format!(" {name}")),
            "{name} not bundled: {stderr}"
        );
    }
}

//! `lostreply profile show|schema` and `lostreply validate` on profile files,
//! end to end.

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

fn profiles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("utf8 path")
}

#[test]
fn show_prints_the_published_file_and_refuses_unknown_names() {
    for name in ["generic", "stripe", "openai", "anthropic"] {
        let out = lostreply(&["profile", "show", name]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let file = std::fs::read_to_string(profiles().join(format!("{name}.yaml"))).expect("file");
        assert_eq!(text(&out.stdout), file, "{name}");
    }
    let out = lostreply(&["profile", "show", "paypal"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no built-in profile `paypal`: one of generic, stripe"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn schema_prints_the_profile_schema() {
    let out = lostreply(&["profile", "schema"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(schema["title"], "lostreply provider profile (format v1)");
}

#[test]
fn validate_checks_profile_files_and_directories_of_them() {
    let tracker = profiles().join("examples/tracker.yaml");
    let out = lostreply(&["validate", arg(&tracker)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("tracker.yaml  (profile tracker, 1 resource)"),
        "{}",
        text(&out.stdout)
    );
    let out = lostreply(&["validate", arg(&profiles())]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("generic.yaml  (profile generic, generic routes)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("stripe.yaml  (profile stripe, 3 resources)"),
        "{stdout}"
    );
}

#[test]
fn validate_reports_a_bad_profile_at_its_line_and_column_and_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("a_scenario.yaml");
    std::fs::write(
        &scenario,
        "version: 1\nid: s\ntitle: One create\noperations:\n  - {id: op-1, resource: tickets}\nsteps:\n  - execute: op-1\n",
    )
    .expect("write");
    let bad = dir.path().join("b_profile.yaml");
    std::fs::write(
        &bad,
        "version: 1\nname: acme\nresources:\n  - {name: orders, path: /orders}\nauth: {header: \"x key\"}\n",
    )
    .expect("write");
    let out = lostreply(&["validate", arg(dir.path())]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("b_profile.yaml:5:16: auth.header `x key` is not an HTTP header name"),
        "{stderr}"
    );
    // The scenario beside it is still checked, as a scenario.
    assert!(
        text(&out.stdout).contains("a_scenario.yaml  (s, 1 steps)"),
        "{}",
        text(&out.stdout)
    );
}

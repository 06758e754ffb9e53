//! `lostreply explore` end to end through the binary: a flaw found, shrunk
//! to a small scenario file that `lostreply run` reruns to the same
//! violation; the same seed and budget in situations giving the same files;
//! correct designs with nothing found; bad input with its exit code.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

fn lostreply(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("lostreply runs")
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn explore(adapter: &str, budget: &str, out: &Path) -> Output {
    lostreply(&[
        "explore",
        "--builtin",
        adapter,
        "--budget",
        budget,
        "--seed",
        "1",
        "--jobs",
        "2",
        "--out",
        out.to_str().expect("utf-8"),
    ])
}

/// The findings of an exploration's summary: (invariant, file).
fn findings(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join("explore.json")).expect("explore.json");
    let summary: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    summary["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["invariant"].as_str().unwrap_or_default().to_owned(),
                f["file"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Every finding of `adapter` within `budget` situations is a file of at
/// most four steps that `lostreply run` reruns to the same invariant.
fn found_and_reproduced(adapter: &str, budget: &str) {
    let dir = tempfile::tempdir().expect("a directory");
    let out = explore(adapter, budget, dir.path());
    assert_eq!(out.status.code(), Some(1), "{adapter}: {}", said(&out));
    let found = findings(dir.path());
    assert!(!found.is_empty(), "{adapter}");
    for (invariant, file) in found {
        let text = std::fs::read_to_string(&file).expect("the finding's file");
        let scenario = lostreply_harness::scenario::parse(&text, &file).expect("a valid scenario");
        assert!(scenario.steps.len() <= 4, "{adapter} {invariant}: {text}");
        assert!(Path::new(&file).with_extension("html").exists());
        let rerun = lostreply(&["run", "--builtin", adapter, "--seed", "1", &file]);
        assert_eq!(
            rerun.status.code(),
            Some(1),
            "{adapter} {file}: {}",
            said(&rerun)
        );
        assert!(
            said(&rerun).contains(&format!("({invariant})")),
            "{}",
            said(&rerun)
        );
    }
}

#[test]
fn a_naive_adapter_is_found_shrunk_and_reproduced_the_same_each_time() {
    found_and_reproduced("naive-02-fresh-key-per-attempt", "200");
    let (a, b) = (
        tempfile::tempdir().expect("a"),
        tempfile::tempdir().expect("b"),
    );
    explore("naive-02-fresh-key-per-attempt", "120", a.path());
    explore("naive-02-fresh-key-per-attempt", "120", b.path());
    let files = |d: &Path| {
        findings(d)
            .into_iter()
            .map(|(invariant, file)| (invariant, std::fs::read_to_string(file).expect("file")))
            // The violation's message quotes what the adapter sent (this
            // naive adapter's keys hold the time): all else is the same.
            .map(|(invariant, text)| {
                let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with("#   ")).collect();
                (
                    invariant,
                    kept.join("\n").replace(&d.display().to_string(), "DIR"),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(files(a.path()), files(b.path()));
}

#[test]
fn flawed_and_naive_adapters_are_found_within_their_budget() {
    for (adapter, budget) in FOUND {
        found_and_reproduced(adapter, budget);
    }
}

/// The flawed designs and naive adapters the grammar reaches, each with a
/// budget in situations of seed 1 about twice the situation that first
/// breaks an invariant (docs/explore.md says which situations the grammar
/// does not make yet, and so which flaws it does not find). flawed-unlocked
/// is found too, but by a race of two reconcilers: how far it shrinks
/// depends on how the race goes on a loaded machine, so it is not held here.
const FOUND: [(&str, &str); 9] = [
    ("flawed-failed-lookup-is-absence", "60"),
    ("flawed-replays-expired-keys", "80"),
    ("naive-01-fails-on-timeout", "40"),
    ("naive-03-processing-is-done", "30"),
    ("naive-04-tagged-retries", "30"),
    ("naive-05-action-keyed", "30"),
    ("naive-08-memory-only", "30"),
    ("naive-09-eternal-keys", "40"),
    ("naive-10-retry-after-review", "40"),
];

#[test]
fn correct_designs_leave_nothing_to_find() {
    for adapter in ["reference", "eager", "lazy", "lookup-first", "try-lock"] {
        let dir = tempfile::tempdir().expect("a directory");
        let out = explore(adapter, "150", dir.path());
        assert_eq!(out.status.code(), Some(0), "{adapter}: {}", said(&out));
        assert!(findings(dir.path()).is_empty());
    }
}

#[test]
fn bad_input_exits_2() {
    let dir = tempfile::tempdir().expect("a directory");
    let out_dir = dir.path().to_str().expect("utf-8");
    for args in [
        vec!["--budget", "0"],
        vec!["--budget", "soon"],
        vec!["--shard", "3/2"],
        vec!["--builtin", "nope"],
        vec!["--jobs", "0"],
    ] {
        let mut all = vec!["explore", "--out", out_dir];
        all.extend(args.iter().copied());
        let out = lostreply(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", said(&out));
        assert!(
            said(&out).contains("lostreply explore"),
            "{args:?}: {}",
            said(&out)
        );
    }
}

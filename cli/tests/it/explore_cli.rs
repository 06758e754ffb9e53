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
    explore_with(&["--builtin", adapter], budget, out, &[])
}

/// `lostreply explore` with the adapter's flags, seed 1, and `extra` flags.
fn explore_with(adapter: &[&str], budget: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["explore"];
    args.extend(adapter);
    args.extend([
        "--budget",
        budget,
        "--seed",
        "1",
        "--jobs",
        "2",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    args.extend(extra);
    lostreply(&args)
}

/// The findings of an exploration's summary: (label, file); the label is
/// what a report names the check (`invariant 1 (at-most-once)`).
fn findings(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join("explore.json")).expect("explore.json");
    let summary: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    summary["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["label"].as_str().unwrap_or_default().to_owned(),
                f["file"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Every finding of `adapter` within `budget` situations is a file of at
/// most four steps that `lostreply run` reruns to the same invariant.
fn found_and_reproduced(adapter: &str, budget: &str) {
    found_and_reproduced_with(adapter, budget, &[]);
}

/// As `found_and_reproduced`, with `extra` explore flags (`--mcp`, `--tag`).
fn found_and_reproduced_with(adapter: &str, budget: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().expect("a directory");
    let out = explore_with(&["--builtin", adapter], budget, dir.path(), extra);
    assert_eq!(out.status.code(), Some(1), "{adapter}: {}", said(&out));
    let found = findings(dir.path());
    assert!(!found.is_empty(), "{adapter}");
    let mut settled = 0;
    for (invariant, file) in found {
        let text = std::fs::read_to_string(&file).expect("the finding's file");
        let scenario = lostreply_harness::scenario::parse(&text, &file).expect("a valid scenario");
        assert!(Path::new(&file).with_extension("html").exists());
        // A race left to the scheduler (racing reconcilers without a
        // gather, or found at the short exploring wait) may go either way
        // on a loaded machine, in shrinking as in a rerun (docs/explore.md):
        // its file is held to being valid; every other finding, a gathered
        // race at the reproducing wait included, to its size and a rerun.
        if left_to_the_scheduler(&text) {
            continue;
        }
        settled += 1;
        assert!(scenario.steps.len() <= 4, "{adapter} {invariant}: {text}");
        let mut reruns = Vec::new();
        let reproduced = (0..3).any(|_| {
            let rerun = lostreply(&["run", "--builtin", adapter, "--seed", "1", &file]);
            let told = said(&rerun);
            let same = rerun.status.code() == Some(1) && told.contains(&invariant);
            reruns.push(told);
            same
        });
        assert!(
            reproduced,
            "{adapter} {file} ({invariant}): {reruns:?}\n{text}"
        );
    }
    assert!(settled > 0, "{adapter}: every finding rests on a race");
}

/// Whether a finding's file races reconcilers without gathering their
/// lookups, or gathers them only for the exploring wait (150 ms).
fn left_to_the_scheduler(text: &str) -> bool {
    let count = |needle: &str| text.lines().filter(|l| l.contains(needle)).count();
    count("parallel: [{reconcile") > count("gather: {") || text.contains("at_most: 150ms")
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
fn flawed_designs_are_found_within_their_budget() {
    for (adapter, budget) in FOUND.iter().filter(|(a, _)| a.starts_with("flawed-")) {
        found_and_reproduced(adapter, budget);
    }
}

#[test]
fn naive_adapters_are_found_within_their_budget() {
    for (adapter, budget) in FOUND.iter().filter(|(a, _)| a.starts_with("naive-")) {
        found_and_reproduced(adapter, budget);
    }
}

/// The two designs whose only flaw is a race of two reconcilers
/// (`flawed-unlocked`, `naive-07`), explored in racing situations alone
/// (`--tag race`): each is found, and its findings, gathered races
/// shrunk and written at the reproducing wait, rerun to the same
/// violation.
#[test]
fn racing_flaws_are_found_in_racing_situations_and_reproduced() {
    for (adapter, budget) in [
        ("flawed-unlocked", "270"),
        ("naive-07-unlocked-reconciler", "25"),
    ] {
        found_and_reproduced_with(adapter, budget, &["--tag", "race"]);
    }
}

/// Every flawed design and naive adapter explore can find, each with a
/// budget in situations of seed 1 just past the situations that first
/// break something (so the test shrinks only those). Left out: naive-02,
/// held by the test above; flawed-unlocked and naive-07, held by the
/// racing test above; and flawed-never-escalates, which keeps every
/// truth and is found by no search of truths (docs/explore.md).
const FOUND: [(&str, &str); 15] = [
    ("flawed-failed-lookup-is-absence", "140"),
    ("flawed-ignores-contradiction", "65"),
    ("flawed-in-flight-is-failure", "100"),
    ("flawed-last-writer-wins", "35"),
    ("flawed-refused-retry-is-failure", "140"),
    ("flawed-replays-expired-keys", "820"),
    ("flawed-same-call-absence", "380"),
    ("naive-01-fails-on-timeout", "95"),
    ("naive-03-processing-is-done", "50"),
    ("naive-04-tagged-retries", "40"),
    ("naive-05-action-keyed", "20"),
    ("naive-06-trusting-webhooks", "30"),
    ("naive-08-memory-only", "45"),
    ("naive-09-eternal-keys", "60"),
    ("naive-10-retry-after-review", "17"),
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
        vec!["--tag", "nope"],
        vec!["--tag", "no-keys,retention"],
        vec!["--profile", "nope", "--adapter", "true"],
        vec!["--profile", "stripe"],
        vec!["--profile", "stripe", "--mcp", "--adapter", "true"],
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

/// Two operations with identical arguments, the second resolved `failed`
/// while its object is processing, and, once the objects have settled
/// succeeded, an event about an object delivered: an event about the other
/// operation's object (its `client_reference` names that one) contradicts
/// nothing the person decided about this one; an event about this one's
/// own object does. Correct designs keep the review rule here; the design
/// that leaves a contradicted decision alone does not.
#[test]
fn an_event_is_judged_against_the_decision_about_its_own_operation() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("shared-arguments.yaml");
    std::fs::write(
        &file,
        "version: 1
id: explore-shared-arguments
title: Identical arguments, a decision and an event
client_timeout: 2s
provider:
  idempotency: {mode: stripe, retention: 1day}
  lookup: {retrieve: true, client_reference: true, list_recent: true}
  asynchronous: {settle_after: 1m, result: succeeded}
  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
operations:
  - {id: op-1, resource: tickets, args: {title: Generated order, amount: 4200}}
  - {id: op-2, resource: tickets, args: {title: Generated order, amount: 4200}}
steps:
  - execute: op-2
  - execute: op-1
  - {resolve: op-1, outcome: failed, provider_ref: null, evidence: an operator decided}
  - advance: 2m
  - {webhook: op-1, event: created}
",
    )
    .expect("written");
    let file = file.to_str().expect("utf-8");
    for design in ["reference", "eager", "lazy", "lookup-first", "try-lock"] {
        let out = lostreply(&["run", "--builtin", design, "--seed", "1", file]);
        assert_eq!(out.status.code(), Some(0), "{design}: {}", said(&out));
    }
    let out = lostreply(&[
        "run",
        "--builtin",
        "flawed-ignores-contradiction",
        "--seed",
        "1",
        file,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(
        said(&out).contains("rule review-after-contradiction"),
        "{}",
        said(&out)
    );
}

/// Every naive MCP caller, each with a budget in situations of seed 1 of
/// `--mcp` just past the situations that first break something.
const FOUND_MCP: [(&str, &str); 8] = [
    ("naive-mcp-calls-again-after-abort", "55"),
    ("naive-mcp-reads-the-word-timeout", "450"),
    ("naive-mcp-task-is-failure", "130"),
    ("naive-mcp-retries-idle-abort", "120"),
    ("naive-mcp-takes-newest-recent", "45"),
    ("naive-mcp-replays-expired-key", "410"),
    ("naive-mcp-takes-newest-recent-at-once", "45"),
    ("naive-mcp-replays-expired-key-at-once", "115"),
];

#[test]
fn naive_mcp_callers_are_found_within_their_budget() {
    for (adapter, budget) in FOUND_MCP {
        found_and_reproduced_with(adapter, budget, &["--mcp"]);
    }
}

#[test]
fn the_reference_mcp_caller_leaves_nothing_to_find() {
    let dir = tempfile::tempdir().expect("a directory");
    let out = explore_with(&["--builtin", "reference"], "150", dir.path(), &["--mcp"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(findings(dir.path()).is_empty());
}

/// `--tag` explores only situations carrying the tags, and a finding's
/// file, shrunk, still carries them.
#[test]
fn a_tagged_exploration_finds_within_its_tags() {
    found_and_reproduced_with("naive-06-trusting-webhooks", "30", &["--tag", "forged"]);
    let dir = tempfile::tempdir().expect("a directory");
    let out = explore_with(
        &["--builtin", "naive-06-trusting-webhooks"],
        "30",
        dir.path(),
        &["--tag", "forged,no-lookup"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    for (_, file) in findings(dir.path()) {
        let text = std::fs::read_to_string(&file).expect("the finding's file");
        let tags = text
            .lines()
            .find(|l| l.starts_with("tags: "))
            .unwrap_or_default();
        assert!(
            tags.contains("forged") && tags.contains("no-lookup"),
            "{text}"
        );
    }
}

/// The SDK adapters of examples/sdk-adapters, as `.ci/run` installs them.
fn sdk_python() -> Option<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join("target/sdk-venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var("LOSTREPLY_REQUIRE_SDKS").as_deref() != Ok("1"),
        "target/sdk-venv is missing (pip install -r examples/sdk-adapters/python/requirements.txt)"
    );
    eprintln!("skipped: target/sdk-venv is missing");
    None
}

/// On Stripe's wire, the correct adapter on stripe-python keeps every
/// truth and the naive one is found; its finding reruns the same.
#[test]
fn the_stripe_profile_judges_adapters_on_the_real_sdk() {
    let Some(python) = sdk_python() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/sdk-adapters/python");
    let command = |script: &str| format!("{} {}", python.display(), root.join(script).display());
    let run = |script: &str, budget: &str, dir: &Path| {
        let adapter = command(script);
        explore_with(
            &["--adapter", &adapter, "--persistent"],
            budget,
            dir,
            &["--profile", "stripe"],
        )
    };
    let correct = tempfile::tempdir().expect("a directory");
    let out = run("stripe_adapter.py", "30", correct.path());
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let naive = tempfile::tempdir().expect("a directory");
    let out = run("stripe_naive.py", "2", naive.path());
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    for (invariant, file) in findings(naive.path()) {
        let text = std::fs::read_to_string(&file).expect("the finding's file");
        assert!(text.contains("profile: stripe"), "{text}");
        let adapter = command("stripe_naive.py");
        let rerun = lostreply(&[
            "run",
            "--adapter",
            &adapter,
            "--persistent",
            "--seed",
            "1",
            &file,
        ]);
        assert!(said(&rerun).contains(&invariant), "{}", said(&rerun));
    }
}

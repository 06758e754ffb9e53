//! Splitting a run across CI jobs: `--shard K/N` cuts the selection into N
//! disjoint parts whose union is the whole, and `lostreply report merge` joins
//! their reports into the report of the whole run. Through the real binary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lostreply_reports::model::{Report, Shard, Verdict};

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

fn both(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf8 path")
}

/// The scenario ids `lostreply list ARGS` prints, in order: those a run
/// takes (not the opt-in ones it lists last, marked as left out).
fn listed(args: &[&str]) -> Vec<String> {
    let out = lostreply(&[&["list"], args].concat());
    assert_eq!(out.status.code(), Some(0), "list {args:?}: {}", both(&out));
    text(&out.stdout)
        .lines()
        .filter(|line| !(line.contains("(left out: --tag ") && line.ends_with(')')))
        .map(|line| {
            // `case  2  <id>  [tags]  title`, or `         <id>  [tags]  title`.
            let mut words = line.split_whitespace();
            let first = words.next().expect("a scenario line");
            let id = if first == "case" {
                words.nth(1).expect("an id after the case")
            } else {
                first
            };
            id.to_owned()
        })
        .collect()
}

fn read_report(dir: &Path) -> (Report, Option<Shard>) {
    let path = dir.join("lostreply.json");
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    lostreply_reports::read_json_with_shard(&json)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

#[test]
fn shards_of_the_library_are_disjoint_and_cover_it() {
    let full = listed(&[]);
    assert!(full.len() >= 20, "the built-in library: {full:?}");
    let all: BTreeSet<&str> = full.iter().map(String::as_str).collect();
    assert_eq!(all.len(), full.len(), "ids are unique");
    for total in [1u32, 2, 3, 4, 7] {
        let mut owner: BTreeMap<String, u32> = BTreeMap::new();
        for index in 1..=total {
            let spec = format!("{index}/{total}");
            let ids = listed(&["--shard", &spec]);
            // A shard keeps the selection's order.
            let in_order: Vec<&String> = full.iter().filter(|id| ids.contains(id)).collect();
            assert_eq!(ids.iter().collect::<Vec<_>>(), in_order, "shard {spec}");
            for id in ids {
                if let Some(other) = owner.insert(id.clone(), index) {
                    panic!("{id} is in shard {other}/{total} and in shard {spec}");
                }
            }
        }
        let union: BTreeSet<&str> = owner.keys().map(String::as_str).collect();
        assert_eq!(union, all, "the {total} shards together are the library");
    }
}

#[test]
fn a_shard_is_the_same_whatever_the_filters_and_file_order() {
    let tagged: BTreeSet<String> = listed(&["--tag", "lost-response"]).into_iter().collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("scenarios"))
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        // The MCP and provider-profile scenarios are opt-in: a default run
        // leaves them out, a file named by itself is taken.
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !["mcp-", "stripe-", "openai-", "anthropic-"]
                .iter()
                .any(|prefix| name.starts_with(prefix))
        })
        .collect();
    files.sort();
    files.reverse();
    let files: Vec<&str> = files.iter().map(|p| utf8(p)).collect();
    for index in 1..=3 {
        let spec = format!("{index}/3");
        let whole: BTreeSet<String> = listed(&["--shard", &spec]).into_iter().collect();
        // Filters first, then sharding: a filtered shard is the shard, filtered.
        let filtered: BTreeSet<String> = listed(&["--tag", "lost-response", "--shard", &spec])
            .into_iter()
            .collect();
        let expected: BTreeSet<String> = whole.intersection(&tagged).cloned().collect();
        assert_eq!(filtered, expected, "--tag lost-response --shard {spec}");
        // The files named one by one, backwards: the same shard.
        let from_files: BTreeSet<String> =
            listed(&[&["--shard", spec.as_str()], &files[..]].concat())
                .into_iter()
                .collect();
        assert_eq!(
            from_files, whole,
            "--shard {spec} over the files in reverse order"
        );
    }
}

#[test]
fn two_shards_run_and_merge_into_the_full_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let full_dir = dir.path().join("full");
    let out = lostreply(&[
        "run",
        "--builtin",
        "reference",
        "--jobs",
        "4",
        "--report-dir",
        utf8(&full_dir),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let (full, no_shard) = read_report(&full_dir);
    assert_eq!(no_shard, None, "an unsharded run writes no shard");

    let mut shard_dirs = Vec::new();
    let mut shard_ids = Vec::new();
    for index in 1..=2u32 {
        let shard_dir = dir.path().join(format!("shard-{index}"));
        let spec = format!("{index}/2");
        let out = lostreply(&[
            "run",
            "--builtin",
            "reference",
            "--jobs",
            "4",
            "--shard",
            &spec,
            "--report-dir",
            utf8(&shard_dir),
        ]);
        assert_eq!(out.status.code(), Some(0), "shard {spec}: {}", both(&out));
        let (report, shard) = read_report(&shard_dir);
        assert_eq!(
            shard,
            Some(
                Shard::builder()
                    .index(index)
                    .total(2)
                    .selected(full.scenarios.len())
                    .build()
            )
        );
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains(&format!(
                "Shard {spec}: {} scenarios in this shard, of {} selected",
                report.scenarios.len(),
                full.scenarios.len()
            )),
            "{stdout}"
        );
        assert!(!report.scenarios.is_empty(), "shard {spec} runs something");
        for s in &report.scenarios {
            assert!(!s.reproduce.contains("--shard"), "{}", s.reproduce);
        }
        shard_ids.push(listed(&["--shard", &spec]));
        assert_eq!(
            report.scenarios.iter().map(|s| &s.id).collect::<Vec<_>>(),
            shard_ids[shard_ids.len() - 1].iter().collect::<Vec<_>>(),
            "the shard ran what list --shard {spec} lists"
        );
        shard_dirs.push(shard_dir);
    }

    let merged_dir = dir.path().join("merged");
    let out = lostreply(&[
        "report",
        "merge",
        "--report-dir",
        utf8(&merged_dir),
        "--color",
        "never",
        utf8(&shard_dirs[1]),
        utf8(&shard_dirs[0]),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("{} passed, 0 violated", full.scenarios.len())),
        "{stdout}"
    );
    assert!(stdout.contains("reports written to"), "{stdout}");
    for ext in ["json", "xml", "md", "html"] {
        let path = merged_dir.join(format!("lostreply.{ext}"));
        assert!(path.is_file(), "{} missing", path.display());
    }
    let (merged, shard) = read_report(&merged_dir);
    assert_eq!(shard, None, "a merge is the whole run");
    assert_eq!(merged.seed, full.seed);
    assert_eq!(merged.adapter, full.adapter);
    assert_eq!(merged.tool_version, full.tool_version);
    let merged_ids: Vec<&str> = merged.scenarios.iter().map(|s| s.id.as_str()).collect();
    let mut sorted_full: Vec<&str> = full.scenarios.iter().map(|s| s.id.as_str()).collect();
    sorted_full.sort();
    assert_eq!(merged_ids, sorted_full, "every scenario once, sorted by id");
    let by_id: BTreeMap<&str, _> = full.scenarios.iter().map(|s| (s.id.as_str(), s)).collect();
    for s in &merged.scenarios {
        let whole = by_id[s.id.as_str()];
        assert_eq!(s.verdict, whole.verdict, "{}: verdict", s.id);
        assert_eq!(
            s.seed, whole.seed,
            "{}: the seed does not depend on sharding",
            s.id
        );
        assert_eq!(s.reproduce, whole.reproduce, "{}: reproduce", s.id);
    }
    assert_eq!(merged.totals(), full.totals());

    // The reproduce command of a sharded scenario reruns that scenario alone, with its seed.
    let one = &merged.scenarios[merged.scenarios.len() / 2];
    let words: Vec<&str> = one.reproduce.split_whitespace().collect();
    assert_eq!(&words[..2], ["lostreply", "run"], "{}", one.reproduce);
    let again_dir = dir.path().join("again");
    let out = Command::new(BIN)
        .args(&words[1..])
        .args(["--report-dir", utf8(&again_dir), "--format", "json"])
        .current_dir(workspace_root())
        .output()
        .expect("lostreply runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        one.reproduce,
        both(&out)
    );
    let (again, _) = read_report(&again_dir);
    assert_eq!(again.scenarios.len(), 1);
    assert_eq!(again.scenarios[0].id, one.id);
    assert_eq!(again.scenarios[0].seed, one.seed);
}

#[test]
fn an_empty_shard_is_a_normal_run() {
    let empty = (1..=100u32)
        .map(|k| format!("{k}/100"))
        .find(|spec| listed(&["--shard", spec]).is_empty())
        .expect("100 shards of the library leave one empty");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = lostreply(&[
        "run",
        "--shard",
        &empty,
        "--color",
        "never",
        "--report-dir",
        utf8(dir.path()),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(
        text(&out.stdout).contains("0 scenarios in this shard"),
        "{}",
        both(&out)
    );
    let (report, shard) = read_report(dir.path());
    assert!(report.scenarios.is_empty());
    assert_eq!(shard.map(|s| s.selected), Some(listed(&[]).len()));
}

#[test]
fn bad_shard_values_exit_2_saying_what_is_wrong() {
    for (spec, says) in [
        (
            "0/4",
            "K must be from 1 to N: the shards of 4 are 1/4 to 4/4",
        ),
        ("5/4", "K must be from 1 to N"),
        ("1/0", "N must be at least 1"),
        ("3", "expected K/N"),
        ("a/b", "expected K/N"),
        ("1/-4", "expected K/N"),
        ("", "expected K/N"),
        ("1/4294967296", "4294967296 is too large"),
    ] {
        for command in ["run", "list"] {
            let args = match command {
                "run" => vec!["run", "--jobs", "1", "--shard", spec],
                _ => vec!["list", "--shard", spec],
            };
            let out = lostreply(&args);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} --shard {spec:?}: {}",
                both(&out)
            );
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains(&format!("lostreply {command}: --shard {spec}: {says}")),
                "{command} --shard {spec:?}: {stderr}"
            );
            assert!(out.stdout.is_empty(), "nothing ran: {}", both(&out));
        }
    }
}

/// A one-operation scenario with the given id whose create succeeds without faults.
fn simple(id: &str) -> String {
    format!(
        "version: 1
id: {id}
title: One create, nothing lost
provider:
  idempotency: {{mode: stripe}}
operations:
  - {{id: op-1, resource: tickets, args: {{title: hello}}}}
steps:
  - execute: op-1
expect:
  final: {{op-1: [succeeded]}}
call_deadline: 2s
"
    )
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write");
    path
}

/// Runs `extra` over `scenario` into `dir/name`, and returns that report directory.
fn run_into(dir: &Path, name: &str, scenario: &Path, extra: &[&str]) -> PathBuf {
    let out_dir = dir.join(name);
    let args = [
        &["run", "--report-dir", utf8(&out_dir), "--format", "json"],
        extra,
        &[utf8(scenario)],
    ]
    .concat();
    let out = lostreply(&args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        both(&out)
    );
    out_dir
}

fn merge(args: &[&str]) -> Output {
    lostreply(&[&["report", "merge", "--color", "never"], args].concat())
}

#[test]
fn merge_refuses_what_is_not_one_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(dir.path(), "a.yaml", &simple("merge-a"));
    let seed_1 = run_into(dir.path(), "seed-1", &a, &["--seed", "1"]);
    let seed_2 = run_into(dir.path(), "seed-2", &a, &["--seed", "2"]);
    let again = run_into(dir.path(), "again", &a, &["--seed", "1"]);

    // A directory without a report: exit 2 naming the file.
    let missing = dir.path().join("no-such-dir");
    let out = merge(&[utf8(&seed_1), utf8(&missing)]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    let stderr = text(&out.stderr);
    let missing_file = missing.join("lostreply.json");
    assert!(stderr.contains(utf8(&missing_file)), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");

    // A file that is not a report: exit 2 naming it.
    let garbage = dir.path().join("garbage");
    std::fs::create_dir_all(&garbage).expect("mkdir");
    write(&garbage, "lostreply.json", "{\"hello\": 1}");
    let out = merge(&[utf8(&garbage)]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(utf8(&garbage.join("lostreply.json"))),
        "{stderr}"
    );
    assert!(stderr.contains("not a lostreply JSON report"), "{stderr}");

    // Another seed: another run. The message names the dir that differs.
    let b = write(dir.path(), "b.yaml", &simple("merge-b"));
    let b_seed_2 = run_into(dir.path(), "b-seed-2", &b, &["--seed", "2"]);
    let out = merge(&[utf8(&seed_1), utf8(&b_seed_2)]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: seed 2 differs from 1 in {}",
            utf8(&b_seed_2),
            utf8(&seed_1)
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "no summary: {}", both(&out));

    // The same scenario twice: named with both dirs.
    let out = merge(&[utf8(&seed_1), utf8(&again)]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "scenario \"merge-a\" is in both {} and {}",
            utf8(&seed_1),
            utf8(&again)
        )),
        "{stderr}"
    );
    let out = merge(&[utf8(&seed_2), utf8(&seed_1)]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));

    // One shard of two: the other is missing.
    let half = run_into(dir.path(), "half", &a, &["--shard", "1/2"]);
    let out = merge(&[utf8(&half)]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    assert!(
        text(&out.stderr).contains("shard 2/2 missing"),
        "{}",
        both(&out)
    );

    // No directory at all: a usage error.
    let out = merge(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
}

#[test]
fn a_merge_exits_like_the_run_it_joins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(dir.path(), "a.yaml", &simple("verdict-a"));
    let b = write(dir.path(), "b.yaml", &simple("verdict-b"));
    // Claims success without ever calling the provider: invariant 2.
    let liar = write(
        dir.path(),
        "liar.py",
        "import json, sys\nreq = json.load(sys.stdin)\nop = req.get('operation_id') or req.get('operation', {}).get('id')\nprint(json.dumps({'operation_id': op, 'outcome': 'succeeded', 'provider_ref': 'tkt_made_up', 'needs_review': False, 'evidence': 'trust me'}))\n",
    );
    let adapter = format!("python3 {}", utf8(&liar));
    let mut dirs = Vec::new();
    for index in 1..=2 {
        let shard_dir = dir.path().join(format!("shard-{index}"));
        let spec = format!("{index}/2");
        let out = lostreply(&[
            "run",
            "--adapter",
            &adapter,
            "--shard",
            &spec,
            "--report-dir",
            utf8(&shard_dir),
            utf8(&a),
            utf8(&b),
        ]);
        let (report, _) = read_report(&shard_dir);
        let expected = if report.scenarios.is_empty() { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(expected), "{}", both(&out));
        dirs.push(shard_dir);
    }
    let merged_dir = dir.path().join("merged");
    let out = merge(&[
        "--report-dir",
        utf8(&merged_dir),
        utf8(&dirs[0]),
        utf8(&dirs[1]),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("0 passed, 2 violated"), "{stdout}");
    assert!(
        stdout.contains("reproduce: lostreply run --adapter"),
        "{stdout}"
    );
    let (merged, _) = read_report(&merged_dir);
    let verdicts: Vec<(&str, Verdict)> = merged
        .scenarios
        .iter()
        .map(|s| (s.id.as_str(), s.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("verdict-a", Verdict::Violated),
            ("verdict-b", Verdict::Violated)
        ]
    );
}

//! The production signals end to end: `lostreply run` on library scenarios
//! with the reference adapter, and on a scenario with a careless process
//! adapter, writes the signals into every format, with figures that agree
//! with the run's own records; and the report of a sharded run, merged,
//! has the totals of the run in one piece.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lostreply_reports::model::{ConfirmedBy, OutcomeKind, Report, SignalTotals};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

fn lostreply(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("lostreply runs")
}

fn both(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn library(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file)
        .to_string_lossy()
        .into_owned()
}

/// Library scenarios whose reference run has ambiguity confirmed by
/// lookups, by a person, and reconciles (none of them races two calls, so
/// each run's records are the same every time).
const SCENARIOS: [&str; 5] = [
    "case03-still-processing.yaml",
    "case06-webhook-around-reconcile.yaml",
    "case09-key-retention-expired.yaml",
    "case10-review-then-late-event.yaml",
    "extra-retention-from-first-use.yaml",
];

fn run(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--color",
        "never",
        "--report-dir",
        utf8(dir),
        "--format",
        "json,junit,markdown,html,openmetrics",
    ];
    args.extend_from_slice(extra);
    let files: Vec<String> = SCENARIOS.iter().map(|f| library(f)).collect();
    let mut command = Command::new(BIN);
    command.args(&args).args(&files);
    command.output().expect("lostreply runs")
}

fn read(dir: &Path) -> (Report, Value) {
    let json = std::fs::read_to_string(dir.join("lostreply.json")).unwrap();
    (
        lostreply_reports::read_json(&json).unwrap(),
        serde_json::from_str(&json).unwrap(),
    )
}

#[test]
fn every_format_carries_signals_that_agree_with_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let (report, raw) = read(dir.path());
    let totals = SignalTotals::of_report(&report);

    // The JSON's top-level totals are the scenarios' signals summed.
    assert_eq!(
        serde_json::from_value::<SignalTotals>(raw["signals"].clone()).unwrap(),
        totals
    );
    // Plausible figures: each scenario was ambiguous once, a lookup
    // confirmed most, a person one (case 10), and nothing is left unknown.
    assert_eq!(totals.ambiguous_operations, 5);
    assert_eq!(totals.confirmed_by.total(), 5);
    assert_eq!(totals.confirmed_by.get(ConfirmedBy::Person), 1);
    assert!(
        totals.confirmed_by.get(ConfirmedBy::Lookup) >= 3,
        "{totals:?}"
    );
    assert!(totals.unknown_reply_count() >= 5, "{totals:?}");
    assert!(totals.confirmation_median_ms <= totals.confirmation_max_ms);
    // case 9 waits 25 hours for its lookup.
    assert_eq!(totals.confirmation_max_ms, Some(25 * 3_600_000));
    assert_eq!((totals.left_unknown, totals.oldest_unknown), (0, None));
    assert_eq!(totals.late_duplicates, 0);
    for scenario in &report.scenarios {
        let reconciles = scenario
            .calls
            .iter()
            .filter(|c| c.call == "reconcile")
            .count() as u64;
        assert_eq!(
            scenario.signals.reconcile_attempts, reconciles,
            "{}",
            scenario.id
        );
        for a in &scenario.signals.ambiguities {
            assert!(a.since_sim_ms >= scenario.sim_start_ms, "{}", scenario.id);
            // The confirming call is the operation's, and said what it says.
            let c = a.confirmed.as_ref().unwrap();
            let call = scenario.call(c.call_index as usize).unwrap();
            assert_eq!(call.operation_id.as_ref(), Some(&a.operation_id));
            let outcome = call.reply.as_ref().unwrap().get("outcome");
            assert_eq!(outcome, Some(Value::from(c.outcome.as_str())));
            assert!(matches!(
                c.outcome,
                OutcomeKind::Succeeded | OutcomeKind::Failed
            ));
        }
    }
    let case10 = report
        .scenarios
        .iter()
        .find(|s| s.id.starts_with("case10"))
        .unwrap();
    let by = case10.signals.ambiguities[0].confirmed.as_ref().unwrap();
    assert_eq!(by.by, ConfirmedBy::Person);
    assert_eq!(case10.call(by.call_index as usize).unwrap().call, "resolve");

    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Signals (what production monitoring would see):"),
        "{stdout}"
    );
    assert!(stdout.contains("a person (resolve) 1 (20%)"), "{stdout}");
    assert!(stdout.contains("max 1d1h (simulator clock)"), "{stdout}");

    let md = std::fs::read_to_string(dir.path().join("lostreply.md")).unwrap();
    assert!(md.contains("### Signals"), "{md}");
    assert!(md.contains("| confirmed by | "), "{md}");
    for scenario in &report.scenarios {
        assert!(
            md.contains(&format!("| `{}` | ", scenario.id)),
            "{}",
            scenario.id
        );
    }

    let html = std::fs::read_to_string(dir.path().join("lostreply.html")).unwrap();
    assert!(html.contains("<svg class=\"signals-chart\""));
    for by in ConfirmedBy::ALL {
        let bar = format!(
            "<g class=\"bar\" data-kind=\"{}\" data-count=\"{}\">",
            by.as_str(),
            totals.confirmed_by.get(by)
        );
        assert!(html.contains(&bar), "{bar}");
    }

    let om = std::fs::read_to_string(dir.path().join("lostreply.om.txt")).unwrap();
    assert!(om.ends_with("# EOF\n"));
    assert!(om.contains(&format!(
        "lostreply_confirmations_total{{by=\"lookup\"}} {}\n",
        totals.confirmed_by.get(ConfirmedBy::Lookup)
    )));
    assert!(om.contains(&format!(
        "lostreply_reconcile_attempts_total {}\n",
        totals.reconcile_attempts
    )));
    assert!(std::fs::read_to_string(dir.path().join("lostreply.xml"))
        .unwrap()
        .contains("<testsuite"));
}

#[test]
fn merged_shards_have_the_totals_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    let out = run(&whole, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let mut shards: Vec<PathBuf> = Vec::new();
    for spec in ["1/2", "2/2"] {
        let shard = dir.path().join(spec.replace('/', "-of-"));
        let out = run(&shard, &["--shard", spec]);
        assert_eq!(out.status.code(), Some(0), "{}", both(&out));
        shards.push(shard);
    }
    let merged = dir.path().join("merged");
    let out = lostreply(&[
        "report",
        "merge",
        "--report-dir",
        utf8(&merged),
        "--format",
        "json,openmetrics",
        utf8(&shards[0]),
        utf8(&shards[1]),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let (whole_report, whole_raw) = read(&whole);
    let (merged_report, merged_raw) = read(&merged);
    // Each scenario keeps its signals through the shard's report and the merge.
    for shard in &shards {
        let (report, _) = read(shard);
        for s in &report.scenarios {
            let m = merged_report
                .scenarios
                .iter()
                .find(|m| m.id == s.id)
                .unwrap();
            assert_eq!(m.signals, s.signals, "{}", s.id);
        }
    }
    assert_eq!(merged_raw["signals"], whole_raw["signals"]);
    assert_eq!(
        SignalTotals::of_report(&merged_report),
        SignalTotals::of_report(&whole_report)
    );
    // The OpenMetrics exposition too (it has no time in it).
    let om = |dir: &Path| std::fs::read_to_string(dir.join("lostreply.om.txt")).unwrap();
    assert_eq!(om(&merged), om(&whole));
}

/// A process adapter that re-sends its key 23 hours later (an hour left of
/// 24), then makes the effect again under a new key after it had reported
/// success, and finally loses track of the operation.
const CARELESS: &str = r#"import json, sys, urllib.request
call = sys.argv[1]
req = json.load(sys.stdin)
op = req.get('operation_id') or req.get('operation', {}).get('id')
provider = req['provider']
def post(key):
    r = urllib.request.Request(provider['base_url'] + '/v1/tickets',
        data=json.dumps({'title': 'hello'}).encode(), method='POST',
        headers={'Authorization': 'Bearer ' + provider['credential'],
                 'Content-Type': 'application/json', 'Idempotency-Key': key})
    with urllib.request.urlopen(r, timeout=5) as answer:
        return json.load(answer)
def reply(outcome, ref=None, review=False):
    print(json.dumps({'operation_id': op, 'outcome': outcome, 'provider_ref': ref,
                      'needs_review': review, 'evidence': call}))
if call == 'execute':
    reply('succeeded', post('k-' + op)['id'])
elif call == 'reconcile':
    post('k-' + op)
    reply('succeeded', post('k2-' + op)['id'])
else:
    reply('unknown', None, True)
"#;

const CARELESS_SCENARIO: &str = "version: 1
id: careless
title: A key re-sent near its expiry, a second effect after success
provider:
  idempotency: {mode: stripe, retention: 24h}
operations:
  - {id: op-1, resource: tickets, args: {title: hello}}
steps:
  - execute: op-1
  - advance: 23h
  - reconcile: op-1
call_deadline: 10s
";

#[test]
fn a_careless_adapter_shows_near_expiry_late_duplicates_and_review() {
    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("careless.py");
    std::fs::write(&adapter, CARELESS).unwrap();
    let scenario = dir.path().join("careless.yaml");
    std::fs::write(&scenario, CARELESS_SCENARIO).unwrap();
    let reports = dir.path().join("out");
    let command = format!("python3 {}", adapter.display());
    let out = lostreply(&[
        "run",
        "--adapter",
        &command,
        "--report-dir",
        utf8(&reports),
        "--format",
        "json,openmetrics",
        utf8(&scenario),
    ]);
    // Two effects for one operation: a violation.
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let (report, _) = read(&reports);
    let signals = &report.scenarios[0].signals;
    assert_eq!(signals.keys_near_expiry.len(), 1, "{signals:?}");
    let near = &signals.keys_near_expiry[0];
    assert_eq!(near.remaining_ms, 3_600_000);
    assert_eq!(near.operation_id.as_deref(), Some("op-1"));
    assert_eq!(signals.late_duplicates.len(), 1, "{signals:?}");
    assert_eq!(signals.late_duplicates[0].operation_id, "op-1");
    assert_eq!(signals.late_duplicates[0].reported_final_call, 0);
    assert_eq!((signals.needs_review, signals.left_unknown), (1, 1));
    assert_eq!(
        signals
            .oldest_unknown
            .as_ref()
            .map(|o| o.operation_id.as_str()),
        Some("op-1")
    );
    let om = std::fs::read_to_string(reports.join("lostreply.om.txt")).unwrap();
    for line in [
        "lostreply_keys_near_expiry_total 1\n",
        "lostreply_keys_expired_total 0\n",
        "lostreply_late_duplicates_total 1\n",
        "lostreply_needs_review_operations 1\n",
        "lostreply_unknown_operations 1\n",
        "lostreply_oldest_unknown_age_seconds{scenario=\"careless\",operation=\"op-1\"} 0.000\n",
    ] {
        assert!(om.contains(line), "{line}in\n{om}");
    }
}

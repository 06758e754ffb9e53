//! `lostreply run --format openmetrics` read by a real OpenMetrics parser:
//! Prometheus's Python client (`prometheus_client.openmetrics.parser`,
//! pinned in tests/openmetrics/requirements.txt and installed by .ci/run
//! into target/metrics-venv). The parser refuses anything the format does
//! not allow (a counter sample without `_total`, a unit its name does not
//! end in, a bad escape, a missing `# EOF`), and its reading must agree
//! with the JSON report's figures.
//!
//! Without the venv the build marks these tests ignored, with the reason
//! (cli/build.rs), unless `LOSTREPLY_REQUIRE_OPENMETRICS=1` (CI sets it):
//! then they run, and a missing parser fails them.

mod venv;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lostreply_reports::model::{ConfirmedBy, SignalTotals};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

/// Parses the exposition at argv[1] and prints its families as JSON.
const PARSE: &str = r#"import json, math, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding='utf-8').read()
families = []
for f in text_string_to_metric_families(text):
    families.append({'name': f.name, 'type': f.type, 'unit': f.unit,
        'samples': [{'name': s.name, 'labels': s.labels, 'value': s.value}
                    for s in f.samples]})
print(json.dumps(families))
"#;

/// The venv's Python. A test that calls this is ignored when the build found
/// no parser (cfg `lostreply_no_openmetrics`), so a parser missing here went
/// away after the build, or the test was run with `--ignored`: either way it
/// fails.
fn python() -> PathBuf {
    venv::parser_python()
        .unwrap_or_else(|why| panic!("this test needs the OpenMetrics parser: {why}"))
}

fn both(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The families as the parser read them; fails with its message if it refused.
fn parse(python: &Path, file: &Path) -> Vec<Value> {
    let out = Command::new(python)
        .args(["-c", PARSE])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the parser refused it: {}",
        both(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn family<'a>(families: &'a [Value], name: &str) -> &'a Value {
    families
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no family {name}"))
}

/// The value of the sample `name` with `labels` (a subset of its labels).
fn value(families: &[Value], family_name: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    family(families, family_name)["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][k] == *v))
        .unwrap_or_else(|| panic!("no sample {name} {labels:?}"))["value"]
        .as_f64()
        .unwrap()
}

fn library(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file)
        .to_string_lossy()
        .into_owned()
}

#[test]
#[cfg_attr(
    lostreply_no_openmetrics,
    ignore = "needs the OpenMetrics parser: python3 -m venv target/metrics-venv && target/metrics-venv/bin/pip install -r cli/tests/openmetrics/requirements.txt"
)]
fn the_exposition_parses_and_agrees_with_the_json_report() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("out");
    let out = Command::new(BIN)
        .args(["run", "--report-dir"])
        .arg(&reports)
        .args(["--format", "json,openmetrics"])
        .args(
            [
                "case03-still-processing.yaml",
                "case09-key-retention-expired.yaml",
                "case10-review-then-late-event.yaml",
            ]
            .map(library),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let families = parse(&python, &reports.join("lostreply.om.txt"));
    let json = std::fs::read_to_string(reports.join("lostreply.json")).unwrap();
    let report = lostreply_reports::read_json(&json).unwrap();
    let totals = SignalTotals::of_report(&report);

    // The parser's reading of each family's type and unit.
    for (name, kind, unit) in [
        ("lostreply_run", "info", ""),
        ("lostreply_scenarios", "gauge", ""),
        ("lostreply_unknown_replies", "counter", ""),
        ("lostreply_confirmations", "counter", ""),
        (
            "lostreply_ambiguity_to_confirmation_seconds",
            "summary",
            "seconds",
        ),
        ("lostreply_keys_near_expiry", "counter", ""),
        ("lostreply_late_duplicates", "counter", ""),
        ("lostreply_reconcile_attempts", "counter", ""),
        ("lostreply_reconcile_attempts_max", "gauge", ""),
        ("lostreply_needs_review_operations", "gauge", ""),
        ("lostreply_unknown_operations", "gauge", ""),
        ("lostreply_oldest_unknown_age_seconds", "gauge", "seconds"),
    ] {
        let f = family(&families, name);
        assert_eq!(
            (f["type"].as_str(), f["unit"].as_str()),
            (Some(kind), Some(unit)),
            "{name}"
        );
    }
    // Its values are the JSON report's.
    assert_eq!(
        value(
            &families,
            "lostreply_scenarios",
            "lostreply_scenarios",
            &[("verdict", "passed")]
        ),
        3.0
    );
    for u in &totals.unknown_replies {
        let labels = [
            ("tool", u.tool.as_str()),
            ("action", u.action.as_str()),
            ("provider", u.provider.as_str()),
        ];
        assert_eq!(
            value(
                &families,
                "lostreply_unknown_replies",
                "lostreply_unknown_replies_total",
                &labels
            ),
            u.count as f64
        );
    }
    for by in ConfirmedBy::ALL {
        assert_eq!(
            value(
                &families,
                "lostreply_confirmations",
                "lostreply_confirmations_total",
                &[("by", by.as_str())]
            ),
            totals.confirmed_by.get(by) as f64
        );
    }
    let summary = "lostreply_ambiguity_to_confirmation_seconds";
    assert_eq!(
        value(&families, summary, summary, &[("quantile", "1.0")]),
        totals.confirmation_max_ms.unwrap() as f64 / 1000.0
    );
    assert_eq!(
        value(&families, summary, summary, &[("quantile", "0.5")]),
        totals.confirmation_median_ms.unwrap() as f64 / 1000.0
    );
    assert_eq!(
        value(&families, summary, &format!("{summary}_count"), &[]),
        totals.confirmed_by.total() as f64
    );
    assert_eq!(
        value(
            &families,
            "lostreply_reconcile_attempts",
            "lostreply_reconcile_attempts_total",
            &[]
        ),
        totals.reconcile_attempts as f64
    );
}

/// An adapter command line with quotes, a backslash and spaces: the
/// `adapter` label of `lostreply_run_info` holds the report's name of it
/// escaped, and the parser reads it back as the JSON report has it.
#[test]
#[cfg_attr(
    lostreply_no_openmetrics,
    ignore = "needs the OpenMetrics parser: python3 -m venv target/metrics-venv && target/metrics-venv/bin/pip install -r cli/tests/openmetrics/requirements.txt"
)]
fn label_values_are_escaped_as_the_parser_reads_them() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let adapter = dir.path().join("adapter.py");
    std::fs::write(
        &adapter,
        "import json, sys\nreq = json.load(sys.stdin)\nop = req.get('operation_id') or req['operation']['id']\nprint(json.dumps({'operation_id': op, 'outcome': 'unknown', 'provider_ref': None, 'needs_review': True, 'evidence': 'none'}))\n",
    )
    .unwrap();
    let command = format!(r#"python3 {} 'say "hi" \ bye'"#, adapter.display());
    let reports = dir.path().join("out");
    let out = Command::new(BIN)
        .args(["run", "--adapter", &command, "--report-dir"])
        .arg(&reports)
        .args(["--format", "json,openmetrics"])
        .arg(library("case10-review-then-late-event.yaml"))
        .output()
        .unwrap();
    assert!(reports.join("lostreply.om.txt").is_file(), "{}", both(&out));
    let families = parse(&python, &reports.join("lostreply.om.txt"));
    let json = std::fs::read_to_string(reports.join("lostreply.json")).unwrap();
    let name = lostreply_reports::read_json(&json).unwrap().adapter.name;
    assert!(name.contains('"') && name.contains('\\'), "{name}");
    let info = &family(&families, "lostreply_run")["samples"][0];
    assert_eq!(info["labels"]["adapter"], Value::from(name));
    // An adapter that never knows: every reply unknown, the operation left
    // for review.
    assert!(
        value(
            &families,
            "lostreply_unknown_operations",
            "lostreply_unknown_operations",
            &[]
        ) >= 1.0
    );
    let oldest = &family(&families, "lostreply_oldest_unknown_age_seconds")["samples"][0];
    assert_eq!(oldest["labels"]["operation"], "op-1");
}

//! Every certification writer (terminal, JSON, JUnit, Markdown, HTML) over a
//! fixed, hand-built certification with one probe of each verdict, as insta
//! snapshots; a change in any writer shows up here as a reviewable diff.
//!
//! Times are redacted, so the snapshots say what a report shows, not how long
//! anything took: the JSON by insta redactions (every `duration_ms`, and the
//! ` in N ms` that ends an answer's outcome), the text formats by filters on
//! `N ms` and JUnit's `time="..."`. The same snapshots hold with every time changed.

use crate::common;

use lostreply_certify::report::Certification;
use lostreply_certify::verdict::Evidence;

/// Times inside the text formats.
const TIME_FILTERS: [(&str, &str); 2] = [
    (r"\b\d+ ms\b", "[ms]"),
    (r#"time="[0-9.]+""#, r#"time="[time]""#),
];

/// An answer's outcome with its time redacted: `201 in 4 ms` -> `201 in [ms]`.
fn redact_outcome_time(outcome: &str) -> String {
    if let Some(rest) = outcome.strip_suffix(" ms") {
        if let Some(at) = rest.rfind(" in ") {
            let number = &rest[at + 4..];
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
                return format!("{} in [ms]", &rest[..at]);
            }
        }
    }
    outcome.to_owned()
}

fn snapshot_every_writer(c: &Certification) {
    for (name, text) in common::render_all(c) {
        if name == "certify.json" {
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            insta::assert_json_snapshot!(name, value, {
                ".duration_ms" => "[duration_ms]",
                ".probes[].duration_ms" => "[duration_ms]",
                ".probes[].evidence[].outcome" => insta::dynamic_redaction(|value, _| {
                    redact_outcome_time(value.as_str().unwrap_or_default())
                }),
            });
        } else {
            insta::with_settings!({ filters => TIME_FILTERS.to_vec() }, {
                insta::assert_snapshot!(name, text);
            });
        }
    }
}

#[test]
fn every_verdict_in_every_writer() {
    snapshot_every_writer(&common::every_verdict());
}

#[test]
fn snapshots_do_not_depend_on_times() {
    let mut c = common::every_verdict();
    c.duration_ms = 987_654;
    for (i, p) in c.probes.iter_mut().enumerate() {
        p.duration_ms = 1_000 * (i as u64 + 7) + 3;
        for e in &mut p.evidence {
            if let Evidence::Exchange { outcome, .. } = e {
                *outcome = outcome.replace(" ms", "0 ms");
            }
        }
    }
    snapshot_every_writer(&c);
}

//! The contract file's declarations for real middlewares: their defaults
//! from the IETF draft, their enums, durations kept as written, and every
//! problem located at the node at fault.

use std::time::Duration;

use lostreply_certify::contract::{
    self, Contract, ErrorsReplayed, Fingerprint, InFlight, KeyChecks, KeyScope, MissingKey, Tally,
};
use lostreply_certify::simulator;

fn parse(text: &str) -> Result<Contract, String> {
    contract::parse(text, "vendor.yaml", &|_| None).map_err(|e| e.to_string())
}

/// The ietf worked example with `from` replaced by `to`.
fn ietf_with(from: &str, to: &str) -> String {
    assert!(simulator::IETF_CONTRACT.contains(from), "{from}");
    simulator::IETF_CONTRACT.replacen(from, to, 1)
}

/// The 1-based line of the first line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(start))
        .map_or(0, |i| i + 1)
}

#[test]
fn absent_declarations_take_the_ietf_drafts_answers() {
    let c = parse(simulator::IETF_CONTRACT).expect("valid");
    assert_eq!(c.mismatch_status, vec![422]);
    assert_eq!(c.in_flight, InFlight::Status(vec![409]));
    assert_eq!(c.errors_replayed, ErrorsReplayed::Never);
    assert_eq!(c.fingerprint, Fingerprint::CanonicalJson);
    assert_eq!(c.key_scope, KeyScope::PerPath);
    assert_eq!(
        c.key_checks,
        KeyChecks::Refused {
            malformed: vec![400],
            oversized: vec![400]
        }
    );
    let no_missing_key = ietf_with("  missing_key: processed\n", "");
    assert_eq!(
        parse(&no_missing_key).expect("valid").missing_key,
        MissingKey::Status(vec![400])
    );
}

#[test]
fn durations_print_as_written() {
    let c = parse(simulator::IETF_CONTRACT).expect("valid");
    assert_eq!(c.retention.value, Duration::from_secs(86_400));
    assert_eq!(c.retention.to_string(), "24h");
    let waits: Vec<String> = c
        .lost_response_waits
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(waits, ["0s", "50ms", "300ms"]);
}

#[test]
fn the_new_declarations_read_as_their_enums() {
    let text = ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  fingerprint: raw_bytes\n  key_scope: global\n  errors_replayed: [409, 422]\n  in_flight: {waits: 15s, then: [409]}\n  key_validation: accepts_any\n",
    );
    let c = parse(&text).expect("valid");
    assert_eq!(c.fingerprint, Fingerprint::RawBytes);
    assert_eq!(c.key_scope, KeyScope::Global);
    assert_eq!(c.errors_replayed, ErrorsReplayed::Statuses(vec![409, 422]));
    assert!(c.errors_replayed.replays(422) && !c.errors_replayed.replays(500));
    let InFlight::WaitsThen(up_to, then) = &c.in_flight else {
        panic!("{:?}", c.in_flight);
    };
    assert_eq!(
        (up_to.to_string(), up_to.value),
        ("15s".to_owned(), Duration::from_secs(15))
    );
    assert_eq!(then, &vec![409]);
    assert_eq!(c.key_checks, KeyChecks::AcceptsAny);
    let every = parse(&ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  errors_replayed: true\n",
    ))
    .expect("valid");
    assert_eq!(every.errors_replayed, ErrorsReplayed::Every);
}

#[test]
fn a_ground_truth_may_count() {
    let text = ietf_with(
        "  ground_truth: {path: /_lostreply/ledger, items_at: /data, marker_at: /client_reference, auth: false}",
        "  ground_truth: {path: \"/effects?marker={marker}\", count_at: /count}",
    );
    let c = parse(&text).expect("valid");
    let tally = c.ground_truth.map(|g| g.tally);
    assert_eq!(
        tally,
        Some(Tally::Count {
            count_at: "/count".to_owned()
        })
    );
}

/// A broken contract: the error names `vendor.yaml:LINE:` and holds `words`.
fn refused_at(text: &str, line: usize, words: &str) {
    let err = parse(text).expect_err("invalid");
    assert!(
        err.contains(&format!("vendor.yaml:{line}:")),
        "line {line}: {err}"
    );
    assert!(err.contains(words), "{words}: {err}");
}

#[test]
fn every_problem_points_at_its_node() {
    // A missing field: the mapping that lacks it, not its last key.
    let text = ietf_with("  retention: 24h\n", "");
    refused_at(
        &text,
        line_of(&text, "declares:"),
        "missing field `retention`",
    );
    let text = ietf_with("  syntax: sf_string\n", "");
    refused_at(&text, line_of(&text, "key:"), "missing field `syntax`");
    // In a flow mapping, its brace.
    let text = ietf_with(
        "  retrieve: {path: \"/v1/certify_items/{id}\"}",
        "  retrieve: {auth: true}",
    );
    let err = parse(&text).expect_err("invalid");
    let line = line_of(&text, "  retrieve:");
    assert!(err.contains(&format!("vendor.yaml:{line}:13:")), "{err}");
    // A closed set: the value.
    let text = ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  fingerprint: json\n",
    );
    refused_at(&text, line_of(&text, "  fingerprint:"), "fingerprint");
    let text = ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  key_scope: tenant\n",
    );
    refused_at(&text, line_of(&text, "  key_scope:"), "key_scope");
    for (from, to, words) in [
        (
            "  syntax: sf_string",
            "  syntax: bearer",
            "expected one of token, sf_string, body_field",
        ),
        (
            "  content_type: json",
            "  content_type: xml",
            "expected one of json, form",
        ),
        (
            "  method: POST",
            "  method: PATCH",
            "expected one of POST, PUT",
        ),
    ] {
        let text = ietf_with(from, to);
        refused_at(&text, line_of(&text, to), words);
    }
    // Statuses that accepts_any cannot have.
    let text = ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  key_validation: accepts_any\n  malformed_key_status: [400]\n",
    );
    refused_at(
        &text,
        line_of(&text, "  malformed_key_status:"),
        "accepts_any",
    );
    let text = ietf_with(
        "marker_at: /client_reference, auth: false}",
        "marker_at: /client_reference, count_at: /n, auth: false}",
    );
    refused_at(&text, line_of(&text, "  ground_truth:"), "not both");
    // A bad element of a list: the element; of `in_flight`'s forms: its node.
    let text = ietf_with(
        "lost_response_waits: [0s, 50ms, 300ms]",
        "lost_response_waits: [0s, 50, 300ms]",
    );
    let err = parse(&text).expect_err("invalid");
    let line = line_of(&text, "  lost_response_waits:");
    assert!(err.contains(&format!("vendor.yaml:{line}:29:")), "{err}");
    let text = ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  in_flight: {waits: 15x, then: [409]}\n",
    );
    let err = parse(&text).expect_err("invalid");
    let line = line_of(&text, "  in_flight:");
    assert!(err.contains(&format!("vendor.yaml:{line}:14:")), "{err}");
    let text = ietf_with(
        "  missing_key: processed\n",
        "  missing_key: processed\n  in_flight: {waits: 15}\n",
    );
    refused_at(
        &text,
        line_of(&text, "  in_flight:"),
        "{waits: 15s, then: [409]}",
    );
    // A mapping without what it needs: its key.
    let text: String = simulator::IETF_CONTRACT
        .lines()
        .filter(|l| {
            !["  ground_truth:", "  search:", "  list:"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    refused_at(
        &text,
        line_of(&text, "readback:"),
        "at least one of ground_truth",
    );
}

/// A value written in none of its forms is refused at its key with the forms
/// it takes, in the contract's words (no reader's type names).
#[test]
fn a_value_in_no_form_names_its_forms() {
    for (to, forms) in [
        (
            "  in_flight: {waits: 15s, then: 409}\n",
            "in_flight is `waits`, {status: [409]} or {waits: 15s, then: [409]}",
        ),
        (
            "  errors_replayed: sometimes\n",
            "errors_replayed is true, false or a list of statuses",
        ),
    ] {
        let text = ietf_with(
            "  missing_key: processed\n",
            &format!("  missing_key: processed\n{to}"),
        );
        refused_at(&text, line_of(&text, to.trim_end()), forms);
        let err = parse(&text).expect_err("invalid");
        assert!(!err.contains("untagged") && !err.contains("Raw"), "{err}");
    }
}

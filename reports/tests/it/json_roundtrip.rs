//! The JSON report reads back into the very report that was written.

use crate::common::fixtures;
use lostreply_reports::model::SCHEMA_VERSION;
use lostreply_reports::{read_json, write_json, ReadJsonError};

fn to_json(report: &lostreply_reports::model::Report) -> String {
    let mut out = Vec::new();
    write_json(&mut out, report).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn every_fixture_round_trips() {
    let mut runs = fixtures::all_runs();
    runs.push(("hostile", fixtures::hostile_run()));
    for (name, report) in runs {
        let json = to_json(&report);
        let back = read_json(&json).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back, report, "{name} changed on the way through JSON");
    }
}

#[test]
fn schema_version_comes_first_and_is_current() {
    let json = to_json(&fixtures::passing_run());
    assert!(
        json.starts_with(&format!("{{\n  \"schema_version\": {SCHEMA_VERSION},")),
        "{}",
        &json[..80]
    );
}

#[test]
fn another_schema_version_is_refused_by_name() {
    let json = to_json(&fixtures::passing_run()).replacen(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 99",
        1,
    );
    let err = read_json(&json).unwrap_err();
    assert!(
        matches!(err, ReadJsonError::UnsupportedVersion { found: 99, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("schema_version 99 is not supported"),
        "{err}"
    );
}

#[test]
fn unknown_fields_are_ignored() {
    let json = to_json(&fixtures::passing_run()).replacen(
        "\"tool_version\"",
        "\"added_later\": {\"x\": 1},\n  \"tool_version\"",
        1,
    );
    assert_eq!(read_json(&json).unwrap(), fixtures::passing_run());
}

#[test]
fn bad_input_gets_a_clear_error() {
    let not_json = read_json("<html>").unwrap_err();
    assert!(
        matches!(not_json, ReadJsonError::NotAReport(_)),
        "{not_json:?}"
    );
    assert!(
        not_json.to_string().contains("line 1 column 1"),
        "{not_json}"
    );

    let no_version = read_json("{\"tool_version\": \"1\"}").unwrap_err();
    assert!(
        no_version.to_string().contains("schema_version"),
        "{no_version}"
    );

    let json = to_json(&fixtures::passing_run()).replacen("\"seed\": 42", "\"seed\": \"42\"", 1);
    let malformed = read_json(&json).unwrap_err();
    assert!(
        matches!(malformed, ReadJsonError::Malformed(_)),
        "{malformed:?}"
    );
    assert!(malformed.to_string().contains("line"), "{malformed}");
}

#[test]
fn an_invariant_whose_number_and_name_disagree_is_malformed() {
    let json = to_json(&fixtures::violations_run());
    let edited = json.replacen(
        "\"number\": 1,\n            \"name\": \"at-most-once\"",
        "\"number\": 1,\n            \"name\": \"terminal-is-final\"",
        1,
    );
    assert_ne!(edited, json, "the fixture names invariant 1");
    let err = read_json(&edited).unwrap_err();
    assert!(matches!(err, ReadJsonError::Malformed(_)), "{err:?}");
    assert!(err.to_string().contains("no invariant 1"), "{err}");
}

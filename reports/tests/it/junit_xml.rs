//! The JUnit XML, parsed back with an independent XML parser: the structure CI
//! tools read (counts, names, classnames, failure vs error) and the evidence in
//! a failure.

use std::collections::BTreeMap;

use crate::common::fixtures;
use lostreply_reports::model::Report;
use lostreply_reports::write_junit;
use quick_xml::events::Event;
use quick_xml::Reader;

/// An element of interest and what was inside it.
#[derive(Debug, Default)]
struct Element {
    attrs: BTreeMap<String, String>,
    text: String,
}

#[derive(Debug, Default)]
struct Parsed {
    suites: Vec<Element>,
    cases: Vec<Element>,
    /// (testcase name, `failure` or `error`, element)
    outcomes: Vec<(String, String, Element)>,
}

fn parse(xml: &str) -> Parsed {
    let mut reader = Reader::from_str(xml);
    let mut parsed = Parsed::default();
    let mut in_outcome = false;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        (
                            String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                            a.unescape_value().unwrap().into_owned(),
                        )
                    })
                    .collect();
                let element = Element {
                    attrs,
                    text: String::new(),
                };
                match name.as_str() {
                    "testsuite" => parsed.suites.push(element),
                    "testcase" => parsed.cases.push(element),
                    "failure" | "error" => {
                        let case = parsed.cases.last().unwrap().attrs["name"].clone();
                        parsed.outcomes.push((case, name, element));
                        in_outcome = true;
                    }
                    _ => {}
                }
            }
            Event::Text(t) if in_outcome => {
                let text = t.decode().unwrap();
                parsed.outcomes.last_mut().unwrap().2.text.push_str(&text);
            }
            Event::GeneralRef(r) if in_outcome => {
                let resolved = match r.resolve_char_ref().unwrap() {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.decode().unwrap();
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .unwrap()
                            .to_string()
                    }
                };
                parsed
                    .outcomes
                    .last_mut()
                    .unwrap()
                    .2
                    .text
                    .push_str(&resolved);
            }
            Event::End(e) if matches!(e.name().as_ref(), b"failure" | b"error") => {
                in_outcome = false;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    parsed
}

fn junit(report: &Report) -> Parsed {
    let mut out = Vec::new();
    write_junit(&mut out, report).unwrap();
    parse(&String::from_utf8(out).unwrap())
}

#[test]
fn one_suite_one_case_per_scenario() {
    let report = fixtures::violations_run();
    let parsed = junit(&report);
    assert_eq!(parsed.suites.len(), 1);
    let suite = &parsed.suites[0];
    assert_eq!(suite.attrs["name"], "lostreply");
    assert_eq!(suite.attrs["tests"], report.scenarios.len().to_string());
    assert_eq!(suite.attrs["failures"], "9");
    assert_eq!(suite.attrs["errors"], "0");
    let names: Vec<&str> = parsed
        .cases
        .iter()
        .map(|c| c.attrs["name"].as_str())
        .collect();
    let ids: Vec<&str> = report.scenarios.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(names, ids);
    assert_eq!(parsed.cases[0].attrs["classname"], "lostreply.case02");
    assert_eq!(parsed.cases[5].attrs["classname"], "lostreply.scenarios");
    assert_eq!(parsed.cases[0].attrs["time"], "1.310");
}

#[test]
fn a_violation_is_a_failure_with_its_evidence() {
    let parsed = junit(&fixtures::violations_run());
    assert!(parsed.outcomes.iter().all(|(_, kind, _)| kind == "failure"));
    let (case, _, failure) = &parsed.outcomes[0];
    assert_eq!(case, "lost-after-commit");
    assert_eq!(failure.attrs["type"], "violated");
    assert!(
        failure.attrs["message"].starts_with("invariant 1 (at-most-once), op-1: 2 effects"),
        "{}",
        failure.attrs["message"]
    );
    assert!(failure.attrs["message"].contains("; invariant 5 (same-key-same-args)"));
    for evidence in [
        "#1 POST /v1/tickets key=3f9c1e2a-7d44-4c1b-9a0e-5b8f2d6c1a07 -> after_commit drop (rule 1): dropped, committed tkt_0001 (response lost)",
        "#2 POST /v1/tickets key=8b21d07f-02c6-4e9d-b3a5-61f0c7e4d298 -> sent 201, committed tkt_0002",
        "call 0 execute op-1 -> succeeded ref=tkt_0002",
        "reproduce: lostreply run --adapter",
    ] {
        assert!(failure.text.contains(evidence), "missing {evidence:?} in\n{}", failure.text);
    }
}

#[test]
fn adapter_and_infra_errors_are_errors() {
    let parsed = junit(&fixtures::adapter_error_run());
    assert_eq!(parsed.suites[0].attrs["failures"], "0");
    assert_eq!(parsed.suites[0].attrs["errors"], "3");
    let kinds: Vec<(&str, &str, &str)> = parsed
        .outcomes
        .iter()
        .map(|(case, kind, e)| (case.as_str(), kind.as_str(), e.attrs["type"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("lost-after-commit", "error", "adapter_error"),
            ("still-processing", "error", "adapter_error"),
            ("weak-evidence", "error", "infra_error"),
        ]
    );
    let bad_json = &parsed.outcomes[0].2;
    assert!(bad_json.attrs["message"].contains("expected value at line 1 column 1"));
    assert!(
        bad_json.text.contains("| requests.exceptions.ReadTimeout"),
        "{}",
        bad_json.text
    );
}

#[test]
fn passing_run_has_no_failures() {
    let parsed = junit(&fixtures::passing_run());
    assert_eq!(parsed.cases.len(), 3);
    assert!(parsed.outcomes.is_empty());
    assert_eq!(parsed.suites[0].attrs["failures"], "0");
    assert_eq!(parsed.suites[0].attrs["errors"], "0");
}

#[test]
fn hostile_text_survives_as_text() {
    let parsed = junit(&fixtures::hostile_run());
    let (case, _, failure) = &parsed.outcomes[0];
    assert_eq!(case, &format!("lost{}", fixtures::HOSTILE));
    assert!(failure.text.contains(fixtures::HOSTILE));
}

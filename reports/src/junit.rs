//! The JUnit XML writer, for CI systems that show test results: one testsuite
//! `lostreply` per run, one testcase per scenario. A violation is a `failure`
//! (the adapter under test is wrong); an adapter or infrastructure error is an
//! `error` (the run could not judge it).

use std::io::{self, Write};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::model::{Report, ScenarioReport, Verdict};
use crate::terminal::{failure_lines, TerminalStyle};
use crate::text;

/// Name of the report and of its one testsuite.
const SUITE_NAME: &str = "lostreply";

/// Writes the run as JUnit XML.
pub fn write_junit(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut suite = TestSuite::new(SUITE_NAME);
    suite.set_time(Duration::from_millis(report.duration_ms));
    suite.add_properties([
        Property::new("adapter", &report.adapter.name),
        Property::new("adapter_kind", report.adapter.kind.as_str()),
        Property::new("seed", report.seed.to_string()),
        Property::new("tool_version", &report.tool_version),
    ]);
    suite.add_test_cases(report.scenarios.iter().map(test_case));

    let mut junit = quick_junit::Report::new(SUITE_NAME);
    junit.set_time(Duration::from_millis(report.duration_ms));
    junit.add_test_suite(suite);
    junit.serialize(w).map_err(io::Error::other)
}

/// `lostreply.case02`, or `lostreply.scenarios` outside the ten cases, so that
/// CI tools group the cases together.
fn classname(scenario: &ScenarioReport) -> String {
    match scenario.case {
        Some(case) => format!("{SUITE_NAME}.case{case:02}"),
        None => format!("{SUITE_NAME}.scenarios"),
    }
}

fn test_case(scenario: &ScenarioReport) -> TestCase {
    let mut case = TestCase::new(&scenario.id, status(scenario));
    case.set_classname(classname(scenario));
    case.set_time(Duration::from_millis(scenario.duration_ms));
    case.add_properties([
        Property::new("path", &scenario.path),
        Property::new("seed", scenario.seed.to_string()),
    ]);
    case
}

fn status(scenario: &ScenarioReport) -> TestCaseStatus {
    let (kind, ty, headings) = match scenario.verdict {
        Verdict::Passed => return TestCaseStatus::success(),
        Verdict::Violated => (
            NonSuccessKind::Failure,
            Verdict::Violated.as_str(),
            scenario
                .violations
                .iter()
                .map(text::violation_heading)
                .collect::<Vec<_>>(),
        ),
        Verdict::AdapterError | Verdict::InfraError => (
            NonSuccessKind::Error,
            scenario.verdict.as_str(),
            scenario
                .errors
                .iter()
                .map(text::error_heading)
                .collect::<Vec<_>>(),
        ),
    };
    let message = if headings.is_empty() {
        text::verdict_words(scenario.verdict).to_string()
    } else {
        headings.join("; ")
    };
    let description = failure_lines(scenario, TerminalStyle { color: false }).join("\n");
    let mut status = TestCaseStatus::non_success(kind);
    status
        .set_message(message)
        .set_type(ty)
        .set_description(description);
    status
}

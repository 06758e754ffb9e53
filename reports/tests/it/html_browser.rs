//! The HTML report opened in a real browser (headless Chromium): the page
//! renders, its script runs to the end without a console error, every scenario
//! has its timeline, violations are marked, and hostile text stays text.
//!
//! Without Chromium the build marks these tests ignored, with the reason
//! (reports/build.rs), unless `LOSTREPLY_REQUIRE_BROWSER=1` (CI sets it): then
//! they run, and a missing browser fails them. The browser itself is driven by
//! `common/browser.rs`, which the certification report's browser test shares.

use std::path::Path;

use crate::common::browser::{
    assert_rendered_cleanly, body_attr, chromium, render_html_in_browser, without_attribute_values,
    Rendered,
};
use crate::common::fixtures;
use lostreply_reports::model::Report;
use lostreply_reports::write_html;

/// Writes the report's HTML and dumps the DOM Chromium builds from it, after
/// its scripts ran.
fn render_in_browser(chromium: &Path, report: &Report) -> Rendered {
    let mut html = Vec::new();
    write_html(&mut html, report).unwrap();
    render_html_in_browser(chromium, &html)
}

fn check_rendered(rendered: &Rendered, report: &Report) {
    let dom = &rendered.dom;
    assert_rendered_cleanly(rendered);
    let scenarios = report.scenarios.len().to_string();
    assert_eq!(body_attr(dom, "data-timelines"), Some(scenarios.as_str()));
    // Violations' and findings' evidence alike link to the timeline.
    let evidence_items: usize = report
        .scenarios
        .iter()
        .map(|s| {
            s.violations.iter().map(|v| v.evidence.len()).sum::<usize>()
                + s.findings.iter().map(|f| f.evidence.len()).sum::<usize>()
        })
        .sum();
    let linked: usize = body_attr(dom, "data-linked-evidence")
        .unwrap()
        .parse()
        .unwrap();
    assert!(linked > 0 || evidence_items == 0);
    assert!(linked <= evidence_items);

    let structure = without_attribute_values(dom);
    assert!(
        !structure.contains("<img"),
        "an injected element reached the DOM"
    );
    assert_eq!(structure.matches("<script").count(), 1);
    // A timeline per scenario, and the signals' chart.
    assert_eq!(
        structure.matches("<svg").count(),
        report.scenarios.len() + 1
    );
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn violations_render_with_timelines_and_markers() {
    let chromium = chromium();
    let report = fixtures::violations_run();
    let rendered = render_in_browser(&chromium, &report);
    check_rendered(&rendered, &report);
    let dom = &rendered.dom;

    for (position, scenario) in report.scenarios.iter().enumerate() {
        let svg = format!(
            "<svg class=\"timeline\" id=\"scenario-{position}-timeline\" data-scenario=\"{}\"",
            scenario.id
        );
        assert!(dom.contains(&svg), "no timeline for {}", scenario.id);
    }
    let violations: usize = report.scenarios.iter().map(|s| s.violations.len()).sum();
    assert_eq!(dom.matches("<li class=\"violation\"").count(), violations);
    // Every evidence item points at something drawn in this fixture.
    let evidence_items: usize = report
        .scenarios
        .iter()
        .flat_map(|s| &s.violations)
        .map(|v| v.evidence.len())
        .sum();
    assert_eq!(
        body_attr(dom, "data-linked-evidence"),
        Some(evidence_items.to_string().as_str())
    );
    // The evidence is drawn red on the timeline: the two requests and effects of
    // the case 2 duplicate, for a start.
    for id in [
        "scenario-0-req-1",
        "scenario-0-req-2",
        "scenario-0-effect-0",
        "scenario-0-effect-1",
    ] {
        let element = format!("id=\"{id}\" data-violations=");
        assert!(dom.contains(&element), "{id} is not marked as evidence");
    }
    for lane in [
        "steps", "clock", "calls", "requests", "commits", "webhooks", "outcomes",
    ] {
        assert!(
            dom.contains(&format!("data-lane=\"{lane}\"")),
            "lane {lane} missing"
        );
    }
    assert!(dom.contains("class=\"item request fault lost evidence\""));
    assert!(dom.contains("class=\"item webhook forged evidence\""));
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn passing_and_error_runs_render() {
    let chromium = chromium();
    for report in [fixtures::passing_run(), fixtures::adapter_error_run()] {
        let rendered = render_in_browser(&chromium, &report);
        check_rendered(&rendered, &report);
        assert!(!rendered.dom.contains("<li class=\"violation\""));
    }
}

/// The signals' chart draws a bar per kind of confirmation, each as long
/// as its count, and the page lists the run's signals and each scenario's.
#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn the_signals_chart_draws_how_ambiguity_was_resolved() {
    let chromium = chromium();
    let report = fixtures::passing_run();
    let rendered = render_in_browser(&chromium, &report);
    let dom = &rendered.dom;
    assert!(dom.contains("<svg class=\"signals-chart\""), "no chart");
    for (kind, count, width) in [
        ("replay", 0, 0),
        ("new_attempt", 0, 0),
        ("lookup", 1, 300),
        ("event", 0, 0),
        ("person", 0, 0),
        ("other", 0, 0),
        ("unconfirmed", 0, 0),
    ] {
        let bar = format!("<g class=\"bar\" data-kind=\"{kind}\" data-count=\"{count}\">");
        let at = dom.find(&bar).unwrap_or_else(|| panic!("no bar {kind}"));
        let rect = format!("width=\"{width}\"");
        let end = dom[at..].find("</g>").unwrap() + at;
        assert!(
            dom[at..end].contains(&rect),
            "bar {kind}: {}",
            &dom[at..end]
        );
    }
    assert!(dom.contains("<table class=\"signals-run\">"));
    assert!(dom.contains("<tr data-scenario=\"lost-after-commit\">"));
    assert!(dom.contains("lookup 1 (100%)"));
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn hostile_text_stays_text_in_the_browser() {
    let chromium = chromium();
    let report = fixtures::hostile_run();
    let rendered = render_in_browser(&chromium, &report);
    check_rendered(&rendered, &report);
    assert!(rendered
        .dom
        .contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
}

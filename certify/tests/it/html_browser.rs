//! The certification page opened in a real browser (headless Chromium): it
//! renders, its script runs to the end without a console error or a CSP
//! refusal, and hostile text stays text.
//!
//! Without Chromium the build marks these tests ignored, with the reason
//! (certify/build.rs), unless `LOSTREPLY_REQUIRE_BROWSER=1` (CI sets it): then
//! they run, and a missing browser fails them. The browser is driven by the run
//! report's own helper, `reports/tests/it/common/browser.rs`, shared by path
//! rather than copied.

#[path = "../../../reports/tests/it/common/browser.rs"]
mod browser;

use std::path::Path;

use crate::common;
use browser::{
    assert_rendered_cleanly, body_attr, chromium, render_html_in_browser, without_attribute_values,
    Rendered,
};
use lostreply_certify::report::Certification;
use lostreply_certify::write::write_html;

fn render_in_browser(chromium: &Path, c: &Certification) -> Rendered {
    let mut html = Vec::new();
    write_html(&mut html, c).unwrap();
    render_html_in_browser(chromium, &html)
}

fn check_rendered(rendered: &Rendered, c: &Certification) {
    let dom = &rendered.dom;
    assert_rendered_cleanly(rendered);
    let probes = c.probes.len().to_string();
    assert_eq!(body_attr(dom, "data-probes"), Some(probes.as_str()));
    let sections = c
        .probes
        .iter()
        .filter(|p| p.verdict.failed() || p.verdict == lostreply_certify::verdict::Verdict::Error)
        .count()
        .to_string();
    assert_eq!(
        body_attr(dom, "data-evidence-sections"),
        Some(sections.as_str())
    );

    let structure = without_attribute_values(dom);
    assert!(
        !structure.contains("<img"),
        "an injected element reached the DOM"
    );
    assert!(
        !structure.contains("<b "),
        "an injected element reached the DOM"
    );
    assert_eq!(structure.matches("<script").count(), 1);
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn every_verdict_renders_without_console_errors() {
    let chromium = chromium();
    let c = common::every_verdict();
    let rendered = render_in_browser(&chromium, &c);
    check_rendered(&rendered, &c);
    let dom = &rendered.dom;
    for p in &c.probes {
        assert!(
            dom.contains(&format!(
                "data-probe=\"{}\" data-verdict=\"{}\"",
                p.name,
                p.verdict.name()
            )),
            "no row for {}",
            p.name
        );
    }
    assert!(dom.contains("class=\"evidence count mismatch\""));
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn hostile_text_stays_text_in_the_browser() {
    let chromium = chromium();
    let c = common::hostile();
    let rendered = render_in_browser(&chromium, &c);
    check_rendered(&rendered, &c);
    assert!(rendered
        .dom
        .contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
}

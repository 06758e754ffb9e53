//! The HTML report's layout as a browser draws it (headless Chromium): the page
//! opens on what failed, and no timeline label is cut or drawn outside its plot.
//!
//! The page is measured by a script this test adds to it (its hash added to the
//! page's Content-Security-Policy, which stays in force): it records which
//! scenario sections come first and which are open, then opens every section
//! and reads each timeline text's box with `getBoundingClientRect`. The
//! numbers come back through the dumped DOM as ASCII-only JSON.
//!
//! Without Chromium the browser tests are ignored, with the reason, unless
//! `LOSTREPLY_REQUIRE_BROWSER=1`, as in `html_browser.rs`.

use std::path::Path;

use crate::common::browser::{assert_rendered_cleanly, chromium, render_html_in_browser};
use crate::common::fixtures;
use base64::Engine as _;
use lostreply_reports::model::{Report, ScenarioReport, Verdict};
use lostreply_reports::write_html;
use serde::Deserialize;
use serde_json::json;
use sha2::Digest as _;

/// Records the sections' order and state, opens them all, then measures every
/// text of every timeline. Writes the result into `<pre id="layout">` as JSON
/// escaped to printable ASCII (no `&`, `<` or `>`), so that the serialized DOM
/// holds it verbatim.
const MEASURE: &str = r#"
(function () {
  function box(r) { return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; }
  var out = { sections: [], failed_links: [], timelines: [] };
  document.querySelectorAll('section.scenario').forEach(function (section) {
    var details = section.querySelector('details');
    out.sections.push({
      id: section.id,
      scenario: section.dataset.scenario,
      verdict: section.dataset.verdict,
      open: !!(details && details.open)
    });
  });
  document.querySelectorAll('.failed-index a[href]').forEach(function (a) {
    out.failed_links.push(a.getAttribute('href'));
  });
  document.querySelectorAll('section.scenario details').forEach(function (d) { d.open = true; });
  document.querySelectorAll('svg.timeline').forEach(function (svg) {
    var plot = svg.querySelector('.plot-area');
    var texts = [];
    svg.querySelectorAll('text').forEach(function (text) {
      var item = text.parentElement.closest('g.item');
      texts.push({
        item: item ? item.id : null,
        text: text.textContent,
        box: box(text.getBoundingClientRect())
      });
    });
    out.timelines.push({
      scenario: svg.dataset.scenario,
      box: box(svg.getBoundingClientRect()),
      plot: plot ? box(plot.getBoundingClientRect()) : null,
      texts: texts
    });
  });
  var json = JSON.stringify(out).replace(/[^\x20-\x7e]|[&<>]/g, function (c) {
    return '\\u' + ('000' + c.charCodeAt(0).toString(16)).slice(-4);
  });
  var pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = json;
  document.body.appendChild(pre);
})();
"#;

#[derive(Deserialize)]
struct Layout {
    sections: Vec<Section>,
    failed_links: Vec<String>,
    timelines: Vec<Timeline>,
}

#[derive(Deserialize)]
struct Section {
    id: String,
    scenario: String,
    verdict: String,
    open: bool,
}

#[derive(Deserialize)]
struct Timeline {
    scenario: String,
    #[serde(rename = "box")]
    bounds: Rect,
    plot: Option<Rect>,
    texts: Vec<Text>,
}

#[derive(Deserialize)]
struct Text {
    item: Option<String>,
    text: String,
    #[serde(rename = "box")]
    bounds: Rect,
}

#[derive(Deserialize, Clone, Copy, Debug)]
struct Rect {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

/// How far a box may stick out, in CSS pixels: rounding of glyph extents.
const TOLERANCE_PX: f64 = 0.5;

impl Rect {
    fn within(&self, outer: &Rect) -> bool {
        self.left >= outer.left - TOLERANCE_PX
            && self.right <= outer.right + TOLERANCE_PX
            && self.top >= outer.top - TOLERANCE_PX
            && self.bottom <= outer.bottom + TOLERANCE_PX
    }

    fn within_horizontally(&self, outer: &Rect) -> bool {
        self.left >= outer.left - TOLERANCE_PX && self.right <= outer.right + TOLERANCE_PX
    }

    fn overlaps(&self, other: &Rect) -> bool {
        self.left < other.right - TOLERANCE_PX
            && other.left < self.right - TOLERANCE_PX
            && self.top < other.bottom - TOLERANCE_PX
            && other.top < self.bottom - TOLERANCE_PX
    }
}

/// Writes the report's page with [`MEASURE`] added, renders it and reads
/// back what the script measured.
fn measure(chromium: &Path, report: &Report) -> Layout {
    let mut html = Vec::new();
    write_html(&mut html, report).unwrap();
    let html = String::from_utf8(html).unwrap();
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(MEASURE));
    let csp = "script-src '";
    assert!(html.contains(csp), "the page has no script-src policy");
    let html = html
        .replacen(csp, &format!("script-src 'sha256-{hash}' '"), 1)
        .replacen("</body>", &format!("<script>{MEASURE}</script></body>"), 1);
    let rendered = render_html_in_browser(chromium, html.as_bytes());
    assert_rendered_cleanly(&rendered);
    let start = rendered
        .dom
        .find("<pre id=\"layout\">")
        .expect("the measuring script did not run")
        + "<pre id=\"layout\">".len();
    let len = rendered.dom[start..].find("</pre>").unwrap();
    serde_json::from_str(&rendered.dom[start..start + len]).unwrap()
}

/// A label of `length` characters: ASCII words, markup, a symbol, CJK and an
/// emoji, so that narrow and wide glyphs both reach the edge.
fn label(length: usize, salt: usize) -> String {
    const PATTERN: &str = "status succeeded</script>⚡票据🙂→é-";
    PATTERN.chars().cycle().skip(salt).take(length).collect()
}

/// Label lengths placed at both edges of the timeline.
const LENGTHS: [usize; 12] = [1, 2, 3, 4, 6, 9, 14, 22, 40, 90, 300, 1500];

/// A violated scenario whose every lane has items with labels of
/// [`LENGTHS`] at the right edge of its timeline (and at the left edge).
fn labels_at_the_edges() -> (ScenarioReport, Vec<String>) {
    let mut s = fixtures::naive_lost_after_commit();
    s.id = "labels-at-the-edges".into();
    let span_ms: u32 = 2_000;
    s.duration_ms = u64::from(span_ms);
    let mut planted = Vec::new();
    let template_call = s.calls[0].clone();
    let template_request = s.journal[0].clone();
    let template_effect = s.ledger[0].clone();
    let template_step = s.steps[0].clone();
    let template_delivery = fixtures::violations_run().scenarios[3].deliveries[0].clone();
    for (i, &length) in LENGTHS.iter().enumerate() {
        for (edge, start_ms) in [(0, span_ms - 2), (1, 1)] {
            let n = 10 + 2 * i + edge;
            let [op, outcome, target, effect_id, event, step] =
                [0, 1, 2, 3, 4, 5].map(|salt| label(length, salt + n));
            let mut call = template_call.clone();
            call.index = n as u32;
            call.operation_id = Some(op.as_str().into());
            call.reply = Some(json!({ "outcome": outcome }).into());
            call.start_ms = start_ms;
            call.end_ms = start_ms + 1;
            s.calls.push(call);

            let mut request = template_request.clone();
            request.seq = n as u64;
            request.target = target.as_str().into();
            request.start_ms = u64::from(start_ms);
            request.end_ms = (edge == 1).then_some(u64::from(start_ms) + 1);
            s.journal.push(request);

            let mut effect = template_effect.clone();
            effect.id = effect_id.as_str().into();
            effect.request_seq = Some(n as u64);
            s.ledger.push(effect);

            let mut delivery = template_delivery.clone();
            delivery.event_id = format!("evt_{n}");
            delivery.event_type = event.clone();
            delivery.call_index = n;
            delivery.forged = edge == 0;
            s.deliveries.push(delivery);

            let mut step_report = template_step.clone();
            step_report.number = n as u32;
            step_report.label = step.as_str().into();
            step_report.start_ms = start_ms;
            step_report.end_ms = start_ms + 1;
            step_report.sim_end_ms = step_report.sim_start_ms + 3_600_000;
            s.steps.push(step_report);

            planted.extend([op, outcome, target, effect_id, event, step]);
        }
    }
    (s, planted)
}

/// A run in the order a suite produces: passing, violated and errored
/// scenarios interleaved, the labels scenario last.
fn mixed_run() -> (Report, Vec<String>) {
    let passing = fixtures::passing_run().scenarios;
    let violated = fixtures::violations_run().scenarios;
    let errored = fixtures::adapter_error_run().scenarios;
    let (edges, planted) = labels_at_the_edges();
    let mut report = fixtures::violations_run();
    report.scenarios = vec![
        passing[0].clone(),
        violated[1].clone(),
        passing[1].clone(),
        errored[0].clone(),
        passing[2].clone(),
        violated[0].clone(),
        edges,
    ];
    (report, planted)
}

fn fails(verdict: Verdict) -> bool {
    verdict.failed()
}

/// The page's sections as (scenario, open): failed scenarios first and open,
/// passing ones after and closed, each group in run order.
fn expected_sections(report: &Report) -> Vec<(String, bool)> {
    report
        .scenarios
        .iter()
        .filter(|s| fails(s.verdict))
        .chain(report.scenarios.iter().filter(|s| !fails(s.verdict)))
        .map(|s| (s.id.clone(), fails(s.verdict)))
        .collect()
}

/// The order and state as the page's text has them, so that they are
/// checked where no browser is installed too.
#[test]
fn failed_sections_come_first_and_open_in_the_page_text() {
    let (report, _) = mixed_run();
    let mut html = Vec::new();
    write_html(&mut html, &report).unwrap();
    let html = String::from_utf8(html).unwrap();
    let shown: Vec<(String, bool)> = html
        .match_indices("<section class=\"scenario ")
        .map(|(at, _)| {
            let section = &html[at..];
            let id_at = section.find("data-scenario=\"").unwrap() + "data-scenario=\"".len();
            let id = &section[id_at..id_at + section[id_at..].find('"').unwrap()];
            let details = &section[section.find("<details").unwrap()..];
            (id.to_string(), details.starts_with("<details open>"))
        })
        .collect();
    assert_eq!(shown, expected_sections(&report));
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn the_page_opens_on_what_failed() {
    let chromium = chromium();
    let (report, _) = mixed_run();
    let layout = measure(&chromium, &report);

    let expected = expected_sections(&report);
    let shown: Vec<(String, bool)> = layout
        .sections
        .iter()
        .map(|s| (s.scenario.clone(), s.open))
        .collect();
    assert_eq!(
        shown, expected,
        "sections in page order (scenario, open): failed ones first and open, passing ones closed"
    );
    assert_eq!(layout.sections[0].verdict, "violated");

    // The summary links to each failed scenario, in page order.
    let failed_sections: Vec<String> = layout
        .sections
        .iter()
        .filter(|s| s.open)
        .map(|s| format!("#{}", s.id))
        .collect();
    let scenario_links: Vec<String> = layout
        .failed_links
        .iter()
        .filter(|href| failed_sections.contains(href))
        .fold(Vec::new(), |mut seen, href| {
            if !seen.contains(href) {
                seen.push(href.clone());
            }
            seen
        });
    assert_eq!(scenario_links, failed_sections);
}

#[test]
#[cfg_attr(
    lostreply_no_browser,
    ignore = "needs headless Chromium: apt-get install chromium, or set LOSTREPLY_CHROMIUM"
)]
fn no_timeline_label_is_cut_or_outside_its_plot() {
    let chromium = chromium();
    let (report, planted) = mixed_run();
    let layout = measure(&chromium, &report);
    assert_eq!(layout.timelines.len(), report.scenarios.len());

    for timeline in &layout.timelines {
        let scenario = &timeline.scenario;
        for text in &timeline.texts {
            assert!(
                text.bounds.within(&timeline.bounds),
                "{scenario}: text {:?} at {:?} leaves its timeline {:?}",
                text.text,
                text.bounds,
                timeline.bounds
            );
        }
    }

    // Every label is drawn whole: each planted text is found, in order, in
    // one item's label (wrapping may break it into lines).
    let edges = layout
        .timelines
        .iter()
        .find(|t| t.scenario == "labels-at-the-edges")
        .unwrap();
    let squeezed = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let labels: Vec<String> = edges
        .texts
        .iter()
        .filter(|t| t.item.is_some())
        .map(|t| squeezed(&t.text))
        .collect();
    for text in &planted {
        assert!(
            labels.iter().any(|l| l.contains(&squeezed(text))),
            "no label shows the whole of {text:?}"
        );
    }

    for timeline in &layout.timelines {
        let scenario = &timeline.scenario;
        let plot = timeline.plot.expect("the timeline marks its plot area");
        let items: Vec<&Text> = timeline.texts.iter().filter(|t| t.item.is_some()).collect();
        for text in &items {
            assert!(
                text.bounds.within_horizontally(&plot),
                "{scenario}: label {:?} at {:?} leaves the plot {plot:?}",
                text.text,
                text.bounds
            );
        }
        for (i, a) in items.iter().enumerate() {
            for b in &items[i + 1..] {
                assert!(
                    !a.bounds.overlaps(&b.bounds),
                    "{scenario}: labels {:?} {:?} and {:?} {:?} overlap",
                    a.text,
                    a.bounds,
                    b.text,
                    b.bounds
                );
            }
        }
    }
}

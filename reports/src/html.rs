//! The HTML writer: one self-contained page (inline CSS and a few lines of
//! inline JS; nothing fetched from the network) with, per scenario, an SVG
//! timeline and the violations listed under it.
//!
//! The page opens on what failed: the summary links to each scenario that did
//! not pass, and those scenarios come first, open; the passing ones follow,
//! one line each until expanded. Each group keeps the run's order, and a
//! section's anchor is its position in the run, whatever its place on the page.
//!
//! Every string that came from the adapter or the scenario goes through
//! [`escape`] before it reaches the page, in text and in attributes alike; the
//! inline script reads the DOM and embeds no data, so nothing can break out of it.
//!
//! Stable hooks for browser tests and styling: `section.scenario[data-scenario]`
//! (its `details` open when the scenario failed), `.failed-index a` (the
//! summary's links), `svg.timeline[data-scenario]`, `.plot-area` (the part of a
//! timeline that labels stay in), `.violation`, `.evidence` (timeline items a
//! violation points at), `body[data-rendered="yes"]` once the script ran.

mod signals;
mod timeline;

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::model::{BacklogItem, Evidence, Report, ScenarioReport, Verdict, Violation};
use crate::text;

/// Writes the run as one self-contained HTML page.
pub fn write_html(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    write_head(w)?;
    write_summary(w, report)?;
    for (position, scenario) in page_order(&report.scenarios) {
        write_scenario(w, position, scenario)?;
    }
    write_tail(w)
}

/// The top of the page: the run's header, what failed, every scenario's line,
/// then each section about the run as a whole, in reading order. Any further
/// run-level section is written from here.
fn write_summary(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    write_header(w, report)?;
    let order = page_order(&report.scenarios);
    write_failed_index(w, &order)?;
    write_index(w, &order)?;
    let backlog = report.backlog();
    if !backlog.is_empty() {
        write_backlog(w, &backlog)?;
    }
    signals::write_signals(w, report)
}

/// Whether a scenario is shown first and open: it needs a reader's attention.
fn failed(verdict: Verdict) -> bool {
    match verdict {
        Verdict::Passed => false,
        Verdict::Violated | Verdict::AdapterError | Verdict::InfraError => true,
    }
}

/// The scenarios in the page's order, each with its position in the run (which
/// names its anchor): those that failed, then those that passed, each group in
/// the run's order.
fn page_order(scenarios: &[ScenarioReport]) -> Vec<(usize, &ScenarioReport)> {
    let (failing, passing): (Vec<_>, Vec<_>) = scenarios
        .iter()
        .enumerate()
        .partition(|(_, scenario)| failed(scenario.verdict));
    failing.into_iter().chain(passing).collect()
}

/// Escapes text for HTML text and attribute values alike. Control characters
/// other than newline and tab (which HTML forbids) become U+FFFD.
///
/// Public so that the certification report's page (`lostreply-certify`)
/// escapes exactly as this one does.
pub fn escape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A class-name-safe token for a verdict.
fn verdict_class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "passed",
        Verdict::Violated => "violated",
        Verdict::AdapterError => "adapter-error",
        Verdict::InfraError => "infra-error",
    }
}

/// The id prefix of everything in one scenario's section. Positions, not
/// scenario ids, so that ids are always valid and unique whatever a scenario is called.
fn scenario_anchor(position: usize) -> String {
    format!("scenario-{position}")
}

/// The rules every lostreply HTML page starts with: palette, type, tables,
/// `.meta` and `.badge`. Public because the certification page
/// (`lostreply-certify`) is styled on them too, so both pages look alike and
/// a change of style is made once; each page writes its own rules after these.
pub const BASE_CSS: &str = r#"
:root { --red: #c62828; --green: #2e7d32; --amber: #b26a00; --violet: #6a1b9a; --ink: #1d1d1f; --mute: #6b6b70; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto; max-width: 1100px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 17px; margin: 0 0 4px; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: #f6f6f8; padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-word; }
table { border-collapse: collapse; margin: 8px 0 16px; } td, th { border-bottom: 1px solid #e3e3e8; padding: 4px 10px; text-align: left; vertical-align: top; }
.meta { color: var(--mute); }
.badge { display: inline-block; padding: 0 8px; border-radius: 9px; color: #fff; font-size: 12px; font-weight: 600; }
"#;

/// This page's own rules, after [`BASE_CSS`].
const STYLE: &str = r#".badge.passed { background: var(--green); } .badge.violated { background: var(--red); }
.badge.adapter-error { background: var(--amber); } .badge.infra-error { background: var(--violet); }
nav.failed-index { border-left: 4px solid var(--red); padding: 2px 0 2px 12px; margin: 12px 0; }
nav.failed-index ol { padding-left: 20px; margin: 4px 0; } nav.failed-index ul { padding-left: 16px; margin: 2px 0 6px; }
nav.failed-index li li a { color: var(--red); }
details.index > summary, section.scenario > details > summary { cursor: pointer; }
details.index { margin: 8px 0 16px; }
section.scenario { border-top: 2px solid #e3e3e8; padding-top: 14px; margin-top: 22px; }
section.scenario > details > summary h2 { display: inline; }
section.scenario.passed { border-top-width: 1px; padding-top: 6px; margin-top: 6px; }
section.scenario.passed h2 { font-size: 15px; }
svg.timeline { display: block; width: 100%; height: auto; margin: 10px 0; background: #fcfcfd; border: 1px solid #ececf0; }
svg.timeline text { font: 11px ui-monospace, Menlo, Consolas, monospace; fill: var(--ink); white-space: pre; }
svg.timeline .lane-label { fill: var(--mute); font-weight: 600; }
svg.timeline .lane-line, svg.timeline .tick { stroke: #ececf0; }
svg.timeline .item rect { stroke-width: 1; }
svg.timeline .step rect { fill: #eef0f6; stroke: #c9cede; }
svg.timeline .clock-move path { fill: #5c6bc0; }
svg.timeline .call rect { fill: #dbe9f8; stroke: #7aa6d8; }
svg.timeline .request rect { fill: #e6f2e6; stroke: #8fbf8f; }
svg.timeline .request.fault rect { fill: #fff1d6; stroke: var(--amber); }
svg.timeline .request.lost rect { stroke-dasharray: 4 3; fill: #fbe3d0; }
svg.timeline .request.open rect { fill-opacity: 0.5; }
svg.timeline .fault-mark { fill: var(--amber); }
svg.timeline .commit path { fill: var(--green); }
svg.timeline .webhook circle { fill: #5c6bc0; } svg.timeline .webhook.forged circle { fill: #fff; stroke: #5c6bc0; stroke-width: 2; }
svg.timeline .outcome circle { fill: var(--mute); }
svg.timeline .outcome-succeeded circle { fill: var(--green); } svg.timeline .outcome-failed circle { fill: #455a64; }
svg.timeline .outcome-pending circle { fill: #5c6bc0; } svg.timeline .outcome-unknown circle { fill: var(--amber); }
svg.timeline .evidence rect, svg.timeline .evidence path, svg.timeline .evidence circle { stroke: var(--red); stroke-width: 2.5; }
svg.timeline .evidence text { fill: var(--red); font-weight: 700; }
svg.timeline .focus rect, svg.timeline .focus path, svg.timeline .focus circle { stroke-width: 5; }
ol.violations { padding-left: 20px; } .violation { color: var(--red); margin-bottom: 8px; }
.violation ul { color: var(--ink); list-style: none; padding-left: 8px; } .evidence-item { cursor: default; }
.evidence-item:hover code { background: #fde7e7; }
.error { color: var(--amber); }
"#;

/// Links each evidence line to its timeline item (hover highlights it), counts
/// what it linked, and marks the body as rendered: a browser test reading the DOM
/// knows from that mark that the script ran to the end without an error.
const SCRIPT: &str = r#"
(function () {
  var linked = 0;
  document.querySelectorAll('.evidence-item[data-target]').forEach(function (item) {
    var target = document.getElementById(item.getAttribute('data-target'));
    if (!target) { return; }
    linked += 1;
    item.addEventListener('mouseenter', function () { target.classList.add('focus'); });
    item.addEventListener('mouseleave', function () { target.classList.remove('focus'); });
  });
  document.body.dataset.timelines = String(document.querySelectorAll('svg.timeline').length);
  document.body.dataset.linkedEvidence = String(linked);
  document.body.dataset.rendered = 'yes';
})();
"#;

/// The CSP source for [`SCRIPT`]: `sha256-` and the base64 SHA-256 of its
/// exact text. A unit test recomputes it; change both together.
const SCRIPT_CSP_HASH: &str = "sha256-KbHkfhJq87OdZEMSPdXwuNuxOPg6l6N00NLxrkEXHXc=";

fn write_head(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "<!DOCTYPE html>")?;
    writeln!(w, "<html lang=\"en\">")?;
    writeln!(w, "<head>")?;
    writeln!(w, "<meta charset=\"utf-8\">")?;
    writeln!(
        w,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    // Nothing may be fetched: the page must open offline and leak nothing. And
    // only our own script may run: should escaping ever miss, an injected script
    // or event handler is still refused by the browser.
    writeln!(
        w,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_CSP_HASH}'\">"
    )?;
    writeln!(w, "<title>lostreply report</title>")?;
    writeln!(w, "<style>{BASE_CSS}{STYLE}</style>")?;
    writeln!(w, "</head>")?;
    writeln!(w, "<body data-rendered=\"no\">")
}

fn write_tail(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "<script>{SCRIPT}</script>")?;
    writeln!(w, "</body>")?;
    writeln!(w, "</html>")
}

fn write_header(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let totals = report.totals();
    writeln!(w, "<header>")?;
    writeln!(w, "<h1>lostreply report</h1>")?;
    writeln!(
        w,
        "<p class=\"meta\">adapter <code>{}</code> ({}), seed {}, {} scenarios in {}, lostreply {}</p>",
        escape(&report.adapter.name),
        report.adapter.kind.as_str(),
        report.seed,
        report.scenarios.len(),
        text::duration(report.duration_ms),
        escape(&report.tool_version)
    )?;
    writeln!(
        w,
        "<p class=\"totals\" data-passed=\"{}\" data-violated=\"{}\" data-adapter-errors=\"{}\" data-infra-errors=\"{}\">{}</p>",
        totals.passed,
        totals.violated,
        totals.adapter_errors,
        totals.infra_errors,
        text::totals_sentence(totals)
    )?;
    writeln!(w, "</header>")
}

/// A link to each scenario that did not pass, with its violations and errors
/// linked or named: the first thing a reader of a failed run needs.
fn write_failed_index(w: &mut dyn Write, order: &[(usize, &ScenarioReport)]) -> io::Result<()> {
    let failing: Vec<_> = order.iter().filter(|(_, s)| failed(s.verdict)).collect();
    if failing.is_empty() {
        return Ok(());
    }
    writeln!(w, "<nav class=\"failed-index\">")?;
    writeln!(w, "<h2>What failed</h2>")?;
    writeln!(w, "<ol>")?;
    for (position, scenario) in failing {
        let anchor = scenario_anchor(*position);
        writeln!(
            w,
            "<li><span class=\"badge {}\">{}</span> <a href=\"#{anchor}\"><code>{}</code></a> {}",
            verdict_class(scenario.verdict),
            text::verdict_words(scenario.verdict),
            escape(&scenario.id),
            escape(&scenario.title)
        )?;
        writeln!(w, "<ul>")?;
        for (number, violation) in scenario.violations.iter().enumerate() {
            writeln!(
                w,
                "<li><a href=\"#{anchor}-violation-{}\">{}</a>{}</li>",
                number + 1,
                escape(&text::check_label(&violation.check)),
                violation
                    .operation_id
                    .as_deref()
                    .map(|op| format!(", <code>{}</code>", escape(op)))
                    .unwrap_or_default()
            )?;
        }
        for error in &scenario.errors {
            writeln!(
                w,
                "<li class=\"error\">error {}</li>",
                escape(&text::error_heading(error))
            )?;
        }
        writeln!(w, "</ul></li>")?;
    }
    writeln!(w, "</ol>")?;
    writeln!(w, "</nav>")
}

/// Every scenario's line, in the page's order; folded away when something
/// failed, since the list above and the sections below already lead there.
fn write_index(w: &mut dyn Write, order: &[(usize, &ScenarioReport)]) -> io::Result<()> {
    let open = if order.iter().any(|(_, s)| failed(s.verdict)) {
        ""
    } else {
        " open"
    };
    writeln!(w, "<nav>")?;
    writeln!(
        w,
        "<details class=\"index\"{open}><summary>All {}</summary>",
        text::count(order.len(), "scenario", "scenarios")
    )?;
    writeln!(
        w,
        "<table class=\"scenario-index\"><thead><tr><th>Verdict</th><th>Scenario</th><th>Case</th><th>Title</th><th>Time</th></tr></thead><tbody>"
    )?;
    for &(position, scenario) in order {
        writeln!(
            w,
            "<tr><td><span class=\"badge {}\">{}</span></td><td><a href=\"#{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            verdict_class(scenario.verdict),
            text::verdict_words(scenario.verdict),
            scenario_anchor(position),
            escape(&scenario.id),
            text::case_label(scenario.case),
            escape(&scenario.title),
            text::duration(scenario.duration_ms)
        )?;
    }
    writeln!(w, "</tbody></table>")?;
    writeln!(w, "</details>")?;
    writeln!(w, "</nav>")
}

fn write_backlog(w: &mut dyn Write, backlog: &[BacklogItem]) -> io::Result<()> {
    writeln!(w, "<section class=\"backlog\">")?;
    writeln!(w, "<h2>Operator backlog</h2>")?;
    writeln!(
        w,
        "<p>Operations whose final status has <code>needs_review</code> (left <code>unknown</code>, or an operator's decision that later evidence contradicted): a person must decide.</p>"
    )?;
    writeln!(
        w,
        "<table><thead><tr><th>Scenario</th><th>Operation</th><th>Attempted change</th><th>Last evidence</th></tr></thead><tbody>"
    )?;
    for item in backlog {
        writeln!(
            w,
            "<tr class=\"backlog-item\"><td><code>{}</code></td><td><code>{}</code></td><td><code>create {} {}</code></td><td>{}</td></tr>",
            escape(&item.scenario),
            escape(&item.operation_id),
            escape(&item.resource),
            escape(&text::compact_json(&item.args)),
            escape(&item.evidence)
        )?;
    }
    writeln!(w, "</tbody></table>")?;
    writeln!(w, "</section>")
}

fn write_scenario(w: &mut dyn Write, position: usize, scenario: &ScenarioReport) -> io::Result<()> {
    let anchor = scenario_anchor(position);
    writeln!(
        w,
        "<section class=\"scenario {}\" id=\"{anchor}\" data-scenario=\"{}\" data-verdict=\"{}\">",
        verdict_class(scenario.verdict),
        escape(&scenario.id),
        scenario.verdict.as_str()
    )?;
    // What failed is open; a passing scenario is its one line until asked for.
    let open = if failed(scenario.verdict) {
        " open"
    } else {
        ""
    };
    writeln!(w, "<details{open}>")?;
    writeln!(
        w,
        "<summary><h2><span class=\"badge {}\">{}</span> <code>{}</code> {}</h2></summary>",
        verdict_class(scenario.verdict),
        text::verdict_words(scenario.verdict),
        escape(&scenario.id),
        escape(&scenario.title)
    )?;
    writeln!(
        w,
        "<p class=\"meta\">{}, <code>{}</code>, seed {}, {}</p>",
        text::case_label(scenario.case),
        escape(&scenario.path),
        scenario.seed,
        text::duration(scenario.duration_ms)
    )?;
    if let Some(client) = &scenario.mcp_client {
        writeln!(
            w,
            "<p class=\"meta mcp-client\">{}</p>",
            escape(&text::mcp_client_line(client))
        )?;
    }
    let marks = evidence_marks(scenario);
    timeline::write_timeline(w, &anchor, scenario, &marks)?;
    write_violations(w, &anchor, scenario)?;
    write_findings(w, &anchor, scenario)?;
    write_errors(w, scenario)?;
    writeln!(
        w,
        "<p>Reproduce:</p><pre class=\"reproduce\"><code>{}</code></pre>",
        escape(&scenario.reproduce)
    )?;
    write_records(w, scenario)?;
    writeln!(w, "</details>")?;
    writeln!(w, "</section>")
}

/// Which timeline items each violation points at: item id -> 1-based violation
/// numbers. Ordered so that attributes come out the same on every run.
pub(crate) type EvidenceMarks = BTreeMap<String, Vec<usize>>;

fn evidence_marks(scenario: &ScenarioReport) -> EvidenceMarks {
    let mut marks = EvidenceMarks::new();
    for (number, violation) in scenario.violations.iter().enumerate() {
        for evidence in &violation.evidence {
            marks
                .entry(timeline::item_key(scenario, evidence))
                .or_default()
                .push(number + 1);
        }
    }
    marks
}

/// A scenario's findings: what a person should look at again, which the
/// verdict does not count.
fn write_findings(w: &mut dyn Write, anchor: &str, scenario: &ScenarioReport) -> io::Result<()> {
    if scenario.findings.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "<p class=\"findings-intro\">{}</p>",
        escape(text::FINDINGS_INTRO)
    )?;
    writeln!(w, "<ul class=\"findings\">")?;
    for finding in &scenario.findings {
        writeln!(
            w,
            "<li class=\"finding\" data-kind=\"{}\" data-operation=\"{}\">{}",
            finding.kind.name(),
            escape(&finding.operation_id),
            escape(&text::finding_heading(finding))
        )?;
        writeln!(w, "<ul class=\"evidence-list\">")?;
        for evidence in &finding.evidence {
            write_evidence_item(w, anchor, scenario, evidence)?;
        }
        writeln!(w, "</ul></li>")?;
    }
    writeln!(w, "</ul>")
}

fn write_violations(w: &mut dyn Write, anchor: &str, scenario: &ScenarioReport) -> io::Result<()> {
    if scenario.violations.is_empty() {
        return Ok(());
    }
    writeln!(w, "<ol class=\"violations\">")?;
    for (number, violation) in scenario.violations.iter().enumerate() {
        write_violation(w, anchor, scenario, number + 1, violation)?;
    }
    writeln!(w, "</ol>")
}

fn write_violation(
    w: &mut dyn Write,
    anchor: &str,
    scenario: &ScenarioReport,
    number: usize,
    violation: &Violation,
) -> io::Result<()> {
    writeln!(
        w,
        "<li class=\"violation\" id=\"{anchor}-violation-{number}\" data-check=\"{}\" data-operation=\"{}\"><strong>{}</strong>{}: {}",
        escape(&timeline::check_token(&violation.check)),
        escape(violation.operation_id.as_deref().unwrap_or("")),
        escape(&text::check_label(&violation.check)),
        violation
            .operation_id
            .as_deref()
            .map(|op| format!(", <code>{}</code>", escape(op)))
            .unwrap_or_default(),
        escape(&violation.message)
    )?;
    writeln!(w, "<ul class=\"evidence-list\">")?;
    for evidence in &violation.evidence {
        write_evidence_item(w, anchor, scenario, evidence)?;
    }
    writeln!(w, "</ul></li>")
}

fn write_evidence_item(
    w: &mut dyn Write,
    anchor: &str,
    scenario: &ScenarioReport,
    evidence: &Evidence,
) -> io::Result<()> {
    let target = timeline::item_id(anchor, &timeline::item_key(scenario, evidence));
    writeln!(
        w,
        "<li class=\"evidence-item\" data-target=\"{}\"><code>{}</code></li>",
        escape(&target),
        escape(&text::evidence_line(scenario, evidence))
    )
}

fn write_errors(w: &mut dyn Write, scenario: &ScenarioReport) -> io::Result<()> {
    for error in &scenario.errors {
        writeln!(
            w,
            "<div class=\"error\"><p><strong>error</strong> {}</p>",
            escape(&text::error_heading(error))
        )?;
        let stderr = text::error_stderr(scenario, error);
        if !stderr.is_empty() {
            writeln!(
                w,
                "<pre class=\"stderr\">{}</pre>",
                escape(&stderr.join("\n"))
            )?;
        }
        writeln!(w, "</div>")?;
    }
    Ok(())
}

/// The raw records, folded away: what a reader checks the timeline against.
fn write_records(w: &mut dyn Write, scenario: &ScenarioReport) -> io::Result<()> {
    let operations: Vec<String> = scenario
        .operations
        .iter()
        .map(|op| {
            let outcome = match &op.final_outcome {
                Some(o) => {
                    let mut s = o.outcome.as_str().to_string();
                    if let Some(r) = &o.provider_ref {
                        s.push_str(&format!(" ref={}", text::one_line(r)));
                    }
                    if o.needs_review {
                        s.push_str(" needs_review");
                    }
                    s
                }
                None => "no final status".to_string(),
            };
            format!(
                "{} create {} {} -> effects [{}], final {}",
                text::one_line(&op.id),
                text::one_line(&op.resource),
                text::compact_json(&op.args),
                text::one_line(&op.effects.join(", ")),
                outcome
            )
        })
        .collect();
    let steps: Vec<String> = scenario
        .steps
        .iter()
        .map(|s| format!("{} {}", s.number, text::one_line(&s.label.text())))
        .collect();
    let calls: Vec<String> = scenario.calls.iter().map(text::call_line).collect();
    let journal: Vec<String> = scenario.journal.iter().map(text::journal_line).collect();
    let ledger: Vec<String> = scenario.ledger.iter().map(text::effect_line).collect();
    let deliveries: Vec<String> = scenario
        .deliveries
        .iter()
        .map(text::delivery_line)
        .collect();
    for (name, lines) in [
        ("Operations", operations),
        ("Steps", steps),
        ("Adapter calls", calls),
        ("Provider journal", journal),
        ("Ledger", ledger),
        ("Webhook deliveries", deliveries),
    ] {
        if lines.is_empty() {
            continue;
        }
        writeln!(
            w,
            "<details><summary>{name} ({})</summary><pre>{}</pre></details>",
            lines.len(),
            escape(&lines.join("\n"))
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{escape, SCRIPT, SCRIPT_CSP_HASH};
    use base64::Engine as _;
    use sha2::Digest as _;

    #[test]
    fn csp_hash_matches_the_script() {
        let digest = sha2::Sha256::digest(SCRIPT.as_bytes());
        let expected = format!(
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(digest)
        );
        assert_eq!(
            SCRIPT_CSP_HASH, expected,
            "update SCRIPT_CSP_HASH after editing SCRIPT"
        );
    }

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(
            escape("</script><img src=x onerror=\"alert('1')\">&\u{0}"),
            "&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;\u{fffd}"
        );
    }
}

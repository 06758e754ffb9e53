//! The Markdown writer, shaped for a pull-request comment (GitHub-flavoured):
//! a heading with the totals, a table of scenarios, the details of each failure
//! with its evidence and reproduce command, and the operator's backlog.
//!
//! Every adapter- or scenario-supplied string goes through `inline` or
//! `code_span`, so that it can neither break the table nor
//! inject markup or raw HTML.

use std::io::{self, Write};

use crate::model::{BacklogItem, Report, ScenarioReport, Verdict};
use crate::signals::{SignalTotals, Signals};
use crate::text;

/// Writes the run as Markdown.
pub fn write_markdown(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    write_heading(w, report)?;
    write_table(w, &report.scenarios)?;
    for scenario in text::failing(&report.scenarios) {
        write_failure(w, scenario)?;
    }
    write_findings(w, report)?;
    let backlog = report.backlog();
    if !backlog.is_empty() {
        write_backlog(w, &backlog)?;
    }
    write_signals(w, report)
}

fn verdict_badge(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "✅",
        Verdict::Violated => "❌",
        Verdict::AdapterError => "⚠️",
        Verdict::InfraError => "🛠️",
    }
}

fn write_heading(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    writeln!(
        w,
        "## lostreply: {}\n",
        text::totals_sentence(report.totals())
    )?;
    writeln!(
        w,
        "Adapter {} ({}), seed {}, {} scenarios in {}, lostreply {}.\n",
        code_span(&report.adapter.name),
        report.adapter.kind.as_str(),
        report.seed,
        report.scenarios.len(),
        text::duration(report.duration_ms),
        inline(&report.tool_version)
    )
}

fn write_table(w: &mut dyn Write, scenarios: &[ScenarioReport]) -> io::Result<()> {
    writeln!(w, "| Verdict | Scenario | Case | Title |")?;
    writeln!(w, "| --- | --- | --- | --- |")?;
    for scenario in scenarios {
        writeln!(
            w,
            "| {} {} | {} | {} | {} |",
            verdict_badge(scenario.verdict),
            text::verdict_words(scenario.verdict),
            table_cell_code(&scenario.id),
            text::case_label(scenario.case),
            inline(&scenario.title)
        )?;
    }
    writeln!(w)
}

fn write_failure(w: &mut dyn Write, scenario: &ScenarioReport) -> io::Result<()> {
    writeln!(
        w,
        "### {} {}{}\n",
        verdict_badge(scenario.verdict),
        code_span(&scenario.id),
        text::case_suffix(scenario.case)
    )?;
    // The paragraph starts with fixed words: a title such as `1. x` or `- x`
    // at the start of a line would otherwise become a list.
    writeln!(
        w,
        "Title: {}. File {}, seed {}.\n",
        inline(&scenario.title),
        code_span(&scenario.path),
        scenario.seed
    )?;
    if let Some(client) = &scenario.mcp_client {
        writeln!(w, "{}.\n", inline(&text::mcp_client_line(client)))?;
    }
    for violation in &scenario.violations {
        let mut heading = format!("**{}**", inline(&text::check_label(&violation.check)));
        if let Some(op) = &violation.operation_id {
            heading.push_str(&format!(", {}", code_span(op)));
        }
        writeln!(w, "{heading}: {}\n", inline(&violation.message))?;
        let lines: Vec<String> = violation
            .evidence
            .iter()
            .map(|e| text::evidence_line(scenario, e))
            .collect();
        if !lines.is_empty() {
            write_code_block(w, "text", &lines)?;
        }
    }
    for error in &scenario.errors {
        writeln!(w, "**error** {}\n", inline(&text::error_heading(error)))?;
        let stderr = text::error_stderr(scenario, error);
        if !stderr.is_empty() {
            writeln!(w, "stderr:\n")?;
            write_code_block(w, "text", &stderr)?;
        }
    }
    writeln!(w, "Reproduce:\n")?;
    write_code_block(w, "sh", &[text::one_line(&scenario.reproduce)])
}

/// The run's findings, each under its scenario, with its evidence.
fn write_findings(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut findings = report.findings().peekable();
    if findings.peek().is_none() {
        return Ok(());
    }
    writeln!(w, "### Findings\n")?;
    writeln!(w, "{}\n", inline(text::FINDINGS_INTRO))?;
    for (scenario, finding) in findings {
        writeln!(
            w,
            "{}: {}\n",
            code_span(&scenario.id),
            inline(&text::finding_heading(finding))
        )?;
        let lines: Vec<String> = finding
            .evidence
            .iter()
            .map(|e| text::evidence_line(scenario, e))
            .collect();
        if !lines.is_empty() {
            write_code_block(w, "text", &lines)?;
        }
    }
    Ok(())
}

fn write_backlog(w: &mut dyn Write, backlog: &[BacklogItem]) -> io::Result<()> {
    writeln!(w, "### Operator backlog\n")?;
    writeln!(
        w,
        "Operations whose final status has `needs_review` (left `unknown`, or an operator's decision that later evidence contradicted): a person must decide.\n"
    )?;
    writeln!(
        w,
        "| Scenario | Operation | Attempted change | Last evidence |"
    )?;
    writeln!(w, "| --- | --- | --- | --- |")?;
    for item in backlog {
        let change = format!(
            "create {} {}",
            item.resource,
            text::compact_json(&item.args)
        );
        writeln!(
            w,
            "| {} | {} | {} | {} |",
            table_cell_code(&item.scenario),
            table_cell_code(&item.operation_id),
            table_cell_code(&change),
            inline(&item.evidence)
        )?;
    }
    writeln!(w)
}

/// The production signals: the run's, then each scenario's that has any
/// (docs/report-json.md says what each means).
fn write_signals(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    writeln!(w, "### Signals\n")?;
    writeln!(w, "| Signal | Run |")?;
    writeln!(w, "| --- | --- |")?;
    for row in SignalTotals::of_report(report).rows() {
        writeln!(w, "| {} | {} |", row.label, inline(&row.value))?;
    }
    writeln!(w)?;
    let mut with_signals = report
        .scenarios
        .iter()
        .filter(|s| s.signals != Signals::default())
        .peekable();
    if with_signals.peek().is_none() {
        return Ok(());
    }
    writeln!(
        w,
        "| Scenario | Unknown replies | Ambiguous | Confirmed | Median / max to confirmation \
         | Keys near expiry | Late duplicates | Reconciles | Needs review | Left unknown |"
    )?;
    writeln!(
        w,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )?;
    for scenario in with_signals {
        let t = SignalTotals::of(std::slice::from_ref(scenario));
        let spread = t.spread_text();
        writeln!(
            w,
            "| {} | {} | {} | {} | {spread} | {} | {} | {} | {} | {} |",
            table_cell_code(&scenario.id),
            t.unknown_reply_count(),
            t.ambiguous_operations,
            t.confirmed_by.total(),
            t.keys_near_expiry,
            t.late_duplicates,
            t.reconcile_attempts,
            t.needs_review,
            t.left_unknown
        )?;
    }
    writeln!(w)
}

/// Characters that carry meaning in Markdown text or GFM tables. Escaping all of
/// them with a backslash is always valid CommonMark (any ASCII punctuation).
/// (Parentheses need none: they only matter after `]`, which is escaped.)
const MARKDOWN_SPECIAL: &[char] = &['\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '#', '&'];

/// Text rendered literally on one line: no emphasis, links, HTML or table breaks.
fn inline(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in text::one_line(raw).chars() {
        if MARKDOWN_SPECIAL.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The longest run of backticks in `s`, to choose a fence that cannot close early.
fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Literal text in a code span, with a fence longer than any backtick run inside.
fn code_span(raw: &str) -> String {
    let content = text::one_line(raw);
    let fence = "`".repeat(longest_backtick_run(&content) + 1);
    // A space on each side keeps a leading or trailing backtick off the fence;
    // CommonMark strips exactly one such space.
    if content.starts_with('`') || content.ends_with('`') {
        format!("{fence} {content} {fence}")
    } else {
        format!("{fence}{content}{fence}")
    }
}

/// A code span inside a table cell: GFM splits cells on `|` even in code, so it
/// is escaped there too (GFM renders `\|` in a cell's code as `|`).
fn table_cell_code(raw: &str) -> String {
    code_span(raw).replace('|', "\\|")
}

/// A fenced code block of lines already made one-line safe; the fence is longer
/// than any backtick run inside.
fn write_code_block(w: &mut dyn Write, info: &str, lines: &[String]) -> io::Result<()> {
    let longest = lines
        .iter()
        .map(|l| longest_backtick_run(l))
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    writeln!(w, "{fence}{info}")?;
    for line in lines {
        writeln!(w, "{line}")?;
    }
    writeln!(w, "{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_escapes_markup_and_pipes() {
        assert_eq!(
            inline("a|b *c* <img src=x>\nnext"),
            "a\\|b \\*c\\* \\<img src=x\\>\\\\nnext"
        );
    }

    #[test]
    fn code_span_fence_outlasts_backticks() {
        assert_eq!(code_span("op-1"), "`op-1`");
        assert_eq!(code_span("a``b"), "```a``b```");
        assert_eq!(code_span("`x"), "`` `x ``");
    }

    #[test]
    fn table_code_escapes_pipes() {
        assert_eq!(table_cell_code("a|b"), "`a\\|b`");
    }
}

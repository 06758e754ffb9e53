//! The terminal writer: a progress line per finished scenario, and the summary
//! printed at the end of a run (failures with evidence, the operator's backlog,
//! totals last so they stay on screen).

use std::io::{self, Write};

use crate::model::{BacklogItem, Report, ScenarioReport, Shard, Verdict};
use crate::signals::SignalTotals;
use crate::text;

/// How to print for a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TerminalStyle {
    /// Use ANSI colours. Only when the output is a terminal that wants them.
    pub color: bool,
}

/// ANSI SGR codes used here; kept few so that the output reads well uncoloured too.
#[derive(Debug, Clone, Copy)]
enum Paint {
    Bold,
    Dim,
    Green,
    Red,
    Yellow,
    Magenta,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Bold => "1",
            Paint::Dim => "2",
            Paint::Green => "32",
            Paint::Red => "31",
            Paint::Yellow => "33",
            Paint::Magenta => "35",
        }
    }
}

impl TerminalStyle {
    fn paint(self, paint: Paint, text: &str) -> String {
        if self.color {
            format!("\x1b[{}m{text}\x1b[0m", paint.code())
        } else {
            text.to_string()
        }
    }
}

/// Width of the verdict mark column, so ids line up.
const MARK_WIDTH: usize = 13;

fn verdict_mark(verdict: Verdict) -> (&'static str, Paint) {
    match verdict {
        Verdict::Passed => ("PASS", Paint::Green),
        Verdict::Violated => ("VIOLATED", Paint::Red),
        Verdict::AdapterError => ("ADAPTER ERROR", Paint::Yellow),
        Verdict::InfraError => ("INFRA ERROR", Paint::Magenta),
    }
}

/// One line for a finished scenario:
/// `     VIOLATED [  1.250s] lost-after-commit (case 2)`.
pub fn write_progress_line(
    w: &mut dyn Write,
    scenario: &ScenarioReport,
    style: TerminalStyle,
) -> io::Result<()> {
    let (mark, paint) = verdict_mark(scenario.verdict);
    let mark = style.paint(paint, &format!("{mark:>MARK_WIDTH$}"));
    writeln!(
        w,
        "{mark} [{:>8}] {}{}",
        text::duration(scenario.duration_ms),
        text::one_line(&scenario.id),
        text::case_suffix(scenario.case)
    )
}

/// The end-of-run summary: every failing scenario with its violations, evidence,
/// errors and reproduce command; then the operator's backlog; then the totals.
pub fn write_summary(w: &mut dyn Write, report: &Report, style: TerminalStyle) -> io::Result<()> {
    summary(w, report, None, style)
}

/// The summary of one shard's run: [`write_summary`] with a line under the
/// heading that says which shard ran and how much of the selection it took
/// (`Shard 3/7: 0 scenarios in this shard, of 27 selected`).
pub fn write_shard_summary(
    w: &mut dyn Write,
    report: &Report,
    shard: &Shard,
    style: TerminalStyle,
) -> io::Result<()> {
    summary(w, report, Some(shard), style)
}

fn summary(
    w: &mut dyn Write,
    report: &Report,
    shard: Option<&Shard>,
    style: TerminalStyle,
) -> io::Result<()> {
    write_header(w, report, style)?;
    if let Some(shard) = shard {
        writeln!(
            w,
            "{}: {} in this shard, of {} selected",
            style.paint(
                Paint::Bold,
                &format!("Shard {}/{}", shard.index, shard.total)
            ),
            text::count(report.scenarios.len(), "scenario", "scenarios"),
            shard.selected
        )?;
    }
    for scenario in text::failing(&report.scenarios) {
        writeln!(w)?;
        write_failure(w, scenario, style)?;
    }
    write_findings(w, report, style)?;
    let backlog = report.backlog();
    if !backlog.is_empty() {
        writeln!(w)?;
        write_backlog(w, &backlog, style)?;
    }
    writeln!(w)?;
    write_signals(w, report, style)?;
    writeln!(w)?;
    write_totals(w, report, style)
}

fn write_header(w: &mut dyn Write, report: &Report, style: TerminalStyle) -> io::Result<()> {
    let title = style.paint(Paint::Bold, &format!("lostreply {}", report.tool_version));
    writeln!(
        w,
        "{title}: adapter {} ({}), seed {}, {} scenarios in {}",
        text::one_line(&report.adapter.name),
        report.adapter.kind.as_str(),
        report.seed,
        report.scenarios.len(),
        text::duration(report.duration_ms)
    )
}

fn write_failure(
    w: &mut dyn Write,
    scenario: &ScenarioReport,
    style: TerminalStyle,
) -> io::Result<()> {
    for line in failure_lines(scenario, style) {
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// The lines that explain one failing scenario: heading, violations with their
/// evidence, errors with stderr, and the reproduce command. The JUnit writer
/// uses them uncoloured as a failure's description.
pub(crate) fn failure_lines(scenario: &ScenarioReport, style: TerminalStyle) -> Vec<String> {
    let (mark, paint) = verdict_mark(scenario.verdict);
    let mut lines = vec![
        format!(
            "{} {}{}: {}",
            style.paint(paint, mark),
            style.paint(Paint::Bold, &text::one_line(&scenario.id)),
            text::case_suffix(scenario.case),
            text::one_line(&scenario.title)
        ),
        format!(
            "  scenario {}, seed {}",
            text::one_line(&scenario.path),
            scenario.seed
        ),
    ];
    if let Some(client) = &scenario.mcp_client {
        lines.push(format!("  {}", text::mcp_client_line(client)));
    }
    for violation in &scenario.violations {
        lines.push(format!(
            "  {} {}",
            style.paint(Paint::Red, "violation"),
            text::violation_heading(violation)
        ));
        for evidence in &violation.evidence {
            lines.push(format!("    {}", text::evidence_line(scenario, evidence)));
        }
    }
    for error in &scenario.errors {
        lines.push(format!(
            "  {} {}",
            style.paint(Paint::Yellow, "error"),
            text::error_heading(error)
        ));
        let stderr = text::error_stderr(scenario, error);
        if !stderr.is_empty() {
            lines.push("    stderr:".to_string());
            for line in stderr {
                lines.push(format!(
                    "    {}",
                    style.paint(Paint::Dim, &format!("| {line}"))
                ));
            }
        }
    }
    lines.push(format!(
        "  reproduce: {}",
        text::one_line(&scenario.reproduce)
    ));
    lines
}

/// The run's findings, each under its scenario, with its evidence.
fn write_findings(w: &mut dyn Write, report: &Report, style: TerminalStyle) -> io::Result<()> {
    let mut findings = report.findings().peekable();
    if findings.peek().is_none() {
        return Ok(());
    }
    writeln!(w)?;
    writeln!(w, "{}", style.paint(Paint::Bold, text::FINDINGS_INTRO))?;
    for (scenario, finding) in findings {
        writeln!(
            w,
            "  {} {}: {}",
            style.paint(Paint::Yellow, "finding"),
            style.paint(Paint::Bold, &text::one_line(&scenario.id)),
            text::finding_heading(finding)
        )?;
        for evidence in &finding.evidence {
            writeln!(w, "    {}", text::evidence_line(scenario, evidence))?;
        }
    }
    Ok(())
}

fn write_backlog(
    w: &mut dyn Write,
    backlog: &[BacklogItem],
    style: TerminalStyle,
) -> io::Result<()> {
    writeln!(
        w,
        "{} ({} in review, a person must decide):",
        style.paint(Paint::Bold, "Operator backlog"),
        text::count(backlog.len(), "operation", "operations")
    )?;
    for item in backlog {
        writeln!(
            w,
            "  {} {}: create {} {}",
            text::one_line(&item.scenario),
            text::one_line(&item.operation_id),
            text::one_line(&item.resource),
            text::compact_json(&item.args)
        )?;
        writeln!(w, "    last evidence: {}", text::one_line(&item.evidence))?;
    }
    Ok(())
}

/// The production signals of the run, one aligned line each
/// (docs/report-json.md says what each means).
fn write_signals(w: &mut dyn Write, report: &Report, style: TerminalStyle) -> io::Result<()> {
    writeln!(
        w,
        "{} (what production monitoring would see):",
        style.paint(Paint::Bold, "Signals")
    )?;
    for row in SignalTotals::of_report(report).rows() {
        writeln!(w, "  {:<26} {}", row.label, text::one_line(&row.value))?;
    }
    Ok(())
}

fn write_totals(w: &mut dyn Write, report: &Report, style: TerminalStyle) -> io::Result<()> {
    let totals = report.totals();
    // Only counts above zero are coloured, so the eye goes to what needs it.
    let part = |n: usize, text: String, paint: Paint| {
        if n > 0 {
            style.paint(paint, &text)
        } else {
            text
        }
    };
    writeln!(
        w,
        "{}: {}, {}, {}, {}",
        style.paint(Paint::Bold, "Totals"),
        part(
            totals.passed,
            format!("{} passed", totals.passed),
            Paint::Green
        ),
        part(
            totals.violated,
            format!("{} violated", totals.violated),
            Paint::Red
        ),
        part(
            totals.adapter_errors,
            text::count(totals.adapter_errors, "adapter error", "adapter errors"),
            Paint::Yellow
        ),
        part(
            totals.infra_errors,
            text::count(totals.infra_errors, "infra error", "infra errors"),
            Paint::Magenta
        )
    )
}

//! The page's signals section: how the run's ambiguity was resolved, as a
//! bar chart (inline SVG, one bar per kind of confirmation and one for the
//! operations never confirmed: a reader sees the shares at a glance), the
//! run's signals as a table, and each scenario's that has any.
//!
//! Hooks for browser tests: `section.signals`, `svg.signals-chart` with one
//! `g.bar[data-kind][data-count]` per bar, `table.signals-run` and
//! `table.signals-scenarios` (a `tr[data-scenario]` per scenario).

use std::io::{self, Write};

use super::{escape, scenario_anchor};
use crate::model::{ConfirmedBy, Report, SignalTotals, Signals};
use crate::signal_totals::percent;

/// Width of the chart's label column, its bars' longest and a bar's row, in px.
const LABEL_W: u64 = 170;
const BAR_W: u64 = 300;
const ROW_H: u64 = 24;

/// Writes the section (after the run's summary).
pub(super) fn write_signals(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let totals = SignalTotals::of_report(report);
    writeln!(w, "<section class=\"signals\" id=\"signals\">")?;
    writeln!(w, "<h2>Signals</h2>")?;
    writeln!(
        w,
        "<p class=\"meta\">What production monitoring would see of this run: replies left unknown, how long ambiguity lasted on the simulator clock and what ended it.</p>"
    )?;
    write_chart(w, &totals)?;
    writeln!(w, "<table class=\"signals-run\">")?;
    for row in totals.rows() {
        writeln!(
            w,
            "<tr><th>{}</th><td>{}</td></tr>",
            row.label,
            escape(&row.value)
        )?;
    }
    writeln!(w, "</table>")?;
    write_scenarios(w, report)?;
    writeln!(w, "</section>")
}

/// One bar per kind of confirmation, then the never-confirmed ones, each
/// with its count and share of the ambiguous operations.
fn write_chart(w: &mut dyn Write, totals: &SignalTotals) -> io::Result<()> {
    let mut bars: Vec<(&str, &str, u64, &str)> = ConfirmedBy::ALL
        .iter()
        .map(|&by| {
            (
                by.as_str(),
                by.label(),
                totals.confirmed_by.get(by),
                "#2e7d32",
            )
        })
        .collect();
    bars.push((
        "unconfirmed",
        "never confirmed",
        totals.unconfirmed(),
        "#b26a00",
    ));
    let all = totals.ambiguous_operations;
    let most = bars.iter().map(|b| b.2).max().unwrap_or(0).max(1);
    let height = ROW_H * (bars.len() as u64 + 1);
    let width = LABEL_W + BAR_W + 110;
    let title = format!(
        "How ambiguity was resolved: {all} ambiguous operation{}",
        if all == 1 { "" } else { "s" }
    );
    writeln!(
        w,
        "<svg class=\"signals-chart\" role=\"img\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" aria-label=\"{title}\">"
    )?;
    writeln!(w, "<title>{title}</title>")?;
    writeln!(
        w,
        "<text x=\"0\" y=\"16\" font-size=\"12\" font-weight=\"600\">{title}</text>"
    )?;
    for (i, (kind, label, count, colour)) in bars.into_iter().enumerate() {
        let y = ROW_H * (i as u64 + 1);
        let bar = count * BAR_W / most;
        writeln!(
            w,
            "<g class=\"bar\" data-kind=\"{kind}\" data-count=\"{count}\"><text x=\"0\" y=\"{}\" font-size=\"12\">{label}</text><rect x=\"{LABEL_W}\" y=\"{}\" width=\"{bar}\" height=\"{}\" fill=\"{colour}\"></rect><text x=\"{}\" y=\"{}\" font-size=\"12\">{count} ({}%)</text></g>",
            y + 16,
            y + 4,
            ROW_H - 8,
            LABEL_W + bar + 6,
            y + 16,
            percent(count, all)
        )?;
    }
    writeln!(w, "</svg>")
}

/// A row for each scenario with any signal, linked to its section.
fn write_scenarios(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut with_signals = report
        .scenarios
        .iter()
        .enumerate()
        .filter(|(_, s)| s.signals != Signals::default())
        .peekable();
    if with_signals.peek().is_none() {
        return Ok(());
    }
    writeln!(w, "<table class=\"signals-scenarios\">")?;
    writeln!(
        w,
        "<tr><th>Scenario</th><th>Unknown replies</th><th>Ambiguous</th><th>Confirmed</th><th>Median / max to confirmation</th><th>Keys near expiry</th><th>Late duplicates</th><th>Reconciles</th><th>Needs review</th><th>Left unknown</th></tr>"
    )?;
    for (position, scenario) in with_signals {
        let t = SignalTotals::of(std::slice::from_ref(scenario));
        let spread = t.spread_text();
        writeln!(
            w,
            "<tr data-scenario=\"{id}\"><td><a href=\"#{}\"><code>{id}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td>{spread}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            scenario_anchor(position),
            t.unknown_reply_count(),
            t.ambiguous_operations,
            t.confirmed_by.total(),
            t.keys_near_expiry,
            t.late_duplicates,
            t.reconcile_attempts,
            t.needs_review,
            t.left_unknown,
            id = escape(&scenario.id),
        )?;
    }
    writeln!(w, "</table>")
}

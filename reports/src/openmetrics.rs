//! The OpenMetrics writer: the run's verdict counts and production signals
//! ([`crate::signals`]) as one OpenMetrics text exposition, so that a CI
//! system can chart an adapter's behaviour across runs (docs/ci.md).
//!
//! The format (OpenMetrics 1.0 text): each metric family has its `# TYPE`,
//! `# HELP` and, for one with a unit, `# UNIT` line, its name ending in the
//! unit; a counter's samples end in `_total`; label values are escaped
//! (`\\`, `\"`, `\n`); the exposition ends with `# EOF`. Every family is
//! written on every run, in a fixed order, so a chart never loses a series
//! because a run happened to have none.

use std::io::{self, Write};

use crate::model::{ConfirmedBy, Report, ScenarioOperation, SignalTotals, Verdict};

/// Writes `report` as an OpenMetrics text exposition.
pub fn write_openmetrics(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    let totals = SignalTotals::of_report(report);
    let mut out = Exposition { w };
    out.family(
        "lostreply_run",
        Kind::Info,
        None,
        "The run: adapter, seed and lostreply version.",
    )?;
    out.sample(
        "lostreply_run_info",
        &[
            ("adapter", &report.adapter.name),
            ("seed", &report.seed.to_string()),
            ("version", &report.tool_version),
        ],
        "1",
    )?;
    write_verdicts(&mut out, report)?;
    write_unknowns(&mut out, &totals)?;
    write_confirmations(&mut out, report, &totals)?;
    out.counter(
        "lostreply_keys_near_expiry",
        "Requests that sent an idempotency key with less than a tenth of its retention left, or after it expired.",
        totals.keys_near_expiry,
    )?;
    out.counter(
        "lostreply_keys_expired",
        "Requests that sent an idempotency key after it had expired.",
        totals.keys_expired,
    )?;
    out.counter(
        "lostreply_late_duplicates",
        "Effects the provider made after their operation had been reported final.",
        totals.late_duplicates,
    )?;
    out.counter(
        "lostreply_reconcile_attempts",
        "reconcile calls made to the adapter.",
        totals.reconcile_attempts,
    )?;
    out.operation_gauge(
        "lostreply_reconcile_attempts_max",
        None,
        "The most reconcile calls made for one operation, with that operation.",
        totals.most_reconciled.as_ref(),
        |o| o.value.to_string(),
    )?;
    out.gauge(
        "lostreply_needs_review_operations",
        "Operations whose final status asks a person to decide (needs_review).",
        totals.needs_review,
    )?;
    out.gauge(
        "lostreply_unknown_operations",
        "Operations whose final status is unknown.",
        totals.left_unknown,
    )?;
    out.operation_gauge(
        "lostreply_oldest_unknown_age_seconds",
        Some("seconds"),
        "Simulator time the oldest operation left unknown had been ambiguous, with that operation.",
        totals.oldest_unknown.as_ref(),
        |o| seconds(o.value),
    )?;
    writeln!(out.w, "# EOF")
}

fn write_verdicts(out: &mut Exposition<'_>, report: &Report) -> io::Result<()> {
    let totals = report.totals();
    out.family(
        "lostreply_scenarios",
        Kind::Gauge,
        None,
        "Scenarios run, by verdict.",
    )?;
    for verdict in [
        Verdict::Passed,
        Verdict::Violated,
        Verdict::AdapterError,
        Verdict::InfraError,
    ] {
        let count = match verdict {
            Verdict::Passed => totals.passed,
            Verdict::Violated => totals.violated,
            Verdict::AdapterError => totals.adapter_errors,
            Verdict::InfraError => totals.infra_errors,
        };
        out.sample(
            "lostreply_scenarios",
            &[("verdict", verdict.as_str())],
            &count.to_string(),
        )?;
    }
    Ok(())
}

fn write_unknowns(out: &mut Exposition<'_>, totals: &SignalTotals) -> io::Result<()> {
    out.family(
        "lostreply_unknown_replies",
        Kind::Counter,
        None,
        "Adapter replies whose outcome was unknown, by tool (MCP tool or resource), action (the adapter call) and provider (the scenario's declared provider, or mcp).",
    )?;
    for u in &totals.unknown_replies {
        out.sample(
            "lostreply_unknown_replies_total",
            &[
                ("tool", &u.tool),
                ("action", u.action.as_str()),
                ("provider", &u.provider),
            ],
            &u.count.to_string(),
        )?;
    }
    Ok(())
}

fn write_confirmations(
    out: &mut Exposition<'_>,
    report: &Report,
    totals: &SignalTotals,
) -> io::Result<()> {
    out.counter(
        "lostreply_ambiguous_operations",
        "Operations ever reported unknown or pending.",
        totals.ambiguous_operations,
    )?;
    out.family(
        "lostreply_confirmations",
        Kind::Counter,
        None,
        "Ambiguous operations later confirmed succeeded or failed, by what confirmed them.",
    )?;
    for by in ConfirmedBy::ALL {
        out.sample(
            "lostreply_confirmations_total",
            &[("by", by.as_str())],
            &totals.confirmed_by.get(by).to_string(),
        )?;
    }
    out.gauge(
        "lostreply_unconfirmed_operations",
        "Ambiguous operations never confirmed.",
        totals.unconfirmed(),
    )?;
    // A summary: its median and maximum (quantiles 0.5 and 1), count and sum.
    let name = "lostreply_ambiguity_to_confirmation_seconds";
    out.family(
        name,
        Kind::Summary,
        Some("seconds"),
        "Simulator time from an operation's first ambiguous reply to the reply that confirmed it.",
    )?;
    if let (Some(median), Some(max)) = (totals.confirmation_median_ms, totals.confirmation_max_ms) {
        out.sample(name, &[("quantile", "0.5")], &seconds(median))?;
        out.sample(name, &[("quantile", "1.0")], &seconds(max))?;
    }
    let sum_ms: u64 = report
        .scenarios
        .iter()
        .flat_map(|s| &s.signals.ambiguities)
        .filter_map(|a| a.confirmed.as_ref())
        .map(|c| c.after_ms)
        .fold(0, u64::saturating_add);
    out.sample(
        &format!("{name}_count"),
        &[],
        &totals.confirmed_by.total().to_string(),
    )?;
    out.sample(&format!("{name}_sum"), &[], &seconds(sum_ms))
}

/// A metric family's type.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
    Info,
    Summary,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Info => "info",
            Kind::Summary => "summary",
        }
    }
}

struct Exposition<'w> {
    w: &'w mut dyn Write,
}

impl Exposition<'_> {
    /// A family's metadata lines.
    fn family(&mut self, name: &str, kind: Kind, unit: Option<&str>, help: &str) -> io::Result<()> {
        writeln!(self.w, "# TYPE {name} {}", kind.name())?;
        if let Some(unit) = unit {
            writeln!(self.w, "# UNIT {name} {unit}")?;
        }
        writeln!(self.w, "# HELP {name} {}", escape_help(help))
    }

    /// One sample line.
    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: &str) -> io::Result<()> {
        write!(self.w, "{name}")?;
        if !labels.is_empty() {
            let labels: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                .collect();
            write!(self.w, "{{{}}}", labels.join(","))?;
        }
        writeln!(self.w, " {value}")
    }

    /// A counter family with one sample.
    fn counter(&mut self, name: &str, help: &str, value: u64) -> io::Result<()> {
        self.family(name, Kind::Counter, None, help)?;
        self.sample(&format!("{name}_total"), &[], &value.to_string())
    }

    /// A gauge family with one sample.
    fn gauge(&mut self, name: &str, help: &str, value: u64) -> io::Result<()> {
        self.family(name, Kind::Gauge, None, help)?;
        self.sample(name, &[], &value.to_string())
    }

    /// A gauge family naming one operation of one scenario, when there is one.
    fn operation_gauge(
        &mut self,
        name: &str,
        unit: Option<&str>,
        help: &str,
        operation: Option<&ScenarioOperation>,
        value: impl Fn(&ScenarioOperation) -> String,
    ) -> io::Result<()> {
        self.family(name, Kind::Gauge, unit, help)?;
        match operation {
            Some(o) => self.sample(
                name,
                &[("scenario", &o.scenario), ("operation", &o.operation_id)],
                &value(o),
            ),
            None => Ok(()),
        }
    }
}

/// Milliseconds as seconds, exactly: `5.000`, `3600.250`.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1_000, ms % 1_000)
}

/// A label value as OpenMetrics escapes it: `\`, `"` and line feeds.
fn escape_label(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Help text as OpenMetrics escapes it (the same characters as a label value).
fn escape_help(raw: &str) -> String {
    escape_label(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(escape_label("plain"), "plain");
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(0), "0.000");
        assert_eq!(seconds(5_000), "5.000");
        assert_eq!(seconds(3_600_250), "3600.250");
    }
}

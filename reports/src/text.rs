//! Plain-text renderings shared by every writer: one journal line, one call
//! line, one evidence line, durations. The terminal, Markdown and JUnit writers
//! print these strings as they are; the HTML writer escapes them first.
//!
//! Everything that came from the adapter or the scenario passes through
//! [`one_line`] here, so a hostile string cannot move the cursor, colour the
//! terminal or break a line that a reader expects to be one line.

use std::fmt::Write as _;

use serde_json::Value;

use crate::model::{
    CallEnd, CallRecord, Check, DeliveryRecord, EffectRecord, ErrorRecord, Evidence, Fate, Fault,
    Finding, McpClientReport, RequestRecord, ScenarioReport, Totals, Verdict, Violation,
};

/// Longest adapter evidence text quoted inside a call line.
const EVIDENCE_QUOTE_MAX_CHARS: usize = 100;
/// Longest compact JSON (arguments, odd replies) quoted inside a line.
const JSON_QUOTE_MAX_CHARS: usize = 120;
/// How many trailing stderr lines an excerpt keeps: the end of stderr is where
/// the traceback or panic message is.
pub(crate) const STDERR_EXCERPT_MAX_LINES: usize = 12;
/// Longest single stderr line kept in an excerpt.
const STDERR_LINE_MAX_CHARS: usize = 200;

/// The verdict as a reader says it: `passed`, `violated`, `adapter error`, `infra error`.
pub(crate) fn verdict_words(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "passed",
        Verdict::Violated => "violated",
        Verdict::AdapterError => "adapter error",
        Verdict::InfraError => "infra error",
    }
}

/// `invariant 1 (at-most-once)`, `expectation expect.final` or `rule review-after-contradiction`.
pub(crate) fn check_label(check: &Check) -> String {
    match check {
        Check::Invariant(invariant) => {
            format!("invariant {} ({})", invariant.number(), invariant.name())
        }
        Check::Expectation { key } => format!("expectation expect.{}", one_line(key)),
        Check::Rule { rule } => format!("rule {}", rule.name()),
    }
}

/// `3 passed`, `1 adapter error`, `2 adapter errors`.
pub(crate) fn count(n: usize, singular: &str, plural: &str) -> String {
    if n == 1 {
        format!("{n} {singular}")
    } else {
        format!("{n} {plural}")
    }
}

/// `2 passed, 1 violated, 0 adapter errors, 0 infra errors`: the run's totals in words.
pub(crate) fn totals_sentence(totals: Totals) -> String {
    format!(
        "{} passed, {} violated, {}, {}",
        totals.passed,
        totals.violated,
        count(totals.adapter_errors, "adapter error", "adapter errors"),
        count(totals.infra_errors, "infra error", "infra errors")
    )
}

/// ` (case 2)` after a scenario id, or nothing outside the ten cases.
pub(crate) fn case_suffix(case: Option<u8>) -> String {
    match case {
        Some(n) => format!(" (case {n})"),
        None => String::new(),
    }
}

/// `case 2`, or `-` for a scenario outside the ten cases (for table cells).
pub(crate) fn case_label(case: Option<u8>) -> String {
    match case {
        Some(n) => format!("case {n}"),
        None => "-".to_string(),
    }
}

/// A real duration: `312ms`, `1.250s`, `2m05s`.
/// An MCP scenario's client windows in one line, scaled first, real beside:
/// `MCP client typescript-sdk at scale 0.001: wall clock 60ms (real 1m), ...`.
pub(crate) fn mcp_client_line(client: &McpClientReport) -> String {
    let windows: Vec<String> = client
        .windows()
        .iter()
        .map(
            |(label, figures)| match (figures.scaled_ms, figures.real_ms) {
                (Some(scaled), Some(real)) => format!(
                    "{label} {} (real {})",
                    sim_span(i64::try_from(scaled).unwrap_or(i64::MAX)),
                    sim_span(i64::try_from(real).unwrap_or(i64::MAX))
                ),
                (Some(scaled), None) => format!(
                    "{label} {}",
                    sim_span(i64::try_from(scaled).unwrap_or(i64::MAX))
                ),
                (None, _) => format!("{label} none"),
            },
        )
        .collect();
    let resets = match client.idle_resets_on.as_str() {
        "progress" => "progress notifications only".to_owned(),
        "bytes" => "any byte".to_owned(),
        other => one_line(other),
    };
    format!(
        "MCP client {} at scale {}: {}; idle restarts on {resets}",
        one_line(&client.profile),
        client.scale,
        windows.join(", ")
    )
}

pub(crate) fn duration(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{}.{:03}s", ms / 1_000, ms % 1_000)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1_000)
    }
}

/// A span of simulator time, in the largest whole units: `25h`, `1h30m`, `300ms`.
pub(crate) fn sim_span(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let mut rest = ms.unsigned_abs();
    if rest == 0 {
        return "0s".to_string();
    }
    let mut out = String::from(sign);
    for (unit_ms, unit) in [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
        (1, "ms"),
    ] {
        if rest >= unit_ms {
            let _ = write!(out, "{}{unit}", rest / unit_ms);
            rest %= unit_ms;
        }
    }
    out
}

/// Makes adapter- or scenario-supplied text safe to print on one line: control
/// characters (newlines, ESC, NUL…) become visible escapes such as `\n` or `\u{1b}`.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Cuts `text` to at most `max_chars` characters, marking the cut with `…`.
pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One-line JSON, cut to a readable length.
/// Takes anything that displays as compact JSON: a `Value` or a [`SharedJson`](crate::shared_json::SharedJson).
pub(crate) fn compact_json(value: &impl std::fmt::Display) -> String {
    truncate(&one_line(&value.to_string()), JSON_QUOTE_MAX_CHARS)
}

/// A request's fate in one line: this version's words as they are, words
/// read from another report made one-line safe (they are untrusted text).
pub(crate) fn fate_text(fate: &Fate) -> String {
    match fate {
        Fate::Ended { .. } => fate.to_string(),
        Fate::Text(text) => one_line(text),
    }
}

/// The fault that struck a request in one line, as [`fate_text`] does.
pub(crate) fn fault_text(fault: &Fault) -> String {
    match fault {
        Fault::Parts { .. } => fault.to_string(),
        Fault::Text(text) => one_line(text),
    }
}

/// `#3 POST /v1/tickets key=op-1-7f3a -> after_commit drop (rule 1): dropped, committed tkt_0001`
pub(crate) fn journal_line(request: &RequestRecord) -> String {
    let mut line = format!(
        "#{} {} {}",
        request.seq,
        one_line(&request.method),
        one_line(&request.target)
    );
    if let Some(key) = &request.idempotency_key {
        let _ = write!(line, " key={}", one_line(key));
    }
    line.push_str(" -> ");
    if let Some(fault) = &request.fault {
        let _ = write!(line, "{}: ", fault_text(fault));
    }
    line.push_str(&fate_text(&request.fate));
    if request.replayed {
        line.push_str(", replayed");
    }
    if let Some(effect) = &request.effect {
        let _ = write!(line, ", committed {}", one_line(effect));
    }
    if request.lost {
        line.push_str(" (response lost)");
    }
    line
}

/// `call 2 execute op-1 -> unknown needs_review "timed out after 1000 ms"`
pub(crate) fn call_line(call: &CallRecord) -> String {
    let mut line = format!("call {} {}", call.index, call.call);
    if let Some(op) = &call.operation_id {
        let _ = write!(line, " {}", one_line(op));
    }
    let _ = write!(line, " -> {}", call_result(call));
    line
}

/// What a call came to: the reply's gist, or how it failed to give one.
pub(crate) fn call_result(call: &CallRecord) -> String {
    match &call.end {
        CallEnd::Replied => match &call.reply {
            Some(reply) => reply_gist(&reply.to_value()),
            None => "replied (reply not recorded)".to_string(),
        },
        CallEnd::Crashed => "crashed (killed by the harness on purpose)".to_string(),
        CallEnd::Exited { code: Some(code) } => format!("exited with code {code}"),
        CallEnd::Exited { code: None } => "exited by a signal".to_string(),
        CallEnd::BadReply { message } => format!("bad reply: {}", one_line(message)),
        CallEnd::Deadline { deadline_ms } => {
            format!("killed after its {} deadline", duration(*deadline_ms))
        }
        CallEnd::Failed { message } => format!("failed: {}", one_line(message)),
    }
}

/// The gist of a protocol reply: an outcome reply, a webhook reply, or raw JSON.
fn reply_gist(reply: &Value) -> String {
    if let Some(outcome) = reply.get("outcome").and_then(Value::as_str) {
        let mut gist = one_line(outcome);
        if let Some(provider_ref) = reply.get("provider_ref").and_then(Value::as_str) {
            let _ = write!(gist, " ref={}", one_line(provider_ref));
        }
        if reply.get("needs_review").and_then(Value::as_bool) == Some(true) {
            gist.push_str(" needs_review");
        }
        if let Some(evidence) = reply.get("evidence").and_then(Value::as_str) {
            if !evidence.is_empty() {
                let quoted = truncate(&one_line(evidence), EVIDENCE_QUOTE_MAX_CHARS);
                let _ = write!(gist, " \"{quoted}\"");
            }
        }
        return gist;
    }
    if let Some(accepted) = reply.get("accepted").and_then(Value::as_bool) {
        let mut gist = if accepted { "accepted" } else { "rejected" }.to_string();
        if let Some(op) = reply.get("operation_id").and_then(Value::as_str) {
            let _ = write!(gist, " for {}", one_line(op));
        }
        return gist;
    }
    compact_json(reply)
}

/// `effect tkt_0002 tickets {"title":…} key=op-1-b9e2 succeeded, committed by #2, op-1`
pub(crate) fn effect_line(effect: &EffectRecord) -> String {
    let mut line = format!(
        "effect {} {} {}",
        one_line(&effect.id),
        one_line(&effect.resource),
        compact_json(&effect.args)
    );
    if let Some(key) = &effect.idempotency_key {
        let _ = write!(line, " key={}", one_line(key));
    }
    let _ = write!(line, " {}", effect.status);
    match effect.request_seq {
        Some(seq) => {
            let _ = write!(line, ", committed by #{seq}");
        }
        None => line.push_str(", seed object"),
    }
    match &effect.operation_id {
        Some(op) => {
            let _ = write!(line, ", {}", one_line(op));
        }
        None => line.push_str(", no operation"),
    }
    line
}

/// `delivery tickets.created evt_0001 (attempt 2, forged) in call 4`
pub(crate) fn delivery_line(delivery: &DeliveryRecord) -> String {
    let mut line = format!(
        "delivery {} {} (attempt {}",
        one_line(&delivery.event_type),
        one_line(&delivery.event_id),
        delivery.attempt
    );
    if delivery.forged {
        line.push_str(", forged");
    }
    let _ = write!(line, ") in call {}", delivery.call_index);
    line
}

/// One evidence pointer resolved against its scenario. A pointer whose record is
/// missing still prints, saying so, rather than vanishing from the report.
pub(crate) fn evidence_line(scenario: &ScenarioReport, evidence: &Evidence) -> String {
    match evidence {
        Evidence::Request { seq } => match scenario.request(*seq) {
            Some(request) => journal_line(request),
            None => format!("#{seq} (not in the journal)"),
        },
        Evidence::Call { index } => match scenario.call(*index) {
            Some(call) => call_line(call),
            None => format!("call {index} (not among the calls)"),
        },
        Evidence::Effect { id } => match scenario.effect(id) {
            Some(effect) => effect_line(effect),
            None => format!("effect {} (not in the ledger)", one_line(id)),
        },
        Evidence::Delivery { call_index } => match scenario.delivery(*call_index) {
            Some(delivery) => {
                let mut line = delivery_line(delivery);
                if let Some(call) = scenario.call(*call_index) {
                    let _ = write!(line, " -> {}", call_result(call));
                }
                line
            }
            None => format!("delivery in call {call_index} (not among the deliveries)"),
        },
    }
}

/// `invariant 1 (at-most-once), op-1: two effects…`
pub(crate) fn violation_heading(violation: &Violation) -> String {
    let mut heading = check_label(&violation.check);
    if let Some(op) = &violation.operation_id {
        let _ = write!(heading, ", {}", one_line(op));
    }
    let _ = write!(heading, ": {}", one_line(&violation.message));
    heading
}

/// `resolution-contradicts-ledger, op-1: the operator resolved failed, but ...`
pub(crate) fn finding_heading(finding: &Finding) -> String {
    format!(
        "{}, {}: {}",
        finding.kind.name(),
        one_line(&finding.operation_id),
        one_line(&finding.message)
    )
}

/// What every writer says above a run's findings.
pub(crate) const FINDINGS_INTRO: &str =
    "Findings: no adapter's fault, and the verdict does not count them; a person should look again.";

/// `in step 2, call 3: the adapter's stdout was not JSON`
pub(crate) fn error_heading(error: &ErrorRecord) -> String {
    let mut heading = if error.step == 0 {
        "in setup or the final status sweep".to_string()
    } else {
        format!("in step {}", error.step)
    };
    if let Some(call) = error.call_index {
        let _ = write!(heading, ", call {call}");
    }
    let _ = write!(heading, ": {}", one_line(&error.message));
    heading
}

/// The stderr of the call an error names, as at most
/// [`STDERR_EXCERPT_MAX_LINES`] trailing lines; empty when there is none.
pub(crate) fn error_stderr(scenario: &ScenarioReport, error: &ErrorRecord) -> Vec<String> {
    error
        .call_index
        .and_then(|index| scenario.call(index))
        .map(|call| stderr_excerpt(&call.stderr))
        .unwrap_or_default()
}

/// The last lines of a stderr capture, each made safe with [`one_line`]. The
/// first line says how many were left out, if any.
pub(crate) fn stderr_excerpt(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let skipped = lines.len().saturating_sub(STDERR_EXCERPT_MAX_LINES);
    let mut out = Vec::with_capacity(STDERR_EXCERPT_MAX_LINES + 1);
    if skipped > 0 {
        out.push(format!("… {skipped} earlier lines left out"));
    }
    out.extend(
        lines[skipped..]
            .iter()
            .map(|l| truncate(&one_line(l), STDERR_LINE_MAX_CHARS)),
    );
    out
}

/// The scenarios that did not pass, in report order.
pub(crate) fn failing(scenarios: &[ScenarioReport]) -> impl Iterator<Item = &ScenarioReport> {
    scenarios.iter().filter(|s| match s.verdict {
        Verdict::Passed => false,
        Verdict::Violated | Verdict::AdapterError | Verdict::InfraError => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CallName;

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(312), "312ms");
        assert_eq!(duration(1_250), "1.250s");
        assert_eq!(duration(125_000), "2m05s");
    }

    #[test]
    fn sim_spans_use_whole_units() {
        assert_eq!(sim_span(90_000_000), "1d1h");
        assert_eq!(sim_span(5_400_000), "1h30m");
        assert_eq!(sim_span(300), "300ms");
        assert_eq!(sim_span(-60_000), "-1m");
        assert_eq!(sim_span(0), "0s");
    }

    #[test]
    fn one_line_makes_control_characters_visible() {
        assert_eq!(one_line("a\nb\u{1b}[31mc"), "a\\nb\\u{1b}[31mc");
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn stderr_excerpt_keeps_the_end() {
        let stderr: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let excerpt = stderr_excerpt(&stderr);
        assert_eq!(
            excerpt.first().map(String::as_str),
            Some("… 8 earlier lines left out")
        );
        assert_eq!(excerpt.last().map(String::as_str), Some("line 20"));
        assert_eq!(excerpt.len(), STDERR_EXCERPT_MAX_LINES + 1);
        assert!(stderr_excerpt("  \n").is_empty());
    }

    fn call(end: CallEnd, reply: Option<Value>) -> CallRecord {
        CallRecord {
            index: 3,
            step: 2,
            call: CallName::Status,
            operation_id: Some("op-1".into()),
            request: Value::Null.into(),
            reply: reply.map(Into::into),
            end,
            stderr: Default::default(),
            start_ms: 0,
            end_ms: 1,
        }
    }

    #[test]
    fn every_call_end_has_words() {
        let cases = [
            (
                CallEnd::Exited { code: Some(1) },
                "call 3 status op-1 -> exited with code 1",
            ),
            (
                CallEnd::Exited { code: None },
                "call 3 status op-1 -> exited by a signal",
            ),
            (
                CallEnd::Deadline {
                    deadline_ms: 30_000,
                },
                "call 3 status op-1 -> killed after its 30.000s deadline",
            ),
            (
                CallEnd::Failed {
                    message: "panicked".into(),
                },
                "call 3 status op-1 -> failed: panicked",
            ),
            (
                CallEnd::Crashed,
                "call 3 status op-1 -> crashed (killed by the harness on purpose)",
            ),
        ];
        for (end, expected) in cases {
            assert_eq!(call_line(&call(end, None)), expected);
        }
    }

    #[test]
    fn replies_are_summarised_by_kind() {
        let outcome = serde_json::json!({"operation_id": "op-1", "outcome": "unknown",
            "provider_ref": null, "needs_review": true, "evidence": "no lookup"});
        assert_eq!(
            call_line(&call(CallEnd::Replied, Some(outcome))),
            "call 3 status op-1 -> unknown needs_review \"no lookup\""
        );
        let webhook = serde_json::json!({"accepted": false, "operation_id": null});
        assert_eq!(
            call_line(&call(CallEnd::Replied, Some(webhook))),
            "call 3 status op-1 -> rejected"
        );
        let odd = serde_json::json!([1, 2]);
        assert_eq!(
            call_line(&call(CallEnd::Replied, Some(odd))),
            "call 3 status op-1 -> [1,2]"
        );
    }
}

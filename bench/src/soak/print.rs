//! The soak's figures: one JSON line each for the traffic, the records, the
//! memory and every check, tables for people, and the verdict line with the
//! machine beside it.

use serde_json::json;

use crate::figures::{mib, num, table, Out};
use crate::procfs::Machine;

use super::SoakReport;

/// Writes the soak's figures and its verdict.
pub fn report(report: &SoakReport, machine: &Machine, out: &mut Out<'_>) {
    let t = &report.traffic;
    let a = &report.agreement;
    let seconds = report.ran.as_secs_f64();
    let rps = if seconds > 0.0 {
        t.sent as f64 / seconds
    } else {
        0.0
    };
    let by_action: serde_json::Map<String, serde_json::Value> = t
        .by_action
        .iter()
        .map(|(k, v)| (k.name(), json!(v)))
        .collect();
    let by_seen: serde_json::Map<String, serde_json::Value> = t
        .by_seen
        .iter()
        .map(|(k, v)| (k.name(), json!(v)))
        .collect();
    out.figure(
        "soak_traffic",
        json!({"ran_s": seconds, "sent": t.sent, "rps": rps, "not_sent": t.not_sent,
               "connections": t.connections, "connect_errors": t.connect_errors,
               "by_action": by_action, "by_seen": by_seen, "first_problem": t.first_problem}),
    );
    out.figure(
        "soak_records",
        json!({"journaled": a.journaled, "by_fate": a.by_fate, "committed_by_journal": a.committed_by_journal,
               "committed_by_ledger": a.committed_by_ledger, "matched": a.matched,
               "journal_only": a.journal_only, "ledger_only": a.ledger_only,
               "disagreements": a.disagreements, "in_progress": a.in_progress,
               "control": {"advances": report.control.advances, "listings": report.control.listings,
                           "genuine": report.control.genuine, "forged": report.control.forged,
                           "accepted": report.control.accepted, "rejected": report.control.rejected,
                           "failures": report.control.failures, "first_failure": report.control.first_failure}}),
    );
    let rss: Vec<u64> = report.samples.iter().map(|s| s.rss_kib).collect();
    let m = &report.memory;
    out.figure(
        "soak_memory",
        json!({"samples": rss.len(), "first_kib": rss.first(), "last_kib": rss.last(),
               "max_kib": rss.iter().max(), "warm_end_s": m.warm_end.map(|d| d.as_secs_f64()),
               "warm_peak_kib": m.warm_peak_kib, "late_peak_kib": m.late_peak_kib, "flat": m.flat,
               "rss_kib": rss}),
    );
    let mut rows: Vec<Vec<String>> = t
        .by_seen
        .iter()
        .map(|(seen, n)| vec![seen.name(), n.to_string()])
        .collect();
    rows.push(vec!["all sent".to_owned(), t.sent.to_string()]);
    out.text(&table(
        &format!(
            "soak: {} requests in {:.0} s ({} a second), as the clients saw them",
            t.sent,
            seconds,
            num(rps)
        ),
        &["ended", "requests"],
        &rows,
    ));
    let fates: Vec<Vec<String>> = a
        .by_fate
        .iter()
        .map(|(f, n)| vec![f.clone(), n.to_string()])
        .collect();
    out.text(&table(
        "soak: requests by journal fate",
        &["fate", "requests"],
        &fates,
    ));
    let picks = [
        0,
        rss.len() / 4,
        rss.len() / 2,
        rss.len() * 3 / 4,
        rss.len().saturating_sub(1),
    ];
    let memory_rows: Vec<Vec<String>> = picks
        .iter()
        .filter_map(|&i| report.samples.get(i))
        .map(|s| {
            vec![
                format!("{:.0} s", s.at.as_secs_f64()),
                mib(s.rss_kib),
                s.sent.to_string(),
            ]
        })
        .collect();
    out.text(&table(
        "soak: lostreply serve resident memory",
        &["at", "VmRSS", "requests sent"],
        &memory_rows,
    ));
    checks(report, machine, out);
}

fn checks(report: &SoakReport, machine: &Machine, out: &mut Out<'_>) {
    let mut rows = Vec::new();
    for c in &report.checks {
        let verdict = match c.passed {
            Some(true) => "held",
            Some(false) => "FAILED",
            None => "not judged",
        };
        out.figure(
            "soak_check",
            json!({"check": c.name.name(), "passed": c.passed, "detail": c.detail}),
        );
        // A line each rather than a table: a detail starting with a number
        // would be right-aligned as one.
        rows.push(format!(
            " {:<24} {:<11} {}",
            c.name.name(),
            verdict,
            c.detail
        ));
    }
    out.text(&format!("\n== soak: checks\n{}\n", rows.join("\n")));
    let passed = report.passed();
    out.figure(
        "soak",
        json!({"passed": passed, "cpu": machine.cpu, "nproc": machine.nproc, "kernel": machine.kernel}),
    );
    out.text(&format!(
        "soak verdict: {} ({}, {} cores, kernel {})",
        if passed { "every check held" } else { "FAILED" },
        machine.cpu,
        machine.nproc,
        machine.kernel
    ));
}

//! A proof for a person (text) and for a machine (JSON, the serde form of
//! [`Proof`]).

use std::io::{self, Write};

use super::finding::Finding;
use super::{CheckCount, DesignFailure, FileProof, FileVerdict, FlawRecord, NotJudged, Proof};

/// Findings listed per failing design; the rest are counted.
const MAX_FINDINGS: usize = 10;

/// The proof as JSON.
pub fn write_json(w: &mut dyn Write, proof: &Proof) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, proof)?;
    writeln!(w)
}

/// The proof for a person: each file's verdict, what supports it, the
/// commands that rerun a failure, and the totals.
pub fn write_text(w: &mut dyn Write, proof: &Proof) -> io::Result<()> {
    for file in &proof.files {
        write_file(w, file, proof.seeds)?;
    }
    writeln!(w, "{}", totals(proof))
}

fn write_file(w: &mut dyn Write, file: &FileProof, seeds: u64) -> io::Result<()> {
    let name = format!("{} ({})", file.path, file.id);
    match &file.verdict {
        FileVerdict::Sound { correct, flaws } => {
            writeln!(
                w,
                "sound  {name}: every correct design passes on seeds 1..={seeds} ({})",
                correct.join(", ")
            )?;
            write_flaws(w, flaws, seeds)
        }
        FileVerdict::DesignBound { failing, passing } => {
            let names: Vec<&str> = failing.iter().map(|f| f.design.as_str()).collect();
            writeln!(
                w,
                "design-bound  {name}: fails {} but passes {}: it asks for a design's choice, not the contract",
                names.join(", "),
                passing.join(", ")
            )?;
            write_failures(w, failing)
        }
        FileVerdict::Impossible { failing } => {
            let names: Vec<&str> = failing.iter().map(|f| f.design.as_str()).collect();
            let only = if failing.len() == 1 {
                " (the only correct design bundled for it, so impossible and design-bound look alike)"
            } else {
                ""
            };
            writeln!(
                w,
                "impossible  {name}: fails every correct design ({}){only}: no correct adapter can meet it",
                names.join(", ")
            )?;
            write_failures(w, failing)
        }
        FileVerdict::NotJudged { why } => write_not_judged(w, &name, why),
    }
}

fn write_not_judged(w: &mut dyn Write, name: &str, why: &NotJudged) -> io::Result<()> {
    match why {
        NotJudged::Profile { profile } => writeln!(
            w,
            "not judged  {name}: provider.profile is {profile}; the bundled designs call the \
             generic API only, so they cannot judge it (run it against your own adapter)"
        ),
        NotJudged::Infrastructure {
            design,
            seed,
            message,
            reproduce,
        } => {
            writeln!(
                w,
                "not judged  {name}: the harness failed on {design}, seed {seed}: {message}"
            )?;
            writeln!(w, "  reproduce: {reproduce}")
        }
    }
}

/// The failures, those alike (same seeds, same findings) in one block
/// that names every design sharing it.
fn write_failures(w: &mut dyn Write, failing: &[DesignFailure]) -> io::Result<()> {
    let mut written = vec![false; failing.len()];
    for (i, failure) in failing.iter().enumerate() {
        if written[i] {
            continue;
        }
        let mut alike = Vec::new();
        for (j, other) in failing.iter().enumerate().skip(i) {
            if !written[j]
                && other.failed_seeds == failure.failed_seeds
                && other.findings == failure.findings
            {
                written[j] = true;
                alike.push(other.design.as_str());
            }
        }
        write_failure(w, failure, &alike)?;
    }
    Ok(())
}

fn write_failure(w: &mut dyn Write, failure: &DesignFailure, alike: &[&str]) -> io::Result<()> {
    let seeds: Vec<String> = failure.failed_seeds.iter().map(u64::to_string).collect();
    writeln!(
        w,
        "  {} {} on seed{} {}; seed {}:",
        alike.join(", "),
        if alike.len() == 1 { "fails" } else { "fail" },
        if seeds.len() == 1 { "" } else { "s" },
        seeds.join(", "),
        failure.seed
    )?;
    for finding in failure.findings.iter().take(MAX_FINDINGS) {
        writeln!(w, "    {}", finding_line(finding))?;
    }
    if failure.findings.len() > MAX_FINDINGS {
        writeln!(w, "    and {} more", failure.findings.len() - MAX_FINDINGS)?;
    }
    writeln!(w, "    reproduce: {}", failure.reproduce)?;
    writeln!(w, "    as a process: {}", failure.reproduce_process)?;
    if alike.len() > 1 {
        writeln!(w, "    (the others: the same commands with their names)")?;
    }
    Ok(())
}

/// `step 1 (execute op-1): expect.after_step, op-1: message`
pub fn finding_line(finding: &Finding) -> String {
    // Most messages start with their operation already.
    let operation = match finding.operation_id.as_deref() {
        Some(op) if !finding.message.starts_with(op) => format!(", {op}"),
        Some(_) | None => String::new(),
    };
    format!(
        "{}: {}{operation}: {}",
        finding.at,
        finding.check,
        one_line(&finding.message)
    )
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn write_flaws(w: &mut dyn Write, flaws: &[FlawRecord], seeds: u64) -> io::Result<()> {
    let width = flaws.iter().map(|f| f.adapter.len()).max().unwrap_or(0);
    let (caught, missed): (Vec<&FlawRecord>, Vec<&FlawRecord>) =
        flaws.iter().partition(|f| !f.caught_seeds.is_empty());
    writeln!(
        w,
        "  catches {} of {} flawed adapters:",
        caught.len(),
        flaws.len()
    )?;
    for flaw in &caught {
        writeln!(
            w,
            "    {:width$}  {}/{seeds} seeds  by {}{}",
            flaw.adapter,
            flaw.caught_seeds.len(),
            checks_text(&flaw.checks, flaw.caught_seeds.len() as u64),
            infrastructure_note(flaw)
        )?;
    }
    if !missed.is_empty() {
        writeln!(w, "  does not catch:")?;
        for flaw in &missed {
            writeln!(
                w,
                "    {:width$}  0/{seeds} seeds{}",
                flaw.adapter,
                infrastructure_note(flaw)
            )?;
        }
    }
    Ok(())
}

/// `invariant 1 (at-most-once), expect.effects (2 seeds)`: a count only
/// where a check caught the adapter on fewer seeds than it was caught on.
fn checks_text(checks: &[CheckCount], caught: u64) -> String {
    let parts: Vec<String> = checks
        .iter()
        .map(|c| {
            if c.seeds == caught {
                c.check.to_string()
            } else {
                format!(
                    "{} ({} seed{})",
                    c.check,
                    c.seeds,
                    if c.seeds == 1 { "" } else { "s" }
                )
            }
        })
        .collect();
    parts.join(", ")
}

fn infrastructure_note(flaw: &FlawRecord) -> String {
    if flaw.infrastructure_seeds.is_empty() {
        return String::new();
    }
    let seeds: Vec<String> = flaw
        .infrastructure_seeds
        .iter()
        .map(u64::to_string)
        .collect();
    format!(
        "  (the harness failed on seed {}: not judged there)",
        seeds.join(", ")
    )
}

fn totals(proof: &Proof) -> String {
    let mut counts = [0usize; 4];
    for file in &proof.files {
        let slot = match file.verdict {
            FileVerdict::Sound { .. } => 0,
            FileVerdict::DesignBound { .. } => 1,
            FileVerdict::Impossible { .. } => 2,
            FileVerdict::NotJudged { .. } => 3,
        };
        counts[slot] += 1;
    }
    format!(
        "Proof (seeds 1..={}): {} sound, {} design-bound, {} impossible, {} not judged",
        proof.seeds, counts[0], counts[1], counts[2], counts[3]
    )
}

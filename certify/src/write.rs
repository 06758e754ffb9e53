//! Writers of the certification report: terminal summary, JSON (schema_version 1),
//! JUnit XML (one test case per probe), Markdown, and a self-contained HTML
//! page ([`write_html`]). Pure functions over the model, to a `Write`; every
//! `match` on a verdict or evidence is exhaustive.

mod html;

use std::io::{self, Write};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::report::{Certification, ProbeResult};
use crate::verdict::{Evidence, Verdict};

pub use html::write_html;

/// The report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// `certify.json`.
    Json,
    /// `certify.xml`.
    Junit,
    /// `certify.md`.
    Markdown,
    /// `certify.html`.
    Html,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 4] = [Format::Json, Format::Junit, Format::Markdown, Format::Html];

    /// The name given to `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }

    /// The file written into the report directory.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Json => "certify.json",
            Format::Junit => "certify.xml",
            Format::Markdown => "certify.md",
            Format::Html => "certify.html",
        }
    }

    /// From its name (`md` is accepted for markdown).
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "json" => Some(Format::Json),
            "junit" | "xml" => Some(Format::Junit),
            "markdown" | "md" => Some(Format::Markdown),
            "html" => Some(Format::Html),
            _ => None,
        }
    }

    /// Writes the report in this format.
    pub fn write(self, w: &mut dyn Write, c: &Certification) -> io::Result<()> {
        match self {
            Format::Json => write_json(w, c),
            Format::Junit => write_junit(w, c),
            Format::Markdown => write_markdown(w, c),
            Format::Html => write_html(w, c),
        }
    }
}

fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS ",
        Verdict::Fail => "FAIL ",
        Verdict::HardFail => "HARD ",
        Verdict::Skipped => "skip ",
        Verdict::Error => "ERROR",
    }
}

/// The lines of one piece of evidence.
pub fn evidence_line(e: &Evidence) -> String {
    match e {
        Evidence::Exchange {
            label,
            request,
            key,
            outcome,
            body,
        } => {
            let key = key.as_ref().map(|k| format!(" [key {k}]")).unwrap_or_default();
            if body.is_empty() {
                format!("{label}: {request}{key} -> {outcome}")
            } else {
                format!("{label}: {request}{key} -> {outcome}: {body}")
            }
        }
        Evidence::Count {
            marker,
            method,
            found,
            expected,
        } => format!("read-back ({method}) counts {found} effect(s) with marker {marker}, expected {expected}"),
        Evidence::Note { text } => text.clone(),
    }
}

/// The terminal summary: one line per probe, the evidence of each failure, totals.
pub fn write_terminal(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    writeln!(w, "certifying {} ({})", c.contract_name, c.base_url)?;
    writeln!(w, "  contract {}  seed {}", c.contract_source, c.seed)?;
    for p in &c.probes {
        writeln!(w, "{} {:<26} {}", mark(p.verdict), p.name, p.summary)?;
        match p.verdict {
            Verdict::Fail | Verdict::HardFail | Verdict::Error => {
                for e in &p.evidence {
                    writeln!(w, "        | {}", evidence_line(e))?;
                }
            }
            Verdict::Pass | Verdict::Skipped => {}
        }
    }
    let t = c.totals();
    writeln!(
        w,
        "{} passed, {} failed, {} hard failures, {} errors, {} skipped; {} of {} requests in {} ms",
        t.pass, t.fail, t.hard_fail, t.error, t.skipped, c.requests_sent, c.budget, c.duration_ms
    )?;
    if c.exit_code() != 0 {
        writeln!(w, "reproduce: {}", c.reproduce)?;
    }
    Ok(())
}

/// JSON, schema_version 1 (docs/certify.md).
pub fn write_json(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    let mut value = serde_json::to_value(c).map_err(io::Error::other)?;
    if let Some(obj) = value.as_object_mut() {
        obj.insert(
            "totals".to_owned(),
            serde_json::to_value(c.totals()).map_err(io::Error::other)?,
        );
    }
    serde_json::to_writer_pretty(&mut *w, &value).map_err(io::Error::other)?;
    writeln!(w)
}

/// JUnit XML: one test suite, one test case per probe.
pub fn write_junit(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    let mut suite = TestSuite::new("lostreply-certify");
    suite.set_time(Duration::from_millis(c.duration_ms));
    suite.add_properties([
        Property::new("contract", &c.contract_source),
        Property::new("base_url", &c.base_url),
        Property::new("seed", c.seed.to_string()),
    ]);
    suite.add_test_cases(c.probes.iter().map(test_case));
    let mut junit = quick_junit::Report::new("lostreply-certify");
    junit.set_time(Duration::from_millis(c.duration_ms));
    junit.add_test_suite(suite);
    junit.serialize(w).map_err(io::Error::other)
}

fn test_case(p: &ProbeResult) -> TestCase {
    let status = match p.verdict {
        Verdict::Pass => TestCaseStatus::success(),
        Verdict::Skipped => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(p.summary.clone());
            s
        }
        Verdict::Fail | Verdict::HardFail | Verdict::Error => {
            let kind = match p.verdict {
                Verdict::Error => NonSuccessKind::Error,
                Verdict::Fail | Verdict::HardFail | Verdict::Pass | Verdict::Skipped => {
                    NonSuccessKind::Failure
                }
            };
            let mut s = TestCaseStatus::non_success(kind);
            s.set_message(p.summary.clone())
                .set_type(p.verdict.name())
                .set_description(
                    p.evidence
                        .iter()
                        .map(evidence_line)
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            s
        }
    };
    let mut case = TestCase::new(&p.name, status);
    case.set_classname("lostreply.certify");
    case.set_time(Duration::from_millis(p.duration_ms));
    case
}

/// Markdown: a table of probes, then the evidence of each that did not pass.
pub fn write_markdown(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    writeln!(w, "# Certification: {}\n", c.contract_name)?;
    writeln!(
        w,
        "Endpoint `{}`, contract `{}`, seed {}, {} of {} requests, {} ms.\n",
        c.base_url, c.contract_source, c.seed, c.requests_sent, c.budget, c.duration_ms
    )?;
    writeln!(w, "| probe | verdict | finding |\n|---|---|---|")?;
    for p in &c.probes {
        writeln!(
            w,
            "| `{}` | {} | {} |",
            p.name,
            p.verdict.name(),
            p.summary.replace('|', "\\|")
        )?;
    }
    for p in &c.probes {
        match p.verdict {
            Verdict::Fail | Verdict::HardFail | Verdict::Error => {
                writeln!(
                    w,
                    "\n## `{}`: {}\n\n{}\n",
                    p.name,
                    p.verdict.name(),
                    p.title
                )?;
                for e in &p.evidence {
                    writeln!(w, "- {}", evidence_line(e).replace('\n', " "))?;
                }
            }
            Verdict::Pass | Verdict::Skipped => {}
        }
    }
    let t = c.totals();
    writeln!(
        w,
        "\n{} passed, {} failed, {} hard failures, {} errors, {} skipped.",
        t.pass, t.fail, t.hard_fail, t.error, t.skipped
    )
}

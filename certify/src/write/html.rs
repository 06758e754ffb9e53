//! The HTML writer: one self-contained page (inline CSS and a few lines of
//! inline JS; nothing fetched from the network) with the endpoint, the seed and
//! the command that reproduces the run, the budget used, a table of probes, and
//! the evidence of every probe that failed or could not conclude.
//!
//! Every string from the contract, the endpoint or a probe goes through
//! [`lostreply_reports::html::escape`] (the run report's own escaping) before
//! it reaches the page, in text and in attributes alike. A Content-Security-Policy
//! admits nothing from outside and no script but [`SCRIPT`], by hash: should
//! escaping ever miss, an injected script or event handler is still refused.
//!
//! Stable hooks for browser tests and styling: `tr.probe[data-probe][data-verdict]`,
//! `section.probe[data-probe][data-verdict]` (one per failed, hard-failed or error
//! probe), `tr.evidence.exchange|count|note`, `body[data-rendered="yes"]` once
//! the script ran.

use std::io::{self, Write};

use lostreply_reports::html::{escape, BASE_CSS};

use crate::report::{Certification, ProbeResult};
use crate::verdict::{Evidence, Verdict};

/// Writes the certification as one self-contained HTML page.
pub fn write_html(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    write_head(w, c)?;
    write_header(w, c)?;
    write_probe_table(w, c)?;
    for (position, p) in c.probes.iter().enumerate() {
        if shows_evidence(p.verdict) {
            write_probe_section(w, position, p)?;
        }
    }
    write_tail(w)
}

/// Whether a probe gets a section with its evidence (as in the terminal and
/// Markdown reports: the probes that failed or could not conclude).
fn shows_evidence(v: Verdict) -> bool {
    match v {
        Verdict::Fail | Verdict::HardFail | Verdict::Error => true,
        Verdict::Pass | Verdict::Skipped => false,
    }
}

/// A class-name-safe token for a verdict.
fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::HardFail => "hard-fail",
        Verdict::Skipped => "skipped",
        Verdict::Error => "error",
    }
}

/// The verdict as a reader says it.
fn verdict_words(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::HardFail => "hard fail",
        Verdict::Skipped => "skipped",
        Verdict::Error => "error",
    }
}

/// The id of a probe's evidence section. Positions, not probe names, so that
/// ids are always valid and unique.
fn probe_anchor(position: usize) -> String {
    format!("probe-{position}")
}

/// The certification page's own rules, after the run report's
/// [`BASE_CSS`]: a tighter margin around `pre`, badges that never wrap, and the probe
/// sections and evidence tables.
const STYLE: &str = r#"h2 code { font-size: 15px; }
pre { margin: 4px 0; }
.badge { white-space: nowrap; }
.badge.pass { background: var(--green); } .badge.fail { background: var(--red); } .badge.hard-fail { background: #7f0000; }
.badge.skipped { background: var(--mute); } .badge.error { background: var(--amber); }
section.probe { border-top: 2px solid #e3e3e8; padding-top: 14px; margin-top: 22px; }
table.evidence td:first-child { color: var(--mute); white-space: nowrap; }
tr.count.mismatch td { color: var(--red); font-weight: 600; }
.none { color: var(--mute); font-style: italic; }
"#;

/// Counts what the page shows and marks the body as rendered: a browser test
/// reading the DOM knows from that mark that the script ran to the end, so the
/// CSP admitted it and nothing before it threw.
const SCRIPT: &str = r#"
(function () {
  document.body.dataset.probes = String(document.querySelectorAll('tr.probe').length);
  document.body.dataset.evidenceSections = String(document.querySelectorAll('section.probe').length);
  document.body.dataset.rendered = 'yes';
})();
"#;

/// The CSP source for [`SCRIPT`]: `sha256-` and the base64 SHA-256 of its
/// exact text. A unit test recomputes it; change both together.
const SCRIPT_CSP_HASH: &str = "sha256-zEJ44+/MSUgXQVJ4aamg+iw2K1itrx1EJKR8HlNxbh0=";

fn write_head(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    writeln!(w, "<!DOCTYPE html>")?;
    writeln!(w, "<html lang=\"en\">")?;
    writeln!(w, "<head>")?;
    writeln!(w, "<meta charset=\"utf-8\">")?;
    writeln!(
        w,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    // Nothing may be fetched: the page must open offline and leak nothing. And
    // only our own script may run.
    writeln!(
        w,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_CSP_HASH}'\">"
    )?;
    writeln!(
        w,
        "<title>Certification: {}</title>",
        escape(&c.contract_name)
    )?;
    writeln!(w, "<style>{BASE_CSS}{STYLE}</style>")?;
    writeln!(w, "</head>")?;
    writeln!(w, "<body data-rendered=\"no\">")
}

fn write_tail(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "<script>{SCRIPT}</script>")?;
    writeln!(w, "</body>")?;
    writeln!(w, "</html>")
}

fn write_header(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    let t = c.totals();
    writeln!(w, "<header>")?;
    writeln!(w, "<h1>Certification: {}</h1>", escape(&c.contract_name))?;
    writeln!(
        w,
        "<p class=\"meta\">Endpoint <code class=\"endpoint\">{}</code>, contract <code>{}</code>, seed <code class=\"seed\">{}</code>.</p>",
        escape(&c.base_url),
        escape(&c.contract_source),
        c.seed
    )?;
    writeln!(
        w,
        "<p class=\"budget\" data-requests-sent=\"{}\" data-budget=\"{}\">Budget used: {} of {} requests, in {} ms.</p>",
        c.requests_sent, c.budget, c.requests_sent, c.budget, c.duration_ms
    )?;
    writeln!(
        w,
        "<p class=\"totals\" data-pass=\"{}\" data-fail=\"{}\" data-hard-fail=\"{}\" data-error=\"{}\" data-skipped=\"{}\" data-exit-code=\"{}\">{} passed, {} failed, {} hard failures, {} errors, {} skipped.</p>",
        t.pass,
        t.fail,
        t.hard_fail,
        t.error,
        t.skipped,
        c.exit_code(),
        t.pass,
        t.fail,
        t.hard_fail,
        t.error,
        t.skipped
    )?;
    writeln!(
        w,
        "<p>Reproduce:</p><pre class=\"reproduce\"><code>{}</code></pre>",
        escape(&c.reproduce)
    )?;
    writeln!(w, "</header>")
}

fn write_probe_table(w: &mut dyn Write, c: &Certification) -> io::Result<()> {
    writeln!(w, "<nav>")?;
    writeln!(
        w,
        "<table class=\"probes\"><thead><tr><th>Probe</th><th>Verdict</th><th>Finding</th></tr></thead><tbody>"
    )?;
    for (position, p) in c.probes.iter().enumerate() {
        let name = if shows_evidence(p.verdict) {
            format!(
                "<a href=\"#{}\"><code>{}</code></a>",
                probe_anchor(position),
                escape(&p.name)
            )
        } else {
            format!("<code>{}</code>", escape(&p.name))
        };
        writeln!(
            w,
            "<tr class=\"probe {}\" data-probe=\"{}\" data-verdict=\"{}\"><td>{name}</td><td><span class=\"badge {}\">{}</span></td><td>{}</td></tr>",
            verdict_class(p.verdict),
            escape(&p.name),
            p.verdict.name(),
            verdict_class(p.verdict),
            verdict_words(p.verdict),
            escape(&p.summary)
        )?;
    }
    writeln!(w, "</tbody></table>")?;
    writeln!(w, "</nav>")
}

fn write_probe_section(w: &mut dyn Write, position: usize, p: &ProbeResult) -> io::Result<()> {
    writeln!(
        w,
        "<section class=\"probe {}\" id=\"{}\" data-probe=\"{}\" data-verdict=\"{}\">",
        verdict_class(p.verdict),
        probe_anchor(position),
        escape(&p.name),
        p.verdict.name()
    )?;
    writeln!(
        w,
        "<h2><span class=\"badge {}\">{}</span> <code>{}</code></h2>",
        verdict_class(p.verdict),
        verdict_words(p.verdict),
        escape(&p.name)
    )?;
    writeln!(
        w,
        "<p class=\"meta\">{}, {} ms</p>",
        escape(&p.title),
        p.duration_ms
    )?;
    writeln!(w, "<p class=\"summary\">{}</p>", escape(&p.summary))?;
    if p.evidence.is_empty() {
        writeln!(w, "<p class=\"none\">No evidence recorded.</p>")?;
    } else {
        writeln!(
            w,
            "<table class=\"evidence\"><thead><tr><th>Step</th><th>Sent</th><th>Answer</th></tr></thead><tbody>"
        )?;
        for e in &p.evidence {
            write_evidence(w, e)?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    writeln!(w, "</section>")
}

/// One row per piece of evidence, in the order the probe recorded them:
/// a request and its answer, what the read-back counted, or a note.
fn write_evidence(w: &mut dyn Write, e: &Evidence) -> io::Result<()> {
    match e {
        Evidence::Exchange {
            label,
            request,
            key,
            outcome,
            body,
        } => {
            let key = key
                .as_ref()
                .map(|k| format!("<br>key <code>{}</code>", escape(k)))
                .unwrap_or_default();
            let body = if body.is_empty() {
                String::new()
            } else {
                format!("<pre class=\"body\">{}</pre>", escape(body))
            };
            writeln!(
                w,
                "<tr class=\"evidence exchange\"><td>{}</td><td><code>{}</code>{key}</td><td><span class=\"outcome\">{}</span>{body}</td></tr>",
                escape(label),
                escape(request),
                escape(outcome)
            )
        }
        Evidence::Count {
            marker,
            method,
            found,
            expected,
        } => {
            let mismatch = if found == expected { "" } else { " mismatch" };
            writeln!(
                w,
                "<tr class=\"evidence count{mismatch}\" data-found=\"{found}\" data-expected=\"{expected}\"><td>read-back ({})</td><td>marker <code>{}</code></td><td>counted {found} effect(s), expected {expected}</td></tr>",
                escape(method),
                escape(marker)
            )
        }
        Evidence::Note { text } => writeln!(
            w,
            "<tr class=\"evidence note\"><td>note</td><td colspan=\"2\">{}</td></tr>",
            escape(text)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{SCRIPT, SCRIPT_CSP_HASH};
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
}

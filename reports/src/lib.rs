//! Pure writers from a [`model::Report`] to a `Write`: terminal summary, JSON,
//! JUnit XML, Markdown and a self-contained HTML page. No clock, no file system:
//! the harness fills the model and picks where the bytes go.
//!
//! # Map
//! - [`model`]: the report model (plain serde data) the harness fills and every
//!   writer reads, with lookups that resolve evidence pointers.
//! - [`operation_report`]: an operation as the report shows it, holding the
//!   scenario's own (shared), written as its fields.
//! - [`shared_json`]: a call's request or reply kept as shared compact JSON text,
//!   written as the value itself.
//! - [`shared_str`]: a string of the model that its copies share (ids, keys,
//!   targets), written as a plain JSON string.
//! - [`record_names`], [`fate`], [`fault`]: the closed sets a call, request
//!   or effect record carries (which call, a request's kind, an object's
//!   status, how a response ended, the fault that struck) as enums, each
//!   written and read as the text the JSON report spells.
//! - [`signals`]: the production signals of a scenario (unknown outcomes,
//!   time to confirmation and what confirmed it, keys near expiry, late
//!   duplicates, reconcile effort, escalations) and their totals.
//! - [`invariant`]: the seven invariants as a closed enum (number, name,
//!   meaning), shared by the harness's checks and every writer.
//! - `text` (private): the plain-text renderings shared by every writer: one
//!   journal line, one call line, one evidence line, durations, stderr excerpts.
//!   A new way of saying something goes here, once.
//! - [`terminal`]: a progress line per finished scenario and the end-of-run summary.
//! - [`json`]: the model as pretty JSON, and back (`docs/report-json.md`).
//! - `pretty` (private): the JSON writer's serializer: serde_json's pretty
//!   bytes, made fast (shared JSON text re-indented instead of re-parsed).
//! - [`junit`]: JUnit XML through quick-junit, for CI test views.
//! - [`markdown`]: a pull-request comment.
//! - [`html`]: one offline page with an SVG timeline per scenario.
//! - [`openmetrics`]: the verdict counts and signals' totals as an
//!   OpenMetrics text exposition, for charting runs in CI.
//! - [`merge`](mod@merge): joins the reports of a run's shards (or of disjoint runs) into one.
//! - [`Format`] and [`write`](fn@write): pick writers by name (`--format json,junit,html`);
//!   [`write_shard`] for the report of one shard.
//!
//! # Invariants
//! - Writers are pure functions of the model: the same report gives the same bytes.
//! - Every `match` over `Verdict`, `CallEnd`, `Check`, `Invariant`, `Evidence`
//!   and the records' closed sets (`ResponseEnd`, `FaultResponse`,
//!   `ObjectStatus`...) is exhaustive, so a new variant makes every writer
//!   decide how to show it.
//! - Adapter- and scenario-supplied text is untrusted: it is made one-line safe
//!   for the terminal, escaped for Markdown, XML and HTML.
#![deny(missing_docs)]

pub mod call_reply;
pub mod call_request;
pub mod fate;
pub mod fault;
pub mod html;
mod inline_list;
pub mod invariant;
pub mod json;
pub mod junit;
pub mod kept_json;
pub mod markdown;
pub mod merge;
pub mod model;
pub mod openmetrics;
pub mod operation_report;
pub mod outcome;
mod pretty;
pub mod record_names;
pub mod shared_json;
pub mod signal_totals;
pub mod signals;
pub mod step_label;
/// The shared string type, from `lostreply-text`, also reachable at this path.
pub mod shared_str {
    pub use lostreply_text::{Recent, SharedStr};
}
pub mod terminal;
mod text;

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

pub use html::write_html;
pub use json::{read_json, read_json_with_shard, write_json, write_shard_json, ReadJsonError};
pub use junit::write_junit;
pub use markdown::write_markdown;
pub use merge::{merge, MergeError, MergeInput};
pub use terminal::{write_progress_line, write_summary, TerminalStyle};

/// A report format the harness can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Format {
    /// The end-of-run summary as plain text (no colours when written to a file).
    Terminal,
    /// The model as JSON, readable back with [`read_json`].
    Json,
    /// JUnit XML for CI.
    Junit,
    /// A pull-request comment.
    Markdown,
    /// A self-contained page with timelines.
    Html,
    /// The verdict counts and the signals' totals as OpenMetrics text.
    OpenMetrics,
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown report format `{name}`: expected one of terminal, json, junit, markdown, html, openmetrics"
)]
pub struct UnknownFormat {
    /// The name as given.
    pub name: String,
}

impl Format {
    /// Every format, in the order the documentation lists them.
    pub const ALL: [Format; 6] = [
        Format::Terminal,
        Format::Json,
        Format::Junit,
        Format::Markdown,
        Format::Html,
        Format::OpenMetrics,
    ];

    /// The name used on the command line: `terminal`, `json`, `junit`,
    /// `markdown`, `html`, `openmetrics`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Terminal => "terminal",
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::OpenMetrics => "openmetrics",
        }
    }

    /// The usual file extension, without the dot (`om.txt` for OpenMetrics:
    /// text that a browser or an artifact viewer shows as such).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Terminal => "txt",
            Format::Json => "json",
            Format::Junit => "xml",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::OpenMetrics => "om.txt",
        }
    }

    /// Parses one name as [`Format::name`] gives it (surrounding spaces ignored).
    pub fn parse(name: &str) -> Result<Format, UnknownFormat> {
        let trimmed = name.trim();
        Format::ALL
            .into_iter()
            .find(|f| f.name() == trimmed)
            .ok_or_else(|| UnknownFormat {
                name: trimmed.to_string(),
            })
    }

    /// Parses a comma-separated list such as `json,junit,html`, keeping the
    /// first occurrence of each format in the order given.
    pub fn parse_list(names: &str) -> Result<Vec<Format>, UnknownFormat> {
        let mut formats = Vec::new();
        for name in names.split(',') {
            let format = Format::parse(name)?;
            if !formats.contains(&format) {
                formats.push(format);
            }
        }
        Ok(formats)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::parse(s)
    }
}

/// Writes the report of one shard's run in `format`: as [`write`](fn@write) does, except
/// that the JSON carries the `shard` field ([`json::write_shard_json`]) and the
/// summary says which shard ran ([`terminal::write_shard_summary`]).
pub fn write_shard(
    format: Format,
    w: &mut dyn Write,
    report: &model::Report,
    shard: &model::Shard,
) -> io::Result<()> {
    match format {
        Format::Terminal => {
            terminal::write_shard_summary(w, report, shard, TerminalStyle { color: false })
        }
        Format::Json => json::write_shard_json(w, report, shard),
        Format::Junit => write_junit(w, report),
        Format::Markdown => write_markdown(w, report),
        Format::Html => write_html(w, report),
        Format::OpenMetrics => openmetrics::write_openmetrics(w, report),
    }
}

/// Writes `report` in `format`. [`Format::Terminal`] here is the summary without
/// colours (for a file); for a console, call [`write_summary`] with a style.
pub fn write(format: Format, w: &mut dyn Write, report: &model::Report) -> io::Result<()> {
    match format {
        Format::Terminal => write_summary(w, report, TerminalStyle { color: false }),
        Format::Json => write_json(w, report),
        Format::Junit => write_junit(w, report),
        Format::Markdown => write_markdown(w, report),
        Format::Html => write_html(w, report),
        Format::OpenMetrics => openmetrics::write_openmetrics(w, report),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_round_trip() {
        for format in Format::ALL {
            assert_eq!(Format::parse(format.name()), Ok(format));
            assert_eq!(format.to_string().parse::<Format>(), Ok(format));
        }
    }

    #[test]
    fn lists_parse_in_order_without_repeats() {
        assert_eq!(
            Format::parse_list("json, junit,html,json"),
            Ok(vec![Format::Json, Format::Junit, Format::Html])
        );
    }

    #[test]
    fn unknown_names_are_named_in_the_error() {
        let err = Format::parse_list("json,yaml").unwrap_err();
        assert_eq!(err.name, "yaml");
        assert!(err.to_string().contains("expected one of terminal, json"));
        assert!(Format::parse("").is_err());
    }
}

//! The JSON writer and reader. The JSON is the model serialized as it is
//! (documented field by field in `docs/report-json.md`), so reading it back gives
//! an equal [`Report`], with one top-level field more: `signals`, the
//! production signals' totals over the scenarios ([`SignalTotals`]), which
//! a reader recomputes from the scenarios' own. A shard's report adds
//! another, `shard` ([`write_shard_json`], [`read_json_with_shard`]).

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::model::{Report, Shard, SignalTotals, SCHEMA_VERSION};
use crate::pretty;

/// Why a JSON report could not be read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadJsonError {
    /// Not JSON, or not an object with a numeric `schema_version`.
    #[error("not a lostreply JSON report: {0}")]
    NotAReport(#[source] serde_json::Error),
    /// Written by a lostreply with a different, incompatible report shape.
    #[error(
        "report schema_version {found} is not supported: this lostreply reads version {supported}"
    )]
    UnsupportedVersion {
        /// The version in the file.
        found: u64,
        /// The version this crate reads ([`SCHEMA_VERSION`]).
        supported: u32,
    },
    /// The right version, but a field is missing or has the wrong type.
    #[error("malformed report: {0}")]
    Malformed(#[source] serde_json::Error),
}

/// Writes the report as pretty-printed JSON followed by a newline (the bytes
/// of `serde_json::to_writer_pretty`, written by a faster serializer of its own).
pub fn write_json(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    pretty::write_pretty(
        w,
        &ReportJson {
            report,
            signals: SignalTotals::of_report(report),
        },
    )
}

/// A report as written: the report's fields, then the signals' totals.
#[derive(Serialize)]
struct ReportJson<'a> {
    #[serde(flatten)]
    report: &'a Report,
    signals: SignalTotals,
}

/// Only the version, read first so that a report of another version gets a
/// clear error instead of a confusing "missing field" one.
#[derive(Deserialize)]
struct VersionProbe {
    schema_version: u64,
}

/// Parses a JSON report written by [`write_json`]. Unknown fields are ignored
/// (additions do not bump the version); a different `schema_version` is refused.
pub fn read_json(json: &str) -> Result<Report, ReadJsonError> {
    let probe: VersionProbe = serde_json::from_str(json).map_err(ReadJsonError::NotAReport)?;
    if probe.schema_version != u64::from(SCHEMA_VERSION) {
        return Err(ReadJsonError::UnsupportedVersion {
            found: probe.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    serde_json::from_str(json).map_err(ReadJsonError::Malformed)
}

/// A shard's report as written: the report's fields, the signals' totals,
/// then `shard`.
#[derive(Serialize)]
struct ShardJson<'a> {
    #[serde(flatten)]
    report: &'a Report,
    signals: SignalTotals,
    shard: &'a Shard,
}

/// Writes the report of one shard (`lostreply run --shard K/N`): the JSON of
/// [`write_json`] with one more top-level field, `shard`, last. Old readers
/// ignore it, so the schema version stays the same.
pub fn write_shard_json(w: &mut dyn Write, report: &Report, shard: &Shard) -> io::Result<()> {
    pretty::write_pretty(
        w,
        &ShardJson {
            report,
            signals: SignalTotals::of_report(report),
            shard,
        },
    )
}

/// Only the `shard` field, absent from the reports of unsharded runs and merges.
#[derive(Deserialize)]
struct ShardProbe {
    #[serde(default)]
    shard: Option<Shard>,
}

/// Parses a JSON report as [`read_json`] does, together with its `shard` field
/// when it is the report of one shard.
pub fn read_json_with_shard(json: &str) -> Result<(Report, Option<Shard>), ReadJsonError> {
    let report = read_json(json)?;
    let probe: ShardProbe = serde_json::from_str(json).map_err(ReadJsonError::Malformed)?;
    Ok((report, probe.shard))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::{AdapterInfo, AdapterKind};

    fn report() -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".to_owned(),
            adapter: AdapterInfo {
                name: "builtin:reference".to_owned(),
                kind: AdapterKind::InProcess,
            },
            seed: u64::MAX,
            duration_ms: 3,
            scenarios: vec![],
        }
    }

    #[test]
    fn a_shard_report_reads_back_with_its_shard_and_without_it() {
        let shard = Shard {
            index: 2,
            total: 4,
            selected: 27,
        };
        let mut out = Vec::new();
        write_shard_json(&mut out, &report(), &shard).unwrap();
        let json = String::from_utf8(out).unwrap();
        assert!(json.starts_with("{\n  \"schema_version\": 1,"), "{json}");
        assert!(
            json.ends_with("\"shard\": {\n    \"index\": 2,\n    \"total\": 4,\n    \"selected\": 27\n  }\n}\n"),
            "{json}"
        );
        assert_eq!(
            read_json_with_shard(&json).unwrap(),
            (report(), Some(shard))
        );
        // Readers that know nothing of shards read it as any report.
        assert_eq!(read_json(&json).unwrap(), report());
    }

    #[test]
    fn an_unsharded_report_has_no_shard_field() {
        let mut out = Vec::new();
        write_json(&mut out, &report()).unwrap();
        let json = String::from_utf8(out).unwrap();
        assert!(!json.contains("shard"), "{json}");
        assert_eq!(read_json_with_shard(&json).unwrap(), (report(), None));
    }
}

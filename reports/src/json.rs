//! The JSON writer and reader. The JSON is the model serialized as it is
//! (documented field by field in `docs/report-json.md`), so reading it back gives
//! an equal [`Report`].

use std::io::{self, Write};

use serde::Deserialize;

use crate::model::{Report, SCHEMA_VERSION};

/// Why a JSON report could not be read back.
#[derive(Debug, thiserror::Error)]
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

/// Writes the report as pretty-printed JSON followed by a newline.
pub fn write_json(w: &mut dyn Write, report: &Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report).map_err(io::Error::from)?;
    writeln!(w)
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

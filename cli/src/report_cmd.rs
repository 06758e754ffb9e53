//! `lostreply report merge`: the JSON reports of a run's shards joined into the
//! report of the whole run, printed and written as `lostreply run` does.

use std::io;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use lostreply_harness::exit;
use lostreply_reports::{MergeInput, ReadJsonError};

use super::output::{Color, Output, ReportFiles};

#[derive(Debug, Args)]
pub(super) struct ReportArgs {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// Join the reports of a sharded run (each DIR/lostreply.json) into one: summary, reports and exit code as for `run`.
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
struct MergeArgs {
    #[command(flatten)]
    report: ReportFiles,
    /// Colour in the terminal summary.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Report directories written by `lostreply run --report-dir` with the json format (or lostreply.json files).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
}

/// The file a merge reads from what it was given.
const REPORT_FILE: &str = "lostreply.json";

pub(super) fn report(args: ReportArgs) -> i32 {
    match args.command {
        ReportCommand::Merge(args) => merge(args),
    }
}

fn merge(args: MergeArgs) -> i32 {
    let output = Output::new(
        args.report.report_dir.clone(),
        args.report.format.as_deref(),
        args.color,
    );
    if let Some(out) = &args.report.report_dir {
        if let Some(dir) = args.dirs.iter().find(|d| same_dir(d, out)) {
            return usage(&format!(
                "--report-dir {} is also an input ({}): the merged report would overwrite that shard's; write it elsewhere",
                out.display(),
                dir.display()
            ));
        }
    }
    let mut inputs = Vec::with_capacity(args.dirs.len());
    for dir in &args.dirs {
        match read(dir) {
            Ok(input) => inputs.push(input),
            Err(e) => return usage(&e.to_string()),
        }
    }
    match lostreply_reports::merge(inputs) {
        Ok(report) => output.finish(&report, None),
        Err(e) => usage(&e.to_string()),
    }
}

/// A merge input that is not a report this lostreply reads (exit code 2).
#[derive(Debug, thiserror::Error)]
enum ReadReportError {
    /// The file cannot be read; when it is missing, the message says what writes it.
    #[error("{}: cannot read: {source}{}", path.display(), missing_hint(source))]
    Unreadable {
        /// The file read: `DIR/lostreply.json`, or the file given.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: io::Error,
    },
    /// The file is not a JSON report.
    #[error("{}: {source}", path.display())]
    Invalid {
        /// The file read.
        path: PathBuf,
        /// What is wrong with its content.
        #[source]
        source: ReadJsonError,
    },
}

/// Said after a missing report's error: a report directory written without
/// the json format has no `lostreply.json`, and the flag that writes it is
/// the fix.
fn missing_hint(e: &io::Error) -> &'static str {
    if e.kind() == io::ErrorKind::NotFound {
        " (`lostreply run --report-dir DIR` writes it when --format includes json)"
    } else {
        ""
    }
}

/// Reads `DIR/lostreply.json` (or the file itself when given one).
fn read(given: &Path) -> Result<MergeInput, ReadReportError> {
    let path = if given.is_file() {
        given.to_path_buf()
    } else {
        given.join(REPORT_FILE)
    };
    let json = match std::fs::read_to_string(&path) {
        Ok(json) => json,
        Err(source) => return Err(ReadReportError::Unreadable { path, source }),
    };
    let (report, shard) = match lostreply_reports::read_json_with_shard(&json) {
        Ok(read) => read,
        Err(source) => return Err(ReadReportError::Invalid { path, source }),
    };
    Ok(MergeInput::builder()
        .origin(given.display().to_string())
        .report(report)
        .maybe_shard(shard)
        .build())
}

/// True when both name one existing directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn usage(message: &str) -> i32 {
    eprintln!("lostreply report merge: {message}");
    exit::BAD_INPUT
}

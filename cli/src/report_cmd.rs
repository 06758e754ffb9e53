//! `lostreply report merge`: the JSON reports of a run's shards joined into the
//! report of the whole run, printed and written as `lostreply run` does.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use lostreply_harness::exit;
use lostreply_reports::MergeInput;

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
            Err(e) => return usage(&e),
        }
    }
    match lostreply_reports::merge(inputs) {
        Ok(report) => output.finish(&report, None),
        Err(e) => usage(&e.to_string()),
    }
}

/// Reads `DIR/lostreply.json` (or the file itself when given one).
fn read(given: &Path) -> Result<MergeInput, String> {
    let path = if given.is_file() {
        given.to_path_buf()
    } else {
        given.join(REPORT_FILE)
    };
    let json = std::fs::read_to_string(&path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (`lostreply run --report-dir DIR` writes it when --format includes json)"
        } else {
            ""
        };
        format!("{}: cannot read: {e}{hint}", path.display())
    })?;
    let (report, shard) = lostreply_reports::read_json_with_shard(&json)
        .map_err(|e| format!("{}: {e}", path.display()))?;
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

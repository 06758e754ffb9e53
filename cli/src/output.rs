//! How a command that produces a report ends (`run`, `report merge`): the
//! terminal summary, the report files, the exit code. One place, so that a
//! merged report is written exactly as a run's is.

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use lostreply_harness::exit;
use lostreply_reports::model::{Report, Shard};
use lostreply_reports::terminal::TerminalStyle;
use lostreply_reports::Format;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Color {
    Auto,
    Always,
    Never,
}

impl Color {
    /// The terminal style for stdout.
    pub fn style(self) -> TerminalStyle {
        TerminalStyle {
            color: match self {
                Color::Always => true,
                Color::Never => false,
                Color::Auto => {
                    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
                }
            },
        }
    }
}

/// Where and how reports go, validated from `--report-dir` and `--format`.
/// `--report-dir DIR [--format LIST]`, the same for every command that writes
/// reports.
#[derive(Debug, clap::Args)]
pub(super) struct ReportFiles {
    /// Write reports into this directory.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Report formats to write with --report-dir (comma-separated; openmetrics is lostreply.om.txt) [default: json, junit, markdown, html].
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        requires = "report_dir"
    )]
    pub format: Option<Vec<FormatName>>,
}

/// A report format as `--format` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum FormatName {
    Terminal,
    Json,
    Junit,
    Markdown,
    Html,
    #[value(name = "openmetrics")]
    OpenMetrics,
}

impl FormatName {
    /// The run report's format of this name.
    pub fn report_format(self) -> Format {
        match self {
            FormatName::Terminal => Format::Terminal,
            FormatName::Json => Format::Json,
            FormatName::Junit => Format::Junit,
            FormatName::Markdown => Format::Markdown,
            FormatName::Html => Format::Html,
            FormatName::OpenMetrics => Format::OpenMetrics,
        }
    }
}

/// What `--report-dir` alone writes.
const DEFAULT_FORMATS: [Format; 4] = [Format::Json, Format::Junit, Format::Markdown, Format::Html];

#[derive(Debug)]
pub(super) struct Output {
    /// `--report-dir`, if given.
    pub report_dir: Option<PathBuf>,
    /// The formats to write there, in the order given.
    pub formats: Vec<Format>,
    /// The summary's style.
    pub style: TerminalStyle,
}

impl Output {
    /// The formats `--format` names, each once in the order given
    /// (default: json, junit, markdown and html).
    pub fn new(report_dir: Option<PathBuf>, format: Option<&[FormatName]>, color: Color) -> Output {
        let mut formats = Vec::new();
        let named = format.map(|names| names.iter().map(|n| n.report_format()).collect::<Vec<_>>());
        for f in named.unwrap_or_else(|| DEFAULT_FORMATS.to_vec()) {
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        Output {
            report_dir,
            formats,
            style: color.style(),
        }
    }

    /// Prints the summary, writes the reports, and returns the exit code the
    /// verdicts call for (3 when a report cannot be written).
    pub fn finish(&self, report: &Report, shard: Option<&Shard>) -> i32 {
        let mut stdout = std::io::stdout().lock();
        let printed = match shard {
            Some(shard) => lostreply_reports::terminal::write_shard_summary(
                &mut stdout,
                report,
                shard,
                self.style,
            ),
            None => lostreply_reports::terminal::write_summary(&mut stdout, report, self.style),
        };
        if let Err(e) = printed {
            eprintln!("lostreply: cannot write the summary: {e}");
        }
        let _ = stdout.flush();
        drop(stdout);
        if let Some(dir) = &self.report_dir {
            if let Err(e) = write_reports(dir, &self.formats, report, shard) {
                eprintln!("lostreply: {e}");
                return exit::ADAPTER_OR_INFRA;
            }
            println!("reports written to {}", dir.display());
        }
        exit::for_report(report)
    }
}

/// A report file, or the directory it goes in, that could not be written
/// (exit code 3: the run itself was judged, only its record failed).
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}: {source}", path.display())]
struct WriteReportError {
    /// The directory or file.
    path: PathBuf,
    /// What was being done to it.
    action: WriteAction,
    /// Why it failed.
    #[source]
    source: io::Error,
}

/// What writing a report was doing when it failed, as the message says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteAction {
    /// Creating the report directory or a report file.
    Create,
    /// Writing a report into its file.
    Write,
}

impl fmt::Display for WriteAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteAction::Create => "create",
            WriteAction::Write => "write",
        })
    }
}

/// Writes the report in each format into `dir`, created if missing.
fn write_reports(
    dir: &Path,
    formats: &[Format],
    report: &Report,
    shard: Option<&Shard>,
) -> Result<(), WriteReportError> {
    let failed = |path: &Path, action, source| WriteReportError {
        path: path.to_path_buf(),
        action,
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, WriteAction::Create, e))?;
    for format in formats {
        let path = dir.join(format!("lostreply.{}", format.extension()));
        let file =
            std::fs::File::create(&path).map_err(|e| failed(&path, WriteAction::Create, e))?;
        let mut w = std::io::BufWriter::new(file);
        match shard {
            Some(shard) => lostreply_reports::write_shard(*format, &mut w, report, shard),
            None => lostreply_reports::write(*format, &mut w, report),
        }
        .and_then(|()| w.flush())
        .map_err(|e| failed(&path, WriteAction::Write, e))?;
    }
    Ok(())
}

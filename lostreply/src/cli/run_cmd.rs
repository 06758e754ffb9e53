//! `lostreply run`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use lostreply_reports::terminal::TerminalStyle;
use lostreply_reports::Format;

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::exit;
use lostreply_harness::scenario::select::load_or_builtin;
use lostreply_harness::seed::DEFAULT_SEED;
use lostreply_harness::suite::{run_suite, RunOptions};

#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// A process adapter: the command line, run once per call with the call name appended.
    #[arg(long, value_name = "CMD ARGS", conflicts_with = "builtin")]
    adapter: Option<String>,
    /// A bundled in-process adapter (default: reference).
    #[arg(long, value_name = "NAME")]
    builtin: Option<String>,
    /// The run's seed: the same seed gives the same run.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Only scenarios with this tag (repeatable: any of them). `lost-response` selects the ten cases.
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// How many scenarios run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Write reports into this directory.
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,
    /// Report formats to write with --report-dir (comma-separated): json, junit, markdown, html [default: all four].
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        requires = "report_dir"
    )]
    format: Option<Vec<String>>,
    /// Colour in the terminal summary.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Scenario files or directories (default: the built-in library).
    paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

pub(super) async fn run(args: RunArgs) -> i32 {
    let adapter = match (&args.adapter, &args.builtin) {
        (Some(line), _) => match ProcessCommand::parse(line) {
            Ok(c) => AdapterUnderTest::Process(c),
            Err(e) => return usage(&format!("--adapter: {e}")),
        },
        (None, name) => {
            let name = name.as_deref().unwrap_or("reference");
            match crate::bundled::adapter(name) {
                Some(f) => AdapterUnderTest::InProcess(Arc::clone(&f)),
                None => {
                    return usage(&format!(
                        "--builtin {name}: no such adapter (bundled: {})",
                        crate::bundled::ADAPTERS.join(", ")
                    ))
                }
            }
        }
    };
    let mut formats = Vec::new();
    let default_formats: Vec<String> = ["json", "junit", "markdown", "html"]
        .map(str::to_owned)
        .to_vec();
    let names: &[String] = match &args.format {
        Some(names) => names,
        None => &default_formats,
    };
    for name in names {
        match Format::parse(name.trim()) {
            Ok(f) => formats.push(f),
            Err(e) => return usage(&format!("--format: {e}")),
        }
    }
    if args.jobs == Some(0) {
        return usage("--jobs must be at least 1");
    }
    let mut scenarios = match load_or_builtin(&args.paths) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    if !args.tags.is_empty() {
        scenarios.retain(|s| s.tags.iter().any(|t| args.tags.contains(t)));
        if scenarios.is_empty() {
            return usage(&format!("no scenario has any of the tags {:?}", args.tags));
        }
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let options = RunOptions {
        adapter,
        seed: args.seed,
        jobs,
        command_prefix: "lostreply run".to_owned(),
    };
    let style = TerminalStyle {
        color: match args.color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        },
    };
    let progress = Progress::new(scenarios.len());
    let report = run_suite(&scenarios, &options, |s| progress.finished(s, style)).await;
    progress.clear();

    let mut stdout = std::io::stdout().lock();
    if let Err(e) = lostreply_reports::terminal::write_summary(&mut stdout, &report, style) {
        eprintln!("lostreply: cannot write the summary: {e}");
    }
    let _ = stdout.flush();
    if let Some(dir) = &args.report_dir {
        if let Err(e) = write_reports(dir, &formats, &report) {
            eprintln!("lostreply: {e}");
            return exit::ADAPTER_OR_INFRA;
        }
        println!("reports written to {}", dir.display());
    }
    exit::for_report(&report)
}

fn usage(message: &str) -> i32 {
    eprintln!("lostreply run: {message}");
    exit::BAD_INPUT
}

fn write_reports(
    dir: &std::path::Path,
    formats: &[Format],
    report: &lostreply_reports::model::Report,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for format in formats {
        let path = dir.join(format!("lostreply.{}", format.extension()));
        let file = std::fs::File::create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut w = std::io::BufWriter::new(file);
        lostreply_reports::write(*format, &mut w, report)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        w.flush()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// A progress bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} scenarios {elapsed}")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar }
    }

    fn finished(&self, scenario: &lostreply_reports::model::ScenarioReport, style: TerminalStyle) {
        let mut line = Vec::new();
        if lostreply_reports::terminal::write_progress_line(&mut line, scenario, style).is_err() {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        match &self.bar {
            Some(bar) => {
                bar.println(text.trim_end());
                bar.inc(1);
            }
            None => {
                print!("{text}");
            }
        }
    }

    fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

//! `lostreply run`.

use std::io::IsTerminal;
use std::sync::Arc;

use clap::Args;
use lostreply_reports::terminal::TerminalStyle;

use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::exit;
use lostreply_harness::seed::DEFAULT_SEED;
use lostreply_harness::suite::{run_suite, RunOptions};

use super::output::{Color, Output, ReportFiles};
use super::select::{SelectArgs, Selection};

#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// A process adapter: the command line, run once per call with the call name appended.
    #[arg(long, value_name = "CMD ARGS", conflicts_with = "builtin")]
    adapter: Option<String>,
    /// With --adapter: the persistent form (adapter-protocol.md): `CMD serve`
    /// stays up for the scenario run and answers one JSON line per call.
    #[arg(long, requires = "adapter")]
    persistent: bool,
    /// A bundled in-process adapter (default: reference).
    #[arg(long, value_name = "NAME")]
    builtin: Option<String>,
    /// The run's seed: the same seed gives the same run.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    #[command(flatten)]
    select: SelectArgs,
    /// How many scenarios run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    #[command(flatten)]
    report: ReportFiles,
    /// Colour in the terminal summary.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// A real service behind lostreply's proxy instead of the simulator
    /// (docs/proxy.md): http://host:port or https://host:port. The scenarios
    /// the proxy can stage run one at a time; the invariants are judged from
    /// the contract's read-back and the proxy's journal.
    #[arg(long, value_name = "URL", requires = "contract")]
    upstream: Option<String>,
    /// With --upstream: the service's contract (docs/certify.md): its allowed
    /// hosts, credential and key headers, and the read-back that counts effects.
    #[arg(long, value_name = "FILE", requires = "upstream")]
    contract: Option<std::path::PathBuf>,
    /// With --upstream https://: trust the CAs in this PEM file instead of the system's roots.
    #[arg(long, value_name = "FILE", requires = "upstream")]
    ca_cert: Option<std::path::PathBuf>,
}

pub(super) async fn run(args: RunArgs) -> i32 {
    let adapter = match adapter_under_test(
        args.adapter.as_deref(),
        args.persistent,
        args.builtin.as_deref(),
    ) {
        Ok(adapter) => adapter,
        Err(message) => return usage(&message),
    };
    let output = Output::new(
        args.report.report_dir.clone(),
        args.report.format.as_deref(),
        args.color,
    );
    if args.jobs == Some(0) {
        return usage("--jobs must be at least 1");
    }
    if args.upstream.is_some() {
        let given = super::upstream_cmd::Given {
            upstream: args.upstream.clone().unwrap_or_default(),
            contract: args.contract.clone().unwrap_or_default(),
            ca_cert: args.ca_cert.clone(),
            seed: args.seed,
        };
        return super::upstream_cmd::run_upstream(given, &args.select, adapter, &output).await;
    }
    let Selection {
        scenarios,
        shard,
        left_out_note,
        ..
    } = match args.select.select() {
        Ok(s) => s,
        Err(e) => return e.report("lostreply run"),
    };
    if let Some(note) = left_out_note {
        eprintln!("lostreply run: {note}");
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    // The reproduce command names the scenario's file and the seed, never the
    // shard: a scenario's seed depends on the run seed and its id only.
    // Memory freed while a large run is checked goes back to the system
    // (see `allocator`; this binary's allocator is mimalloc).
    let options = RunOptions::new(adapter)
        .seed(args.seed)
        .jobs(jobs)
        .phase_hook(crate::allocator::give_back_after);
    let progress = Progress::new(scenarios.len());
    let report = run_suite(&scenarios, &options, |s| progress.finished(s, output.style)).await;
    progress.clear();
    output.finish(&report, shard.as_ref())
}

/// The adapter `--adapter CMD [--persistent]` or `--builtin NAME` names
/// (default: the bundled reference), or what is wrong with the flags.
pub(super) fn adapter_under_test(
    command: Option<&str>,
    persistent: bool,
    builtin: Option<&str>,
) -> Result<AdapterUnderTest, String> {
    if let Some(line) = command {
        return AdapterUnderTest::from_command_line(line, persistent)
            .map_err(|e| format!("--adapter: {e}"));
    }
    let name = builtin.unwrap_or("reference");
    crate::bundled::adapter(name)
        .map(|f| AdapterUnderTest::InProcess(Arc::clone(&f)))
        .ok_or_else(|| {
            format!(
                "--builtin {name}: no such adapter (bundled: {})",
                crate::bundled::names().join(", ")
            )
        })
}

fn usage(message: &str) -> i32 {
    eprintln!("lostreply run: {message}");
    exit::BAD_INPUT
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

//! `lostreply validate [--prove]`: scenario and profile files checked
//! without running them, then, with `--prove`, run against the bundled
//! designs to show whether each scenario is fair (`lostreply_examples::prove`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use lostreply_examples::prove::{self, Config, Phase, Progress};
use lostreply_harness::exit;
use lostreply_harness::scenario::model::Scenario;

use super::profile_cmd;

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 every file valid, 2 a file invalid (file:line:column on stderr).\n\
                  With --prove: 0 every scenario sound; 1 a scenario impossible or design-bound; \
                  2 also a file invalid (nothing runs), or, when none is unsound, a scenario not judged \
                  for its provider.profile; 3 the harness failed on a run."
)]
pub(super) struct ValidateArgs {
    /// Scenario or profile files, or directories of them (a profile file has a top-level
    /// `resources:` or `routes:` and no `steps:`).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Also run each scenario against the bundled correct designs, then the flawed ones: exit 1
    /// when a file is impossible (fails every correct design) or design-bound (fails some);
    /// for a sound file, which flaws it catches. A file with a provider.profile other than
    /// generic cannot be judged: exit 2 unless another file exits 1.
    #[arg(long)]
    prove: bool,
    /// With --prove: every design runs on seeds 1..=N.
    #[arg(
        long,
        value_name = "N",
        requires = "prove",
        default_value_t = prove::DEFAULT_SEEDS,
        value_parser = clap::value_parser!(u64).range(1..=prove::MAX_SEEDS)
    )]
    seeds: u64,
    /// With --prove: how many runs at once (default: 4 per CPU; at most 64).
    #[arg(
        long,
        value_name = "N",
        requires = "prove",
        value_parser = clap::value_parser!(u64).range(1..=prove::MAX_JOBS as u64)
    )]
    jobs: Option<u64>,
    /// With --prove: the proof as text, or as one JSON document on stdout
    /// (the validation's `ok` lines then go to stderr).
    #[arg(long, value_enum, default_value_t = ProveFormat::Text, requires = "prove")]
    format: ProveFormat,
}

/// `--format` of `validate --prove`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProveFormat {
    Text,
    Json,
}

/// Runs per CPU by default: most of a run waits on a socket or a client
/// timeout, and more than this starves a race's partner on a small machine.
const JOBS_PER_CPU: usize = 4;

pub(super) async fn validate(args: ValidateArgs) -> i32 {
    let mut ok_lines: Box<dyn Write> = match (args.prove, args.format) {
        (true, ProveFormat::Json) => Box::new(std::io::stderr()),
        (_, ProveFormat::Text) | (false, ProveFormat::Json) => Box::new(std::io::stdout()),
    };
    let split = match profile_cmd::split(&args.paths) {
        Ok(split) => split,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let code = profile_cmd::validate_profiles(&split.profiles, ok_lines.as_mut());
    if split.scenarios.is_empty() {
        if args.prove && code == exit::OK {
            eprintln!("lostreply validate --prove: no scenario file among the paths");
            return exit::BAD_INPUT;
        }
        return code;
    }
    let scenarios = match lostreply_harness::scenario::select::load_paths(&split.scenarios) {
        Ok(scenarios) => scenarios,
        Err(message) => {
            eprintln!("{message}");
            return exit::BAD_INPUT;
        }
    };
    for s in &scenarios {
        let _ = writeln!(
            ok_lines,
            "ok  {}  ({}, {} steps)",
            s.path,
            s.id,
            s.steps.len()
        );
    }
    if code != exit::OK || !args.prove {
        return code;
    }
    drop(ok_lines);
    let jobs = args.jobs.map_or_else(default_jobs, |n| n as usize);
    run_proof(&scenarios, args.seeds, jobs, args.format).await
}

fn default_jobs() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus * JOBS_PER_CPU).min(prove::MAX_JOBS)
}

async fn run_proof(scenarios: &[Scenario], seeds: u64, jobs: usize, format: ProveFormat) -> i32 {
    eprintln!(
        "lostreply validate --prove: {} against the correct designs on seeds 1..={seeds}, \
         then the sound ones against the flawed adapters ({jobs} runs at once)",
        match scenarios.len() {
            1 => "1 scenario".to_owned(),
            n => format!("{n} scenarios"),
        }
    );
    let bar = ProgressBar::new();
    let proof = prove::prove(scenarios, Config { seeds, jobs }, |p| bar.show(p)).await;
    bar.clear();
    let mut out = std::io::stdout().lock();
    let written = match format {
        ProveFormat::Text => {
            let _ = writeln!(out);
            prove::write::write_text(&mut out, &proof)
        }
        ProveFormat::Json => prove::write::write_json(&mut out, &proof),
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => proof.exit_code(),
        Err(e) => {
            eprintln!("lostreply validate --prove: cannot write the proof: {e}");
            exit::ADAPTER_OR_INFRA
        }
    }
}

/// The runs' progress on a terminal; nothing otherwise (a log gets the proof).
struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar {
    fn new() -> ProgressBar {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} {elapsed}")
            {
                bar.set_style(style);
            }
            bar
        });
        ProgressBar { bar }
    }

    fn show(&self, progress: Progress) {
        let Some(bar) = &self.bar else { return };
        bar.set_length(progress.total as u64);
        bar.set_position(progress.done as u64);
        bar.set_message(match progress.phase {
            Phase::Correct => "runs of the correct designs",
            Phase::Confirm => "failures of correct designs run again, alone",
            Phase::Flawed => "runs of the flawed adapters",
        });
    }

    fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

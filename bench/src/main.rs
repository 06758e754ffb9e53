//! `lostreply-bench`: flags in, a validated `Config`, the run. See docs/benchmarks.md.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use lostreply_bench::cost;
use lostreply_bench::explore::ExploreProfileRun;
use lostreply_bench::figures::Out;
use lostreply_bench::soak::Webhooks;
use lostreply_bench::suite::{self, Config, Part};
use lostreply_explore::shape::Profile;
use lostreply_harness::driver::AdapterUnderTest;

// No `#[global_allocator]` here, on purpose: the simulator, bare hyper and
// wiremock are compared under the allocator a user's own test binary has
// (the system's). The cost children, which measure what `lostreply run`
// does, are a binary of their own with that binary's allocator
// (`lostreply-bench-cost`, src/cost_main.rs).

/// Benchmarks the simulator against bare hyper and wiremock, and the harness's
/// checking and reporting as observations grow. Prints a table per part and one
/// JSON line per figure (lines starting with `{"bench":`).
#[derive(Debug, Parser)]
#[command(name = "lostreply-bench", version)]
struct Args {
    /// Parts to run, comma-separated: ok, profile, drop, reset, check, cases, serve (alias: memory), explore,
    /// soak. Default: all but soak, which runs only when named.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    only: Vec<String>,
    /// A very short smoke run (short windows, small sizes, one run per case set).
    #[arg(long)]
    quick: bool,
    /// Client connections per point.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,16,64"
    )]
    connections: Vec<usize>,
    /// Measured window per point, ms (default 2000; --quick 200).
    #[arg(long, value_name = "MS")]
    measure_ms: Option<u64>,
    /// Warm-up per point, ms (default 500; --quick 50).
    #[arg(long, value_name = "MS")]
    warmup_ms: Option<u64>,
    /// Synthetic observation sizes, operations (default 1000,2000,10000,100000,1000000: 2000 gives a growth
    /// exponent even when 10000 exceeds the budget; --quick 1000).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Every Nth synthetic operation is created twice, so checks find violations.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    duplicate_every: usize,
    /// Longest one (phase, size) may run before it is killed and larger sizes skipped, s (default 25; --quick 5).
    #[arg(long, value_name = "S")]
    cost_budget_s: Option<u64>,
    /// Timed runs of the case set with the in-process reference adapter (default 5; --quick 1).
    #[arg(long, value_name = "N")]
    runs: Option<usize>,
    /// Timed runs of the case set with the Python adapter, a process per call (default 3; --quick 1).
    #[arg(long, value_name = "N")]
    python_runs: Option<usize>,
    /// Scenarios at once in a case run (default: the number of CPUs, as `lostreply run`).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Load the scenarios from this directory instead of the built-in library.
    #[arg(long, value_name = "DIR")]
    scenario_dir: Option<PathBuf>,
    /// The Python adapter (default: examples/python/lostreply_adapter.py in this workspace).
    #[arg(long, value_name = "PATH")]
    python_adapter: Option<PathBuf>,
    /// The release `lostreply` binary (default: next to this binary).
    #[arg(long, value_name = "PATH")]
    lostreply: Option<PathBuf>,
    /// Situations the explore part times against the in-process reference (default 1000; --quick 200).
    #[arg(long, value_name = "N")]
    explore_situations: Option<u64>,
    /// MCP situations the explore part times against the in-process reference's MCP side
    /// (default 1000; --quick 50).
    #[arg(long, value_name = "N")]
    explore_mcp_situations: Option<u64>,
    /// The explore part also times a provider profile's wire (stripe, openai, anthropic) against
    /// --explore-adapter.
    #[arg(long, value_name = "NAME", requires = "explore_adapter")]
    explore_profile: Option<Profile>,
    /// With --explore-profile: a process adapter on that provider's SDK, run persistent
    /// (`CMD serve`), as `lostreply explore --adapter CMD --persistent` runs it.
    #[arg(long, value_name = "CMD", requires = "explore_profile", value_parser = persistent_adapter)]
    explore_adapter: Option<AdapterUnderTest>,
    /// Situations the explore part times on --explore-profile's wire (default 100; --quick 20).
    #[arg(long, value_name = "N")]
    explore_profile_situations: Option<u64>,
    /// Checkpoints (cumulative creates) of the loaded `lostreply serve`
    /// measurement, memory read at each (default 100000,300000,1000000; --quick 1000).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    serve_creates: Vec<u64>,
    /// How long the soak's clients run (e.g. 10m, 30s).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = soak_duration)]
    soak_duration: Duration,
    /// Webhooks in the soak: on (events made, a sample delivered and verified on loopback) or off (no events).
    #[arg(long, value_name = "ON|OFF", value_enum, default_value = "on")]
    soak_webhooks: Webhooks,
}

/// `--soak-duration`: humantime's forms, from a second to a day.
fn soak_duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text).map_err(|e| format!("{e} (examples: 10m, 30s)"))?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(24 * 3600) {
        return Err("from 1s to 24h".to_owned());
    }
    Ok(d)
}

/// `--explore-adapter`: the command line, split as `lostreply explore --adapter` splits it.
fn persistent_adapter(line: &str) -> Result<AdapterUnderTest, String> {
    AdapterUnderTest::from_command_line(line, true).map_err(|e| e.to_string())
}

/// The exit status of a flag the bench cannot use, whether clap or `config`
/// refuses it: 2, as clap's own usage errors and `lostreply`'s bad input.
const BAD_FLAGS: i32 = 2;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config = match config(&args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("lostreply-bench: {e:#}");
            std::process::exit(BAD_FLAGS);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let mut out = Out::new(Box::new(std::io::stdout()));
    if !runtime.block_on(suite::run(&config, &mut out)) {
        // A verdict, not an error of the bench: no backtrace.
        eprintln!("lostreply-bench: a check failed (see the soak's checks above)");
        std::process::exit(1);
    }
    Ok(())
}

/// The profile run, when both of its flags are given (clap refuses one without the other).
fn explore_profile(args: &Args, quick: bool) -> Option<ExploreProfileRun> {
    let profile = args.explore_profile?;
    let adapter = args.explore_adapter.clone()?;
    let situations = args
        .explore_profile_situations
        .unwrap_or(if quick { 20 } else { 100 })
        .max(1);
    Some(ExploreProfileRun {
        profile,
        adapter,
        situations,
    })
}

fn config(args: &Args) -> anyhow::Result<Config> {
    let parts: BTreeSet<Part> = if args.only.is_empty() {
        Part::ALL.into_iter().collect()
    } else {
        let mut parts = BTreeSet::new();
        for name in &args.only {
            match Part::from_name(name) {
                Some(p) => {
                    parts.insert(p);
                }
                None => bail!(
                    "--only {name}: unknown part (ok, profile, drop, reset, check, cases, serve or memory, explore, soak)"
                ),
            }
        }
        parts
    };
    if args.connections.is_empty()
        || args.connections.contains(&0)
        || args.connections.iter().any(|&c| c > 1000)
    {
        bail!("--connections: each must be 1..=1000 (the simulator serves at most 1024 at once)");
    }
    let quick = args.quick;
    let pick = |given: Option<u64>, full: u64, smoke: u64| {
        given.unwrap_or(if quick { smoke } else { full })
    };
    let measure_ms = pick(args.measure_ms, 2000, 200);
    if measure_ms == 0 {
        bail!("--measure-ms must be at least 1");
    }
    let sizes = if args.sizes.is_empty() {
        if quick {
            vec![1000]
        } else {
            vec![1000, 2000, 10_000, 100_000, 1_000_000]
        }
    } else {
        args.sizes.clone()
    };
    if sizes.iter().any(|&n| n == 0 || n > 10_000_000) {
        bail!("--sizes: each must be 1..=10000000 operations");
    }
    let runs = args.runs.unwrap_or(if quick { 1 } else { 5 });
    let python_runs = args.python_runs.unwrap_or(if quick { 1 } else { 3 });
    if runs == 0 || runs > 100 || python_runs == 0 || python_runs > 100 {
        bail!("--runs and --python-runs must be 1..=100");
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let exe = std::env::current_exe().context("cannot find this binary")?;
    let cost_bin = exe.with_file_name(cost::CHILD_BINARY);
    let lostreply_bin = match &args.lostreply {
        Some(p) => p.clone(),
        None => exe.with_file_name("lostreply"),
    };
    let python_adapter = match &args.python_adapter {
        Some(p) => p.clone(),
        None => {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../examples/python/lostreply_adapter.py");
            // Shown in tables: without the `bench/..` detour when it exists.
            path.canonicalize().unwrap_or(path)
        }
    };
    Ok(Config {
        parts,
        connections: args.connections.clone(),
        warmup: Duration::from_millis(pick(args.warmup_ms, 500, 50)),
        measure: Duration::from_millis(measure_ms),
        sizes,
        duplicate_every: args.duplicate_every,
        cost_budget: Duration::from_secs(pick(args.cost_budget_s, 25, 5).max(1)),
        cost_bin,
        case_runs: runs,
        python_runs,
        jobs,
        scenario_dir: args.scenario_dir.clone(),
        python_adapter,
        lostreply_bin,
        explore_situations: pick(args.explore_situations, 1000, 200).max(1),
        explore_mcp_situations: pick(args.explore_mcp_situations, 1000, 50).max(1),
        explore_profile: explore_profile(args, quick),
        serve_creates: if !args.serve_creates.is_empty() {
            args.serve_creates.clone()
        } else if args.quick {
            vec![1000]
        } else {
            vec![100_000, 300_000, 1_000_000]
        },
        soak_duration: args.soak_duration,
        soak_webhooks: args.soak_webhooks,
    })
}

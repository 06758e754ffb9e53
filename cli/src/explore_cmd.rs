//! `lostreply explore`: generated situations run against an adapter and
//! judged by the invariants and the protocol's rules alone (never a
//! writer's expectations); each violation found is shrunk and
//! written as a scenario file with the command that reruns it.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use lostreply_explore::search::{self, explore, Budget, ExploreOptions, Explored};
use lostreply_explore::shape::Profile;
use lostreply_explore::space::{Space, Wire};
use lostreply_explore::tag::Tag;
use lostreply_explore::write::write_all;
use lostreply_harness::exit;
use lostreply_harness::seed::DEFAULT_SEED;
use lostreply_harness::suite::RunOptions;
use lostreply_reports::model::AdapterInfo;

use super::select::ShardSpec;

const COMMAND: &str = "lostreply explore";

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 nothing found; 1 a violation found (each written to --out with the command that reruns it); 2 bad input; 3 the harness failed on runs and nothing was found."
)]
pub(super) struct ExploreArgs {
    /// A process adapter: the command line, run once per call with the call name appended.
    #[arg(long, value_name = "CMD ARGS", conflicts_with = "builtin")]
    adapter: Option<String>,
    /// With --adapter: the persistent form (`CMD serve`, one JSON line per call).
    #[arg(long, requires = "adapter")]
    persistent: bool,
    /// A bundled in-process adapter (default: reference).
    #[arg(long, value_name = "NAME")]
    builtin: Option<String>,
    /// How much to explore: a duration (`60s`, `10m`) or a number of situations
    /// (`2000`: the same seed then gives the same findings).
    #[arg(long, default_value = "60s", value_name = "DURATION|N")]
    budget: String,
    /// The seed situations are drawn from.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Situations run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Only shard K of N of the situations (situation i when i mod N is K - 1).
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Draw situations on a built-in provider profile's wire (stripe, openai,
    /// anthropic), for an adapter built on that provider's SDK (--adapter).
    #[arg(long, value_name = "NAME", conflicts_with = "mcp")]
    profile: Option<String>,
    /// Draw situations of paid tools called over the simulator's MCP server.
    #[arg(long)]
    mcp: bool,
    /// Only situations carrying this tag (repeatable, comma-separated; every
    /// one given must hold): `drop`, `webhooks`, `no-keys`... (docs/explore.md).
    #[arg(long, value_name = "TAG", value_delimiter = ',')]
    tag: Vec<String>,
    /// Where the findings go: one scenario file and one HTML page per
    /// invariant or rule broken, and explore.json.
    #[arg(long, default_value = "lostreply-explore", value_name = "DIR")]
    out: PathBuf,
}

fn usage(message: &str) -> i32 {
    eprintln!("{COMMAND}: {message}");
    exit::BAD_INPUT
}

/// `60s` or `2000`.
fn budget(raw: &str) -> Result<Budget, String> {
    if let Ok(n) = raw.parse::<u64>() {
        return if n == 0 {
            Err("--budget 0: explore at least one situation".to_owned())
        } else {
            Ok(Budget::Situations(n))
        };
    }
    humantime::parse_duration(raw)
        .map(Budget::Time)
        .map_err(|e| {
            format!("--budget {raw:?}: a duration (60s, 10m) or a number of situations: {e}")
        })
}

/// The wire and the tags asked for.
fn space(args: &ExploreArgs) -> Result<Space, String> {
    let wire = match (&args.profile, args.mcp) {
        (Some(name), _) => {
            let profile = name
                .parse::<Profile>()
                .map_err(|e| format!("--profile {name:?}: {e}"))?;
            if args.adapter.is_none() {
                return Err(format!(
                    "--profile {name} needs --adapter: the bundled adapters speak the generic API \
                     only (examples/sdk-adapters has adapters on the providers' SDKs)"
                ));
            }
            Wire::Profile(profile)
        }
        (None, true) => Wire::Mcp,
        (None, false) => Wire::Generic,
    };
    let tags = args
        .tag
        .iter()
        .map(|name| {
            Tag::from_name(name.trim()).ok_or_else(|| {
                format!(
                    "--tag {name:?}: not a tag explore knows; its tags: {}",
                    Tag::names()
                )
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Space { wire, tags })
}

pub(super) async fn explore_cmd(args: ExploreArgs) -> i32 {
    let adapter = match super::run_cmd::adapter_under_test(
        args.adapter.as_deref(),
        args.persistent,
        args.builtin.as_deref(),
    ) {
        Ok(adapter) => adapter,
        Err(message) => return usage(&message),
    };
    let budget = match budget(&args.budget) {
        Ok(b) => b,
        Err(message) => return usage(&message),
    };
    if args.jobs == Some(0) {
        return usage("--jobs must be at least 1");
    }
    let shard = match args.shard.as_deref().map(ShardSpec::parse) {
        None => None,
        Some(Ok(s)) => Some((u64::from(s.index), u64::from(s.total))),
        Some(Err(e)) => return usage(&e.to_string()),
    };
    let space = match space(&args) {
        Ok(space) => space,
        Err(message) => return usage(&message),
    };
    if search::tree_for(&space, args.seed, 0).is_none() {
        return usage(&format!(
            "no situation of the grammar carries every tag of --tag {} ({} draws): see docs/explore.md, \"Tags\"",
            args.tag.join(","),
            search::MAX_DRAWS
        ));
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let info = AdapterInfo::builder()
        .name(adapter.display_name())
        .kind(adapter.kind())
        .build();
    let flags = adapter.cli_flags();
    let options = ExploreOptions {
        run: RunOptions::new(adapter).seed(args.seed),
        budget,
        jobs,
        shard,
        space,
    };
    eprintln!(
        "{COMMAND}: {} against {}, seed {}, {jobs} at a time",
        match budget {
            Budget::Situations(n) => format!("{n} situations"),
            Budget::Time(d) => format!("{} of situations", humantime::format_duration(d)),
        },
        info.name,
        args.seed
    );
    let explored = explore(&options, |f| {
        eprintln!(
            "{COMMAND}: found {} in situation {}, shrunk in {} runs to {} steps",
            f.broken.label(),
            f.index,
            f.shrink_runs,
            f.shrunk.steps.len()
        );
    })
    .await;
    let written = match write_all(&args.out, &explored, args.seed, &info, &flags) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{COMMAND}: cannot write to {}: {e}", args.out.display());
            return exit::ADAPTER_OR_INFRA;
        }
    };
    print_summary(&explored, &written, &args.out);
    if !explored.findings.is_empty() {
        exit::VIOLATION
    } else if explored.infra_errors > 0 || explored.invalid > 0 {
        exit::ADAPTER_OR_INFRA
    } else {
        exit::OK
    }
}

fn print_summary(explored: &Explored, written: &[(PathBuf, String)], out: &std::path::Path) {
    let minutes = explored.elapsed.as_secs_f64() / 60.0;
    let rate = if minutes > 0.0 {
        explored.situations as f64 / minutes
    } else {
        0.0
    };
    println!(
        "{} situations in {} ({rate:.0} a minute): {} findings, {} adapter errors, {} harness errors, {} invalid",
        explored.situations,
        humantime::format_duration(Duration::from_millis(explored.elapsed.as_millis() as u64)),
        explored.findings.len(),
        explored.adapter_errors,
        explored.infra_errors,
        explored.invalid
    );
    for (f, (file, command)) in explored.findings.iter().zip(written) {
        println!(
            "FOUND {}: {}\n  {} ({} steps)\n  rerun: {command}",
            f.broken.label(),
            f.message,
            file.display(),
            f.shrunk.steps.len()
        );
    }
    println!(
        "space explored (situations with each feature): {}",
        out.join("explore.json").display()
    );
}

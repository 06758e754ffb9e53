//! `lostreply-bench-cost`: one (phase, size) of the benchmark's cost growth,
//! in a process of its own (see bench/src/cost.rs). `lostreply-bench` starts
//! it; by hand it prints the same JSON lines:
//!
//! ```sh
//! ./target/release/lostreply-bench-cost --phase pipeline --ops 1000000 --duplicate-every 1000
//! ```

use std::path::PathBuf;

use clap::Parser;
use lostreply_bench::cost::{self, Phase};
use lostreply_bench::synthetic::SyntheticSpec;

// The `lostreply` binary's allocator, so that these figures are what
// `lostreply run` spends (see the workspace Cargo.toml for why it is mimalloc).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Builds a synthetic observation, then checks and reports it as the phase
/// says, printing one JSON line per step.
#[derive(Debug, Parser)]
#[command(name = "lostreply-bench-cost", version)]
struct Args {
    /// check, report or pipeline.
    #[arg(long)]
    phase: String,
    /// Operations in the synthetic observation.
    #[arg(long)]
    ops: usize,
    /// Every nth operation is created twice (0: never).
    #[arg(long, default_value_t = 1000)]
    duplicate_every: usize,
    /// Report phase: check too, and write the JSON report (with the violations) to this file;
    /// pipeline phase: write its JSON report there instead of only counting its bytes.
    #[arg(long)]
    json_out: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    // A phase that does not exist is bad usage, as clap's own errors are (exit 2).
    let Some(phase) = Phase::from_name(&args.phase) else {
        let names = Phase::ALL.map(Phase::name).join(", ");
        eprintln!("error: --phase {}: expected one of {names}", args.phase);
        return std::process::ExitCode::from(2);
    };
    let mut stdout = std::io::stdout().lock();
    let ran = cost::run_child(
        phase,
        SyntheticSpec {
            operations: args.ops,
            duplicate_every: args.duplicate_every,
        },
        args.json_out.as_deref(),
        &mut stdout,
    );
    match ran {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

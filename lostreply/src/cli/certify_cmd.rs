//! `lostreply certify`: vendor certification of an idempotency contract from
//! the outside (see docs/certify.md). `--simulator MODE` certifies a fresh
//! built-in simulator with the shipped contract: the worked example.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::output::ReportFiles;
use clap::Args;
use lostreply_certify::write::{self, Format};
use lostreply_certify::{certify, contract, simulator, Config};
use lostreply_harness::exit;
use lostreply_simulator::IdempotencyMode;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true).args(["contract", "simulator", "schema"])))]
pub(super) struct CertifyArgs {
    /// The contract file (YAML; see docs/certify.md).
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
    /// Certify a fresh built-in simulator in this idempotency mode (with its shipped contract unless --contract is given).
    #[arg(long, value_name = "MODE")]
    simulator: Option<String>,
    #[command(flatten)]
    report: ReportFiles,
    /// Run only these probes (comma-separated).
    #[arg(long, value_name = "PROBE,...", value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// At most this many requests (never more than the contract's own budget).
    #[arg(long, value_name = "N")]
    budget: Option<u32>,
    /// Seed of markers and keys (default: from the clock, printed, so a run can be reproduced).
    #[arg(long)]
    seed: Option<u64>,
    /// Print the JSON Schema of the contract format and exit.
    #[arg(long)]
    schema: bool,
}

fn usage(message: &str) -> i32 {
    eprintln!("lostreply certify: {message}");
    exit::BAD_INPUT
}

pub(super) async fn certify_cmd(args: CertifyArgs) -> i32 {
    if args.schema {
        match serde_json::to_string_pretty(&contract::schema()) {
            Ok(text) => {
                println!("{text}");
                return exit::OK;
            }
            Err(e) => {
                eprintln!("lostreply certify: cannot print the schema: {e}");
                return exit::ADAPTER_OR_INFRA;
            }
        }
    }
    let mut formats = Vec::new();
    for name in args
        .report
        .format
        .clone()
        .unwrap_or_else(|| Format::ALL.iter().map(|f| f.name().to_owned()).collect())
    {
        match Format::from_name(name.trim()) {
            Some(f) if !formats.contains(&f) => formats.push(f),
            Some(_) => {}
            None => {
                return usage(&format!(
                    "--format: unknown format {name:?} (json, junit, markdown, html)"
                ))
            }
        }
    }
    let only: Vec<String> = args
        .only
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|s| s.trim().to_owned())
        .collect();
    for name in &only {
        if !lostreply_certify::probes::names().contains(&name.as_str()) {
            return usage(&format!(
                "--only: unknown probe {name:?} (probes: {})",
                lostreply_certify::probes::names().join(", ")
            ));
        }
    }
    if args.budget == Some(0) {
        return usage("--budget must be at least 1");
    }
    let seed = args.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000)
    });
    let mode = match &args.simulator {
        None => None,
        Some(name) => match IdempotencyMode::from_name(name) {
            Some(m) => Some(m),
            None => {
                let names: Vec<&str> = IdempotencyMode::ALL.iter().map(|m| m.name()).collect();
                return usage(&format!(
                    "--simulator {name:?}: unknown mode (one of {})",
                    names.join(", ")
                ));
            }
        },
    };
    let sim = match mode {
        Some(m) => match simulator::start(m, seed).await {
            Ok(sim) => Some(sim),
            Err(e) => {
                eprintln!("lostreply certify: cannot start the simulator: {e}");
                return exit::ADAPTER_OR_INFRA;
            }
        },
        None => None,
    };
    let loaded = match (&args.contract, &sim, mode) {
        (Some(path), Some(sim), _) => {
            let base = sim.base_url();
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) => {
                    return usage(&format!(
                        "{}: cannot read the contract: {e}",
                        path.display()
                    ))
                }
            };
            contract::parse(&text, &path.display().to_string(), &move |name| {
                if name == "LOSTREPLY_CERTIFY_BASE_URL" {
                    Some(base.clone())
                } else {
                    std::env::var(name).ok()
                }
            })
        }
        (Some(path), None, _) => contract::load(path),
        (None, Some(sim), Some(m)) => simulator::contract(m, &sim.base_url()),
        (None, _, _) => return usage("give --contract FILE or --simulator MODE"),
    };
    let contract = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let mut reproduce = String::from("lostreply certify");
    if let Some(m) = &args.simulator {
        reproduce.push_str(&format!(" --simulator {m}"));
    }
    if let Some(p) = &args.contract {
        reproduce.push_str(&format!(" --contract {}", p.display()));
    }
    if !only.is_empty() {
        reproduce.push_str(&format!(" --only {}", only.join(",")));
    }
    reproduce.push_str(&format!(" --seed {seed}"));
    let config = Config {
        only,
        budget: args.budget,
        seed,
        reproduce,
    };
    let result = certify(contract, &config).await;
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    let report = match result {
        Ok(r) => r,
        Err(e) => return usage(&e.to_string()),
    };
    let mut out = std::io::stdout().lock();
    let _ = write::write_terminal(&mut out, &report);
    drop(out);
    if let Some(dir) = &args.report.report_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("lostreply certify: cannot create {}: {e}", dir.display());
            return exit::ADAPTER_OR_INFRA;
        }
        for f in &formats {
            let path = dir.join(f.file_name());
            let written = std::fs::File::create(&path).and_then(|file| {
                let mut w = std::io::BufWriter::new(file);
                f.write(&mut w, &report)?;
                std::io::Write::flush(&mut w)
            });
            if let Err(e) = written {
                eprintln!("lostreply certify: cannot write {}: {e}", path.display());
                return exit::ADAPTER_OR_INFRA;
            }
        }
    }
    report.exit_code()
}

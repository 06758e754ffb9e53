//! `lostreply certify`: vendor certification of an idempotency contract from
//! the outside (see docs/certify.md). `--simulator MODE` certifies a fresh
//! built-in simulator with the shipped contract: the worked example, on the
//! generic API or (`--profile stripe`) on Stripe's wire.
//! MCP servers: `--mcp URL`, a `kind: mcp` contract, or `--mcp-simulator
//! [--mcp-defect NAME ...]` (docs/certify.md, "MCP servers").
//! An `https://` target is certified over TLS, trusting the system's roots
//! or, with `--ca-cert FILE`, only that file's CAs (docs/certify.md, "HTTPS").

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::output::{FormatName, ReportFiles};
use super::values;
use clap::{Args, ValueEnum};
use lostreply_certify::simulator::{self, Wire};
use lostreply_certify::tls::Trust;
use lostreply_certify::write::{self, Format};
use lostreply_certify::{certify_trusting, contract, CertifyError, Config};
use lostreply_harness::exit;
use lostreply_harness::scenario::provider_profile::ProfileChoice;
use lostreply_simulator::mcp::Defect;
use lostreply_simulator::IdempotencyMode;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true).args(["contract", "simulator", "schema", "mcp", "mcp_simulator"])))]
#[command(after_help = mcp_help())]
pub(super) struct CertifyArgs {
    /// The contract file (YAML; see docs/certify.md).
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
    /// Certify a fresh built-in simulator in this idempotency mode (with its shipped contract unless --contract is given).
    #[arg(long, value_name = "MODE", value_parser = values::idempotency_mode(), conflicts_with = "mcp_simulator")]
    simulator: Option<IdempotencyMode>,
    /// With --simulator: the wire the simulator speaks, generic (the default) or stripe (Stripe's
    /// paths, form bodies and statuses, certified with a contract written for that wire).
    #[arg(long, value_name = "NAME", value_parser = ProfileChoice::parse, requires = "simulator")]
    profile: Option<ProfileChoice>,
    /// Certify the MCP server at this Streamable HTTP endpoint (http:// or https://host:port/path): the pre-flight and
    /// design rules, never a paid tool. Credentials from LOSTREPLY_MCP_CREDENTIAL and
    /// LOSTREPLY_MCP_SECOND_CREDENTIAL. For a paid call, use a `kind: mcp` contract.
    #[arg(long, value_name = "URL", conflicts_with_all = ["contract", "simulator", "mcp_simulator"])]
    mcp: Option<String>,
    /// Certify a fresh built-in simulator's MCP face (well-behaved unless --mcp-defect is given), with its
    /// shipped contract unless --contract names a `kind: mcp` one.
    #[arg(long)]
    mcp_simulator: bool,
    /// With --mcp-simulator: make the fake server badly behaved in this way (repeatable, comma-separated).
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        value_parser = values::mcp_defect(),
        requires = "mcp_simulator"
    )]
    mcp_defect: Vec<Defect>,
    #[command(flatten)]
    report: ReportFiles,
    /// Run only these probes (comma-separated).
    #[arg(long, value_name = "PROBE,...", value_delimiter = ',', value_parser = values::probe_name())]
    only: Option<Vec<String>>,
    /// At most this many requests (never more than the contract's own budget).
    #[arg(long, value_name = "N")]
    budget: Option<u32>,
    /// Seed of markers and keys (default: from the clock, printed, so a run can be reproduced).
    #[arg(long)]
    seed: Option<u64>,
    /// For an https:// target: trust the CAs in this PEM file (one or more certificates)
    /// instead of the system's roots.
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
    /// Print the JSON Schema of the contract format and exit.
    #[arg(long)]
    schema: bool,
}

fn usage(message: &str) -> i32 {
    eprintln!("lostreply certify: {message}");
    exit::BAD_INPUT
}

/// The command that runs this certification again, with its seed.
fn reproduce_line(args: &CertifyArgs, wire: simulator::Wire, only: &[String], seed: u64) -> String {
    let mut reproduce = String::from("lostreply certify");
    if let Some(m) = args.simulator {
        reproduce.push_str(&format!(" --simulator {}", m.name()));
    }
    if args.profile.is_some() {
        reproduce.push_str(&format!(" --profile {}", wire.name()));
    }
    if let Some(p) = &args.contract {
        reproduce.push_str(&format!(" --contract {}", p.display()));
    }
    if let Some(p) = &args.ca_cert {
        reproduce.push_str(&format!(" --ca-cert {}", p.display()));
    }
    if !only.is_empty() {
        reproduce.push_str(&format!(" --only {}", only.join(",")));
    }
    reproduce.push_str(&format!(" --seed {seed}"));
    reproduce
}

/// The certification report's formats `--format` names, each once in the
/// order given (default: all of them); a run report's own format (terminal,
/// openmetrics) is bad usage here.
fn certify_formats(names: Option<&[FormatName]>) -> Result<Vec<Format>, String> {
    let Some(names) = names else {
        return Ok(Format::ALL.to_vec());
    };
    let mut formats = Vec::new();
    for name in names {
        let format = match name {
            FormatName::Json => Format::Json,
            FormatName::Junit => Format::Junit,
            FormatName::Markdown => Format::Markdown,
            FormatName::Html => Format::Html,
            FormatName::Terminal | FormatName::OpenMetrics => {
                let value = name.to_possible_value();
                let shown = value.as_ref().map_or("", |v| v.get_name());
                return Err(format!(
                    "--format: certify writes json, junit, markdown or html, not {shown}"
                ));
            }
        };
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    Ok(formats)
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
    let formats = match certify_formats(args.report.format.as_deref()) {
        Ok(formats) => formats,
        Err(message) => return usage(&message),
    };
    let only: Vec<String> = args.only.clone().unwrap_or_default();
    if args.budget == Some(0) {
        return usage("--budget must be at least 1");
    }
    let trust = match &args.ca_cert {
        Some(path) => match Trust::ca_file(path) {
            Ok(trust) => trust,
            Err(e) => return usage(&e.to_string()),
        },
        None => Trust::System,
    };
    let seed = args.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000)
    });
    let contract_kind = match &args.contract {
        Some(path) if args.mcp.is_none() => match std::fs::read_to_string(path) {
            Ok(text) => contract::kind_of(&text),
            Err(e) => {
                return usage(&format!(
                    "{}: cannot read the contract: {e}",
                    path.display()
                ))
            }
        },
        Some(_) | None => contract::Kind::Http,
    };
    if args.mcp.is_some() || args.mcp_simulator || contract_kind == contract::Kind::Mcp {
        if !only.is_empty() {
            return usage("--only selects HTTP probes; an MCP certification runs every finding");
        }
        if args.contract.is_some() && contract_kind != contract::Kind::Mcp {
            return usage("--mcp-simulator takes a `kind: mcp` contract (see docs/certify.md, \"MCP servers\")");
        }
        return certify_mcp(&args, &formats, seed, &trust).await;
    }
    let mode = args.simulator;
    let wire = match chosen_wire(&args) {
        Ok(w) => w,
        Err(problem) => return usage(&problem),
    };
    let sim = match mode {
        Some(m) => match simulator::start(wire, m, seed).await {
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
        (None, Some(sim), Some(m)) => simulator::contract(wire, m, &sim.base_url()),
        (None, _, _) => return usage("give --contract FILE or --simulator MODE"),
    };
    let contract = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let reproduce = reproduce_line(&args, wire, &only, seed);
    let config = Config {
        only,
        budget: args.budget,
        seed,
        reproduce,
    };
    let result = certify_trusting(contract, &config, &trust).await;
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    match result {
        Ok(report) => emit(&args, &formats, &report),
        Err(e) => unstarted(&e),
    }
}

/// The wire `--profile` names: the generic API (the default) or Stripe's,
/// the two with a shipped scenario and contract. The others have none:
/// OpenAI's and Anthropic's wires honour no idempotency key, so there is no
/// idempotency contract to certify, and a profile file's collections are
/// unknown until read, so no shipped scenario can name its slow and
/// rejecting ones.
fn chosen_wire(args: &CertifyArgs) -> Result<Wire, String> {
    let shown = match &args.profile {
        None => return Ok(Wire::Generic),
        Some(ProfileChoice::Builtin(name)) => match Wire::from_name(name) {
            Some(w) => return Ok(w),
            None => (*name).to_owned(),
        },
        Some(ProfileChoice::File(path)) => path.display().to_string(),
    };
    let known: Vec<&str> = Wire::ALL.iter().map(|w| w.name()).collect();
    Err(format!(
        "certify's worked examples speak the generic API and Stripe's; --profile {shown} is not \
         supported with --simulator (one of {})",
        known.join(", ")
    ))
}

/// Prints the terminal summary, writes the report files, and gives the exit code.
fn emit(
    args: &CertifyArgs,
    formats: &[Format],
    report: &lostreply_certify::report::Certification,
) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = write::write_terminal(&mut out, report);
    drop(out);
    if let Some(dir) = &args.report.report_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("lostreply certify: cannot create {}: {e}", dir.display());
            return exit::ADAPTER_OR_INFRA;
        }
        for f in formats {
            let path = dir.join(f.file_name());
            let written = std::fs::File::create(&path).and_then(|file| {
                let mut w = std::io::BufWriter::new(file);
                f.write(&mut w, report)?;
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

/// Why a certification did not start, and its exit code: bad usage (2), or
/// a target whose TLS cannot be set up (3, as an unreachable one).
fn unstarted(e: &CertifyError) -> i32 {
    eprintln!("lostreply certify: {e}");
    e.exit_code()
}

/// The help's MCP part: the findings and defects are read from their lists
/// (`mcp::FINDINGS`, `Defect::ALL`), so the help names exactly what exists.
fn mcp_help() -> String {
    let findings = lostreply_certify::mcp::names();
    let defects: Vec<&str> = Defect::ALL.iter().map(|d| d.name()).collect();
    format!(
        "\
MCP servers (docs/certify.md, \"MCP servers\"):
  lostreply certify --mcp-simulator                      the worked example: every finding passes
  lostreply certify --mcp-simulator --mcp-defect NAME    badly behaved: the defect's finding fails
  lostreply certify --mcp http://host:port/mcp           a live server: pre-flight and design rules, no paid call
  lostreply certify --contract mcp.yaml                  a `kind: mcp` contract: credentials from env vars, the one paid
                                                         tool (and arguments) certification may call, once per run
HTTPS: https:// URLs are certified over TLS, trusting the system's roots, or with --ca-cert FILE only that
  file's CAs (docs/certify.md, \"HTTPS\").
Findings ({}): {}.
Defects ({}): {}.
Exit codes: 0 every finding passed or was skipped, 1 a finding failed, 2 bad input or usage,
  3 a finding could not conclude (unreachable server, TLS failure, budget spent).",
        findings.len(),
        wrapped(&findings),
        defects.len(),
        wrapped(&defects),
    )
}

/// Names joined by commas, a new indented line before one would pass 100 columns.
fn wrapped(names: &[&str]) -> String {
    let mut out = String::new();
    let mut column = 16;
    for (n, name) in names.iter().enumerate() {
        if n > 0 {
            out.push(',');
            if column + name.len() + 2 > 100 {
                out.push_str("\n ");
                column = 2;
            }
            out.push(' ');
            column += 2;
        }
        out.push_str(name);
        column += name.len();
    }
    out
}

/// `--mcp URL`, `--mcp-simulator`, or a `kind: mcp` contract.
async fn certify_mcp(args: &CertifyArgs, formats: &[Format], seed: u64, trust: &Trust) -> i32 {
    use lostreply_certify::mcp;
    let defects: std::collections::BTreeSet<Defect> = args.mcp_defect.iter().copied().collect();
    let sim = if args.mcp_simulator {
        match mcp::simulator::start(&defects, seed).await {
            Ok(sim) => Some(sim),
            Err(e) => {
                eprintln!("lostreply certify: cannot start the simulator: {e}");
                return exit::ADAPTER_OR_INFRA;
            }
        }
    } else {
        None
    };
    let sim_url = sim.as_ref().and_then(|s| s.mcp_url());
    let loaded = match (&args.mcp, &args.contract, &sim_url) {
        (Some(url), _, _) => mcp::contract::quick(url, &|name| std::env::var(name).ok()),
        (None, Some(path), url) => {
            let url = url.clone();
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    mcp::contract::parse(&text, &path.display().to_string(), &move |name| match (
                        &url, name,
                    ) {
                        (Some(u), "LOSTREPLY_CERTIFY_MCP_URL") => Some(u.clone()),
                        _ => std::env::var(name).ok(),
                    })
                }
                Err(e) => {
                    return usage(&format!(
                        "{}: cannot read the contract: {e}",
                        path.display()
                    ))
                }
            }
        }
        (None, None, Some(url)) => mcp::simulator::contract(url),
        (None, None, None) => return usage("give --mcp URL, --mcp-simulator or --contract FILE"),
    };
    let contract = match loaded {
        Ok(c) => c,
        Err(e) => {
            if let Some(sim) = sim {
                sim.shutdown().await;
            }
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let mut reproduce = String::from("lostreply certify");
    if let Some(url) = &args.mcp {
        reproduce.push_str(&format!(" --mcp {url}"));
    }
    if args.mcp_simulator {
        reproduce.push_str(" --mcp-simulator");
        for d in &defects {
            reproduce.push_str(&format!(" --mcp-defect {}", d.name()));
        }
    }
    if let Some(p) = &args.contract {
        reproduce.push_str(&format!(" --contract {}", p.display()));
    }
    if let Some(p) = &args.ca_cert {
        reproduce.push_str(&format!(" --ca-cert {}", p.display()));
    }
    reproduce.push_str(&format!(" --seed {seed}"));
    let config = Config {
        only: Vec::new(),
        budget: args.budget,
        seed,
        reproduce,
    };
    let result = mcp::certify_trusting(contract, &config, trust).await;
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    match result {
        Ok(report) => emit(args, formats, &report),
        Err(e) => unstarted(&e),
    }
}

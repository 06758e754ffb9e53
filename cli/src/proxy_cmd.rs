//! `lostreply proxy`: a fault-injecting reverse proxy in front of a real
//! service (docs/certify.md, "lostreply proxy"). The contract names the
//! hosts it may forward to, the key and credential headers its journal and
//! rules read, and the read-back that counts effects; a scenario file's
//! `faults` say which answers it loses. The first stdout line is one JSON
//! object (url, upstream, journal_url, effects_url) so scripts can read
//! where it listens, as with `lostreply serve`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use lostreply_certify::contract::{self, Contract};
use lostreply_certify::proxy::{self, ProxyConfig};
use lostreply_certify::tls::Trust;
use lostreply_harness::exit;
use lostreply_simulator::{FaultRule, Limits};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 stopped by Ctrl-C or SIGTERM; 2 bad input (the contract, with file:line:column; the scenario; a fault rule the proxy cannot apply, named; an upstream outside the contract's target.allowed_hosts; an unusable --ca-cert); 3 the upstream unreachable at start (its address named), a failed TLS handshake with an https:// upstream (the host and the reason named), the port taken, or no trusted roots."
)]
pub(super) struct ProxyArgs {
    /// The service behind the proxy: http://host:port or https://host:port. Its host must be in
    /// the contract's target.allowed_hosts; the contract reads it as LOSTREPLY_CERTIFY_BASE_URL.
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// The contract file (docs/certify.md): the allowed hosts, the key and credential
    /// headers, the read-back that counts effects.
    #[arg(long, value_name = "FILE")]
    contract: PathBuf,
    /// A scenario file whose `faults` the proxy applies (no rule scoped to a step). Without
    /// one, every request is forwarded and answered as the upstream answers it.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// For an https:// upstream: trust the CAs in this PEM file instead of the system's roots.
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
}

fn usage(message: &str) -> i32 {
    eprintln!("lostreply proxy: {message}");
    exit::BAD_INPUT
}

pub(super) async fn proxy_cmd(args: ProxyArgs) -> i32 {
    if let Err(e) = proxy::upstream_origin(&args.upstream) {
        return usage(&e.to_string());
    }
    let contract = match load_contract(&args.contract, &args.upstream, "lostreply proxy") {
        Ok(contract) => contract,
        Err(code) => return code,
    };
    let (faults, limits) = match &args.scenario {
        Some(path) => match lostreply_harness::scenario::load(path) {
            Ok(s) => (s.plan.faults, s.plan.limits),
            Err(e) => {
                eprintln!("{e}");
                return exit::BAD_INPUT;
            }
        },
        None => (Vec::<FaultRule>::new(), Limits::default()),
    };
    let trust = match trust_of(args.ca_cert.as_deref(), "lostreply proxy") {
        Ok(trust) => trust,
        Err(code) => return code,
    };
    let rules = faults.len();
    let config = ProxyConfig {
        upstream: args.upstream.clone(),
        contract,
        faults,
        stall_cap: limits.stall_cap,
        hold_cap: limits.hold_cap,
        port: args.port,
        trust,
    };
    let running = match proxy::start(config).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lostreply proxy: {e}");
            return e.exit_code();
        }
    };
    // Handlers first: a supervisor that reads the banner and at once sends
    // SIGTERM must find them installed.
    let stop = super::serve_cmd::stop_signals();
    running.log_to_stderr();
    let url = running.url();
    let banner = serde_json::json!({
        "url": url,
        "upstream": running.upstream(),
        "journal_url": format!("{url}/_lostreply/journal"),
        "effects_url": format!("{url}/_lostreply/effects?marker="),
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{banner}");
    let _ = out.flush();
    drop(out);
    eprintln!(
        "lostreply proxy: {url} -> {} ({rules} fault rules); stop with Ctrl-C or SIGTERM",
        running.upstream()
    );
    stop.await;
    let summary = running.journal().summary();
    running.shutdown().await;
    eprintln!("lostreply proxy stopped: {summary}");
    exit::OK
}

/// The contract, with `LOSTREPLY_CERTIFY_BASE_URL` read as the upstream; an
/// error is printed (file:line:column) and its exit code returned.
pub(super) fn load_contract(path: &Path, upstream: &str, command: &str) -> Result<Contract, i32> {
    let refuse = |message: String| {
        eprintln!("{command}: {message}");
        exit::BAD_INPUT
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| refuse(format!("{}: cannot read the contract: {e}", path.display())))?;
    if contract::kind_of(&text) == contract::Kind::Mcp {
        return Err(refuse(format!(
            "{}: a `kind: mcp` contract; the proxy takes an HTTP contract",
            path.display()
        )));
    }
    let base = upstream.trim_end_matches('/').to_owned();
    contract::parse(&text, &path.display().to_string(), &move |name| {
        if name == "LOSTREPLY_CERTIFY_BASE_URL" {
            Some(base.clone())
        } else {
            std::env::var(name).ok()
        }
    })
    .map_err(|e| {
        eprintln!("{e}");
        exit::BAD_INPUT
    })
}

/// `--ca-cert FILE`'s CAs, or the system's roots without it; an unusable
/// file is printed under `command`'s name and its exit code returned.
pub(super) fn trust_of(ca_cert: Option<&Path>, command: &str) -> Result<Trust, i32> {
    match ca_cert {
        Some(path) => Trust::ca_file(path).map_err(|e| {
            eprintln!("{command}: {e}");
            exit::BAD_INPUT
        }),
        None => Ok(Trust::System),
    }
}

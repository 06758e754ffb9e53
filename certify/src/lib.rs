//! Vendor certification: proves (or refutes) an API's idempotency contract
//! from the outside, over HTTP.
//!
//! Map of the crate:
//! - [`contract`]: the contract file (YAML with positions, a JSON Schema,
//!   located errors): the endpoint, how to read effects back, what the vendor declares.
//! - [`client`]: HTTP/1.1 over raw TCP with a budget, a rate limit and an
//!   allowlist; "abort after sending" and barrier releases need the socket.
//! - [`readback`]: counting effects by a marker (ground truth, search, list).
//! - [`probes`]: the checks, one module per family, each with its verdict and evidence.
//! - [`verdict`], [`report`]: the certification report model; [`write`]: its
//!   terminal, JSON, JUnit, Markdown and HTML writers.
//! - [`simulator`]: `--simulator MODE`, the worked example against lostreply's own simulator.
//! - [`mcp`]: certifying an MCP server (`kind: mcp` contracts, `--mcp URL`,
//!   `--mcp-simulator`): the pre-flight, the design rules, retrieval's behaviour.
//!
//! Architecture invariant: no request leaves for a host the contract does not
//! name, and no run sends more than its budget or faster than its rate; no
//! paid MCP tool is called unless the contract allows it, and then once.
#![deny(missing_docs)]

pub mod client;
pub mod contract;
pub mod mcp;
pub mod probes;
pub mod readback;
pub mod report;
pub mod simulator;
pub mod verdict;
pub mod write;

use std::time::Instant;

use contract::Contract;
use report::Certification;

/// How one certification runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Probes to run (empty: all).
    pub only: Vec<String>,
    /// Overrides the contract's budget when lower.
    pub budget: Option<u32>,
    /// Seed of markers and keys.
    pub seed: u64,
    /// The command that reproduces the run (for the report).
    pub reproduce: String,
}

/// Why a certification could not start.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    /// `--only` names a probe that does not exist.
    #[error("unknown probe {0:?} (probes: {1})")]
    UnknownProbe(String, String),
    /// The base URL cannot be used.
    #[error("{0}")]
    Target(String),
}

/// Runs the probes against the contract's endpoint.
pub async fn certify(contract: Contract, config: &Config) -> Result<Certification, CertifyError> {
    for name in &config.only {
        if !probes::ALL.iter().any(|p| p.name == name) {
            return Err(CertifyError::UnknownProbe(
                name.clone(),
                probes::names().join(", "),
            ));
        }
    }
    let budget = config
        .budget
        .map_or(contract.budget, |b| b.min(contract.budget));
    let client = client::Client::new(
        &contract.base_url,
        contract.timeout,
        contract.max_response_bytes,
        budget,
        contract.rate_per_s,
    )
    .map_err(|e| CertifyError::Target(e.to_string()))?;
    let started = Instant::now();
    // A failed reset leaves the provider's faults in an unknown state: no probe
    // can conclude, and each says why (exit code 3, like an unreachable endpoint).
    let reset_failed = match &contract.reset {
        Some(reset) => reset_faults(&client, &contract, reset).await.err(),
        None => None,
    };
    let ctx = probes::Ctx {
        contract,
        client,
        seed: config.seed,
    };
    let mut results = Vec::new();
    for probe in probes::ALL.iter() {
        if !config.only.is_empty() && !config.only.iter().any(|n| n == probe.name) {
            results.push(report::ProbeResult {
                name: probe.name.to_owned(),
                title: probe.title.to_owned(),
                verdict: verdict::Verdict::Skipped,
                summary: "not selected (--only)".to_owned(),
                evidence: Vec::new(),
                duration_ms: 0,
            });
            continue;
        }
        if let Some(why) = &reset_failed {
            results.push(report::ProbeResult {
                name: probe.name.to_owned(),
                title: probe.title.to_owned(),
                verdict: verdict::Verdict::Error,
                summary: format!("could not conclude: readback.reset failed: {why}"),
                evidence: Vec::new(),
                duration_ms: 0,
            });
            continue;
        }
        results.push(probes::run_probe(&ctx, probe).await);
    }
    Ok(Certification {
        schema_version: report::SCHEMA_VERSION,
        contract_name: ctx.contract.name.clone(),
        contract_source: ctx.contract.source.clone(),
        base_url: ctx.contract.base_url.clone(),
        seed: config.seed,
        reproduce: config.reproduce.clone(),
        requests_sent: ctx.client.sent(),
        budget,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        probes: results,
    })
}

/// Sends the contract's reset request (counted against the budget like any other).
async fn reset_faults(
    client: &client::Client,
    contract: &Contract,
    reset: &contract::PathSpec,
) -> Result<(), String> {
    let mut headers = Vec::new();
    if reset.auth {
        headers.push((
            contract.auth_header.clone(),
            format!("{}{}", contract.auth_prefix, contract.primary),
        ));
    }
    let req = client::Request {
        method: "POST".to_owned(),
        path: reset.path.clone(),
        headers,
        body: Vec::new(),
    };
    match client.send(&req).await {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => Err(format!("POST {} answered {}", reset.path, r.status)),
        Err(e) => Err(format!("POST {}: {e}", reset.path)),
    }
}

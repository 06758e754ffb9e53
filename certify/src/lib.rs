//! Vendor certification: proves (or refutes) an API's idempotency contract
//! from the outside, over HTTP or HTTPS.
//!
//! Map of the crate:
//! - [`config`]: how a run is configured, and why it may not start.
//! - [`contract`]: the contract file (YAML with positions, a JSON Schema,
//!   located errors): the endpoint, how to read effects back, what the vendor declares.
//! - [`client`]: HTTP/1.1 over raw TCP with a budget, a rate limit and an
//!   allowlist; "abort after sending" and barrier releases need the socket.
//! - [`tls`]: the same connections inside TLS for `https://` targets (rustls;
//!   the system's roots, or `--ca-cert FILE`'s CAs), and why a handshake failed.
//! - [`readback`]: counting effects by a marker (ground truth, search, list).
//! - [`probes`]: the checks, one module per family, each with its verdict and evidence.
//! - [`verdict`], [`report`]: the certification report model; [`write`](mod@write): its
//!   terminal, JSON, JUnit, Markdown and HTML writers.
//! - [`proxy`]: `lostreply proxy`, a fault-injecting reverse proxy in front of
//!   a real service, with its own journal and effects counted by the read-back.
//! - [`upstream`]: `lostreply run --upstream`, the lost-response library run
//!   against an adapter with a real service behind the proxy, judged from
//!   the read-back and the proxy's journal.
//! - [`simulator`]: `--simulator MODE`, the worked example against lostreply's own simulator.
//! - [`mcp`]: certifying an MCP server (`kind: mcp` contracts, `--mcp URL`,
//!   `--mcp-simulator`): the pre-flight, the design rules, retrieval's behaviour.
//!
//! Architecture invariant: no request leaves for a host the contract does not
//! name, and no run sends more than its budget or faster than its rate; no
//! paid MCP tool is called unless the contract allows it, and then once.
#![deny(missing_docs)]

pub mod client;
pub mod config;
pub mod contract;
pub mod mcp;
pub mod probes;
pub mod proxy;
pub mod readback;
pub mod report;
pub mod simulator;
pub mod tls;
pub mod upstream;
pub mod verdict;
pub mod write;

use std::time::Instant;

use client::ClientError;
pub use config::{CertifyError, Config};
use contract::Contract;
use report::Certification;
use verdict::Verdict;

/// Runs the probes against the contract's endpoint (over HTTPS trusting the system's roots).
pub async fn certify(contract: Contract, config: &Config) -> Result<Certification, CertifyError> {
    certify_trusting(contract, config, &tls::Trust::System).await
}

/// Runs the probes against the contract's endpoint, trusting `trust`'s CAs over HTTPS.
pub async fn certify_trusting(
    contract: Contract,
    config: &Config,
    trust: &tls::Trust,
) -> Result<Certification, CertifyError> {
    for name in &config.only {
        if !probes::ALL.iter().any(|p| p.name == name) {
            return Err(CertifyError::UnknownProbe(
                name.clone(),
                probes::names().join(", "),
            ));
        }
    }
    let budget = config.budget_within(contract.budget);
    let client = client::Client::trusting(
        &contract.base_url,
        contract.timeout,
        contract.max_response_bytes,
        budget,
        contract.rate_per_s,
        trust,
    )?;
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
        let selected = config.only.is_empty() || config.only.iter().any(|n| n == probe.name);
        let result = match (&reset_failed, selected) {
            (_, false) => unrun(probe, Verdict::Skipped, "not selected (--only)".to_owned()),
            (Some(why), true) => unrun(
                probe,
                Verdict::Error,
                format!("could not conclude: readback.reset failed: {why}"),
            ),
            (None, true) => probes::run_probe(&ctx, probe).await,
        };
        results.push(result);
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

/// The result of a probe that did not run.
fn unrun(probe: &probes::Probe, verdict: Verdict, summary: String) -> report::ProbeResult {
    report::ProbeResult {
        name: probe.name.to_owned(),
        title: probe.title.to_owned(),
        verdict,
        summary,
        evidence: Vec::new(),
        duration_ms: 0,
    }
}

/// Why the contract's reset request did not restore the provider's faults.
#[derive(Debug, thiserror::Error)]
enum ResetError {
    /// The provider answered, but not with a 2xx.
    #[error("POST {path} answered {status}")]
    Refused {
        /// The reset path.
        path: String,
        /// Its answer's status.
        status: u16,
    },
    /// No answer came.
    #[error("POST {path}: {source}")]
    Unanswered {
        /// The reset path.
        path: String,
        /// Why.
        source: ClientError,
    },
}

/// Sends the contract's reset request (counted against the budget like any other).
async fn reset_faults(
    client: &client::Client,
    contract: &Contract,
    reset: &contract::PathSpec,
) -> Result<(), ResetError> {
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
        Ok(r) => Err(ResetError::Refused {
            path: reset.path.clone(),
            status: r.status,
        }),
        Err(source) => Err(ResetError::Unanswered {
            path: reset.path.clone(),
            source,
        }),
    }
}

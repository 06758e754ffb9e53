//! Certifying an MCP server: the pre-flight of mcp.md ("Retrieval: the
//! recovery path"), the design rules read from `tools/list`, and the
//! behaviour of retrieval across tenants and past the retention; each a named
//! finding with its verdict and evidence, in the same report as the HTTP probes.
//!
//! Map:
//! - [`contract`]: the `kind: mcp` contract file, and `--mcp URL`'s contract.
//! - [`session`]: MCP over Streamable HTTP on the bounded client (JSON or
//!   SSE answers), and the gate every `tools/call` passes.
//! - [`rules`]: the design rules, pure functions over the listed tools.
//! - [`run`]: the steps, in order, that feed the findings;
//!   `book`: the findings and their trails; `state`: what a run learns as it
//!   goes, shared by the steps and `behaviour` (the findings that need a
//!   second tenant or the clock); `their_list`: what the second tenant's
//!   recent list shows.
//! - [`simulator`]: `--mcp-simulator`, the worked example.
//!
//! Architecture invariant: no paid tool is called unless the contract's
//! `paid` names it, and then once per run; every request counts against the
//! budget and the rate, and goes only to the contract's origin.

mod behaviour;
mod book;
pub mod contract;
pub mod rules;
pub mod run;
pub mod session;
pub mod simulator;
mod state;
mod their_list;

use std::time::Instant;

use crate::client;
use crate::config::{CertifyError, Config};
use crate::report::{self, Certification};
use crate::tls::Trust;
use contract::McpContract;

pub use run::{names, Finding, FINDINGS};

/// Certifies the contract's MCP server (over HTTPS trusting the system's roots).
pub async fn certify(
    contract: McpContract,
    config: &Config,
) -> Result<Certification, CertifyError> {
    certify_trusting(contract, config, &Trust::System).await
}

/// Certifies the contract's MCP server, trusting `trust`'s CAs over HTTPS.
pub async fn certify_trusting(
    contract: McpContract,
    config: &Config,
    trust: &Trust,
) -> Result<Certification, CertifyError> {
    if let Some(name) = config.only.first() {
        return Err(CertifyError::OnlyWithMcp(name.clone()));
    }
    let budget = config.budget_within(contract.budget);
    let client = client::Client::trusting(
        &contract.origin,
        contract.timeout,
        contract.max_response_bytes,
        budget,
        contract.rate_per_s,
        trust,
    )?;
    let started = Instant::now();
    let wire = session::Wire::new(&contract, client);
    let findings = run::run(&contract, &wire, config.seed).await;
    Ok(Certification {
        schema_version: report::SCHEMA_VERSION,
        contract_name: contract.name.clone(),
        contract_source: contract.source.clone(),
        base_url: contract.url.clone(),
        seed: config.seed,
        reproduce: config.reproduce.clone(),
        requests_sent: wire.client().sent(),
        budget,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        probes: findings,
    })
}

//! How one certification runs and why it may not start: shared by the HTTP
//! run (the crate root) and the MCP face, so neither imports the other.

use crate::client::ClientError;

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

impl Config {
    /// The budget a run may spend: the contract's, or `--budget` when lower.
    pub fn budget_within(&self, contract_budget: u32) -> u32 {
        self.budget
            .map_or(contract_budget, |b| b.min(contract_budget))
    }
}

/// Why a certification could not start.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    /// `--only` names a probe that does not exist.
    #[error("unknown probe {0:?} (probes: {1})")]
    UnknownProbe(String, String),
    /// `--only` was given to an MCP certification, whose findings each need
    /// the steps before them.
    #[error(
        "--only {0:?}: an MCP certification runs every finding (each needs the steps before it)"
    )]
    OnlyWithMcp(String),
    /// The base URL cannot be used.
    #[error(transparent)]
    Target(#[from] ClientError),
}

impl CertifyError {
    /// The exit code: bad usage (2), but a target whose TLS cannot be set up
    /// is unusable as an unreachable one is (3).
    pub fn exit_code(&self) -> i32 {
        match self {
            CertifyError::Target(ClientError::Tls { .. }) => {
                lostreply_harness::exit::ADAPTER_OR_INFRA
            }
            _ => lostreply_harness::exit::BAD_INPUT,
        }
    }
}

//! `--mcp-simulator [--mcp-defect NAME ...]`: a fresh simulator with the MCP
//! face (well-behaved unless told of defects), certified with the shipped
//! contract `certify/contracts/simulator-mcp.yaml`, which allows one
//! `create_ticket` call and moves the simulator's clock to let an id expire.

use std::collections::BTreeSet;

use lostreply_simulator::mcp::{Defect, McpPlan};
use lostreply_simulator::{Plan, ServeOptions, Simulator, StartError};

use super::contract::{self, McpContract};
use crate::contract::ContractError;

/// The shipped contract of the worked example.
pub const CONTRACT: &str = include_str!("../../contracts/simulator-mcp.yaml");
/// Where it lives in the repository.
pub const CONTRACT_PATH: &str = "certify/contracts/simulator-mcp.yaml";

/// The plan of the worked example: the default MCP face with `defects`.
pub fn plan(defects: &BTreeSet<Defect>, seed: u64) -> Plan {
    {
        let mut changed = Plan::default();
        changed.seed = seed;
        changed.mcp = Some({
            let mut changed = McpPlan::default();
            changed.defects = defects.clone();
            changed
        });
        changed
    }
}

/// Starts it on 127.0.0.1:0.
pub async fn start(defects: &BTreeSet<Defect>, seed: u64) -> Result<Simulator, StartError> {
    Simulator::start(plan(defects, seed), ServeOptions::default()).await
}

/// The shipped contract, pointed at `mcp_url`.
pub fn contract(mcp_url: &str) -> Result<McpContract, ContractError> {
    let url = mcp_url.to_owned();
    contract::parse(CONTRACT, CONTRACT_PATH, &move |name| {
        (name == "LOSTREPLY_CERTIFY_MCP_URL").then(|| url.clone())
    })
}

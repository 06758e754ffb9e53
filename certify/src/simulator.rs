//! `--simulator MODE`: a fresh simulator in that idempotency mode, built from
//! the shipped scenario file, certified with the shipped contract (`ietf`'s
//! own; every other mode claims to be `stripe`).

use lostreply_simulator::{IdempotencyMode, Plan, ServeOptions, Simulator};

use crate::contract::{self, Contract, ContractError};

/// The stripe worked example (also what `none` and the known-bad modes are held to).
pub const STRIPE_CONTRACT: &str = include_str!("../contracts/simulator-stripe.yaml");
/// The ietf worked example.
pub const IETF_CONTRACT: &str = include_str!("../contracts/simulator-ietf.yaml");
/// The provider the worked examples run against (for `lostreply serve --scenario`).
pub const SCENARIO: &str = include_str!("../contracts/simulator.scenario.yaml");

/// The shipped contract for a mode: its path in the repository and its text.
pub fn contract_for(mode: IdempotencyMode) -> (&'static str, &'static str) {
    match mode {
        IdempotencyMode::Ietf => ("certify/contracts/simulator-ietf.yaml", IETF_CONTRACT),
        IdempotencyMode::None
        | IdempotencyMode::Stripe
        | IdempotencyMode::FingerprintInKey
        | IdempotencyMode::NoFingerprint
        | IdempotencyMode::Racy
        | IdempotencyMode::GlobalScope
        | IdempotencyMode::StuckInFlight => {
            ("certify/contracts/simulator-stripe.yaml", STRIPE_CONTRACT)
        }
    }
}

/// The plan of the worked example in `mode`.
pub fn plan(mode: IdempotencyMode, seed: u64) -> Result<Plan, String> {
    let scenario =
        lostreply_harness::scenario::parse(SCENARIO, "certify/contracts/simulator.scenario.yaml")
            .map_err(|e| e.to_string())?;
    let mut plan = scenario.plan;
    plan.idempotency.mode = mode;
    plan.seed = seed;
    Ok(plan)
}

/// Starts the worked example's simulator on 127.0.0.1:0.
pub async fn start(mode: IdempotencyMode, seed: u64) -> Result<Simulator, String> {
    Simulator::start(plan(mode, seed)?, ServeOptions::default())
        .await
        .map_err(|e| e.to_string())
}

/// The shipped contract for `mode`, pointed at `base_url`.
pub fn contract(mode: IdempotencyMode, base_url: &str) -> Result<Contract, ContractError> {
    let (path, text) = contract_for(mode);
    let base = base_url.to_owned();
    contract::parse(text, path, &move |name| {
        (name == "LOSTREPLY_CERTIFY_BASE_URL").then(|| base.clone())
    })
}

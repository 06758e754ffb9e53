//! `--simulator MODE [--profile stripe]`: a fresh simulator in that
//! idempotency mode, built from a shipped scenario file, certified with a
//! shipped contract (`ietf`'s own; every other mode claims to be `stripe`).
//!
//! Two wires have a worked example: the simulator's own API and Stripe's.
//! The scenario file names the profile (`provider.profile`) and the contract
//! speaks its paths, so this module picks files, never a profile.

use lostreply_harness::scenario::ScenarioError;
use lostreply_simulator::{IdempotencyMode, Plan, ServeOptions, Simulator, StartError};

use crate::contract::{self, Contract, ContractError};

/// The stripe worked example (also what `none` and the known-bad modes are held to).
pub const STRIPE_CONTRACT: &str = include_str!("../contracts/simulator-stripe.yaml");
/// The ietf worked example.
pub const IETF_CONTRACT: &str = include_str!("../contracts/simulator-ietf.yaml");
/// The provider the worked examples run against (for `lostreply serve --scenario`).
pub const SCENARIO: &str = include_str!("../contracts/simulator.scenario.yaml");
/// The stripe worked example on Stripe's wire (and the known-bad modes' contract there).
pub const STRIPE_WIRE_CONTRACT: &str = include_str!("../contracts/simulator-stripe-profile.yaml");
/// The ietf worked example on Stripe's wire.
pub const STRIPE_WIRE_IETF_CONTRACT: &str =
    include_str!("../contracts/simulator-stripe-profile-ietf.yaml");
/// The provider the Stripe-wire worked examples run against.
pub const STRIPE_WIRE_SCENARIO: &str =
    include_str!("../contracts/simulator-stripe-profile.scenario.yaml");

/// The wire a worked example's simulator speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The simulator's own API (docs/provider-api.md).
    Generic,
    /// Stripe's, through the simulator's `stripe` profile (docs/profiles.md).
    Stripe,
}

impl Wire {
    /// Every wire with a worked example.
    pub const ALL: [Wire; 2] = [Wire::Generic, Wire::Stripe];

    /// The provider profile's name (`--profile NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Wire::Generic => "generic",
            Wire::Stripe => "stripe",
        }
    }

    /// The wire of a built-in profile name, when it has a worked example.
    pub fn from_name(name: &str) -> Option<Wire> {
        Wire::ALL.into_iter().find(|w| w.name() == name)
    }

    /// The scenario the simulator is built from: its path in the repository and its text.
    pub fn scenario(self) -> (&'static str, &'static str) {
        match self {
            Wire::Generic => ("certify/contracts/simulator.scenario.yaml", SCENARIO),
            Wire::Stripe => (
                "certify/contracts/simulator-stripe-profile.scenario.yaml",
                STRIPE_WIRE_SCENARIO,
            ),
        }
    }
}

/// The shipped contract for a mode on a wire: its path in the repository and its text.
pub fn contract_for(wire: Wire, mode: IdempotencyMode) -> (&'static str, &'static str) {
    let ietf = mode == IdempotencyMode::Ietf;
    match (wire, ietf) {
        (Wire::Generic, true) => ("certify/contracts/simulator-ietf.yaml", IETF_CONTRACT),
        (Wire::Generic, false) => ("certify/contracts/simulator-stripe.yaml", STRIPE_CONTRACT),
        (Wire::Stripe, true) => (
            "certify/contracts/simulator-stripe-profile-ietf.yaml",
            STRIPE_WIRE_IETF_CONTRACT,
        ),
        (Wire::Stripe, false) => (
            "certify/contracts/simulator-stripe-profile.yaml",
            STRIPE_WIRE_CONTRACT,
        ),
    }
}

/// Why a worked example's simulator could not be built or started; each
/// reads as the error underneath it, word for word.
#[derive(Debug, thiserror::Error)]
pub enum WorkedExampleError {
    /// The shipped scenario file does not parse.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The simulator refused its plan or could not bind.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// The plan of the worked example on `wire` in `mode`.
pub fn plan(wire: Wire, mode: IdempotencyMode, seed: u64) -> Result<Plan, WorkedExampleError> {
    let (path, text) = wire.scenario();
    let scenario = lostreply_harness::scenario::parse(text, path)?;
    let mut plan = scenario.plan;
    plan.idempotency.mode = mode;
    plan.seed = seed;
    Ok(plan)
}

/// Starts the worked example's simulator on 127.0.0.1:0.
pub async fn start(
    wire: Wire,
    mode: IdempotencyMode,
    seed: u64,
) -> Result<Simulator, WorkedExampleError> {
    Ok(Simulator::start(plan(wire, mode, seed)?, ServeOptions::default()).await?)
}

/// The shipped contract for `mode` on `wire`, pointed at `base_url`.
pub fn contract(
    wire: Wire,
    mode: IdempotencyMode,
    base_url: &str,
) -> Result<Contract, ContractError> {
    let (path, text) = contract_for(wire, mode);
    let base = base_url.to_owned();
    contract::parse(text, path, &move |name| {
        (name == "LOSTREPLY_CERTIFY_BASE_URL").then(|| base.clone())
    })
}

//! The request fields every call carries: the simulator clock and the provider
//! contract, as adapter-protocol.md defines them.

use lostreply_simulator::{IdempotencyMode, Plan, Simulator};
use serde_json::Value;

use crate::protocol::{
    Common, Contract, ContractIdempotency, ContractLookup, ContractWebhooks, ProviderInfo,
    PROTOCOL_VERSION,
};
use crate::scenario::model::Scenario;

/// The mode a provider documents. Known-bad servers claim to be a good one: that
/// is what makes them dangerous, and what certification has to expose.
pub fn documented_mode(mode: IdempotencyMode) -> &'static str {
    match mode {
        IdempotencyMode::None => "none",
        IdempotencyMode::Ietf => "ietf",
        IdempotencyMode::Stripe
        | IdempotencyMode::FingerprintInKey
        | IdempotencyMode::NoFingerprint
        | IdempotencyMode::Racy
        | IdempotencyMode::GlobalScope
        | IdempotencyMode::StuckInFlight => "stripe",
    }
}

/// The contract section of every request of a scenario.
pub fn contract(scenario: &Scenario) -> Contract {
    contract_for_plan(&scenario.plan)
}

/// The contract a provider started from `plan` documents.
pub fn contract_for_plan(plan: &Plan) -> Contract {
    Contract {
        idempotency: ContractIdempotency {
            mode: documented_mode(plan.idempotency.mode).to_owned(),
            header: "Idempotency-Key".to_owned(),
            retention_s: plan.idempotency.retention.as_secs(),
        },
        lookup: ContractLookup {
            retrieve: plan.lookup.retrieve,
            client_reference: plan.lookup.client_reference,
            list_recent: plan.lookup.list_recent,
        },
        asynchronous: plan.asynchronous.is_some(),
        webhooks: plan.webhooks.as_ref().map(|w| ContractWebhooks {
            secret: w.secret.clone(),
        }),
        // Filled in by the MCP scenario support (the server's URL is only known once it runs).
        mcp: None,
    }
}

/// The common fields of a call to an adapter whose credential is `credential`,
/// at the simulator's current clock (its own RFC 3339 form, as in the objects it serves).
pub fn common(plan: &Plan, sim: &Simulator, credential: &str, client_timeout_ms: u64) -> Common {
    Common {
        protocol: PROTOCOL_VERSION,
        now: lostreply_simulator::rfc3339(sim.now_ms()),
        provider: ProviderInfo {
            base_url: sim.base_url(),
            credential: credential.to_owned(),
            contract: contract_for_plan(plan),
        },
        client_timeout_ms,
    }
}

/// The common fields, as a JSON object, at the simulator's current clock.
pub fn common_fields(scenario: &Scenario, sim: &Simulator, credential: &str) -> Value {
    let client_timeout_ms = scenario.client_timeout.as_millis() as u64;
    serde_json::to_value(common(&scenario.plan, sim, credential, client_timeout_ms))
        .unwrap_or(Value::Null)
}

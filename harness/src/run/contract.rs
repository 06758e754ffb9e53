//! The request fields every call carries: the simulator clock and the provider
//! contract, as adapter-protocol.md defines them.

use serde_json::Value;
use simulator::{IdempotencyMode, Simulator};

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

/// The contract section of every request.
pub fn contract(scenario: &Scenario) -> Contract {
    let plan = &scenario.plan;
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
    }
}

/// RFC 3339 of a simulator-clock instant.
pub fn rfc3339(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(t) => t.to_string(),
        Err(_) => ms.to_string(),
    }
}

/// The common fields, as a JSON object, at the simulator's current clock.
pub fn common_fields(scenario: &Scenario, sim: &Simulator, credential: &str) -> Value {
    let common = Common {
        protocol: PROTOCOL_VERSION,
        now: rfc3339(sim.now_ms()),
        provider: ProviderInfo {
            base_url: sim.base_url(),
            credential: credential.to_owned(),
            contract: contract(scenario),
        },
        client_timeout_ms: scenario.client_timeout.as_millis() as u64,
    };
    serde_json::to_value(common).unwrap_or(Value::Null)
}

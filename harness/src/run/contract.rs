//! The request fields every call carries: the simulator clock and the provider
//! contract, as adapter-protocol.md defines them.

use lostreply_reports::model::SharedStr;
use lostreply_simulator::mcp::Revision;
use lostreply_simulator::profile::SignatureScheme;
use lostreply_simulator::{IdempotencyMode, Plan, Simulator};
use serde_json::Value;

use crate::protocol::{
    Common, Contract, ContractIdempotency, ContractLookup, ContractMcp, ContractRetrieval,
    ContractTool, ContractWebhooks, Operation, ProviderInfo, WebhookScheme,
};
use crate::scenario::model::{OperationSpec, Scenario, GET_OPERATION, LIST_RECENT_OPERATIONS};

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
        | IdempotencyMode::StuckInFlight
        | IdempotencyMode::ReleaseOnError => "stripe",
    }
}

/// The contract section of every request of a scenario whose simulator serves
/// at `base_url` (`http://127.0.0.1:PORT`): the plan's, and for a scenario
/// with `mcp:`, where the MCP server is and the client windows to apply.
pub fn contract(scenario: &Scenario, base_url: &str) -> Contract {
    contract_for_plan(&scenario.plan).with_mcp(contract_mcp(scenario, base_url))
}

/// The MCP endpoint of a simulator serving at `base_url`.
pub fn mcp_url(base_url: &str) -> String {
    format!("{base_url}/mcp")
}

/// `provider.contract.mcp` of a scenario: `None` without `mcp:`. The tools,
/// retrieval and tasks are the server's (`plan.mcp`); the revision and the
/// scaled client windows are the harness's (`scenario.mcp`).
pub fn contract_mcp(scenario: &Scenario, base_url: &str) -> Option<ContractMcp> {
    let (plan, setup) = (scenario.plan.mcp.as_ref()?, scenario.mcp.as_ref()?);
    let tools = plan.tools.iter().map(|tool| {
        let made = ContractTool::new(tool.name.as_str(), tool.resource.as_str());
        match &tool.key_argument {
            Some(argument) => {
                made.with_key(argument.as_str(), Some(plan.retrieval.retention.as_secs()))
            }
            None => made,
        }
    });
    let retrieval = plan.retrieval.enabled.then(|| {
        ContractRetrieval::new(
            GET_OPERATION,
            LIST_RECENT_OPERATIONS,
            plan.retrieval.retention.as_secs(),
        )
    });
    // Tasks exist only in the revision the adapter asks for.
    let tasks = plan.tasks.enabled
        && setup.revision == Revision::V2025_11_25
        && plan.revisions.contains(&Revision::V2025_11_25);
    Some(ContractMcp::new(
        mcp_url(base_url),
        setup.revision.name(),
        tools.collect(),
        retrieval,
        tasks,
        setup.client.contract(),
    ))
}

/// The operation of an `execute` request: `action: create` for an HTTP
/// operation, `action: call_tool` with its `tool` for an MCP one. Its `args`
/// never hold a tool's idempotency key argument: the adapter adds the key.
pub fn operation(spec: &OperationSpec) -> Operation {
    let action = match spec.tool {
        None => "create",
        Some(_) => "call_tool",
    };
    Operation::new(
        spec.id.as_str(),
        action,
        spec.resource.as_str(),
        spec.args.to_map(),
    )
    .with_tool(spec.tool.as_ref().map(SharedStr::to_string))
}

/// The contract a provider started from `plan` documents, without its MCP
/// section (which needs the scenario's client windows and the server's
/// address: see [`contract`]).
pub fn contract_for_plan(plan: &Plan) -> Contract {
    let profile = &plan.profile;
    let idempotency = ContractIdempotency::new(
        documented_mode(plan.idempotency.mode),
        key_header(&profile.keys.header),
        plan.idempotency.retention.as_secs(),
    );
    let lookup = ContractLookup::NONE
        .with_retrieve(plan.lookup.retrieve)
        .with_client_reference(plan.lookup.client_reference)
        .with_list_recent(plan.lookup.list_recent);
    let webhooks = plan.webhooks.as_ref().map(|w| {
        let scheme = match profile.webhooks.scheme {
            SignatureScheme::StandardWebhooks => WebhookScheme::StandardWebhooks,
            SignatureScheme::Stripe => WebhookScheme::Stripe,
        };
        ContractWebhooks::new(w.secret.as_str(), scheme)
    });
    Contract::new(
        profile.name.as_str(),
        idempotency,
        lookup,
        plan.asynchronous.is_some(),
    )
    .with_webhooks(webhooks)
}

/// The key's header as documentation writes it: profiles keep header names
/// in lower case, the contract has always said `Idempotency-Key`.
fn key_header(header: &str) -> String {
    if header.eq_ignore_ascii_case("idempotency-key") {
        "Idempotency-Key".to_owned()
    } else {
        header.to_owned()
    }
}

/// The common fields of a call to an adapter whose credential is `credential`,
/// at the simulator's current clock (its own RFC 3339 form, as in the objects it serves).
pub fn common(plan: &Plan, sim: &Simulator, credential: &str, client_timeout_ms: u64) -> Common {
    let provider = ProviderInfo::new(sim.base_url(), credential, contract_for_plan(plan));
    Common::new(
        lostreply_simulator::rfc3339(sim.now_ms()),
        provider,
        client_timeout_ms,
    )
}

/// The common fields, as a JSON object, at the simulator's current clock
/// (with `provider.contract.mcp` for a scenario with `mcp:`).
pub fn common_fields(scenario: &Scenario, sim: &Simulator, credential: &str) -> Value {
    let client_timeout_ms = scenario.client_timeout.as_millis() as u64;
    let mut common = common(&scenario.plan, sim, credential, client_timeout_ms);
    common.provider.contract.mcp = contract_mcp(scenario, &common.provider.base_url);
    serde_json::to_value(common).unwrap_or(Value::Null)
}

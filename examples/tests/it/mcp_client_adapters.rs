//! The example adapters written on each real MCP client library
//! (examples/mcp-clients/{python/adapter.py,node/adapter.mjs}) against the
//! fake MCP server, driven call by call through the process protocol: a tool
//! call whose answer the SDK's own timeout loses. The correct adapter answers
//! `unknown`, never calls again, and reconciles to the one effect by
//! retrieval; the naive variant (`--naive`: calls again on the SDK's timeout
//! error) pays twice.
//!
//! TODO(scenarios): run both through the built-in `mcp` scenarios with
//! `run_suite` once the scenario format's `mcp:` section lands on main.

use std::time::Duration;

use crate::common;
use crate::common::mcp_clients::{command, Sdk};
use lostreply_harness::protocol::{
    ClientWindows, Common, Contract, ContractIdempotency, ContractLookup, ContractMcp,
    ContractRetrieval, ContractTool, Operation, ProviderInfo,
};
use lostreply_simulator::mcp::{CancelPolicy, McpFault, McpMatch, McpPlan, McpRule, Stream};
use lostreply_simulator::{Plan, Release, ServeOptions, Simulator, StallThen};
use serde_json::{json, Value};

const TENANT: &str = "sk_test_a";

fn script(sdk: Sdk) -> &'static str {
    match sdk {
        Sdk::Python => "adapter.py",
        Sdk::Node => "adapter.mjs",
    }
}

/// A simulator whose first `create_ticket` stalls until the client leaves, then commits.
async fn first_call_stalls() -> Simulator {
    let mut plan = Plan::default();
    plan.limits.stall_cap = Duration::from_secs(10);
    plan.mcp = Some({
        let mut changed = McpPlan::default();
        changed.faults = vec![McpRule::builder()
            .when({
                let mut changed = McpMatch::default();
                changed.tool = Some("create_ticket".to_owned());
                changed.times = Some(1);
                changed
            })
            .fault(McpFault::Stall {
                then: StallThen::Commit,
                until: Release::ClientGone,
                stream: Stream::Nothing,
            })
            .cancel(CancelPolicy::Ignore)
            .build()];
        changed.tasks.enabled = false;
        changed
    });
    Simulator::start(plan, ServeOptions::default())
        .await
        .unwrap()
}

fn common(sim: &Simulator) -> Common {
    let now = jiff::Timestamp::from_millisecond(sim.now_ms()).unwrap();
    let tools = vec![
        ContractTool::new("create_ticket", "tickets"),
        ContractTool::new("create_charge", "charges")
            .with_key("idempotency_key", Some(7 * 24 * 3600)),
    ];
    let retrieval = ContractRetrieval::new("get_operation", "list_recent_operations", 7 * 86_400);
    let client = ClientWindows::new("custom", 1.0).with_wall_clock_ms(Some(1000));
    let mcp = ContractMcp::new(
        sim.mcp_url().unwrap(),
        "2025-11-25",
        tools,
        Some(retrieval),
        false,
        client,
    );
    let idempotency = ContractIdempotency::new("none", "Idempotency-Key", 86_400);
    let contract =
        Contract::new("generic", idempotency, ContractLookup::NONE, false).with_mcp(Some(mcp));
    Common::new(
        now.to_string(),
        ProviderInfo::new(sim.base_url(), TENANT, contract),
        1000,
    )
}

fn operation() -> Operation {
    let mut args = serde_json::Map::new();
    args.insert("subject".to_owned(), json!("printer on fire"));
    Operation::new("op-1", "call_tool", "tickets", args).with_tool(Some("create_ticket".to_owned()))
}

/// One adapter call, as the harness makes it: the call name appended, one JSON object in, one out.
async fn call(argv: &[String], name: &str, request: Value, state: &std::path::Path) -> Value {
    let mut full = argv.to_vec();
    full.push(name.to_owned());
    let mut child = tokio::process::Command::new(&full[0])
        .args(&full[1..])
        .env("LOSTREPLY_STATE_DIR", state)
        .env("LOSTREPLY_PROTOCOL", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(request.to_string().as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the adapter call ends")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{full:?}: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{full:?}: not JSON ({e}): {stdout}\n{stderr}"))
}

fn ticket_calls(sim: &Simulator) -> usize {
    sim.journal()
        .iter()
        .filter(|e| {
            e.rpc.as_ref().is_some_and(|r| {
                r.method == "tools/call" && r.tool.as_deref() == Some("create_ticket")
            })
        })
        .count()
}

async fn quiet(sim: &Simulator) {
    let busy = sim.wait_quiet(Duration::from_secs(15)).await;
    assert!(busy.is_empty(), "still busy: {busy:?}");
}

async fn correct_adapter_never_calls_again_and_reconciles(sdk: Sdk) {
    let argv = command(sdk, script(sdk));
    let state = tempfile::tempdir().unwrap();
    let sim = first_call_stalls().await;
    let mut execute = serde_json::to_value(common(&sim)).unwrap();
    execute["operation"] = serde_json::to_value(operation()).unwrap();
    let first = call(&argv, "execute", execute, state.path()).await;
    assert_eq!(
        first["outcome"], "unknown",
        "a lost answer is not a failure: {first}"
    );
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 1, "the abandoned call was paid for");
    let mut reconcile = serde_json::to_value(common(&sim)).unwrap();
    reconcile["operation_id"] = json!("op-1");
    let found = call(&argv, "reconcile", reconcile.clone(), state.path()).await;
    assert_eq!(found["outcome"], "succeeded", "{found}");
    assert_eq!(found["provider_ref"], json!(sim.ledger()[0].id), "{found}");
    let status = call(&argv, "status", reconcile, state.path()).await;
    assert_eq!(status["outcome"], "succeeded", "{status}");
    assert_eq!(ticket_calls(&sim), 1, "the tool was called once, ever");
    assert_eq!(sim.ledger().len(), 1);
}

async fn naive_adapter_pays_twice(sdk: Sdk) {
    let mut argv = command(sdk, script(sdk));
    argv.push("--naive".to_owned());
    let state = tempfile::tempdir().unwrap();
    let sim = first_call_stalls().await;
    let mut execute = serde_json::to_value(common(&sim)).unwrap();
    execute["operation"] = serde_json::to_value(operation()).unwrap();
    let said = call(&argv, "execute", execute, state.path()).await;
    quiet(&sim).await;
    assert_eq!(
        ticket_calls(&sim),
        2,
        "called again on the timeout error: {said}"
    );
    assert_eq!(
        sim.ledger().len(),
        2,
        "two effects for one operation (the flaw a scenario catches): {said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_python,
    ignore = "needs the Python MCP client library: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
async fn python_adapter_never_calls_again_and_reconciles_by_retrieval() {
    let _alone = common::module_alone(module_path!());
    correct_adapter_never_calls_again_and_reconciles(Sdk::Python).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_python,
    ignore = "needs the Python MCP client library: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
async fn python_naive_adapter_calls_again_on_the_timeout_error() {
    let _alone = common::module_alone(module_path!());
    naive_adapter_pays_twice(Sdk::Python).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_node,
    ignore = "needs node and the TypeScript MCP client library: npm ci --prefix examples/mcp-clients/node"
)]
async fn typescript_adapter_never_calls_again_and_reconciles_by_retrieval() {
    let _alone = common::module_alone(module_path!());
    correct_adapter_never_calls_again_and_reconciles(Sdk::Node).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_node,
    ignore = "needs node and the TypeScript MCP client library: npm ci --prefix examples/mcp-clients/node"
)]
async fn typescript_naive_adapter_calls_again_on_the_timeout_error() {
    let _alone = common::module_alone(module_path!());
    naive_adapter_pays_twice(Sdk::Node).await;
}

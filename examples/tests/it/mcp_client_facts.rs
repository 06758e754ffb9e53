//! What the two real MCP client libraries do when a tool call's answer is
//! lost, observed against the fake MCP server: the error each raises when its
//! own timeout fires, whether it sends `notifications/cancelled` (seen in the
//! server's journal), the effect counted in the ledger, an SSE stream that ends
//! without the response, and whether progress restarts the timer. These are
//! facts about released libraries (docs/mcp-clients.md records them); the
//! assertions say what was observed, not what a spec hoped.
//!
//! Each test starts a simulator on 127.0.0.1:0 and runs one driver process
//! (examples/mcp-clients/{python,node}/fact_driver.*) that makes one call.
//! No sleeps: the tests wait on process exit, journal entries and the ledger.

use std::time::Duration;

use crate::common;
use crate::common::mcp_clients::{command, run_json, Sdk};
use lostreply_simulator::mcp::{CancelPolicy, McpFault, McpMatch, McpPlan, McpRule, Stream};
use lostreply_simulator::{
    JournalEntry, Plan, Release, ResponseFate, ServeOptions, Simulator, StallThen,
};
use serde_json::{json, Value};

const TENANT: &str = "sk_test_a";

fn on_tickets(fault: McpFault, cancel: CancelPolicy) -> McpRule {
    McpRule::builder()
        .when({
            let mut changed = McpMatch::default();
            changed.tool = Some("create_ticket".to_owned());
            changed
        })
        .fault(fault)
        .cancel(cancel)
        .build()
}

async fn sim_with(rule: McpRule) -> Simulator {
    let mut plan = Plan::default();
    plan.limits.stall_cap = Duration::from_secs(10);
    plan.mcp = Some({
        let mut changed = McpPlan::default();
        changed.faults = vec![rule];
        changed
    });
    Simulator::start(plan, ServeOptions::default())
        .await
        .unwrap()
}

fn config(sim: &Simulator, extra: Value) -> Value {
    let mut config = json!({
        "url": sim.mcp_url().unwrap(),
        "credential": TENANT,
        "tool": "create_ticket",
        "arguments": {"subject": "printer on fire"},
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config
}

fn rpc_entries(sim: &Simulator, method: &str) -> Vec<JournalEntry> {
    sim.journal()
        .into_iter()
        .filter(|e| e.rpc.as_ref().is_some_and(|r| r.method == method))
        .collect()
}

fn the_call(sim: &Simulator) -> JournalEntry {
    let calls = rpc_entries(sim, "tools/call");
    assert_eq!(calls.len(), 1, "one tools/call, never a second: {calls:?}");
    calls.into_iter().next().unwrap()
}

async fn quiet(sim: &Simulator) {
    let busy = sim.wait_quiet(Duration::from_secs(15)).await;
    assert!(busy.is_empty(), "still busy: {busy:?}");
}

/// What a stalled call shows: the SDK's timeout error, the courtesy cancel
/// (journaled on the held call, which the server still holds when it
/// arrives), and the effect that commits after the client gave up.
async fn a_stalled_call(sdk: Sdk, timeout: Value) -> Value {
    let argv = command(sdk, sdk_driver(sdk));
    let sim = sim_with(on_tickets(
        McpFault::Stall {
            then: StallThen::Commit,
            until: Release::StepEnd(1),
            stream: Stream::Nothing,
        },
        CancelPolicy::Ignore,
    ))
    .await;
    sim.begin_step(1, None);
    let seen = run_json(&argv, &config(&sim, timeout)).await;
    // The driver has exited: whatever it sent has been journaled.
    let call = the_call(&sim);
    let cancels = rpc_entries(&sim, "notifications/cancelled");
    assert_eq!(sim.ledger().len(), 0, "held: nothing committed yet");
    sim.end_step(1);
    quiet(&sim).await;
    assert_eq!(
        sim.ledger().len(),
        1,
        "the call the client gave up on was paid for"
    );
    let cancel = call.rpc.unwrap().cancelled;
    json!({
        "seen": seen,
        "cancel_posts": cancels.len(),
        "cancel_journaled_on_call": cancel.is_some(),
        "cancel_seq": cancel.map(|c| c.request_seq),
        "cancel_post_seqs": cancels.iter().map(|e| e.seq).collect::<Vec<_>>(),
    })
}

fn sdk_driver(sdk: Sdk) -> &'static str {
    match sdk {
        Sdk::Python => "fact_driver.py",
        Sdk::Node => "fact_driver.mjs",
    }
}

fn assert_timed_out_and_cancelled(observed: &Value) {
    let seen = &observed["seen"];
    assert_eq!(seen["kind"], "error", "{observed}");
    assert_eq!(seen["code"], -32001, "REQUEST_TIMEOUT: {observed}");
    assert_eq!(
        observed["cancel_posts"], 1,
        "one courtesy cancel: {observed}"
    );
    // The server names the held call the cancel was for, unless the cancel
    // overtook the call's own registration: both SDKs start their timer when
    // the request is handed to the transport, not when the server has it, so
    // on a starved machine the two POSTs can cross (seen once in a loop of runs).
    if observed["cancel_journaled_on_call"] == true {
        assert_eq!(
            observed["cancel_seq"], observed["cancel_post_seqs"][0],
            "{observed}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_python,
    ignore = "needs the Python MCP client library: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
async fn python_read_timeout_raises_32001_and_sends_a_cancel_while_the_effect_commits() {
    let _alone = common::module_alone(module_path!());
    let observed = a_stalled_call(Sdk::Python, json!({"timeout_ms": 1000})).await;
    eprintln!("python, stalled call: {observed}");
    assert_timed_out_and_cancelled(&observed);
    assert_eq!(observed["seen"]["type"], "MCPError", "{observed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_node,
    ignore = "needs node and the TypeScript MCP client library: npm ci --prefix examples/mcp-clients/node"
)]
async fn typescript_timeout_option_raises_32001_and_sends_a_cancel_while_the_effect_commits() {
    let _alone = common::module_alone(module_path!());
    let observed = a_stalled_call(Sdk::Node, json!({"timeout_ms": 1000})).await;
    eprintln!("typescript, stalled call: {observed}");
    assert_timed_out_and_cancelled(&observed);
    assert_eq!(observed["seen"]["type"], "McpError", "{observed}");
}

/// Calls the Python SDK gives up on at its own timeout while the server
/// holds them before the commit, under `cancel: honour`. The SDK posts
/// `notifications/cancelled` on a connection of its own and, as its client
/// exits, deletes the session and closes the call's connection; these reach
/// the server in either order (the journal says which came first:
/// `cancelled`, or `stalled` with the client gone), and nothing commits
/// either way. The hold is the one a close that came first would turn into
/// a commit were the leaving not taken as the cancel: released by the
/// client leaving, with `then: commit`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_python,
    ignore = "needs the Python MCP client library: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
async fn python_timeout_under_honour_never_commits_whichever_of_close_and_cancel_comes_first() {
    const TRIES: usize = 30;
    let _alone = common::module_alone(module_path!());
    let argv = command(Sdk::Python, sdk_driver(Sdk::Python));
    let sim = sim_with(on_tickets(
        McpFault::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
            stream: Stream::Nothing,
        },
        CancelPolicy::Honour,
    ))
    .await;
    let seen = run_json(
        &argv,
        &config(&sim, json!({"timeout_ms": 300, "repeat": TRIES})),
    )
    .await;
    quiet(&sim).await;
    let outcomes = seen["calls"].as_array().unwrap();
    assert_eq!(outcomes.len(), TRIES, "{seen}");
    for outcome in outcomes {
        assert_eq!(outcome["code"], -32001, "REQUEST_TIMEOUT: {outcome}");
    }
    let calls = rpc_entries(&sim, "tools/call");
    assert_eq!(calls.len(), TRIES, "one tools/call per try, never a second");
    let committed: Vec<&JournalEntry> = calls.iter().filter(|c| c.effect.is_some()).collect();
    assert_eq!(
        sim.ledger().len(),
        0,
        "held calls committed under honour: {committed:?}"
    );
    let cancel_first = calls
        .iter()
        .filter(|call| call.fate == ResponseFate::Cancelled)
        .count();
    let close_first = calls
        .iter()
        .filter(|call| call.fate == ResponseFate::Stalled { client_left: true })
        .count();
    // A cancel honoured while the client still waits ends the call's
    // connection without a response; the SDK's request task raises that
    // when the client closes, after `call_tool` has already timed out.
    let mut exit_errors = std::collections::BTreeMap::<&str, usize>::new();
    for error in outcomes.iter().filter_map(|o| o["exit_error"].as_str()) {
        *exit_errors.entry(error).or_default() += 1;
    }
    eprintln!(
        "python, honour, {TRIES} tries: cancel first {cancel_first}, close first {close_first}; \
         raised on close: {exit_errors:?}"
    );
    assert_eq!(cancel_first + close_first, TRIES, "{calls:?}");
}

/// An SSE answer that sends a priming event, then closes without the
/// response; the work commits. The SDK's own timeout is a generous bound here.
async fn a_stream_that_ends(sdk: Sdk) -> Value {
    let argv = command(sdk, sdk_driver(sdk));
    let sim = sim_with(on_tickets(
        McpFault::PrimeThenClose {
            then: StallThen::Commit,
        },
        CancelPolicy::Ignore,
    ))
    .await;
    let seen = run_json(&argv, &config(&sim, json!({"timeout_ms": 5000}))).await;
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 1, "the work committed: {seen}");
    the_call(&sim);
    let methods: Vec<String> = sim
        .journal()
        .iter()
        .map(|e| {
            let rpc = e.rpc.as_ref().map(|r| r.method.clone()).unwrap_or_default();
            format!("{} {rpc}", e.method)
        })
        .collect();
    json!({"seen": seen, "requests": methods})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_python,
    ignore = "needs the Python MCP client library: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
async fn python_sse_stream_that_ends_without_the_response() {
    let _alone = common::module_alone(module_path!());
    let observed = a_stream_that_ends(Sdk::Python).await;
    eprintln!("python, stream ended: {observed}");
    // It tries to resume the stream (GET with Last-Event-ID; this server offers
    // no GET stream and answers 405), then gives up with CONNECTION_CLOSED
    // long before its own 5 s read timeout.
    assert_eq!(observed["seen"]["kind"], "error", "{observed}");
    assert_eq!(observed["seen"]["code"], -32000, "{observed}");
    assert!(
        observed["seen"]["message"]
            .as_str()
            .unwrap()
            .contains("SSE stream ended"),
        "{observed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_node,
    ignore = "needs node and the TypeScript MCP client library: npm ci --prefix examples/mcp-clients/node"
)]
async fn typescript_sse_stream_that_ends_without_the_response() {
    let _alone = common::module_alone(module_path!());
    let observed = a_stream_that_ends(Sdk::Node).await;
    eprintln!("typescript, stream ended: {observed}");
    // It tries to resume (GET, answered 405 here) and then keeps waiting: the
    // end of the stream is not reported; only its own timeout ends the call.
    assert_eq!(observed["seen"]["kind"], "error", "{observed}");
    assert_eq!(observed["seen"]["code"], -32001, "{observed}");
    assert!(
        observed["seen"]["message"]
            .as_str()
            .unwrap()
            .contains("Request timed out"),
        "{observed}"
    );
}

/// Slow work that sends progress every 50 ms for 1.5 s, against a 500 ms timeout.
async fn progress_against_a_timeout(sdk: Sdk, options: Value) -> Value {
    let argv = command(sdk, sdk_driver(sdk));
    let sim = sim_with(on_tickets(
        McpFault::Slow {
            work: Duration::from_millis(1500),
            stream: Stream::Progress {
                every: Duration::from_millis(50),
            },
        },
        CancelPolicy::Ignore,
    ))
    .await;
    let mut extra = json!({"timeout_ms": 500, "progress": true});
    for (k, v) in options.as_object().unwrap() {
        extra[k] = v.clone();
    }
    let seen = run_json(&argv, &config(&sim, extra)).await;
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 1, "slow work commits: {seen}");
    the_call(&sim);
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_python,
    ignore = "needs the Python MCP client library: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
async fn python_progress_never_restarts_read_timeout() {
    let _alone = common::module_alone(module_path!());
    let seen = progress_against_a_timeout(Sdk::Python, json!({})).await;
    eprintln!("python, progress vs read_timeout: {seen}");
    assert_eq!(seen["kind"], "error", "{seen}");
    assert_eq!(seen["code"], -32001, "{seen}");
    assert!(
        seen["progress"].as_u64().unwrap() >= 1,
        "progress arrived before the timeout: {seen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_mcp_node,
    ignore = "needs node and the TypeScript MCP client library: npm ci --prefix examples/mcp-clients/node"
)]
async fn typescript_progress_restarts_the_timeout_only_when_asked() {
    let _alone = common::module_alone(module_path!());
    let plain = progress_against_a_timeout(Sdk::Node, json!({})).await;
    eprintln!("typescript, progress, default options: {plain}");
    assert_eq!(plain["kind"], "error", "{plain}");
    assert_eq!(plain["code"], -32001, "{plain}");
    assert!(plain["progress"].as_u64().unwrap() >= 1, "{plain}");

    let reset = progress_against_a_timeout(Sdk::Node, json!({"reset_on_progress": true})).await;
    eprintln!("typescript, progress, resetTimeoutOnProgress: {reset}");
    assert_eq!(reset["kind"], "result", "{reset}");
    assert_eq!(reset["is_error"], false, "{reset}");

    // maxTotalTimeout is the wall clock that progress does not extend.
    let capped = progress_against_a_timeout(
        Sdk::Node,
        json!({"reset_on_progress": true, "max_total_ms": 700}),
    )
    .await;
    eprintln!("typescript, progress, resetTimeoutOnProgress + maxTotalTimeout: {capped}");
    assert_eq!(capped["kind"], "error", "{capped}");
    assert_eq!(capped["code"], -32001, "{capped}");
}

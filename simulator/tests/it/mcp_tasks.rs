//! Tasks (2025-11-25): a task-augmented call becomes a task that ends on the
//! simulator clock; completion commits; failure and expiry do not; tasks are
//! bound to the credential.

use std::time::Duration;

use crate::common::mcp::*;
use crate::common::*;
use lostreply_simulator::mcp::{CancelPolicy, McpFault, McpMatch, McpRule, TaskEnd};
use serde_json::{json, Value};

fn task_rule(then: TaskEnd, after_s: u64) -> McpRule {
    McpRule::builder()
        .when(McpMatch::default())
        .fault(McpFault::Task {
            then,
            after: Duration::from_secs(after_s),
        })
        .cancel(CancelPolicy::Ignore)
        .build()
}

async fn start_task(mcp: &mut Mcp) -> String {
    let created = mcp
        .request(
            "tools/call",
            json!({"name": "create_ticket", "arguments": {"t": 1}, "task": {"ttl": 60_000}}),
        )
        .await
        .result();
    let task = &created["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60_000);
    assert!(task["pollInterval"].is_u64());
    assert!(task["createdAt"].is_string());
    task["taskId"].as_str().unwrap().to_owned()
}

async fn task_get(mcp: &mut Mcp, id: &str) -> Value {
    mcp.request("tasks/get", json!({"taskId": id}))
        .await
        .message()
}

#[tokio::test]
async fn a_task_completes_on_the_clock_and_commits_then() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = session(&sim).await;
    let id = start_task(&mut mcp).await;
    assert_eq!(sim.ledger().len(), 0);
    assert_eq!(task_get(&mut mcp, &id).await["result"]["status"], "working");
    let listed = mcp.request("tasks/list", json!({})).await.result();
    assert_eq!(listed["tasks"][0]["taskId"], id.as_str());

    // tasks/result blocks until the clock ends the task.
    let mut waiter = Mcp::new(&sim, A);
    waiter.session = mcp.session.clone();
    waiter.version = mcp.version.clone();
    let task_id = id.clone();
    let blocked = tokio::spawn(async move {
        waiter
            .request("tasks/result", json!({"taskId": task_id}))
            .await
    });
    wait_until("tasks/result is waiting", || {
        sim.journal()
            .iter()
            .any(|e| e.rpc.as_ref().is_some_and(|r| r.method == "tasks/result"))
    })
    .await;
    sim.advance(Duration::from_secs(5));
    let result = blocked.await.unwrap().result();
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let ledger = sim.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(
        result["structuredContent"]["operation_id"],
        ledger[0].id.as_str()
    );
    let call = sim
        .journal()
        .into_iter()
        .find(|e| {
            e.rpc
                .as_ref()
                .is_some_and(|r| r.task.as_deref() == Some(id.as_str()))
        })
        .unwrap();
    assert_eq!(call.effect.as_deref(), Some(ledger[0].id.as_str()));
    assert_eq!(ledger[0].request(), Some(call.seq));
    assert_eq!(
        task_get(&mut mcp, &id).await["result"]["status"],
        "completed"
    );
    // The operation retrieves like any other.
    let found = mcp
        .call("get_operation", json!({"id": ledger[0].id}))
        .await
        .result();
    assert_eq!(found["structuredContent"]["found"], true);
}

#[tokio::test]
async fn failed_and_expired_tasks_commit_nothing_and_expiry_forgets() {
    let sim = mcp_sim(vec![task_rule(TaskEnd::Fail, 2)]).await;
    let mut mcp = session(&sim).await;
    let id = start_task(&mut mcp).await;
    sim.advance(Duration::from_secs(2));
    assert_eq!(task_get(&mut mcp, &id).await["result"]["status"], "failed");
    let result = mcp
        .request("tasks/result", json!({"taskId": id}))
        .await
        .result();
    assert_eq!(result["isError"], true);
    assert_eq!(sim.ledger().len(), 0);

    let sim = mcp_sim(vec![task_rule(TaskEnd::Expire, 2)]).await;
    let mut mcp = session(&sim).await;
    let id = start_task(&mut mcp).await;
    sim.advance(Duration::from_secs(30));
    assert_eq!(task_get(&mut mcp, &id).await["result"]["status"], "working");
    let unknown = task_get(&mut mcp, "task_nope").await;
    sim.advance(Duration::from_secs(30));
    let forgotten = task_get(&mut mcp, &id).await;
    assert_eq!(forgotten["error"], unknown["error"]);
    assert_eq!(forgotten["error"]["code"], -32602);
    assert_eq!(sim.ledger().len(), 0);
}

#[tokio::test]
async fn tasks_are_bound_to_the_credential_and_cancel_stops_them() {
    let sim = mcp_sim(vec![]).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let id = start_task(&mut a).await;
    let theirs = task_get(&mut b, &id).await;
    let unknown = task_get(&mut b, "task_nope").await;
    assert_eq!(theirs["error"], unknown["error"]);
    assert_eq!(
        b.request("tasks/list", json!({})).await.result()["tasks"],
        json!([])
    );
    let refused = b
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .message();
    assert_eq!(refused["error"]["code"], -32602);

    let cancelled = a
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .result();
    assert_eq!(cancelled["status"], "cancelled");
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.ledger().len(), 0, "a cancelled task never commits");
    let again = a
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .message();
    assert_eq!(again["error"]["code"], -32602);
}

#[tokio::test]
async fn the_older_revision_has_no_tasks() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = Mcp::connect(&sim, A, "2025-06-18").await;
    let result = mcp
        .request(
            "tools/call",
            json!({"name": "create_ticket", "arguments": {"t": 1}, "task": {"ttl": 1000}}),
        )
        .await
        .result();
    assert_eq!(
        result["isError"], false,
        "params.task is ignored: served at once"
    );
    assert_eq!(sim.ledger().len(), 1);
    let get = mcp
        .request("tasks/get", json!({"taskId": "x"}))
        .await
        .message();
    assert_eq!(get["error"]["code"], -32601);
}

//! A long MCP run stays bounded: an operation goes with its object when the
//! store summarises that object out past `limits.max_objects` (whether an
//! MCP call or a `/v1` create pushed it out), and its id then answers exactly
//! like an id that never existed.

use crate::common::mcp::*;
use crate::common::*;
use serde_json::{json, Value};

async fn get_operation(mcp: &mut Mcp, id: &str) -> Value {
    mcp.call("get_operation", json!({"id": id})).await.result()
}

async fn operations_held(sim: &lostreply_simulator::Simulator) -> (u64, u64) {
    let (status, body) = json(get(sim, A, "/_lostreply/mcp").await).await;
    assert_eq!(status, 200, "{body}");
    let operations = &body["operations"];
    (
        operations["held"].as_u64().unwrap(),
        operations["summarised"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn operations_go_with_their_summarised_objects_and_answer_as_unknown() {
    let mut plan = mcp_plan(vec![]);
    plan.limits.max_objects = 10;
    let sim = start(plan).await;
    let mut a = session(&sim).await;
    let mut ids = Vec::new();
    for n in 0..50 {
        let result = a.call("create_ticket", json!({"n": n})).await.result();
        assert_eq!(result["isError"], false, "call {n}: {result}");
        let id = result["structuredContent"]["operation_id"].as_str();
        ids.push(id.unwrap().to_owned());
    }
    assert_eq!(sim.ledger_len(), 10);
    assert_eq!(operations_held(&sim).await, (10, 40));

    let unknown = get_operation(&mut a, "tkt_doesnotexist").await;
    assert_eq!(unknown["structuredContent"]["found"], false);
    let summarised = get_operation(&mut a, &ids[0]).await;
    assert_eq!(summarised.to_string(), unknown.to_string());
    let newest = get_operation(&mut a, &ids[49]).await;
    assert_eq!(newest["structuredContent"]["found"], true);
    let listed = a.call("list_recent_operations", json!({})).await.result();
    let listed: Vec<&str> = listed["structuredContent"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["operation_id"].as_str().unwrap())
        .collect();
    let held: Vec<&str> = ids[40..].iter().rev().map(String::as_str).collect();
    assert_eq!(listed, held, "only the operations whose objects are held");

    // `/v1` creates summarise the rest out: their ids answer as unknown at
    // once, and the next MCP request drops them.
    for n in 0..10 {
        let (status, _) = json(post(&sim, A, "tickets", &json!({"v1": n}), None).await).await;
        assert_eq!(status, 201);
    }
    let pushed_out = get_operation(&mut a, &ids[49]).await;
    assert_eq!(pushed_out.to_string(), unknown.to_string());
    assert_eq!(operations_held(&sim).await, (0, 50));
    let listed = a.call("list_recent_operations", json!({})).await.result();
    assert_eq!(listed["structuredContent"]["operations"], json!([]));
}

#[tokio::test]
async fn a_summarised_operation_raises_like_an_unknown_one_in_the_sdk_style() {
    let mut plan = mcp_plan(vec![]);
    plan.limits.max_objects = 2;
    plan.mcp.as_mut().unwrap().errors = lostreply_simulator::mcp::ErrorStyle::Sdk;
    let sim = start(plan).await;
    let mut a = session(&sim).await;
    let first = a.call("create_ticket", json!({"n": 0})).await.result();
    let id = first["structuredContent"]["operation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    for n in 1..5 {
        a.call("create_ticket", json!({"n": n})).await;
    }
    assert_eq!(operations_held(&sim).await, (2, 3));
    let summarised = get_operation(&mut a, &id).await;
    assert_eq!(summarised["isError"], true);
    let unknown = get_operation(&mut a, "tkt_doesnotexist").await;
    assert_eq!(
        summarised.to_string().replace(&id, "ID"),
        unknown.to_string().replace("tkt_doesnotexist", "ID"),
        "alike but for the id each caller sent"
    );
}

//! Retrieval: get_operation answers the original payload byte for byte;
//! not-yours, unknown and expired ids answer alike (in both error styles);
//! list_recent_operations; the retrieval defects.

use std::time::Duration;

use crate::common::mcp::*;
use crate::common::*;
use lostreply_simulator::mcp::{Defect, ErrorStyle};
use lostreply_simulator::RequestKind;
use serde_json::{json, Value};

async fn with_defect(defect: Option<Defect>) -> lostreply_simulator::Simulator {
    let mut plan = mcp_plan(vec![]);
    if let Some(defect) = defect {
        plan.mcp.as_mut().unwrap().defects.insert(defect);
    }
    start(plan).await
}

async fn get(mcp: &mut Mcp, id: &str) -> Value {
    mcp.call("get_operation", json!({"id": id})).await.result()
}

#[tokio::test]
async fn get_operation_answers_the_original_payload_and_alike_for_not_yours_unknown_expired() {
    let sim = with_defect(None).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let original = a
        .call("create_ticket", json!({"title": "x"}))
        .await
        .result();
    let payload = &original["structuredContent"];
    let id = payload["operation_id"].as_str().unwrap().to_owned();

    let found = get(&mut a, &id).await;
    assert_eq!(found["isError"], false);
    let content = &found["structuredContent"];
    assert_eq!(content["found"], true);
    assert_eq!(content["retention_s"], 7 * 24 * 3600);
    assert_eq!(
        content["result"].to_string(),
        payload.to_string(),
        "byte-identical"
    );
    let entry = sim.journal().into_iter().last().unwrap();
    assert_eq!(entry.kind, Some(RequestKind::Retrieve));

    let not_yours = get(&mut b, &id).await;
    let unknown = get(&mut a, "tkt_doesnotexist").await;
    assert_eq!(not_yours.to_string(), unknown.to_string());
    assert_eq!(unknown["structuredContent"]["found"], false);
    sim.advance(Duration::from_secs(7 * 24 * 3600));
    let expired = get(&mut a, &id).await;
    assert_eq!(expired.to_string(), unknown.to_string());
    let listed = a.call("list_recent_operations", json!({})).await.result();
    assert_eq!(listed["structuredContent"]["operations"], json!([]));
}

#[tokio::test]
async fn list_recent_operations_is_per_credential_newest_first_and_bounded() {
    let mut plan = mcp_plan(vec![]);
    plan.mcp.as_mut().unwrap().retrieval.list_limit = 2;
    let sim = start(plan).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let empty = b.call("list_recent_operations", json!({})).await.result();
    assert_eq!(empty["isError"], false, "an empty list is a normal answer");
    assert_eq!(empty["structuredContent"]["operations"], json!([]));
    assert_eq!(empty["structuredContent"]["retention_s"], 7 * 24 * 3600);
    let mut ids = Vec::new();
    for n in 0..3 {
        let result = a.call("create_ticket", json!({"n": n})).await.result();
        ids.push(
            result["structuredContent"]["operation_id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        sim.advance(Duration::from_secs(1));
    }
    // A `/v1` object is not an MCP operation.
    post(&sim, A, "tickets", &json!({"n": 9}), None).await;
    let listed = a.call("list_recent_operations", json!({})).await.result();
    let got: Vec<&str> = listed["structuredContent"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["operation_id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    let arguments: Vec<&Value> = listed["structuredContent"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["arguments"])
        .collect();
    assert_eq!(arguments, [&json!({"n": 2}), &json!({"n": 1})]);
    assert_eq!(
        sim.journal().into_iter().last().unwrap().kind,
        Some(RequestKind::List)
    );
    let still_empty = b.call("list_recent_operations", json!({})).await.result();
    assert_eq!(still_empty["structuredContent"]["operations"], json!([]));
}

#[tokio::test]
async fn a_listed_operation_carries_the_arguments_its_payload_holds_without_the_key() {
    let sim = with_defect(None).await;
    let mut a = session(&sim).await;
    let made = a
        .call(
            "create_charge",
            json!({"amount": 1200, "currency": "eur", "idempotency_key": "k-1"}),
        )
        .await
        .result();
    let listed = a.call("list_recent_operations", json!({})).await.result();
    let item = &listed["structuredContent"]["operations"][0];
    assert_eq!(
        item["operation_id"],
        made["structuredContent"]["operation_id"]
    );
    assert_eq!(
        item["arguments"],
        json!({"amount": 1200, "currency": "eur"})
    );
    assert_eq!(item["arguments"], made["structuredContent"]["arguments"]);
    for kept in ["tool", "resource", "status", "created_at"] {
        assert!(item.get(kept).is_some(), "{kept} is still listed");
    }
}

#[tokio::test]
async fn retrieval_defects_leak_error_out_mismatch_or_want_the_key() {
    let sim = with_defect(Some(Defect::NotYoursDistinct)).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let made = a.call("create_ticket", json!({"t": 1})).await.result();
    let id = made["structuredContent"]["operation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(
        get(&mut b, &id).await.to_string(),
        get(&mut b, "tkt_nope").await.to_string()
    );

    let sim = with_defect(Some(Defect::EmptyListIsError)).await;
    let mut a = session(&sim).await;
    let listed = a.call("list_recent_operations", json!({})).await.result();
    assert_eq!(listed["isError"], true);

    let sim = with_defect(Some(Defect::PayloadMismatch)).await;
    let mut a = session(&sim).await;
    let made = a.call("create_ticket", json!({"t": 1})).await.result();
    let id = made["structuredContent"]["operation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let found = get(&mut a, &id).await;
    assert_ne!(
        found["structuredContent"]["result"],
        made["structuredContent"]
    );

    let sim = with_defect(Some(Defect::KeyInArguments)).await;
    let mut a = session(&sim).await;
    let refused = a.call("list_recent_operations", json!({})).await.result();
    assert_eq!(refused["structuredContent"]["status"], 401);
    let with_key = a
        .call("list_recent_operations", json!({"api_key": A}))
        .await
        .result();
    assert_eq!(with_key["isError"], false);
}

/// The one text of a tool error result.
fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn sdk_style_raises_for_an_unknown_tool_and_echoes_the_id_alike_for_every_reader() {
    let mut plan = mcp_plan(vec![]);
    plan.mcp.as_mut().unwrap().errors = ErrorStyle::Sdk;
    let sim = start(plan).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let unknown_tool = a.call("no_such_tool", json!({})).await;
    assert!(
        unknown_tool.message().get("error").is_none(),
        "a result, not a JSON-RPC error"
    );
    let unknown_tool = unknown_tool.result();
    assert_eq!(unknown_tool["isError"], true);
    assert_eq!(text(&unknown_tool), "Unknown tool: no_such_tool");
    assert!(unknown_tool.get("structuredContent").is_none());

    let made = a.call("create_ticket", json!({"t": 1})).await.result();
    let id = made["structuredContent"]["operation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let not_yours = get(&mut b, &id).await;
    let unknown = get(&mut b, "tkt_nope").await;
    assert_eq!(not_yours["isError"], true);
    assert_eq!(text(&not_yours), format!("operation {id} not found"));
    assert_eq!(text(&unknown), "operation tkt_nope not found");
    assert_eq!(
        not_yours.to_string().replace(&id, "ID"),
        unknown.to_string().replace("tkt_nope", "ID")
    );
    sim.advance(Duration::from_secs(7 * 24 * 3600));
    let expired = get(&mut a, &id).await;
    assert_eq!(text(&expired), format!("operation {id} not found"));
}

#[tokio::test]
async fn without_retrieval_an_sdk_style_server_raises_for_the_retrieval_tools() {
    let mut plan = mcp_plan(vec![]);
    let mcp = plan.mcp.as_mut().unwrap();
    mcp.errors = ErrorStyle::Sdk;
    mcp.retrieval.enabled = false;
    let sim = start(plan).await;
    let mut a = session(&sim).await;
    let listed = a.call("list_recent_operations", json!({})).await.result();
    assert_eq!(listed["isError"], true);
    assert_eq!(text(&listed), "Unknown tool: list_recent_operations");
}

#[tokio::test]
async fn leaking_defects_show_another_credential_s_operations() {
    let sim = with_defect(Some(Defect::ListShowsOtherTenants)).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let made = a.call("create_ticket", json!({"t": 1})).await.result();
    let id = &made["structuredContent"]["operation_id"];
    let listed = b.call("list_recent_operations", json!({})).await.result();
    assert_eq!(
        listed["structuredContent"]["operations"][0]["operation_id"],
        *id
    );

    let sim = with_defect(Some(Defect::NotYoursEchoLeaks)).await;
    let mut a = session(&sim).await;
    let mut b = Mcp::connect(&sim, B, "2025-11-25").await;
    let made = a
        .call("create_ticket", json!({"title": "secret"}))
        .await
        .result();
    let id = made["structuredContent"]["operation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let not_yours = text(&get(&mut b, &id).await);
    assert!(
        not_yours.starts_with(&format!("operation {id} not found (")),
        "{not_yours}"
    );
    assert!(
        not_yours.contains("create_ticket") && not_yours.contains("secret"),
        "{not_yours}"
    );
    assert_eq!(
        text(&get(&mut b, "tkt_nope").await),
        "operation tkt_nope not found"
    );
    assert_eq!(
        text(&get(&mut a, "tkt_nope").await),
        "operation tkt_nope not found"
    );
}

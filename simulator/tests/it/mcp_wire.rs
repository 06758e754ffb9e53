//! The MCP endpoint's wire: lifecycle on both revisions, sessions, auth,
//! JSON versus SSE answers, tools/list and the defects it shows.

use crate::common::mcp::*;
use crate::common::*;
use lostreply_simulator::mcp::{AnswerStyle, Defect, McpPlan};
use lostreply_simulator::{RequestKind, ResponseFate};
use serde_json::json;

#[tokio::test]
async fn without_an_mcp_plan_the_endpoint_is_not_found() {
    let sim = start(plan()).await;
    assert_eq!(sim.mcp_url(), None);
    let response = client(2000)
        .post(format!("{}/mcp", sim.base_url()))
        .bearer_auth(A)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
}

#[tokio::test]
async fn initialize_negotiates_each_revision_and_falls_back_to_the_first() {
    let sim = mcp_sim(vec![]).await;
    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
    ] {
        let mut mcp = Mcp::new(&sim, A);
        let answer = mcp
            .request(
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {}}),
            )
            .await;
        assert_eq!(answer.status, 200);
        let result = answer.result();
        assert_eq!(result["protocolVersion"], got);
        assert_eq!(result["serverInfo"]["name"], "lostreply");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], false);
        assert_eq!(
            result["capabilities"].get("tasks").is_some(),
            got == "2025-11-25"
        );
        assert!(answer.session.is_some());
    }
    let mcp = Mcp::connect(&sim, A, "2025-06-18").await;
    let entry = sim.journal().into_iter().last().unwrap();
    assert_eq!(
        entry.rpc.map(|r| r.method),
        Some("notifications/initialized".to_owned())
    );
    assert!(mcp.session.unwrap().starts_with("mcp_"));
}

#[tokio::test]
async fn sessions_are_checked_bound_to_their_credential_and_end_on_delete() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = session(&sim).await;
    assert_eq!(mcp.request("ping", json!({})).await.result(), json!({}));

    let mut missing = Mcp::new(&sim, A);
    assert_eq!(missing.request("ping", json!({})).await.status, 400);
    let mut unknown = Mcp::new(&sim, A);
    unknown.session = Some("mcp_nope".to_owned());
    assert_eq!(unknown.request("ping", json!({})).await.status, 404);
    let mut other = Mcp::new(&sim, B);
    other.session = mcp.session.clone();
    assert_eq!(other.request("ping", json!({})).await.status, 404);

    let mut bad_version = Mcp::new(&sim, A);
    bad_version.session = mcp.session.clone();
    bad_version.version = Some("1999-01-01".to_owned());
    assert_eq!(bad_version.request("ping", json!({})).await.status, 400);
    // Without the header the session's revision holds.
    mcp.version = None;
    assert_eq!(mcp.request("ping", json!({})).await.status, 200);

    let ended = client(2000)
        .delete(&mcp.url)
        .bearer_auth(A)
        .header("mcp-session-id", mcp.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status().as_u16(), 200);
    assert_eq!(mcp.request("ping", json!({})).await.status, 404);
    let get = client(2000)
        .get(&mcp.url)
        .bearer_auth(A)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status().as_u16(), 405);
}

#[tokio::test]
async fn every_request_needs_a_known_bearer_credential() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = Mcp::new(&sim, "sk_nobody");
    let answer = mcp.request("initialize", json!({})).await;
    assert_eq!(answer.status, 401);
    let raw = client(2000)
        .post(&mcp.url)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status().as_u16(), 401);
    assert_eq!(
        raw.headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
}

#[tokio::test]
async fn protocol_errors_are_json_rpc_errors() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = session(&sim).await;
    let code = |a: &Answer| a.message()["error"]["code"].as_i64();
    assert_eq!(
        code(&mcp.request("nope/never", json!({})).await),
        Some(-32601)
    );
    assert_eq!(
        code(&mcp.call("no_such_tool", json!({})).await),
        Some(-32602)
    );
    let parse = client(2000)
        .post(&mcp.url)
        .bearer_auth(A)
        .header("mcp-session-id", mcp.session.clone().unwrap())
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(parse.status().as_u16(), 400);
    let body: serde_json::Value = parse.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700);
    mcp.accept = "text/html".to_owned();
    assert_eq!(mcp.request("ping", json!({})).await.status, 406);
}

#[tokio::test]
async fn answers_are_sse_or_json_as_the_plan_and_the_accept_header_say() {
    for (style, accept, want) in [
        (
            AnswerStyle::Sse,
            "application/json, text/event-stream",
            "text/event-stream",
        ),
        (
            AnswerStyle::Json,
            "application/json, text/event-stream",
            "application/json",
        ),
        (AnswerStyle::Sse, "application/json", "application/json"),
        (AnswerStyle::Json, "text/event-stream", "text/event-stream"),
    ] {
        let mut plan = mcp_plan(vec![]);
        plan.mcp.as_mut().unwrap().answer = style;
        let sim = start(plan).await;
        let mut mcp = session(&sim).await;
        mcp.accept = accept.to_owned();
        let answer = mcp.call("create_ticket", json!({"title": "x"})).await;
        assert!(answer.content_type.starts_with(want), "{style:?} {accept}");
        if want == "text/event-stream" {
            assert!(answer.text.contains("id: "), "events carry ids");
        }
        assert_eq!(answer.result()["isError"], false);
    }
}

#[tokio::test]
async fn a_paid_call_commits_one_effect_into_the_shared_ledger() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = session(&sim).await;
    let answer = mcp
        .call(
            "create_ticket",
            json!({"title": "Purchase review", "amount": 1200}),
        )
        .await;
    let result = answer.result();
    let payload = &result["structuredContent"];
    assert_eq!(payload["status"], "succeeded");
    assert_eq!(payload["resource"], "tickets");
    assert_eq!(
        payload["arguments"],
        json!({"title": "Purchase review", "amount": 1200})
    );
    let text: serde_json::Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, payload);
    let ledger = sim.ledger();
    assert_eq!(ledger.len(), 1);
    let effect = &ledger[0];
    assert_eq!(payload["operation_id"], effect.id.as_str());
    assert!(effect.id.starts_with("tkt_"));
    assert_eq!(effect.tenant, A);
    assert_eq!(effect.resource, "tickets");
    let entry = &sim.journal()[effect.request().unwrap() as usize - 1];
    assert_eq!(entry.path, "/mcp");
    assert_eq!(entry.kind, Some(RequestKind::Create));
    assert_eq!(entry.resource.as_deref(), Some("tickets"));
    assert_eq!(entry.effect.as_deref(), Some(effect.id.as_str()));
    assert_eq!(
        entry.fingerprint.as_deref(),
        Some(effect.fingerprint.as_str())
    );
    let rpc = entry.rpc.clone().unwrap();
    assert_eq!(
        (rpc.method.as_str(), rpc.tool.as_deref()),
        ("tools/call", Some("create_ticket"))
    );
    assert_eq!(
        fate_of(&sim, entry.seq as usize).await,
        ResponseFate::Sent {
            status: 200,
            client_left: false
        }
    );
    let serialized = serde_json::to_value(entry).unwrap();
    assert_eq!(serialized["rpc"]["method"], "tools/call");
    // Entries outside MCP keep their shape: no rpc field at all.
    let plain = post(&sim, A, "tickets", &json!({"title": "y"}), None).await;
    assert_eq!(plain.status().as_u16(), 201);
    let v1 = sim.journal().into_iter().last().unwrap();
    assert!(serde_json::to_value(&v1).unwrap().get("rpc").is_none());
}

#[tokio::test]
async fn keyed_tools_replay_refuse_a_mismatch_and_keep_keys_apart() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = session(&sim).await;
    let first = mcp
        .call(
            "create_charge",
            json!({"amount": 5, "idempotency_key": "k1"}),
        )
        .await;
    let again = mcp
        .call(
            "create_charge",
            json!({"amount": 5, "idempotency_key": "k1"}),
        )
        .await;
    assert_eq!(
        first.result(),
        again.result(),
        "a replay is the first result exactly"
    );
    assert_eq!(sim.ledger().len(), 1);
    let effect = &sim.ledger()[0];
    assert_eq!(effect.idempotency_key.as_deref(), Some("k1"));
    assert!(!effect.args.to_map().contains_key("idempotency_key"));
    assert!(sim.journal().iter().any(|e| e.replayed));

    let mismatch = mcp
        .call(
            "create_charge",
            json!({"amount": 6, "idempotency_key": "k1"}),
        )
        .await
        .result();
    assert_eq!(mismatch["isError"], true);
    assert_eq!(mismatch["structuredContent"]["status"], 400);
    assert!(mismatch["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("HTTP 400"));
    let mut other = Mcp::connect(&sim, B, "2025-11-25").await;
    let theirs = other
        .call(
            "create_charge",
            json!({"amount": 5, "idempotency_key": "k1"}),
        )
        .await
        .result();
    assert_eq!(theirs["isError"], false);
    assert_eq!(sim.ledger().len(), 2, "keys are per credential");
    let bad = mcp
        .call("create_charge", json!({"amount": 5, "idempotency_key": 7}))
        .await
        .result();
    assert_eq!(bad["structuredContent"]["status"], 400);
    let nested = mcp
        .call("create_ticket", json!({"a": {"b": 1}}))
        .await
        .result();
    assert_eq!(nested["structuredContent"]["status"], 400);
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn tools_list_states_the_design_rules_and_each_defect_breaks_one() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = session(&sim).await;
    let tools = mcp.request("tools/list", json!({})).await.result()["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "create_ticket",
            "create_charge",
            "get_operation",
            "list_recent_operations"
        ]
    );
    let ticket = &tools[0];
    let description = ticket["description"].as_str().unwrap();
    for needle in [
        "budget 1-3 s",
        "not a parameter",
        "operation_id",
        "get_operation",
        "do not call again",
    ] {
        assert!(description.contains(needle), "{needle}: {description}");
    }
    assert_eq!(
        tools[1]["inputSchema"]["properties"]["idempotency_key"]["type"],
        "string"
    );
    for retrieval in [&tools[2], &tools[3]] {
        assert_eq!(retrieval["annotations"]["readOnlyHint"], true);
        assert_eq!(retrieval["annotations"]["idempotentHint"], true);
        assert!(retrieval["description"]
            .as_str()
            .unwrap()
            .contains("7 days"));
    }
    assert!(tools[2]["description"]
        .as_str()
        .unwrap()
        .contains("not yours answers exactly like"));

    for defect in Defect::ALL {
        let mut plan = mcp_plan(vec![]);
        plan.mcp.as_mut().unwrap().defects.insert(defect);
        let sim = start(plan).await;
        let mut mcp = session(&sim).await;
        let listed = mcp.request("tools/list", json!({})).await.result()["tools"].clone();
        let text = listed.to_string();
        match defect {
            Defect::TimeoutAsParameter => {
                assert!(!text.contains("not a parameter"));
                assert!(listed[0]["inputSchema"]["properties"]
                    .get("timeout_s")
                    .is_some());
            }
            Defect::RetrievalNotReadOnly => {
                assert!(listed[2]["annotations"].get("readOnlyHint").is_none());
            }
            Defect::KeyInArguments => {
                assert_eq!(listed[3]["inputSchema"]["required"], json!(["api_key"]));
            }
            Defect::ResultWithoutId => {
                let result = mcp.call("create_ticket", json!({"t": 1})).await.result();
                assert!(result["structuredContent"].get("operation_id").is_none());
            }
            // Observed through retrieval: see mcp_retrieval.rs.
            Defect::NotYoursDistinct
            | Defect::EmptyListIsError
            | Defect::PayloadMismatch
            | Defect::ListShowsOtherTenants
            | Defect::NotYoursEchoLeaks => {
                assert_eq!(listed, tools);
            }
        }
    }
    let mut no_retrieval = McpPlan::default();
    no_retrieval.retrieval.enabled = false;
    let mut plan = plan();
    plan.mcp = Some(no_retrieval);
    let sim = start(plan).await;
    let mut mcp = session(&sim).await;
    let listed = mcp.request("tools/list", json!({})).await.result()["tools"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(!listed.to_string().contains("get_operation"));
}

#[tokio::test]
async fn invalid_mcp_plans_are_refused_at_start() {
    let mut plan = mcp_plan(vec![]);
    plan.mcp.as_mut().unwrap().revisions.clear();
    let refused = lostreply_simulator::Simulator::start(plan, Default::default()).await;
    assert!(refused.is_err_and(|e| e.to_string().contains("mcp.revisions")));
}

//! Provider profiles over a real loopback socket: the Stripe, OpenAI and
//! Anthropic wires as their SDKs send and read them (form bodies, object
//! and error shapes, the key header and replay marker, retry hints,
//! searches and lists, signed events), and the faults and the ledger
//! working as they do for the generic API. The SDKs themselves run against
//! these profiles in examples/tests/it/sdk_*.rs.

use std::sync::Arc;

use crate::common::{client, creates, plan, rule, start, A, B};
use lostreply_simulator::{
    Asynchronous, FaultResponse, IdempotencyMode, Plan, Position, Profile, SettleResult, Simulator,
    Webhooks,
};
use serde_json::Value;

fn with_profile(name: &str) -> Plan {
    let mut plan = plan();
    let profile = Profile::builtin(name).unwrap();
    plan.idempotency.mode = profile.keys.default_mode;
    plan.profile = Arc::new(profile);
    plan
}

async fn form(sim: &Simulator, path: &str, body: &str, key: Option<&str>) -> reqwest::Response {
    let mut request = client(2000)
        .post(format!("{}{path}", sim.base_url()))
        .bearer_auth(A)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned());
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.send().await.unwrap()
}

async fn get(sim: &Simulator, path: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    let response = client(2000)
        .get(format!("{}{path}", sim.base_url()))
        .bearer_auth(A)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.json().await.unwrap())
}

#[tokio::test]
async fn stripe_creates_from_form_bodies_and_answers_stripe_objects() {
    let sim = start(with_profile("stripe")).await;
    let body = "amount=1200&currency=usd&metadata[operation_id]=op-1&payment_method_types[0]=card&expand[0]=latest_charge";
    let response = form(&sim, "/v1/payment_intents", body, Some("k-1")).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("location").is_none());
    let object: Value = response.json().await.unwrap();
    let id = object["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("pi_"), "{object}");
    assert_eq!(object["object"], "payment_intent");
    assert_eq!(object["status"], "succeeded");
    // The form carried text; the object shows the integer Stripe answers.
    assert_eq!(object["amount"], 1200);
    assert_eq!(object["payment_method_types"], serde_json::json!(["card"]));
    assert_eq!(object["metadata"]["operation_id"], "op-1");
    assert_eq!(object["created"], 1_767_225_600);
    // The ledger holds the arguments without the reserved and ignored fields.
    let ledger = sim.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(
        ledger[0].args.get(),
        r#"{"amount":"1200","currency":"usd","payment_method_types":["card"]}"#
    );
    // A replay under the same key: the saved answer, marked.
    let replay = form(&sim, "/v1/payment_intents", body, Some("k-1")).await;
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    let replayed: Value = replay.json().await.unwrap();
    assert_eq!(replayed["id"], id.as_str());
    // The same key with other parameters: Stripe's idempotency_error, no retry.
    let other = form(
        &sim,
        "/v1/payment_intents",
        "amount=999&currency=usd",
        Some("k-1"),
    )
    .await;
    assert_eq!(other.status(), 400);
    assert_eq!(other.headers()["stripe-should-retry"], "false");
    let error: Value = other.json().await.unwrap();
    assert_eq!(error["error"]["type"], "idempotency_error");
    assert_eq!(sim.ledger().len(), 1);
    sim.shutdown().await;
}

#[tokio::test]
async fn stripe_reads_retrieve_search_and_list_in_stripe_envelopes() {
    let sim = start(with_profile("stripe")).await;
    let first: Value = form(
        &sim,
        "/v1/customers",
        "email=a%40x.io&metadata[op]=op-1",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    sim.advance(std::time::Duration::from_secs(10));
    let second: Value = form(
        &sim,
        "/v1/customers",
        "email=b%40x.io&metadata[op]=op-2",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    let id = first["id"].as_str().unwrap();
    let (status, _, found) = get(&sim, &format!("/v1/customers/{id}")).await;
    assert_eq!((status, &found["email"]), (200, &Value::from("a@x.io")));
    let (status, _, page) = get(
        &sim,
        "/v1/customers/search?query=metadata%5B%27op%27%5D%3A%27op-2%27",
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["object"], "search_result");
    assert_eq!(page["data"][0]["id"], second["id"]);
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    let (_, _, list) = get(&sim, "/v1/customers?created%5Bgte%5D=1767225605&limit=5").await;
    assert_eq!(list["object"], "list");
    assert_eq!(list["url"], "/v1/customers");
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let after = second["id"].as_str().unwrap();
    let (_, _, rest) = get(
        &sim,
        &format!("/v1/customers?limit=1&starting_after={after}"),
    )
    .await;
    assert_eq!(rest["data"][0]["id"], first["id"]);
    assert_eq!(rest["has_more"], false);
    // Unknown ids, other tenants' ids and unknown paths: Stripe's 404 envelope, the same body.
    let (status, _, missing) = get(&sim, "/v1/customers/cus_nope").await;
    assert_eq!(status, 404);
    assert_eq!(missing["error"]["code"], "resource_missing");
    let (status, _, _) = get(&sim, "/v1/charges").await;
    assert_eq!(status, 404);
    let theirs = client(2000)
        .get(format!("{}/v1/customers/{id}", sim.base_url()))
        .bearer_auth(B)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), 404);
    assert_eq!(theirs.json::<Value>().await.unwrap(), missing);
    // A search Stripe's language does not have: a 400 that says what is supported.
    let (status, _, refused) = get(&sim, "/v1/customers/search?query=amount%3E5").await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["type"], "invalid_request_error");
    sim.shutdown().await;
}

#[tokio::test]
async fn a_body_in_the_wrong_encoding_gets_the_profiles_400_and_commits_nothing() {
    let sim = start(with_profile("stripe")).await;
    let response = client(2000)
        .post(format!("{}/v1/customers", sim.base_url()))
        .bearer_auth(A)
        .json(&serde_json::json!({"email": "a@x.io"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("form-encoded"));
    // Stripe has no `client_reference` parameter: refused by name, as Stripe
    // refuses an unknown parameter.
    let unknown = form(
        &sim,
        "/v1/customers",
        "email=a%40x.io&client_reference=op-1",
        None,
    )
    .await;
    assert_eq!(unknown.status(), 400);
    let error: Value = unknown.json().await.unwrap();
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("client_reference"));
    let openai = start(with_profile("openai")).await;
    let response = client(2000)
        .post(format!("{}/v1/chat/completions", openai.base_url()))
        .bearer_auth(A)
        .body("model=x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.headers()["x-should-retry"], "false");
    assert!(sim.ledger().is_empty() && openai.ledger().is_empty());
    sim.shutdown().await;
    openai.shutdown().await;
}

#[tokio::test]
async fn stripe_commit_then_drop_leaves_one_effect_that_a_same_key_retry_replays() {
    let mut plan = with_profile("stripe");
    let mut first = creates();
    first.nth = Some(1);
    plan.faults = vec![rule(first, Position::AfterCommit, FaultResponse::Drop)];
    let sim = start(plan).await;
    let lost = client(2000)
        .post(format!("{}/v1/customers", sim.base_url()))
        .bearer_auth(A)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("idempotency-key", "k-9")
        .body("email=a%40x.io")
        .send()
        .await;
    assert!(lost.is_err(), "the answer is lost");
    let retry = form(&sim, "/v1/customers", "email=a%40x.io", Some("k-9")).await;
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    assert_eq!(sim.ledger().len(), 1);
    sim.shutdown().await;
}

#[tokio::test]
async fn stripe_payment_intents_settle_to_canceled_with_stripe_signed_events() {
    let mut plan = with_profile("stripe");
    plan.asynchronous = Some(
        Asynchronous::builder()
            .settle_after(std::time::Duration::from_secs(60))
            .result(SettleResult::Failed)
            .build(),
    );
    plan.webhooks = Some(Webhooks::builder().secret("whsec_plain".to_owned()).build());
    let sim = start(plan).await;
    let created: Value = form(&sim, "/v1/payment_intents", "amount=5&currency=eur", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(created["status"], "processing");
    sim.advance(std::time::Duration::from_secs(61));
    let id = created["id"].as_str().unwrap();
    let (_, _, settled) = get(&sim, &format!("/v1/payment_intents/{id}")).await;
    assert_eq!(settled["status"], "canceled");
    let events = sim.events();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["payment_intent.created", "payment_intent.canceled"]);
    let delivery = sim.sign(&events[1]).unwrap();
    let body: Value = serde_json::from_str(&delivery.body).unwrap();
    assert_eq!(body["object"], "event");
    assert_eq!(body["data"]["object"]["status"], "canceled");
    let header = &delivery.headers["stripe-signature"];
    let timestamp = sim.now_ms() / 1000;
    let expected =
        lostreply_simulator::webhook::stripe_signature(b"whsec_plain", timestamp, &delivery.body);
    assert_eq!(header, &expected);
    let forged = sim.forge(&events[1], "whsec_other").unwrap();
    assert_ne!(forged.headers["stripe-signature"], *header);
    sim.shutdown().await;
}

#[tokio::test]
async fn openai_bills_every_create_and_finds_stored_completions_by_metadata() {
    let sim = start(with_profile("openai")).await;
    assert_eq!(sim.profile().keys.default_mode, IdempotencyMode::None);
    let body = serde_json::json!({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}], "store": true, "metadata": {"operation_id": "op-1"}});
    for _ in 0..2 {
        let response = client(2000)
            .post(format!("{}/v1/chat/completions", sim.base_url()))
            .bearer_auth(A)
            .header("idempotency-key", "same")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let object: Value = response.json().await.unwrap();
        assert!(object["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert_eq!(object["object"], "chat.completion");
        assert_eq!(object["model"], "gpt-5");
        assert_eq!(object["choices"][0]["message"]["role"], "assistant");
    }
    // No key is honoured: two billed effects.
    assert_eq!(sim.ledger().len(), 2);
    let (status, _, page) = get(
        &sim,
        "/v1/chat/completions?metadata%5Boperation_id%5D=op-1&limit=10",
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    assert_eq!(page["object"], "list");
    let (status, _, error) = get(&sim, "/v1/responses/resp_nope").await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(error["error"].get("param").is_some());
    sim.shutdown().await;
}

#[tokio::test]
async fn anthropic_takes_x_api_key_and_answers_its_error_envelope() {
    let mut plan = with_profile("anthropic");
    let mut authenticated = creates();
    authenticated.tenant = Some(A.to_owned());
    plan.faults = vec![rule(
        authenticated,
        Position::AfterCommit,
        FaultResponse::Status {
            code: 529,
            retry_after_s: None,
        },
    )];
    let sim = start(plan).await;
    let url = format!("{}/v1/messages", sim.base_url());
    let body = serde_json::json!({"model": "claude-x", "max_tokens": 5, "messages": []});
    let stranger = client(2000)
        .post(&url)
        .header("x-api-key", "sk_nobody")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), 401);
    let error: Value = stranger.json().await.unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "authentication_error");
    let overloaded = client(2000)
        .post(&url)
        .header("x-api-key", A)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(overloaded.status(), 529);
    assert_eq!(overloaded.headers()["x-should-retry"], "true");
    let error: Value = overloaded.json().await.unwrap();
    assert_eq!(error["error"]["type"], "api_error");
    // The 529 came after the commit: the effect exists.
    assert_eq!(sim.ledger().len(), 1);
    sim.shutdown().await;
}

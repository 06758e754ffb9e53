//! A long run's store stays bounded without refusing: past
//! `limits.max_objects` the oldest objects are summarised out (counted, and
//! answered as not found), and only `limits.hard_cap_objects` answers 507.

use crate::common::*;
use lostreply_simulator::{IdempotencyMode, Plan};
use serde_json::json;

fn bounded(max_objects: usize, hard_cap_objects: Option<usize>) -> Plan {
    let mut plan = plan();
    plan.limits.max_objects = max_objects;
    plan.limits.hard_cap_objects = hard_cap_objects;
    plan.idempotency.mode = IdempotencyMode::Stripe;
    plan
}

#[tokio::test]
async fn past_the_bound_the_oldest_objects_are_summarised_out_and_creates_go_on() {
    let sim = start(bounded(100, None)).await;
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for n in 0..1000 {
        let key = format!("k{n}");
        let response = post_with(&http, &sim, A, "tickets", &json!({"n": n}), Some(&key))
            .await
            .unwrap();
        let (status, body) = json(response).await;
        assert_eq!(status, 201, "create {n}: {body}");
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(sim.ledger_len(), 100);
    let (status, ledger) = json(get(&sim, A, "/_lostreply/ledger").await).await;
    assert_eq!(status, 200);
    assert_eq!(ledger["summarised"], 900);
    let summary = &ledger["summarised_summary"];
    assert_eq!(summary["by_tenant"][A], 900);
    assert_eq!(summary["by_resource"]["tickets"], 900);
    // The clock never moved: every key was still retained, so each one
    // summarised out was counted as such.
    assert_eq!(summary["in_retention"], 900);
    assert!(summary["oldest_created_at_ms"].as_i64().is_some());
    assert_eq!(ledger["data"].as_array().unwrap().len(), 100);
    assert_eq!(ledger["data"][0]["seq"], 901);
    assert_eq!(ledger["data"][0]["id"], ids[900].as_str());

    // An early object answers exactly as an id the provider never had.
    let (early, early_body) = json(get(&sim, A, &format!("/v1/tickets/{}", ids[0])).await).await;
    let (never, never_body) = json(get(&sim, A, "/v1/tickets/tkt_never").await).await;
    assert_eq!((early, never), (404, 404));
    assert_eq!(early_body["error"]["type"], never_body["error"]["type"]);
    let (recent, recent_body) =
        json(get(&sim, A, &format!("/v1/tickets/{}", ids[999])).await).await;
    assert_eq!(recent, 200);
    assert_eq!(recent_body["id"], ids[999].as_str());

    // A retry inside the key's retention still replays the first answer.
    let replay = post_with(&http, &sim, A, "tickets", &json!({"n": 0}), Some("k0"))
        .await
        .unwrap();
    let (status, body) = json(replay).await;
    assert_eq!(status, 201);
    assert_eq!(body["id"], ids[0].as_str());
    assert_eq!(sim.ledger_summarised().summarised, 900);
}

#[tokio::test]
async fn a_hard_cap_still_answers_507() {
    let sim = start(bounded(100, Some(5))).await;
    for n in 0..5 {
        let (status, _) = json(post(&sim, A, "tickets", &json!({"n": n}), None).await).await;
        assert_eq!(status, 201);
    }
    let (status, body) = json(post(&sim, A, "tickets", &json!({"n": 5}), None).await).await;
    assert_eq!(status, 507, "{body}");
    assert_eq!(body["error"]["type"], "insufficient_storage");
    // The cap is per tenant: another tenant still creates.
    let (status, _) = json(post(&sim, B, "tickets", &json!({"n": 0}), None).await).await;
    assert_eq!(status, 201);
    assert_eq!(sim.ledger_summarised().summarised, 0);
}

//! A long run's store stays bounded without refusing: past
//! `limits.max_objects` the oldest objects are summarised out (counted, and
//! answered as not found), their events with them, and only
//! `limits.hard_cap_objects` answers 507. The attempt counts are bounded by
//! the same limit.

use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{Asynchronous, IdempotencyMode, Plan, SettleResult, Webhooks};
use serde_json::{json, Value};

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

/// A bounded plan whose objects make events and settle a second after they
/// are created.
fn bounded_with_events(max_objects: usize) -> Plan {
    let mut plan = bounded(max_objects, None);
    plan.asynchronous = Some(
        Asynchronous::builder()
            .settle_after(Duration::from_secs(1))
            .result(SettleResult::Succeeded)
            .build(),
    );
    plan.webhooks = Some(
        Webhooks::builder()
            .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned())
            .build(),
    );
    plan
}

/// Creates a ticket for each of `bodies`, without a key; answers their ids.
async fn create_all(
    sim: &lostreply_simulator::Simulator,
    bodies: std::ops::Range<u32>,
) -> Vec<String> {
    let mut ids = Vec::new();
    for n in bodies {
        let (status, body) = json(post(sim, A, "tickets", &json!({"n": n}), None).await).await;
        assert_eq!(status, 202, "create {n}: {body}");
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    ids
}

/// `GET /_lostreply/events`.
async fn events(sim: &lostreply_simulator::Simulator) -> Value {
    let (status, events) = json(get(sim, A, "/_lostreply/events").await).await;
    assert_eq!(status, 200);
    events
}

/// The ids of the listed events whose object is `object` (created, then settled).
fn events_of(listing: &Value, object: &str) -> Vec<String> {
    listing["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["object_id"] == object)
        .map(|event| event["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `POST /_lostreply/events/{id}/delivery`: the status and the body.
async fn sign(sim: &lostreply_simulator::Simulator, id: &str) -> (u16, Value) {
    let url = format!("{}/events/{id}/delivery", sim.control_url());
    json(client(2000).post(url).send().await.unwrap()).await
}

#[tokio::test]
async fn past_the_bound_an_objects_events_go_with_it_and_are_counted() {
    let sim = start(bounded_with_events(10)).await;
    // Twenty creates: the first ten objects go, and their created events.
    let ids = create_all(&sim, 0..20).await;
    let listing = events(&sim).await;
    assert_eq!(listing["data"].as_array().unwrap().len(), 10);
    assert_eq!(listing["data"][0]["object_id"], ids[10].as_str());
    assert_eq!(listing["summarised"], 10);
    let first_event = {
        let early = sim.ledger_summarised();
        assert_eq!(early.summarised, 10);
        // Its id is known only from before: the listing no longer shows it.
        assert!(events_of(&listing, &ids[0]).is_empty());
        listing["data"][0]["id"].as_str().unwrap().to_owned()
    };

    // The ten held settle: each has a created and a settled event.
    sim.advance(Duration::from_secs(2));
    let settled = events(&sim).await;
    assert_eq!(settled["data"].as_array().unwrap().len(), 20);
    let of_ten = events_of(&settled, &ids[10]);
    assert_eq!(of_ten.len(), 2);
    assert_eq!(of_ten[0], first_event);

    // Five more creates: objects 10 to 14 go, with both their events each.
    let later = create_all(&sim, 20..25).await;
    let listing = events(&sim).await;
    assert_eq!(listing["data"].as_array().unwrap().len(), 15);
    assert_eq!(listing["summarised"], 20);
    let summary = &listing["summarised_summary"];
    assert_eq!(summary["summarised"], 20);
    assert_eq!(summary["by_kind"], json!({"created": 15, "succeeded": 5}));
    assert_eq!(
        summary["by_type"],
        json!({"tickets.created": 15, "tickets.succeeded": 5})
    );
    assert_eq!(sim.events_summarised().summarised, 20);
    assert_eq!(sim.events().len(), 15);
    assert!(events_of(&listing, &ids[14]).is_empty());
    assert_eq!(events_of(&listing, &ids[15]).len(), 2);
    assert_eq!(events_of(&listing, &later[4]).len(), 1);

    // An event summarised out answers as one the provider never produced,
    // the settled one too, though it came after events still held.
    let (never, never_body) = sign(&sim, "evt_never").await;
    assert_eq!(never, 404);
    for id in [&of_ten[0], &of_ten[1]] {
        let (status, body) = sign(&sim, id).await;
        assert_eq!(status, 404, "{id}: {body}");
        assert_eq!(body["error"]["type"], never_body["error"]["type"]);
    }
    let held = events_of(&listing, &ids[15]);
    assert_eq!(sign(&sim, &held[1]).await.0, 200);

    // A page after an event summarised out answers 404 as after an unknown
    // one; after a held event it goes on.
    let url = |after: &str| format!("/_lostreply/events?limit=10&after={after}");
    let (status, body) = json(get(&sim, A, &url(&of_ten[1])).await).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["type"], never_body["error"]["type"]);
    let (status, page) = json(get(&sim, A, &url(&held[1])).await).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["summarised"], 20);
}

#[tokio::test]
async fn the_events_held_stay_within_the_bound_over_many_creates() {
    let mut plan = bounded_with_events(50);
    plan.asynchronous = None;
    let sim = start(plan).await;
    for n in 0..300 {
        let (status, _) = json(post(&sim, A, "tickets", &json!({"n": n}), None).await).await;
        assert_eq!(status, 201);
    }
    let listing = events(&sim).await;
    assert_eq!(listing["data"].as_array().unwrap().len(), 50);
    assert_eq!(listing["summarised"], 250);
    assert_eq!(listing["summarised_summary"]["by_kind"]["created"], 250);
    let ledger = sim.ledger();
    let listed: Vec<&str> = listing["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["object_id"].as_str().unwrap())
        .collect();
    let held: Vec<&str> = ledger.iter().map(|effect| &*effect.id).collect();
    assert_eq!(listed, held);
}

#[tokio::test]
async fn attempts_are_counted_within_the_bound_and_start_again_past_it() {
    let sim = start(bounded(3, None)).await;
    let attempt_of_last =
        |sim: &lostreply_simulator::Simulator| sim.ledger().last().map(|effect| effect.attempt);
    let create = async |n: u32| {
        let (status, _) = json(post(&sim, A, "tickets", &json!({"n": n}), None).await).await;
        assert_eq!(status, 201);
        attempt_of_last(&sim)
    };
    assert_eq!(create(0).await, Some(1));
    assert_eq!(create(0).await, Some(2));
    // Three other bodies since: its count has moved to the previous
    // generation, and goes on from there.
    for n in 1..4 {
        assert_eq!(create(n).await, Some(1));
    }
    assert_eq!(create(0).await, Some(3));
    // Six other bodies since its last attempt: both generations have turned.
    for n in 10..16 {
        assert_eq!(create(n).await, Some(1));
    }
    assert_eq!(create(0).await, Some(1));
    // Another tenant's same body is its own count.
    let (status, _) = json(post(&sim, B, "tickets", &json!({"n": 0}), None).await).await;
    assert_eq!(status, 201);
    assert_eq!(attempt_of_last(&sim), Some(1));
}

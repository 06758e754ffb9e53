//! `GET /_lostreply/events` in pages: `limit` and `after` walk the events
//! held in the order produced, and the pages join into the whole listing.

use crate::common::*;
use lostreply_simulator::{Simulator, Webhooks, MAX_EVENTS_PAGE};
use serde_json::{json, Value};

/// A simulator whose plan makes an event for each create, with `creates`
/// objects created (so as many events).
async fn with_events(creates: u32) -> Simulator {
    let mut plan = plan();
    plan.webhooks = Some(
        Webhooks::builder()
            .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned())
            .build(),
    );
    let sim = start(plan).await;
    for n in 0..creates {
        let (status, body) = json(post(&sim, A, "tickets", &json!({"n": n}), None).await).await;
        assert_eq!(status, 201, "create {n}: {body}");
    }
    sim
}

/// `GET /_lostreply/events` with `query`: the status and the body.
async fn listing(sim: &Simulator, query: &str) -> (u16, Value) {
    json(get(sim, A, &format!("/_lostreply/events{query}")).await).await
}

#[tokio::test]
async fn pages_of_ten_join_into_the_whole_listing() {
    let sim = with_events(25).await;
    let (status, whole) = listing(&sim, "").await;
    assert_eq!(status, 200);
    assert_eq!(whole["data"].as_array().unwrap().len(), 25);
    assert_eq!(whole["has_more"], false);
    assert!(whole.get("next_after").is_none());

    let mut joined: Vec<Value> = Vec::new();
    let mut query = "?limit=10".to_owned();
    let mut sizes = Vec::new();
    loop {
        let (status, page) = listing(&sim, &query).await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(page["summarised"], 0);
        assert_eq!(page["summarised_summary"], whole["summarised_summary"]);
        let events = page["data"].as_array().unwrap();
        sizes.push(events.len());
        joined.extend(events.iter().cloned());
        if page["has_more"] == false {
            assert!(page.get("next_after").is_none(), "{page}");
            break;
        }
        assert_eq!(page["has_more"], true);
        let last = events.last().unwrap()["id"].as_str().unwrap();
        assert_eq!(page["next_after"], last);
        query = format!("?limit=10&after={last}");
    }
    assert_eq!(sizes, [10, 10, 5]);
    assert_eq!(Value::Array(joined), whole["data"]);

    // After the last event: an empty page, nothing more.
    let last = whole["data"][24]["id"].as_str().unwrap();
    let (status, tail) = listing(&sim, &format!("?after={last}")).await;
    assert_eq!(status, 200);
    assert_eq!(tail["data"], json!([]));
    assert_eq!(tail["has_more"], false);
    // `after` alone lists everything after it.
    let fifth = whole["data"][4]["id"].as_str().unwrap();
    let (_, rest) = listing(&sim, &format!("?after={fifth}")).await;
    assert_eq!(
        rest["data"].as_array().unwrap()[..],
        whole["data"].as_array().unwrap()[5..]
    );
}

#[tokio::test]
async fn a_page_of_exactly_the_rest_says_no_more() {
    let sim = with_events(20).await;
    let (_, first) = listing(&sim, "?limit=10").await;
    let after = first["next_after"].as_str().unwrap();
    let (_, second) = listing(&sim, &format!("?limit=10&after={after}")).await;
    assert_eq!(second["data"].as_array().unwrap().len(), 10);
    assert_eq!(second["has_more"], false);
    assert!(second.get("next_after").is_none());
}

#[tokio::test]
async fn an_unknown_after_answers_404_naming_it() {
    let sim = with_events(3).await;
    let (status, body) = listing(&sim, "?limit=10&after=evt_never").await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["type"], "not_found");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`evt_never`"));
}

#[tokio::test]
async fn a_bad_limit_or_parameter_answers_400() {
    let sim = with_events(3).await;
    let too_many = format!("?limit={}", MAX_EVENTS_PAGE + 1);
    for query in ["?limit=0", "?limit=abc", "?limit=-1", too_many.as_str()] {
        let (status, body) = listing(&sim, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"]["type"], "invalid_request");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("limit"), "{query}: {message}");
        assert!(message.contains(&MAX_EVENTS_PAGE.to_string()), "{message}");
    }
    for query in ["?limit=1&limit=2", "?page=2"] {
        let (status, body) = listing(&sim, query).await;
        assert_eq!(status, 400, "{query}: {body}");
    }
    let most = format!("?limit={MAX_EVENTS_PAGE}");
    let (status, page) = listing(&sim, &most).await;
    assert_eq!(status, 200);
    assert_eq!(page["data"].as_array().unwrap().len(), 3);
}

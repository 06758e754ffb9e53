//! The generic profile of provider-api.md: tenants, create, retrieve, search,
//! list, capability switches, asynchronous settling, bad input, determinism.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{
    Asynchronous, Lookup, ObjectStatus, Plan, ResponseFate, SeedObject, SettleResult, Simulator,
};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn bad_or_missing_credentials_are_unauthorized() {
    let sim = start(plan()).await;
    let base = sim.base_url();
    let http = client(2000);
    let attempts = [
        http.post(format!("{base}/v1/tickets"))
            .json(&json!({"a": 1})),
        http.post(format!("{base}/v1/tickets"))
            .bearer_auth("sk_test_z")
            .json(&json!({"a": 1})),
        http.post(format!("{base}/v1/tickets"))
            .header("authorization", "Basic c2tfdGVzdF9h")
            .json(&json!({"a": 1})),
        http.get(format!("{base}/v1/tickets")),
        http.get(format!("{base}/nowhere")),
    ];
    for attempt in attempts {
        let (status, body) = json(attempt.send().await.unwrap()).await;
        assert_eq!(
            (status, body),
            (401, json!({"error": {"type": "unauthorized"}}))
        );
    }
    assert!(sim.ledger().is_empty());
    assert!(sim.journal().iter().all(|e| e.tenant.is_none()
        && e.fate
            == ResponseFate::Sent {
                status: 401,
                client_left: false
            }));
}

#[tokio::test]
async fn create_answers_the_object_of_the_contract() {
    let sim = start(plan()).await;
    let body = json!({"title": "Purchase review", "amount": 1200, "client_reference": "op-1", "metadata": {"k": "v"}});
    let response = post(&sim, A, "tickets", &body, None).await;
    assert_eq!(response.status().as_u16(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(
        response.headers()["date"],
        "Thu, 01 Jan 2026 00:00:00 GMT",
        "the simulator clock"
    );
    let text = response.text().await.unwrap();
    let object: Value = serde_json::from_str(&text).unwrap();
    let id = object["id"].as_str().unwrap();
    assert!(id.starts_with("tkt_") && id.len() == 4 + 24, "{id}");
    assert_eq!(location, format!("/v1/tickets/{id}"));
    let expected = format!(
        r#"{{"id":"{id}","object":"tickets","status":"succeeded","client_reference":"op-1","created_at":"2026-01-01T00:00:00.000Z","args":{{"title":"Purchase review","amount":1200}},"metadata":{{"k":"v"}}}}"#
    );
    assert_eq!(text, expected);
    let effect = &sim.ledger()[0];
    assert_eq!(
        (
            effect.tenant.as_str(),
            effect.resource.as_str(),
            effect.attempt
        ),
        (A, "tickets", 1)
    );
    assert_eq!(effect.request(), Some(1));
    assert_eq!(sim.journal()[0].effect.as_deref(), Some(id));

    let (status, fetched) = json(get(&sim, A, &location).await).await;
    assert_eq!((status, fetched), (200, object));
    let (_, plain) = json(post(&sim, A, "reviews", &json!({}), None).await).await;
    assert!(plain["id"].as_str().unwrap().starts_with("rvw_"));
    assert_eq!(
        (plain["client_reference"].clone(), plain["metadata"].clone()),
        (Value::Null, json!({}))
    );
}

#[tokio::test]
async fn another_tenants_id_is_answered_exactly_like_a_missing_id() {
    let sim = start(plan()).await;
    let (_, object) = json(post(&sim, B, "tickets", &json!({"secret": true}), None).await).await;
    let theirs = format!("/v1/tickets/{}", object["id"].as_str().unwrap());
    let missing = "/v1/tickets/tkt_doesnotexist000000000000";
    let a = get(&sim, A, &theirs).await;
    let b = get(&sim, A, missing).await;
    assert_eq!(a.status(), b.status());
    assert_eq!(a.headers(), b.headers());
    let (a, b) = (a.bytes().await.unwrap(), b.bytes().await.unwrap());
    assert_eq!(a, b);
    assert_eq!(&a[..], br#"{"error":{"type":"not_found"}}"#);
    // Even the resource must match.
    assert_eq!(
        get(&sim, B, &theirs.replace("tickets", "reviews"))
            .await
            .status()
            .as_u16(),
        404
    );
    assert_eq!(get(&sim, B, &theirs).await.status().as_u16(), 200);
}

#[tokio::test]
async fn search_by_client_reference_is_per_tenant_and_newest_first() {
    let sim = start(plan()).await;
    for n in 0..3 {
        post(
            &sim,
            A,
            "tickets",
            &json!({"n": n, "client_reference": "op-1"}),
            None,
        )
        .await;
        sim.advance(Duration::from_secs(1));
    }
    post(
        &sim,
        A,
        "tickets",
        &json!({"client_reference": "op-2"}),
        None,
    )
    .await;
    post(
        &sim,
        B,
        "tickets",
        &json!({"client_reference": "op-1"}),
        None,
    )
    .await;
    let (status, body) = json(get(&sim, A, "/v1/tickets?client_reference=op-1").await).await;
    assert_eq!(status, 200);
    let ns: Vec<Value> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["args"]["n"].clone())
        .collect();
    assert_eq!(ns, vec![json!(2), json!(1), json!(0)]);
    assert_eq!(body["has_more"], false);
    let (_, body) = json(get(&sim, A, "/v1/tickets?client_reference=nobody").await).await;
    assert_eq!(body, json!({"data": [], "has_more": false}));
}

#[tokio::test]
async fn list_recent_filters_by_time_and_limits() {
    let sim = start(plan()).await;
    for n in 0..12 {
        post(&sim, A, "tickets", &json!({"n": n}), None).await;
        sim.advance(Duration::from_secs(60));
    }
    post(&sim, B, "tickets", &json!({"n": "other"}), None).await;
    let (_, body) = json(get(&sim, A, "/v1/tickets").await).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 10, "default limit");
    assert_eq!(body["has_more"], true);
    assert_eq!(body["data"][0]["args"]["n"], 11);
    // Objects 9, 10, 11 were created at +9m, +10m, +11m.
    let (_, body) = json(
        get(
            &sim,
            A,
            "/v1/tickets?created_gte=2026-01-01T00:09:00Z&limit=2",
        )
        .await,
    )
    .await;
    let ns: Vec<Value> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["args"]["n"].clone())
        .collect();
    assert_eq!(
        (ns, body["has_more"].clone()),
        (vec![json!(11), json!(10)], json!(true))
    );
    let (_, body) = json(
        get(
            &sim,
            A,
            "/v1/tickets?created_gte=2026-01-01T01:09:00%2B01:00&limit=100",
        )
        .await,
    )
    .await;
    assert_eq!(
        (
            body["data"].as_array().unwrap().len(),
            body["has_more"].clone()
        ),
        (3, json!(false))
    );
}

#[tokio::test]
async fn lookups_can_be_switched_off() {
    let mut plan = plan();
    plan.lookup = Lookup::builder()
        .retrieve(false)
        .client_reference(false)
        .list_recent(false)
        .build();
    let sim = start(plan).await;
    let (_, object) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
    let retrieved = get(
        &sim,
        A,
        &format!("/v1/tickets/{}", object["id"].as_str().unwrap()),
    )
    .await;
    let missing = get(&sim, A, "/v1/tickets/tkt_nope").await;
    assert_eq!(retrieved.headers(), missing.headers());
    assert_eq!(json(retrieved).await, json(missing).await);
    for query in [
        "?client_reference=x",
        "?created_gte=2026-01-01T00:00:00Z",
        "",
    ] {
        let (status, body) = json(get(&sim, A, &format!("/v1/tickets{query}")).await).await;
        assert_eq!(
            (status, body["error"]["type"].clone()),
            (400, json!("unsupported_query")),
            "{query}"
        );
    }
}

#[tokio::test]
async fn a_restricted_resource_set_answers_404_for_the_rest() {
    let mut plan = plan();
    plan.resources = Some(BTreeSet::from(["tickets".to_owned()]));
    let sim = start(plan).await;
    let (status, body) = json(post(&sim, A, "charges", &json!({"a": 1}), None).await).await;
    assert_eq!(
        (status, body),
        (404, json!({"error": {"type": "not_found"}}))
    );
    assert_eq!(get(&sim, A, "/v1/charges").await.status().as_u16(), 404);
    assert_eq!(
        post(&sim, A, "tickets", &json!({"a": 1}), None)
            .await
            .status()
            .as_u16(),
        201
    );
    assert_eq!(sim.ledger().len(), 1);
}

fn asynchronous(result: SettleResult) -> Plan {
    let mut plan = plan();
    plan.asynchronous = Some(
        Asynchronous::builder()
            .settle_after(Duration::from_secs(60))
            .result(result)
            .build(),
    );
    plan.webhooks = Some(
        lostreply_simulator::Webhooks::builder()
            .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned())
            .build(),
    );
    plan
}

#[tokio::test]
async fn asynchronous_objects_settle_when_the_clock_passes_their_time() {
    for (result, status, kind) in [
        (
            SettleResult::Succeeded,
            ObjectStatus::Succeeded,
            "succeeded",
        ),
        (SettleResult::Failed, ObjectStatus::Failed, "failed"),
    ] {
        let sim = start(asynchronous(result)).await;
        let (code, object) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
        assert_eq!((code, object["status"].clone()), (202, json!("processing")));
        let path = format!("/v1/tickets/{}", object["id"].as_str().unwrap());
        sim.advance(Duration::from_secs(59));
        assert_eq!(
            json(get(&sim, A, &path).await).await.1["status"],
            "processing"
        );
        sim.advance(Duration::from_secs(1));
        assert_eq!(json(get(&sim, A, &path).await).await.1["status"], kind);
        assert_eq!(sim.ledger()[0].status, status);
        let events = sim.events();
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            vec!["tickets.created".to_owned(), format!("tickets.{kind}")]
        );
        let settled: Value = serde_json::from_str(&events[1].body).unwrap();
        assert_eq!(settled["data"]["status"], kind);
        assert_eq!(settled["created_at"], "2026-01-01T00:01:00.000Z");
        assert_eq!(events[1].object_id, object["id"].as_str().unwrap());
    }
}

#[tokio::test]
async fn seed_objects_exist_before_the_run() {
    let mut plan = plan();
    plan.seed_objects = vec![SeedObject::builder()
        .tenant(B.to_owned())
        .resource("tickets".to_owned())
        .args(serde_json::from_value(json!({"title": "Purchase review"})).unwrap())
        .client_reference("theirs".to_owned())
        .age(Duration::from_secs(120))
        .build()];
    let sim = start(plan).await;
    let effect = &sim.ledger()[0];
    assert_eq!(
        (effect.attempt, effect.request(), effect.created_at_ms),
        (0, None, 1_767_225_600_000 - 120_000)
    );
    let (_, body) = json(get(&sim, B, "/v1/tickets?created_gte=2025-12-31T23:58:00Z").await).await;
    assert_eq!(body["data"][0]["client_reference"], "theirs");
    let (_, body) = json(get(&sim, A, "/v1/tickets").await).await;
    assert_eq!(body["data"], json!([]));
}

#[tokio::test]
async fn bad_bodies_are_refused_without_effect() {
    let mut plan = plan();
    plan.limits.max_body_bytes = 1024;
    let sim = start(plan).await;
    let http = client(2000);
    let url = format!("{}/v1/tickets", sim.base_url());
    let cases: Vec<(String, u16, &str)> = vec![
        (
            "[1,2]".to_owned(),
            400,
            "must be a JSON object, got an array",
        ),
        ("42".to_owned(), 400, "got a number"),
        ("\"x\"".to_owned(), 400, "got a string"),
        ("null".to_owned(), 400, "got null"),
        ("{\"a\":".to_owned(), 400, "not valid JSON"),
        ("".to_owned(), 400, "not valid JSON"),
        ("\u{feff}".to_owned(), 400, "not valid JSON"),
        (
            r#"{"client_reference":5}"#.to_owned(),
            400,
            "client_reference must be a string",
        ),
        (
            r#"{"client_reference":[]}"#.to_owned(),
            400,
            "client_reference must be a string",
        ),
        (
            format!(r#"{{"client_reference":"{}"}}"#, "r".repeat(256)),
            400,
            "at most 255",
        ),
        (
            r#"{"metadata":[1]}"#.to_owned(),
            400,
            "metadata must be an object",
        ),
        (
            format!(r#"{{"pad":"{}"}}"#, "x".repeat(1024)),
            413,
            "exceeds 1024 bytes",
        ),
        ("x".repeat(200_000), 413, "exceeds 1024 bytes"),
    ];
    for (body, status, message) in cases {
        let response = http
            .post(&url)
            .bearer_auth(A)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let (got, json) = json(response).await;
        assert_eq!(got, status, "{}", &body[..body.len().min(40)]);
        let text = json["error"]["message"].as_str().unwrap();
        assert!(text.contains(message), "{text} should say {message}");
    }
    // A body that is too large with a chunked (unknown) length is refused too.
    let mut chunked = format!("POST /v1/tickets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\ntransfer-encoding: chunked\r\n\r\n");
    for _ in 0..4 {
        chunked.push_str(&format!("400\r\n{}\r\n", "x".repeat(1024)));
    }
    chunked.push_str("0\r\n\r\n");
    let Raw::Silent(bytes) = raw_exchange(&sim, &chunked, 300).await else {
        panic!("kept alive")
    };
    assert_eq!(split_response(&bytes).0, 413);
    let query = http
        .post(format!("{url}?expand=1"))
        .bearer_auth(A)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(query.status().as_u16(), 400);
    assert!(sim.ledger().is_empty());
    assert_eq!(
        post(&sim, A, "tickets", &json!({"ok": true}), None)
            .await
            .status()
            .as_u16(),
        201,
        "still serving"
    );
}

#[tokio::test]
async fn bad_queries_paths_and_methods_get_clear_errors() {
    let sim = start(plan()).await;
    let cases = [
        ("/v1/tickets?created_gte=yesterday", 400, "created_gte"),
        (
            "/v1/tickets?created_gte=2026-13-01T00:00:00Z",
            400,
            "created_gte",
        ),
        ("/v1/tickets?limit=0", 400, "limit"),
        ("/v1/tickets?limit=101", 400, "limit"),
        ("/v1/tickets?limit=ten", 400, "limit"),
        ("/v1/tickets?limit=-1", 400, "limit"),
        (
            "/v1/tickets?sort=asc",
            400,
            "unknown query parameter `sort`",
        ),
        ("/v1/tickets?limit=1&limit=2", 400, "more than once"),
        (
            "/v1/tickets?client_reference=a&limit=2",
            400,
            "unknown query parameter `limit`",
        ),
        ("/v1/tickets?client_reference=%zz", 400, "percent-encoding"),
        ("/v1/tickets/tkt_x?expand=1", 400, "no query parameters"),
    ];
    for (path, status, message) in cases {
        let (got, body) = json(get(&sim, A, path).await).await;
        assert_eq!(got, status, "{path}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(message),
            "{path}: {body}"
        );
    }
    for path in [
        "/v1/tickets/",
        "/v1/tickets/a/b",
        "/v1/Tickets",
        "/v1/",
        "/v2/tickets",
        "/",
        "/v1/tickets/%00",
    ] {
        let (got, body) = json(get(&sim, A, path).await).await;
        assert_eq!(
            (got, body),
            (404, json!({"error": {"type": "not_found"}})),
            "{path}"
        );
    }
    let response = client(2000)
        .delete(format!("{}/v1/tickets", sim.base_url()))
        .bearer_auth(A)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers()["allow"], "GET, POST");
    assert!(sim.ledger().is_empty());
}

#[tokio::test]
async fn garbage_on_the_socket_does_not_hurt_the_simulator() {
    let sim = start(plan()).await;
    for garbage in [
        &b"\x00\x01\x02\xff\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"POST /v1/tickets HTTP/1.1\r\ncontent-length: 99999999999999999999\r\n\r\n",
    ] {
        let mut stream = tokio::net::TcpStream::connect(sim.local_addr())
            .await
            .unwrap();
        stream.write_all(garbage).await.unwrap();
        let _ = read_raw(&mut stream, 500).await;
    }
    assert_eq!(
        post(&sim, A, "tickets", &json!({"a": 1}), None)
            .await
            .status()
            .as_u16(),
        201
    );
}

#[tokio::test]
async fn the_same_seed_gives_the_same_ids() {
    async fn ids(seed: u64) -> Vec<String> {
        let mut plan = plan();
        plan.seed = seed;
        let sim: Simulator = start(plan).await;
        let mut ids = Vec::new();
        for n in 0..3 {
            ids.push(
                json(post(&sim, A, "tickets", &json!({"n": n}), None).await)
                    .await
                    .1["id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        ids
    }
    assert_eq!(ids(7).await, ids(7).await);
    assert_ne!(ids(7).await, ids(8).await);
}

/// Appends what the connection sends next (bounded), failing if it closed `when`.
async fn read_more(stream: &mut tokio::net::TcpStream, into: &mut Vec<u8>, when: &str) {
    use tokio::io::AsyncReadExt;
    let mut buffer = [0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
        .await
        .unwrap()
        .unwrap();
    assert!(n > 0, "the connection closed {when}");
    into.extend_from_slice(&buffer[..n]);
}

/// Reads one response from a kept-alive connection: the head, then exactly
/// the body its `content-length` announces.
async fn read_framed(stream: &mut tokio::net::TcpStream) -> (String, Vec<u8>) {
    let mut got = Vec::new();
    let head_end = loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        read_more(stream, &mut got, "before a whole head").await;
    };
    let head = String::from_utf8(got[..head_end].to_vec()).unwrap();
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding"),
        "{head}"
    );
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .unwrap_or_else(|| panic!("no content-length in {head}"))
        .parse()
        .unwrap();
    let mut body = got[head_end + 4..].to_vec();
    while body.len() < length {
        read_more(stream, &mut body, "inside the body").await;
    }
    assert_eq!(body.len(), length, "nothing after the announced body");
    (head, body)
}

#[tokio::test]
async fn full_answers_announce_their_exact_length_on_a_kept_alive_connection() {
    let sim = start(plan()).await;
    let mut stream = tokio::net::TcpStream::connect(sim.local_addr())
        .await
        .unwrap();
    // A create whose body comes as two chunks (two frames), then a retrieve,
    // on one connection.
    let chunked = format!(
        "POST /v1/tickets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n9\r\n{{\"title\":\r\n8\r\n\"split\"}}\r\n0\r\n\r\n"
    );
    stream.write_all(chunked.as_bytes()).await.unwrap();
    let (head, body) = read_framed(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 201 "), "{head}");
    let created: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(created["args"], json!({"title": "split"}));
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(
        head.lines()
            .any(|l| l == format!("location: /v1/tickets/{id}")),
        "{head}"
    );
    assert!(created["created_at"]
        .as_str()
        .is_some_and(|t| t.ends_with(".000Z") && t.len() == 24));

    let retrieve =
        format!("GET /v1/tickets/{id} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\n\r\n");
    stream.write_all(retrieve.as_bytes()).await.unwrap();
    let (head, body) = read_framed(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), created);
    assert_eq!(sim.ledger()[0].fingerprint, r#"{"title":"split"}"#);
}

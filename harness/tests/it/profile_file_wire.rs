//! The tracker example of docs/profiles.md, served: the exchanges the page
//! shows are the simulator's answers under `profiles/examples/tracker.yaml`
//! (a create, a search by label, the profile's 404 for a path it does not
//! know, its 400 for a body in the wrong encoding, its 401).

use std::path::Path;
use std::sync::Arc;

use lostreply_harness::profile_file::read_profile_file;
use lostreply_simulator::{Plan, ServeOptions, Simulator};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn tracker() -> Simulator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/examples/tracker.yaml");
    let profile = read_profile_file(&path).unwrap();
    let plan = {
        let mut changed = Plan::default();
        changed.profile = Arc::new(profile);
        changed
    };
    Simulator::start(plan, ServeOptions::default())
        .await
        .unwrap()
}

/// One HTTP/1.1 exchange: the status, the headers (lower-cased names) and the body as JSON.
async fn exchange(
    sim: &Simulator,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, Value) {
    let address = sim.base_url().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut request =
        format!("{method} {target} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    println!("{method} {target}\n-> {status} {body}\n");
    (status, headers, serde_json::from_str(body).unwrap())
}

const KEY: (&str, &str) = ("x-api-key", "sk_test_a");
const JSON: (&str, &str) = ("content-type", "application/json");

#[tokio::test]
async fn the_tracker_speaks_as_its_file_says() {
    let sim = tracker().await;
    let create = r#"{"title":"Printer on fire","external_id":"op-1","labels":{"operation_id":"op-1"},"notify":true}"#;
    let (status, headers, issue) =
        exchange(&sim, "POST", "/api/v2/issues", &[KEY, JSON], create).await;
    assert_eq!(status, 201);
    let id = issue["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("ISS-"), "{issue}");
    let location = headers.iter().find(|(n, _)| n == "location").unwrap();
    assert_eq!(location.1, format!("/api/v2/issues/{id}"));
    assert_eq!(
        issue,
        json!({
            "id": id,
            "kind": "issue",
            "created_at": "2026-01-01T00:00:00.000Z",
            "state": "open",
            "title": "Printer on fire",
            "labels": {"operation_id": "op-1"},
            "external_id": "op-1",
        })
    );
    // The ledger keeps the arguments alone: `notify` is ignored, `labels` and
    // `external_id` are the metadata and the reference.
    let ledger = sim.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].args.get(), r#"{"title":"Printer on fire"}"#);

    let (status, _, page) = exchange(
        &sim,
        "GET",
        "/api/v2/issues?metadata[operation_id]=op-1",
        &[KEY],
        "",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(page["issues"][0]["id"], id.as_str());
    assert_eq!(page["has_more"], false);
    assert_eq!(page["next_cursor"], id.as_str());

    let (status, _, error) = exchange(&sim, "GET", "/api/v2/projects", &[KEY], "").await;
    assert_eq!(status, 404);
    assert_eq!(
        error,
        json!({"errors": [{"code": "not_found", "detail": "No such object or path."}]})
    );

    let form = ("content-type", "application/x-www-form-urlencoded");
    let (status, _, error) = exchange(
        &sim,
        "POST",
        "/api/v2/issues",
        &[KEY, form],
        "title=Printer+on+fire",
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error["errors"][0]["code"], "invalid_request");
    assert!(error["errors"][0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("request body is not valid JSON"));

    let (status, _, error) = exchange(&sim, "POST", "/api/v2/issues", &[JSON], create).await;
    assert_eq!(status, 401);
    assert_eq!(error["errors"][0]["code"], "unauthenticated");
    assert_eq!(sim.ledger().len(), 1, "no effect from a refused request");
    sim.shutdown().await;
}

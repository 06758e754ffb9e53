//! The control API (shapes, token guard, invisibility to faults and journal),
//! webhook signatures (published vector and an independent HMAC), plan checks.

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use crate::common::*;
use lostreply_simulator::webhook::{signature, WebhookSecretError};
use lostreply_simulator::{
    FaultResponse, Match, Plan, PlanError, Position, Release, ServeOptions, Simulator, StallThen,
    StartError, Webhooks,
};
use serde_json::{json, Value};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

#[test]
fn signature_matches_the_standard_webhooks_vector() {
    let signed = signature(
        SECRET,
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        r#"{"test": 2432232314}"#,
    )
    .unwrap();
    assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    assert_eq!(
        signature("MfKQ", "m", 1, "{}"),
        Err(WebhookSecretError::MissingPrefix)
    );
}

fn hooked() -> Plan {
    let mut plan = plan();
    plan.webhooks = Some(Webhooks::builder().secret(SECRET.to_owned()).build());
    plan
}

#[tokio::test]
async fn deliveries_verify_with_an_independent_hmac() {
    let sim = start(hooked()).await;
    let (_, object) = json(
        post(
            &sim,
            A,
            "tickets",
            &json!({"title": "ünïcode", "n": 1}),
            None,
        )
        .await,
    )
    .await;
    sim.advance(Duration::from_millis(1500));
    let event = sim.events()[0].clone();
    assert_eq!(
        (event.event_type.as_str(), event.object_id.as_str()),
        ("tickets.created", object["id"].as_str().unwrap())
    );
    let payload: Value = serde_json::from_str(&event.body).unwrap();
    assert_eq!(payload["data"], object);
    assert_eq!(payload["type"], "tickets.created");
    let delivery = sim.sign(&event).unwrap();
    let timestamp = &delivery.headers["webhook-timestamp"];
    assert_eq!(
        timestamp,
        &((sim.now_ms() / 1000).to_string()),
        "signed at the simulator clock"
    );
    assert_eq!(delivery.headers["webhook-id"], event.id);
    let script = "import base64,hashlib,hmac,sys\n\
        key=base64.b64decode(sys.argv[1][len('whsec_'):])\n\
        msg=(sys.argv[2]+'.'+sys.argv[3]+'.').encode()+sys.stdin.buffer.read()\n\
        print('v1,'+base64.b64encode(hmac.new(key,msg,hashlib.sha256).digest()).decode())";
    let mut child = Command::new("python3")
        .args(["-c", script, SECRET, &event.id, timestamp])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is needed for the independent HMAC check");
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), delivery.body.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().trim(),
        delivery.headers["webhook-signature"]
    );

    // Signed afresh: a later delivery has a later timestamp and another signature.
    sim.advance(Duration::from_secs(10));
    let later = sim.sign(&event).unwrap();
    assert_eq!(later.headers["webhook-id"], event.id);
    assert_ne!(
        later.headers["webhook-signature"],
        delivery.headers["webhook-signature"]
    );

    // The control API signs the same way.
    let response = client(2000)
        .post(format!(
            "{}/events/{}/delivery",
            sim.control_url(),
            event.id
        ))
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["headers"]["webhook-signature"],
        later.headers["webhook-signature"]
    );
}

#[tokio::test]
async fn without_webhooks_there_are_no_events_and_nothing_to_sign() {
    let sim = start(plan()).await;
    post(&sim, A, "tickets", &json!({"a": 1}), None).await;
    assert!(sim.events().is_empty());
    let hooked = start(hooked()).await;
    post(&hooked, A, "tickets", &json!({"a": 1}), None).await;
    assert!(sim.sign(&hooked.events()[0]).is_none());
}

#[tokio::test]
async fn control_api_reports_ledger_journal_events_and_clock() {
    let sim = start(hooked()).await;
    let http = client(2000);
    let control = sim.control_url();
    post(&sim, A, "tickets", &json!({"a": 1}), Some("k")).await;
    let (status, health) = json(http.get(format!("{control}/health")).send().await.unwrap()).await;
    assert_eq!((status, health), (200, json!({"status": "ok"})));
    let (_, ledger) = json(http.get(format!("{control}/ledger")).send().await.unwrap()).await;
    assert_eq!(ledger["data"][0]["id"], json!(sim.ledger()[0].id));
    assert_eq!(ledger["data"][0]["status"], "succeeded");
    // Shared text is written as what it holds: the arguments as the object
    // sent (not a string of its JSON), the key as the string sent.
    assert_eq!(ledger["data"][0]["args"], json!({"a": 1}));
    assert_eq!(ledger["data"][0]["idempotency_key"], "k");
    assert_eq!(ledger["data"][0]["fingerprint"], r#"{"a":1}"#);
    let (_, journal) = json(http.get(format!("{control}/journal")).send().await.unwrap()).await;
    let entry = &journal["data"][0];
    assert_eq!(
        (
            entry["kind"].clone(),
            entry["fate"].clone(),
            entry["status"].clone()
        ),
        (json!("create"), json!("sent"), json!(201))
    );
    assert_eq!(entry["idempotency_key"], "k");
    assert_eq!(
        journal["data"].as_array().unwrap().len(),
        1,
        "control requests are not journaled"
    );
    let (_, events) = json(http.get(format!("{control}/events")).send().await.unwrap()).await;
    assert_eq!(events["data"][0]["event_type"], "tickets.created");

    let (_, clock) = json(http.get(format!("{control}/clock")).send().await.unwrap()).await;
    assert_eq!(
        clock,
        json!({"now_ms": 1_767_225_600_000_i64, "now": "2026-01-01T00:00:00.000Z"})
    );
    let (_, clock) = json(
        http.post(format!("{control}/clock"))
            .json(&json!({"advance": "25h"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(clock["now"], "2026-01-02T01:00:00.000Z");
    let (_, clock) = json(
        http.post(format!("{control}/clock"))
            .json(&json!({"advance_ms": 500}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        clock["now_ms"],
        1_767_225_600_000_i64 + 25 * 3_600_000 + 500
    );
    assert_eq!(sim.now_ms(), 1_767_225_600_000 + 25 * 3_600_000 + 500);
    for bad in [
        json!({}),
        json!({"advance": "soon"}),
        json!({"advance_ms": -1}),
        json!({"advance_ms": 1, "advance": "1s"}),
        json!({"later": 1}),
        json!([1]),
    ] {
        let (status, body) = json(
            http.post(format!("{control}/clock"))
                .json(&bad)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["error"]["type"].clone()),
            (400, json!("invalid_request")),
            "{bad}"
        );
    }
    let (status, _) = json(http.get(format!("{control}/nothing")).send().await.unwrap()).await;
    assert_eq!(status, 404);
    assert_eq!(sim.journal().len(), 1);
}

#[tokio::test]
async fn control_requests_do_not_count_for_faults() {
    let mut plan = plan();
    plan.faults = vec![rule(
        {
            let mut changed = Match::default();
            changed.nth = Some(1);
            changed
        },
        Position::BeforeRead,
        FaultResponse::Status {
            code: 503,
            retry_after_s: None,
        },
    )];
    let sim = start(plan).await;
    let http = client(2000);
    assert_eq!(
        http.get(format!("{}/health", sim.control_url()))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    assert_eq!(
        http.get(format!("{}/ledger", sim.control_url()))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    assert_eq!(
        post(&sim, A, "tickets", &json!({"a": 1}), None)
            .await
            .status()
            .as_u16(),
        503,
        "the first provider request"
    );
}

#[tokio::test]
async fn resetting_the_faults_restarts_nth_counts_and_nothing_else() {
    let mut plan = plan();
    plan.faults = vec![rule(
        {
            let mut changed = Match::default();
            changed.method = Some("POST".to_owned());
            changed.nth = Some(1);
            changed
        },
        Position::BeforeCommit,
        FaultResponse::Status {
            code: 429,
            retry_after_s: None,
        },
    )];
    let sim = start(plan).await;
    let status = |r: reqwest::Response| r.status().as_u16();
    assert_eq!(
        status(post(&sim, A, "tickets", &json!({"a": 1}), None).await),
        429
    );
    assert_eq!(
        status(post(&sim, A, "tickets", &json!({"a": 2}), None).await),
        201
    );
    let http = client(2000);
    let (code, body) = json(
        http.post(format!("{}/faults/reset", sim.control_url()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((code, body), (200, json!({"rules": 1})));
    assert_eq!(
        status(post(&sim, A, "tickets", &json!({"a": 3}), None).await),
        429,
        "nth: 1 strikes again after the reset"
    );
    assert_eq!(
        status(post(&sim, A, "tickets", &json!({"a": 4}), None).await),
        201
    );
    assert_eq!(sim.ledger().len(), 2, "the ledger is kept");
    let code = http
        .get(format!("{}/faults/reset", sim.control_url()))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    assert_eq!(code, 405, "reset is a POST");
}

#[tokio::test]
async fn a_control_token_guards_the_control_api() {
    let options = ServeOptions {
        control_token: Some("ctl-secret".to_owned()),
        ..ServeOptions::default()
    };
    let sim = Simulator::start(plan(), options).await.unwrap();
    let http = client(2000);
    let url = format!("{}/ledger", sim.control_url());
    for request in [
        http.get(&url),
        http.get(&url).bearer_auth("wrong"),
        http.get(&url).bearer_auth(A),
    ] {
        let (status, body) = json(request.send().await.unwrap()).await;
        assert_eq!(
            (status, body["error"]["type"].clone()),
            (401, json!("unauthorized"))
        );
    }
    let advance = http
        .post(format!("{}/clock", sim.control_url()))
        .json(&json!({"advance": "1h"}));
    assert_eq!(advance.send().await.unwrap().status().as_u16(), 401);
    assert_eq!(
        sim.now_ms(),
        1_767_225_600_000,
        "a refused control request changes nothing"
    );
    assert_eq!(
        http.get(&url)
            .bearer_auth("ctl-secret")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    // The provider API does not accept the control token as a tenant.
    assert_eq!(
        get(&sim, "ctl-secret", "/v1/tickets")
            .await
            .status()
            .as_u16(),
        401
    );
}

#[tokio::test]
async fn a_non_loopback_bind_needs_a_token() {
    // Refused before binding, so nothing listens beyond loopback.
    let bind: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let error = Simulator::start(
        plan(),
        ServeOptions {
            bind,
            control_token: None,
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(error, StartError::ControlUnguarded(addr) if addr == bind));
    let error = Simulator::start(
        plan(),
        ServeOptions {
            control_token: Some(String::new()),
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(error, StartError::BadControlToken));
}

#[tokio::test]
async fn inconsistent_plans_are_refused_with_the_field_named() {
    type Change = Box<dyn Fn(&mut Plan)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|p| p.tenants.clear()), "tenants"),
        (Box::new(|p| p.tenants.push(A.to_owned())), "tenants[2]"),
        (
            Box::new(|p| p.tenants[0] = "has space".to_owned()),
            "tenants[0]",
        ),
        (
            Box::new(|p| p.webhooks = Some(Webhooks::builder().secret("nope".to_owned()).build())),
            "webhooks.secret",
        ),
        (
            Box::new(|p| p.resources = Some(["Bad".to_owned()].into())),
            "resources",
        ),
        (
            Box::new(|p| {
                p.faults = vec![rule(
                    {
                        let mut changed = Match::default();
                        changed.nth = Some(0);
                        changed
                    },
                    Position::AfterCommit,
                    FaultResponse::Drop,
                )]
            }),
            "faults[0].when.nth",
        ),
        (
            Box::new(|p| {
                p.faults = vec![rule(
                    Match::default(),
                    Position::AfterCommit,
                    FaultResponse::Status {
                        code: 200,
                        retry_after_s: None,
                    },
                )]
            }),
            "faults[0]",
        ),
        (
            Box::new(|p| {
                p.faults = vec![rule(
                    Match::default(),
                    Position::BeforeCommit,
                    FaultResponse::Idle,
                )]
            }),
            "faults[0]",
        ),
        (
            Box::new(|p| {
                p.faults = vec![rule(
                    Match::default(),
                    Position::BeforeRead,
                    FaultResponse::Stall {
                        then: StallThen::Commit,
                        until: Release::ClientGone,
                    },
                )]
            }),
            "faults[0]",
        ),
        (
            Box::new(|p| {
                p.faults = vec![rule(
                    {
                        let mut changed = Match::default();
                        changed.tenant = Some("sk_x".to_owned());
                        changed
                    },
                    Position::AfterCommit,
                    FaultResponse::Drop,
                )]
            }),
            "faults[0].when.tenant",
        ),
        (
            Box::new(|p| {
                p.faults = vec![rule(
                    {
                        let mut changed = Match::default();
                        changed.method = Some("post".to_owned());
                        changed
                    },
                    Position::AfterCommit,
                    FaultResponse::Drop,
                )]
            }),
            "faults[0].when.method",
        ),
    ];
    for (change, field) in cases {
        let mut plan = plan();
        change(&mut plan);
        match Simulator::start(plan, ServeOptions::default()).await {
            Err(StartError::InvalidPlan(error)) => {
                let message = error.to_string();
                assert!(message.starts_with(field), "{message} should name {field}");
                if let PlanError::Field { field: named, .. } = &error {
                    assert_eq!(named, field, "{message}");
                }
            }
            other => panic!("expected InvalidPlan naming {field}, got {other:?}"),
        }
    }
}

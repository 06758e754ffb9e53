//! Every fault at every position it applies to, observed by a real client over
//! loopback, checked against the ledger and the journal.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{
    FaultResponse, Match, Position, Release, RequestKind, ResponseFate, ServeOptions, Simulator,
    StallThen,
};
use serde_json::json;
use tokio::sync::{mpsc, Notify};

const BODY: &str = r#"{"title":"Purchase review","amount":1200}"#;

async fn with_fault(at: Position, response: FaultResponse) -> Simulator {
    let mut plan = plan();
    plan.faults = vec![rule(creates(), at, response)];
    start(plan).await
}

/// A connection-level fault at each position: what a raw client saw, the
/// journal's fate, and whether the effect committed (only after the commit point).
async fn assert_connection_fault(response: FaultResponse, seen_by_client: Raw, fate: ResponseFate) {
    for (at, effects) in [
        (Position::BeforeRead, 0),
        (Position::BeforeCommit, 0),
        (Position::AfterCommit, 1),
    ] {
        let sim = with_fault(at, response).await;
        let seen = raw_exchange(&sim, &raw_post(A, "tickets", BODY), 2000).await;
        assert_eq!(seen, seen_by_client, "{at:?}");
        assert_eq!(fate_of(&sim, 1).await, fate, "{at:?}");
        assert_eq!(sim.ledger().len(), effects, "{at:?}");
        let entry = &sim.journal()[0];
        assert_eq!(entry.fault.as_deref().map(|f| f.at), Some(at));
        assert_eq!(entry.effect.is_some(), effects == 1);
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn drop_closes_with_a_fin_and_no_byte_at_every_position() {
    assert_connection_fault(
        FaultResponse::Drop,
        Raw::Closed(Vec::new()),
        ResponseFate::Dropped,
    )
    .await;
}

#[tokio::test]
async fn reset_aborts_with_an_rst_at_every_position() {
    assert_connection_fault(
        FaultResponse::Reset,
        Raw::Reset(Vec::new()),
        ResponseFate::Reset,
    )
    .await;
}

#[tokio::test]
async fn reqwest_sees_drop_and_reset_as_errors_without_a_status() {
    let sim = with_fault(Position::AfterCommit, FaultResponse::Reset).await;
    let error = post_with(&client(2000), &sim, A, "tickets", &json!({"a": 1}), None)
        .await
        .unwrap_err();
    assert!(error.status().is_none());
    let mut source: Option<&dyn std::error::Error> = Some(&error);
    let mut reset = false;
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            reset |= io.kind() == std::io::ErrorKind::ConnectionReset;
        }
        source = e.source();
    }
    assert!(reset, "expected ECONNRESET in {error:?}");
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn status_answers_an_error_and_commits_only_after_commit() {
    for (at, effects) in [
        (Position::BeforeRead, 0),
        (Position::BeforeCommit, 0),
        (Position::AfterCommit, 1),
    ] {
        let sim = with_fault(
            at,
            FaultResponse::Status {
                code: 500,
                retry_after_s: None,
            },
        )
        .await;
        let (status, body) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
        assert_eq!(
            (status, body),
            (500, json!({"error": {"type": "api_error"}})),
            "{at:?}"
        );
        assert_eq!(sim.ledger().len(), effects, "{at:?}");
        assert_eq!(
            fate_of(&sim, 1).await,
            ResponseFate::Sent {
                status: 500,
                client_left: false
            }
        );
        sim.shutdown().await;
    }
    let sim = with_fault(
        Position::BeforeCommit,
        FaultResponse::Status {
            code: 429,
            retry_after_s: None,
        },
    )
    .await;
    let response = post(&sim, A, "tickets", &json!({"a": 1}), None).await;
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(
        json(response).await,
        (429, json!({"error": {"type": "rate_limited"}}))
    );
}

/// A rule that chooses its `Retry-After` is answered with that many seconds,
/// on a 429 and on a 503 alike, at every position; a 500 without one carries
/// no header at all.
#[tokio::test]
async fn a_status_fault_carries_the_retry_after_its_rule_chose() {
    for (code, retry_after_s, header) in [
        (429, Some(30), Some("30")),
        (429, Some(0), Some("0")),
        (503, Some(120), Some("120")),
        (500, None, None),
    ] {
        for at in [
            Position::BeforeRead,
            Position::BeforeCommit,
            Position::AfterCommit,
        ] {
            let sim = with_fault(
                at,
                FaultResponse::Status {
                    code,
                    retry_after_s,
                },
            )
            .await;
            let response = post(&sim, A, "tickets", &json!({"a": 1}), None).await;
            assert_eq!(response.status().as_u16(), code, "{code} {at:?}");
            assert_eq!(
                response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok()),
                header,
                "{code} {at:?}"
            );
            sim.shutdown().await;
        }
    }
}

#[tokio::test]
async fn delay_then_serves_normally() {
    for at in [
        Position::BeforeRead,
        Position::BeforeCommit,
        Position::AfterCommit,
    ] {
        let sim = with_fault(
            at,
            FaultResponse::Delay {
                delay: Duration::from_millis(50),
            },
        )
        .await;
        let started = std::time::Instant::now();
        let (status, _) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
        assert_eq!(status, 201);
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert_eq!(sim.ledger().len(), 1);
    }
}

#[tokio::test]
async fn partial_sends_status_headers_and_n_body_bytes_then_closes() {
    let sim = with_fault(Position::AfterCommit, FaultResponse::Partial { bytes: 12 }).await;
    let seen = raw_exchange(&sim, &raw_post(A, "tickets", BODY), 2000).await;
    let Raw::Closed(bytes) = seen else {
        panic!("expected an orderly close, got {seen:?}")
    };
    let (status, head, body) = split_response(&bytes);
    assert_eq!(status, 201);
    assert_eq!(body.len(), 12);
    let declared: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        declared > 12,
        "content-length {declared} announces the whole body"
    );
    assert_eq!(&body[..], &object_prefix(&sim)[..12]);
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Truncated {
            status: 201,
            bytes: 12
        }
    );
    assert_eq!(sim.ledger().len(), 1);

    // reqwest gets the status, then fails reading the body.
    let response = post(&sim, A, "tickets", &json!({"a": 2}), None).await;
    assert_eq!(response.status().as_u16(), 201);
    assert!(response.bytes().await.is_err());
    assert_eq!(sim.ledger().len(), 2);
}

fn object_prefix(sim: &Simulator) -> Vec<u8> {
    format!("{{\"id\":\"{}\"", sim.ledger()[0].id).into_bytes()
}

#[tokio::test]
async fn partial_beyond_the_body_sends_it_whole() {
    let sim = with_fault(
        Position::AfterCommit,
        FaultResponse::Partial { bytes: 100_000 },
    )
    .await;
    let (status, body) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
    assert_eq!(
        (status, body["id"].clone()),
        (201, json!(sim.ledger()[0].id))
    );
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Sent {
            status: 201,
            client_left: false
        }
    );
}

#[tokio::test]
async fn idle_sends_headers_then_silence_until_the_client_leaves() {
    let sim = with_fault(Position::AfterCommit, FaultResponse::Idle).await;
    let response = post_with(&client(300), &sim, A, "tickets", &json!({"a": 1}), None)
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201, "headers arrive");
    let error = response.bytes().await.unwrap_err();
    assert!(error.is_timeout(), "the body never comes: {error:?}");
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Idle {
            status: 201,
            client_left: true
        }
    );
    assert_eq!(sim.ledger().len(), 1);

    // Raw view: the head arrives, then nothing while the socket stays open.
    let mut stream = tokio::net::TcpStream::connect(sim.local_addr())
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, raw_post(A, "tickets", BODY).as_bytes())
        .await
        .unwrap();
    let Raw::Silent(bytes) = read_raw(&mut stream, 300).await else {
        panic!("expected silence")
    };
    let (status, _, body) = split_response(&bytes);
    assert_eq!((status, body.len()), (201, 0));
    drop(stream);
    assert_eq!(
        fate_of(&sim, 2).await,
        ResponseFate::Idle {
            status: 201,
            client_left: true
        }
    );
}

#[tokio::test]
async fn idle_ends_at_the_cap_when_the_client_stays() {
    let mut plan = plan();
    plan.limits.stall_cap = Duration::from_millis(100);
    plan.faults = vec![rule(creates(), Position::AfterCommit, FaultResponse::Idle)];
    let sim = start(plan).await;
    let Raw::Closed(bytes) = raw_exchange(&sim, &raw_post(A, "tickets", BODY), 3000).await else {
        panic!("the cap closes the connection")
    };
    assert_eq!(split_response(&bytes).0, 201);
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Idle {
            status: 201,
            client_left: false
        }
    );
}

#[tokio::test]
async fn stall_holds_until_the_client_gives_up() {
    let cases = [
        (Position::BeforeRead, StallThen::Abandon, 0),
        (Position::BeforeCommit, StallThen::Abandon, 0),
        (Position::BeforeCommit, StallThen::Commit, 1),
        (Position::AfterCommit, StallThen::Abandon, 1),
    ];
    for (at, then, effects) in cases {
        let sim = with_fault(
            at,
            FaultResponse::Stall {
                then,
                until: Release::ClientGone,
            },
        )
        .await;
        let error = post_with(&client(200), &sim, A, "tickets", &json!({"a": 1}), None)
            .await
            .unwrap_err();
        assert!(
            error.is_timeout(),
            "{at:?}: the client's own timeout fires: {error:?}"
        );
        assert_eq!(
            fate_of(&sim, 1).await,
            ResponseFate::Stalled { client_left: true },
            "{at:?} {then:?}"
        );
        if effects == 1 {
            wait_until("the effect commits after the client left", || {
                sim.ledger().len() == 1
            })
            .await;
            wait_until("the journal names it", || sim.journal()[0].effect.is_some()).await;
        }
        assert_eq!(sim.ledger().len(), effects, "{at:?} {then:?}");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn stall_then_commit_commits_only_after_the_client_left() {
    let sim = with_fault(
        Position::BeforeCommit,
        FaultResponse::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
        },
    )
    .await;
    let mut stream = tokio::net::TcpStream::connect(sim.local_addr())
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, raw_post(A, "tickets", BODY).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_raw(&mut stream, 200).await, Raw::Silent(Vec::new()));
    assert!(
        sim.ledger().is_empty(),
        "nothing commits while the client waits"
    );
    drop(stream);
    wait_until("the effect commits", || sim.ledger().len() == 1).await;
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Stalled { client_left: true }
    );
}

#[tokio::test]
async fn stall_ends_at_the_cap_with_a_close() {
    let mut plan = plan();
    plan.limits.stall_cap = Duration::from_millis(100);
    plan.faults = vec![rule(
        creates(),
        Position::AfterCommit,
        FaultResponse::Stall {
            then: StallThen::Abandon,
            until: Release::ClientGone,
        },
    )];
    let sim = start(plan).await;
    assert_eq!(
        raw_exchange(&sim, &raw_post(A, "tickets", BODY), 3000).await,
        Raw::Closed(Vec::new())
    );
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Stalled { client_left: false }
    );
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn faults_apply_to_lookups_too() {
    let mut plan = plan();
    let search = {
        let mut changed = Match::default();
        changed.query = Some("client_reference".to_owned());
        changed
    };
    plan.faults = vec![
        rule(search, Position::AfterCommit, FaultResponse::Reset),
        rule(
            {
                let mut changed = Match::default();
                changed.kind = Some(RequestKind::List);
                changed
            },
            Position::AfterCommit,
            FaultResponse::Partial { bytes: 3 },
        ),
    ];
    let sim = start(plan).await;
    let request = format!("GET /v1/tickets?client_reference=x HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\n\r\n");
    assert_eq!(
        raw_exchange(&sim, &request, 2000).await,
        Raw::Reset(Vec::new())
    );
    let request =
        format!("GET /v1/tickets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\n\r\n");
    let Raw::Closed(bytes) = raw_exchange(&sim, &request, 2000).await else {
        panic!("closed")
    };
    assert_eq!(split_response(&bytes).2, b"{\"d".to_vec());
}

#[tokio::test]
async fn nth_counts_matching_requests_and_the_first_matching_rule_wins() {
    let mut plan = plan();
    let b_creates = {
        let mut changed = creates();
        changed.tenant = Some(B.to_owned());
        changed
    };
    let nth = |n| {
        let mut changed = creates();
        changed.nth = Some(n);
        changed
    };
    plan.faults = vec![
        // Shadows every create of tenant b: they are served normally...
        rule(b_creates, Position::BeforeCommit, FaultResponse::Ok),
        // ...but still counted here: the 2nd create overall is b's, so a's next is the 3rd.
        rule(
            nth(1),
            Position::BeforeCommit,
            FaultResponse::Status {
                code: 503,
                retry_after_s: None,
            },
        ),
        rule(
            nth(3),
            Position::BeforeCommit,
            FaultResponse::Status {
                code: 502,
                retry_after_s: None,
            },
        ),
        rule(
            nth(3),
            Position::BeforeCommit,
            FaultResponse::Status {
                code: 504,
                retry_after_s: None,
            },
        ),
        rule(
            {
                let mut changed = Match::default();
                changed.kind = Some(RequestKind::Search);
                changed
            },
            Position::BeforeCommit,
            FaultResponse::Status {
                code: 429,
                retry_after_s: None,
            },
        ),
    ];
    let sim = start(plan).await;
    let body = json!({"a": 1});
    assert_eq!(
        post(&sim, A, "tickets", &body, None)
            .await
            .status()
            .as_u16(),
        503
    );
    assert_eq!(
        post(&sim, B, "tickets", &body, None)
            .await
            .status()
            .as_u16(),
        201
    );
    assert_eq!(
        post(&sim, A, "tickets", &body, None)
            .await
            .status()
            .as_u16(),
        502,
        "rule 2 before rule 3"
    );
    assert_eq!(
        post(&sim, A, "tickets", &body, None)
            .await
            .status()
            .as_u16(),
        201
    );
    assert_eq!(
        get(&sim, A, "/v1/tickets?client_reference=x")
            .await
            .status()
            .as_u16(),
        429
    );
    assert_eq!(get(&sim, A, "/v1/tickets").await.status().as_u16(), 200);
    let rules: Vec<Option<usize>> = sim
        .journal()
        .iter()
        .map(|e| e.fault.as_deref().map(|f| f.rule))
        .collect();
    assert_eq!(rules, vec![Some(1), Some(0), Some(2), None, Some(4), None]);
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn the_commit_hook_runs_between_commit_and_response() {
    let sim = start(plan()).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let hook_release = release.clone();
    sim.set_commit_hook(Some(Arc::new(
        move |effect: lostreply_simulator::Effect| {
            let (tx, release) = (tx.clone(), hook_release.clone());
            Box::pin(async move {
                let _ = tx.send(effect.id);
                release.notified().await;
            })
        },
    )));
    let sim = Arc::new(sim);
    let caller = {
        let sim = sim.clone();
        tokio::spawn(
            async move { json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await },
        )
    };
    let id = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        sim.ledger()[0].id,
        id,
        "the effect is committed when the hook runs"
    );
    assert_eq!(
        sim.journal()[0].fate,
        ResponseFate::InProgress,
        "the response waits for the hook"
    );
    release.notify_one();
    let (status, body) = caller.await.unwrap();
    assert_eq!((status, body["id"].clone()), (201, json!(id)));
}

#[tokio::test]
async fn stall_then_commit_calls_the_hook_too() {
    let sim = with_fault(
        Position::BeforeCommit,
        FaultResponse::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
        },
    )
    .await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    sim.set_commit_hook(Some(Arc::new(
        move |effect: lostreply_simulator::Effect| {
            let tx = tx.clone();
            Box::pin(async move {
                let _ = tx.send(effect.id);
            })
        },
    )));
    let _ = post_with(&client(200), &sim, A, "tickets", &json!({"a": 1}), None)
        .await
        .unwrap_err();
    let id = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sim.ledger()[0].id, id);
}

#[tokio::test]
async fn shutdown_ends_held_connections_promptly() {
    let mut plan = plan();
    plan.limits.stall_cap = Duration::from_secs(60);
    plan.faults = vec![rule(
        creates(),
        Position::AfterCommit,
        FaultResponse::Stall {
            then: StallThen::Abandon,
            until: Release::ClientGone,
        },
    )];
    let sim = Simulator::start(plan, ServeOptions::default())
        .await
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(sim.local_addr())
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, raw_post(A, "tickets", BODY).as_bytes())
        .await
        .unwrap();
    wait_until("the stall holds", || sim.ledger().len() == 1).await;
    tokio::time::timeout(Duration::from_secs(5), sim.shutdown())
        .await
        .unwrap();
    let seen = read_raw(&mut stream, 2000).await;
    assert!(
        matches!(seen, Raw::Closed(ref b) | Raw::Reset(ref b) if b.is_empty()),
        "{seen:?}"
    );
}

//! The idempotency table of provider-api.md, row by row and mode by mode,
//! including concurrent duplicates, retention and each known-bad mode's flaw.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{FaultResponse, IdempotencyMode, Plan, Position, Simulator};
use serde_json::{json, Value};
use tokio::sync::Notify;

fn keyed(mode: IdempotencyMode) -> Plan {
    let mut plan = plan();
    plan.idempotency.mode = mode;
    plan
}

async fn post_raw(
    sim: &Simulator,
    tenant: &str,
    body: &Value,
    key: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let response = post(sim, tenant, "tickets", body, key).await;
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.json().await.unwrap())
}

#[tokio::test]
async fn none_ignores_keys() {
    let sim = start(keyed(IdempotencyMode::None)).await;
    for _ in 0..2 {
        assert_eq!(post_raw(&sim, A, &json!({"a": 1}), Some("k1")).await.0, 201);
    }
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn stripe_replays_with_the_saved_response_and_a_header() {
    let sim = start(keyed(IdempotencyMode::Stripe)).await;
    let (status, first_headers, first) =
        post_raw(&sim, A, &json!({"a": 1, "b": 2}), Some("k1")).await;
    assert_eq!(status, 201);
    assert!(first_headers.get("idempotent-replayed").is_none());
    // Key order does not change the fingerprint.
    let (status, headers, replayed) = post_raw(&sim, A, &json!({"b": 2, "a": 1}), Some("k1")).await;
    assert_eq!((status, &replayed), (201, &first));
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(headers["location"], first_headers["location"]);
    assert_eq!(sim.ledger().len(), 1);
    assert!(sim.journal()[1].replayed);
    assert_eq!(sim.ledger()[0].idempotency_key.as_deref(), Some("k1"));
    assert_eq!(sim.ledger()[0].fingerprint, r#"{"a":1,"b":2}"#);

    let (status, _, body) = post_raw(&sim, A, &json!({"a": 2}), Some("k1")).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "idempotency_error");
    // No key: processed every time.
    post_raw(&sim, A, &json!({"a": 1, "b": 2}), None).await;
    post_raw(&sim, A, &json!({"a": 1, "b": 2}), None).await;
    assert_eq!(sim.ledger().len(), 3);
    assert_eq!(sim.ledger()[2].attempt, 4, "fourth create with this body");
}

#[tokio::test]
async fn stripe_refuses_bad_keys_without_effect() {
    let sim = start(keyed(IdempotencyMode::Stripe)).await;
    let long = "k".repeat(256);
    let (status, _, body) = post_raw(&sim, A, &json!({"a": 1}), Some(&long)).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"].as_str().unwrap().contains("255"),
        "{body}"
    );
    assert_eq!(
        post_raw(&sim, A, &json!({"a": 1}), Some(&"k".repeat(255)))
            .await
            .0,
        201
    );
    let (status, _, _) = post_raw(&sim, A, &json!({"a": 1}), Some("has space")).await;
    assert_eq!(status, 400);
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn stripe_saves_server_errors_but_not_validation_errors() {
    let mut plan = keyed(IdempotencyMode::Stripe);
    plan.faults = vec![rule(
        {
            let mut changed = creates();
            changed.nth = Some(1);
            changed
        },
        Position::BeforeCommit,
        FaultResponse::Status {
            code: 500,
            retry_after_s: None,
        },
    )];
    let sim = start(plan).await;
    assert_eq!(post_raw(&sim, A, &json!({"a": 1}), Some("k1")).await.0, 500);
    let (status, headers, body) = post_raw(&sim, A, &json!({"a": 1}), Some("k1")).await;
    assert_eq!(
        (status, body),
        (500, json!({"error": {"type": "api_error"}}))
    );
    assert_eq!(headers["idempotent-replayed"], "true");
    assert!(sim.ledger().is_empty());

    let (status, _, _) = post_raw(&sim, A, &json!({"client_reference": 5}), Some("k2")).await;
    assert_eq!(status, 400);
    assert_eq!(
        post_raw(&sim, A, &json!({"a": 1}), Some("k2")).await.0,
        201,
        "the 400 was not saved"
    );
}

#[tokio::test]
async fn release_on_error_runs_the_retry_after_a_server_error_sent_after_the_commit() {
    /// The first create with key `k` commits, then is answered 500; then its retry.
    async fn retry_after_a_late_500(mode: IdempotencyMode) -> (u16, usize) {
        let mut plan = keyed(mode);
        plan.faults = vec![rule(
            {
                let mut first = creates();
                first.nth = Some(1);
                first
            },
            Position::AfterCommit,
            FaultResponse::Status {
                code: 500,
                retry_after_s: None,
            },
        )];
        let sim = start(plan).await;
        assert_eq!(post_raw(&sim, A, &json!({"a": 1}), Some("k")).await.0, 500);
        assert_eq!(
            sim.ledger().len(),
            1,
            "{mode:?}: the first attempt committed"
        );
        let (status, _, _) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
        (status, sim.ledger().len())
    }
    // The key was released on the 500: the retry is new work.
    assert_eq!(
        retry_after_a_late_500(IdempotencyMode::ReleaseOnError).await,
        (201, 2)
    );
    // The good modes saved the committed result before the 500 went out.
    for mode in [IdempotencyMode::Stripe, IdempotencyMode::Ietf] {
        assert_eq!(retry_after_a_late_500(mode).await, (201, 1), "{mode:?}");
    }
}

/// Fires `n` identical creates while the commit hook holds every commit, and
/// returns the statuses once they are all answered.
async fn concurrent_duplicates(
    mode: IdempotencyMode,
    n: usize,
    expected_commits: usize,
) -> (Arc<Simulator>, Vec<u16>) {
    let sim = Arc::new(start(keyed(mode)).await);
    let commits = Arc::new(AtomicUsize::new(0));
    let committed = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (hook_commits, hook_committed, hook_release) =
        (commits.clone(), committed.clone(), release.clone());
    sim.set_commit_hook(Some(Arc::new(move |_| {
        let (commits, committed, release) = (
            hook_commits.clone(),
            hook_committed.clone(),
            hook_release.clone(),
        );
        Box::pin(async move {
            let released = release.notified();
            commits.fetch_add(1, Ordering::SeqCst);
            committed.notify_one();
            released.await;
        })
    })));
    let mut callers = Vec::new();
    for _ in 0..n {
        let sim = sim.clone();
        callers.push(tokio::spawn(async move {
            post(&sim, A, "tickets", &json!({"a": 1}), Some("same"))
                .await
                .status()
                .as_u16()
        }));
    }
    // Every request has reached its answer or the hook before anything is released.
    wait_until("all duplicates arrived", || {
        let journal = sim.journal();
        let answered = journal
            .iter()
            .filter(|e| e.fate != lostreply_simulator::ResponseFate::InProgress)
            .count();
        answered + commits.load(Ordering::SeqCst) == n
    })
    .await;
    assert_eq!(commits.load(Ordering::SeqCst), expected_commits, "{mode:?}");
    release.notify_waiters();
    let mut statuses = Vec::new();
    for caller in callers {
        statuses.push(caller.await.unwrap());
    }
    statuses.sort_unstable();
    (sim, statuses)
}

#[tokio::test]
async fn concurrent_duplicates_run_once_in_stripe_and_ietf() {
    let (sim, statuses) = concurrent_duplicates(IdempotencyMode::Stripe, 4, 1).await;
    assert_eq!(statuses, vec![201, 409, 409, 409]);
    assert_eq!(sim.ledger().len(), 1);
    let (sim, statuses) = concurrent_duplicates(IdempotencyMode::Ietf, 4, 1).await;
    assert_eq!(statuses, vec![201, 409, 409, 409]);
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn racy_lets_concurrent_duplicates_all_run() {
    let (sim, statuses) = concurrent_duplicates(IdempotencyMode::Racy, 4, 4).await;
    assert_eq!(statuses, vec![201, 201, 201, 201]);
    assert_eq!(
        sim.ledger().len(),
        4,
        "check-then-set: every duplicate passed the check"
    );
    // Sequential duplicates are still replayed: the flaw is only the race.
    assert_eq!(
        post(&sim, A, "tickets", &json!({"a": 1}), Some("same"))
            .await
            .status()
            .as_u16(),
        201
    );
    assert_eq!(sim.ledger().len(), 4);
}

#[tokio::test]
async fn in_flight_conflicts_have_the_mode_shape() {
    let sim = Arc::new(start(keyed(IdempotencyMode::Stripe)).await);
    let release = Arc::new(Notify::new());
    let hook_release = release.clone();
    sim.set_commit_hook(Some(Arc::new(move |_| {
        let release = hook_release.clone();
        Box::pin(async move { release.notified().await })
    })));
    let first = {
        let sim = sim.clone();
        tokio::spawn(async move {
            post(&sim, A, "tickets", &json!({"a": 1}), Some("k"))
                .await
                .status()
                .as_u16()
        })
    };
    wait_until("the first is in flight", || sim.ledger().len() == 1).await;
    let (status, _, body) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    assert_eq!(status, 409);
    assert_eq!(
        body,
        json!({"error": {"type": "idempotency_error", "code": "idempotency_key_in_use", "message": body["error"]["message"]}})
    );
    release.notify_one();
    assert_eq!(first.await.unwrap(), 201);
}

#[tokio::test]
async fn ietf_replays_and_answers_problem_details() {
    let mut plan = keyed(IdempotencyMode::Ietf);
    plan.idempotency.required = true;
    let sim = start(plan).await;
    let (status, headers, first) = post_raw(&sim, A, &json!({"a": 1}), Some("\"k-1\"")).await;
    assert_eq!(status, 201);
    assert!(headers.get("idempotent-replayed").is_none());
    // The bare token names the same key as the quoted string.
    let (status, headers, again) = post_raw(&sim, A, &json!({"a": 1}), Some("k-1")).await;
    assert_eq!((status, &again), (201, &first));
    assert!(headers.get("idempotent-replayed").is_none());

    let (status, headers, body) = post_raw(&sim, A, &json!({"a": 2}), Some("k-1")).await;
    assert_eq!(status, 422);
    assert_eq!(headers["content-type"], "application/problem+json");
    assert_eq!(body["status"], 422);

    for (key, status) in [
        (None, 400),
        (Some("1bad"), 400),
        (Some("\"unterminated"), 400),
    ] {
        let (got, headers, body) = post_raw(&sim, A, &json!({"a": 3}), key).await;
        assert_eq!(got, status, "{key:?}");
        assert_eq!(headers["content-type"], "application/problem+json");
        assert!(body["type"]
            .as_str()
            .unwrap()
            .starts_with("urn:lostreply:problem:idempotency-key-"));
    }
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn ietf_without_required_processes_keyless_creates() {
    let sim = start(keyed(IdempotencyMode::Ietf)).await;
    assert_eq!(post_raw(&sim, A, &json!({"a": 1}), None).await.0, 201);
    assert_eq!(post_raw(&sim, A, &json!({"a": 1}), None).await.0, 201);
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn keys_expire_after_retention_by_the_simulator_clock() {
    let sim = start(keyed(IdempotencyMode::Stripe)).await;
    post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    sim.advance(Duration::from_secs(23 * 3600));
    let (_, headers, _) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    assert_eq!(
        headers["idempotent-replayed"], "true",
        "still retained at 23h"
    );
    sim.advance(Duration::from_secs(2 * 3600));
    let (status, headers, _) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    assert_eq!(status, 201);
    assert!(headers.get("idempotent-replayed").is_none());
    assert_eq!(
        sim.ledger().len(),
        2,
        "an expired key is forgotten: new work"
    );
}

#[tokio::test]
async fn fingerprint_in_key_runs_a_changed_body_again() {
    let sim = start(keyed(IdempotencyMode::FingerprintInKey)).await;
    post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    assert_eq!(
        post_raw(&sim, A, &json!({"a": 2}), Some("k")).await.0,
        201,
        "stripe would answer 400"
    );
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn no_fingerprint_replays_the_old_response_for_a_changed_body() {
    let sim = start(keyed(IdempotencyMode::NoFingerprint)).await;
    let (_, _, first) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    let (status, _, second) = post_raw(&sim, A, &json!({"a": 2}), Some("k")).await;
    assert_eq!((status, second), (201, first));
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn global_scope_leaks_another_tenants_response() {
    let sim = start(keyed(IdempotencyMode::GlobalScope)).await;
    let (_, _, mine) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    let (status, _, theirs) = post_raw(&sim, B, &json!({"a": 1}), Some("k")).await;
    assert_eq!(
        (status, &theirs["id"]),
        (201, &mine["id"]),
        "tenant b sees tenant a's object"
    );
    assert_eq!(sim.ledger().len(), 1);

    let sim = start(keyed(IdempotencyMode::Stripe)).await;
    let (_, _, mine) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    let (_, _, theirs) = post_raw(&sim, B, &json!({"a": 1}), Some("k")).await;
    assert_ne!(mine["id"], theirs["id"]);
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn stuck_in_flight_keeps_a_failed_key_in_flight_until_it_expires() {
    /// A simulator in `mode` whose first create with key `k` was dropped before commit.
    async fn start_after_a_failed_first_attempt(mode: IdempotencyMode) -> Simulator {
        let mut plan = keyed(mode);
        plan.faults = vec![rule(
            {
                let mut changed = creates();
                changed.nth = Some(1);
                changed
            },
            Position::BeforeCommit,
            FaultResponse::Drop,
        )];
        let sim = start(plan).await;
        let first = post_with(
            &client(2000),
            &sim,
            A,
            "tickets",
            &json!({"a": 1}),
            Some("k"),
        )
        .await;
        assert!(first.is_err(), "{mode:?}: the first attempt fails");
        sim
    }
    let sim = start_after_a_failed_first_attempt(IdempotencyMode::StuckInFlight).await;
    assert_eq!(
        post_raw(&sim, A, &json!({"a": 1}), Some("k")).await.0,
        409,
        "stuck"
    );
    sim.advance(Duration::from_secs(24 * 3600));
    assert_eq!(
        post_raw(&sim, A, &json!({"a": 1}), Some("k")).await.0,
        201,
        "expired at last"
    );

    // The good modes release the key of an abandoned attempt.
    for mode in [IdempotencyMode::Stripe, IdempotencyMode::Ietf] {
        let sim = start_after_a_failed_first_attempt(mode).await;
        assert_eq!(
            post_raw(&sim, A, &json!({"a": 1}), Some("k")).await.0,
            201,
            "{mode:?}"
        );
    }
}

#[tokio::test]
async fn a_replay_after_a_lost_response_returns_the_committed_object() {
    let mut plan = keyed(IdempotencyMode::Stripe);
    plan.faults = vec![rule(
        {
            let mut changed = creates();
            changed.nth = Some(1);
            changed
        },
        Position::AfterCommit,
        FaultResponse::Drop,
    )];
    let sim = start(plan).await;
    assert!(post_with(
        &client(2000),
        &sim,
        A,
        "tickets",
        &json!({"a": 1}),
        Some("k")
    )
    .await
    .is_err());
    let (status, headers, body) = post_raw(&sim, A, &json!({"a": 1}), Some("k")).await;
    assert_eq!((status, &body["id"]), (201, &json!(sim.ledger()[0].id)));
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(sim.ledger().len(), 1);
}

/// A committed create's text is one copy, however many records hold it: the
/// effect shares its request's journaled key, fingerprint and id (a
/// million-operation observation holds each of them twice).
#[tokio::test]
async fn an_effect_shares_its_requests_journaled_key_fingerprint_and_id() {
    use lostreply_text::SharedStr;
    let sim = start(keyed(IdempotencyMode::Stripe)).await;
    assert_eq!(
        post_raw(&sim, A, &json!({"a": 1}), Some("k-shared"))
            .await
            .0,
        201
    );
    let (ledger, journal) = (sim.ledger(), sim.journal());
    let (effect, entry) = (&ledger[0], &journal[0]);
    let shared = |a: Option<&SharedStr>, b: Option<&SharedStr>| match (a, b) {
        (Some(a), Some(b)) => SharedStr::ptr_eq(a, b),
        _ => false,
    };
    assert_eq!(effect.idempotency_key.as_deref(), Some("k-shared"));
    assert!(shared(
        effect.idempotency_key.as_ref(),
        entry.idempotency_key.as_ref()
    ));
    assert!(shared(
        Some(&effect.fingerprint),
        entry.fingerprint.as_ref()
    ));
    assert!(shared(Some(&effect.id), entry.effect.as_ref()));
}

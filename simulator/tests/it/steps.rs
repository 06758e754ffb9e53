//! Faults that describe situations rather than request counts: rules scoped to
//! the harness's steps, holds that keep a key in flight until a step ends, and
//! gathers that make two callers meet. Real clients over loopback.

use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{
    FaultResponse, IdempotencyMode, Lookup, Match, Position, Release, RequestKind, ResponseFate,
    StallThen,
};
use serde_json::json;

fn keyed_plan() -> lostreply_simulator::Plan {
    let mut plan = plan();
    plan.idempotency.mode = IdempotencyMode::Stripe;
    plan
}

fn in_step(step: u32, mut when: Match) -> Match {
    when.steps = Some([step].into_iter().collect());
    when
}

#[tokio::test]
async fn a_step_scoped_rule_loses_every_answer_of_its_step_and_nothing_else() {
    let mut plan = keyed_plan();
    plan.faults = vec![rule(
        in_step(1, Match::default()),
        Position::AfterCommit,
        FaultResponse::Drop,
    )];
    let sim = start(plan).await;
    let body = json!({"title": "t", "amount": 1});
    // Before any step: served.
    let (status, _) = json(get(&sim, A, "/v1/tickets?client_reference=x").await).await;
    assert_eq!(status, 200);
    sim.begin_step(1, Some(1));
    // Step 1: the create commits and is lost; so is its replay, so is a lookup,
    // however many an adapter sends.
    for _ in 0..3 {
        assert!(
            post_with(&client(2000), &sim, A, "tickets", &body, Some("k1"))
                .await
                .is_err()
        );
    }
    assert!(client(2000)
        .get(format!("{}/v1/tickets?client_reference=x", sim.base_url()))
        .bearer_auth(A)
        .send()
        .await
        .is_err());
    sim.end_step(1);
    sim.begin_step(2, Some(1));
    let (status, replay) = json(post(&sim, A, "tickets", &body, Some("k1")).await).await;
    assert_eq!(status, 201);
    assert_eq!(sim.ledger().len(), 1, "one effect: the rest were replays");
    assert_eq!(replay["id"], sim.ledger()[0].id.as_str());
    let steps: Vec<Option<u32>> = sim
        .journal()
        .iter()
        .map(|e| e.step.map(|s| s.get()))
        .collect();
    assert_eq!(
        steps,
        vec![None, Some(1), Some(1), Some(1), Some(1), Some(2)]
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn times_takes_the_first_n_matches_of_a_step() {
    let mut plan = plan();
    let mut when = in_step(1, Match::default());
    when.kind = Some(RequestKind::Search);
    when.times = Some(2);
    plan.faults = vec![rule(
        when,
        Position::AfterCommit,
        FaultResponse::Status {
            code: 503,
            retry_after_s: None,
        },
    )];
    let sim = start(plan).await;
    sim.begin_step(1, None);
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(
            get(&sim, A, "/v1/tickets?client_reference=x")
                .await
                .status()
                .as_u16(),
        );
    }
    assert_eq!(statuses, vec![503, 503, 200]);
    sim.shutdown().await;
}

#[tokio::test]
async fn a_hold_keeps_the_key_in_flight_until_its_step_ends_then_commits() {
    let mut plan = keyed_plan();
    let mut when = in_step(1, creates());
    when.nth = Some(1);
    plan.faults = vec![rule(
        when,
        Position::BeforeCommit,
        FaultResponse::Stall {
            then: StallThen::Commit,
            until: Release::StepEnd(2),
        },
    )];
    let sim = start(plan).await;
    let body = json!({"title": "held", "amount": 7});
    sim.begin_step(1, Some(1));
    // The client gives up; the provider keeps working.
    assert!(
        post_with(&client(200), &sim, A, "tickets", &body, Some("k"))
            .await
            .is_err()
    );
    // A same-key retry, in this step and the next, meets the original in flight.
    let (status, error) = json(post(&sim, A, "tickets", &body, Some("k")).await).await;
    assert_eq!(status, 409);
    assert_eq!(error["error"]["code"], "idempotency_key_in_use");
    sim.end_step(1);
    assert_eq!(
        sim.wait_quiet(Duration::from_secs(5)).await,
        Vec::<u64>::new()
    );
    sim.begin_step(2, Some(1));
    let (status, _) = json(post(&sim, A, "tickets", &body, Some("k")).await).await;
    assert_eq!(status, 409);
    assert!(sim.ledger().is_empty(), "nothing committed while held");
    sim.end_step(2);
    // Quiet only once the held request has committed and ended.
    assert_eq!(
        sim.wait_quiet(Duration::from_secs(5)).await,
        Vec::<u64>::new()
    );
    assert_eq!(sim.ledger().len(), 1);
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Stalled { client_left: true }
    );
    let (status, replay) = json(post(&sim, A, "tickets", &body, Some("k")).await).await;
    assert_eq!(status, 201);
    assert_eq!(replay["id"], sim.ledger()[0].id.as_str());
    sim.shutdown().await;
}

/// A search for op-1's objects: its status and how many it found.
async fn search_op_1(sim: &lostreply_simulator::Simulator) -> (u16, Option<usize>) {
    let (status, page) = json(get(sim, A, "/v1/tickets?client_reference=op-1").await).await;
    (status, page["data"].as_array().map(Vec::len))
}

fn gather_plan(lookup: Lookup) -> lostreply_simulator::Plan {
    let mut plan = plan();
    plan.lookup = lookup;
    let mut when = in_step(1, Match::default());
    when.kind = Some(RequestKind::Search);
    plan.faults = vec![rule(
        when,
        Position::BeforeRead,
        FaultResponse::Gather {
            requests: 2,
            at_most: Duration::from_secs(4),
        },
    )];
    plan
}

#[tokio::test]
async fn two_searches_meet_and_both_see_the_state_before_either_acts() {
    let sim = start(gather_plan(Lookup::default())).await;
    sim.begin_step(1, Some(2));
    let search = || search_op_1(&sim);
    // The first search arrives alone and is held: it has not been answered
    // when the second one arrives (a state, observed, not a duration).
    let (first, second) = {
        let first = search();
        tokio::pin!(first);
        let held = async {
            wait_until("the first search is held", || sim.journal_len() == 1).await;
            sim.journal()[0].fate.clone()
        };
        let fate_while_alone = tokio::select! {
            biased;
            fate = held => fate,
            answered = &mut first => panic!("answered before its partner came: {answered:?}"),
        };
        assert_eq!(fate_while_alone, ResponseFate::InProgress);
        // The second arrives; both go on, and both saw the state before either acted.
        tokio::join!(first, search())
    };
    assert_eq!(first, (200, Some(0)));
    assert_eq!(second, (200, Some(0)));
    sim.shutdown().await;
}

#[tokio::test]
async fn a_gathered_search_answers_what_it_saw_on_arrival_whatever_commits_while_it_waits() {
    // Why: read after the meeting, a search whose handler runs late (a loaded
    // machine) could see the other reconciler's create, and an unlocked pair
    // would escape case 7. Read on arrival, what it answers is decided then.
    let sim = start(gather_plan(Lookup::default())).await;
    sim.begin_step(1, Some(3));
    let search = || search_op_1(&sim);
    let (first, second) = tokio::join!(search(), async {
        wait_until("the first search is held", || sim.journal_len() == 1).await;
        // Not a search: the gather lets it through, and it commits.
        let created = post(
            &sim,
            A,
            "tickets",
            &json!({"client_reference": "op-1"}),
            None,
        )
        .await;
        assert_eq!(created.status().as_u16(), 201);
        assert_eq!(sim.ledger().len(), 1);
        search().await
    });
    assert_eq!(
        first,
        (200, Some(0)),
        "read when it arrived, before the create"
    );
    assert_eq!(
        second,
        (200, Some(1)),
        "read when it arrived, after the create"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn a_lone_search_goes_on_once_the_other_call_has_returned() {
    let sim = start(gather_plan(Lookup::default())).await;
    sim.begin_step(1, Some(2));
    let lone = async {
        get(&sim, A, "/v1/tickets?client_reference=op-1")
            .await
            .status()
    };
    let other_returns = async {
        // The other call ends without sending anything (a try-lock loser),
        // while the lone search waits at the gather.
        wait_until("the search is held", || sim.journal_len() == 1).await;
        sim.call_ended();
    };
    let (status, ()) = tokio::join!(lone, other_returns);
    assert_eq!(status.as_u16(), 200);
    sim.shutdown().await;
}

#[tokio::test]
async fn a_disabled_retrieve_is_unsupported_not_absent() {
    let mut plan = plan();
    plan.lookup.retrieve = false;
    let sim = start(plan).await;
    let (status, body) = json(get(&sim, A, "/v1/tickets/tkt_missing").await).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "unsupported_query");
    sim.shutdown().await;
}

#[tokio::test]
async fn null_reserved_fields_mean_absent_and_keep_the_fingerprint() {
    let mut plan = keyed_plan();
    plan.faults.clear();
    let sim = start(plan).await;
    let plain = json!({"title": "t", "amount": 1});
    let nulls = json!({"title": "t", "amount": 1, "client_reference": null, "metadata": null});
    let (status, first) = json(post(&sim, A, "tickets", &nulls, Some("k")).await).await;
    assert_eq!(status, 201);
    assert_eq!(first["client_reference"], serde_json::Value::Null);
    // The same request without the fields is a replay, not a mismatch.
    let (status, again) = json(post(&sim, A, "tickets", &plain, Some("k")).await).await;
    assert_eq!(status, 201);
    assert_eq!(again["id"], first["id"]);
    assert_eq!(sim.ledger().len(), 1);
    sim.shutdown().await;
}

/// A `during` hold keeps the first matching request's answer (read on
/// arrival) until the harness releases it: the request is journaled and
/// still in progress while held, other requests pass, and once released the
/// answer the request saw on arrival goes out.
#[tokio::test]
async fn a_during_hold_keeps_the_matching_answer_until_its_release() {
    let sim = std::sync::Arc::new(start(plan()).await);
    sim.begin_step(1, Some(2));
    let hold = sim
        .arm_during({
            let mut changed = Match::default();
            changed.kind = Some(RequestKind::Search);
            changed
        })
        .unwrap();
    let search = {
        let sim = sim.clone();
        tokio::spawn(
            async move { json(get(&sim, A, "/v1/tickets?client_reference=op-1").await).await },
        )
    };
    let seq = sim
        .wait_during_held(hold)
        .await
        .expect("the search is held");
    assert_eq!(seq, 1);
    // Held: still in progress, while a create that matches nothing passes.
    let (status, _) = json(
        post(
            &sim,
            A,
            "tickets",
            &json!({"client_reference": "op-1"}),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(sim.journal()[0].fate, ResponseFate::InProgress);
    assert!(!search.is_finished());
    sim.release_during(hold);
    let (status, page) = search.await.unwrap();
    assert_eq!(status, 200);
    // Read on arrival, before the create: it found nothing.
    assert_eq!(page["data"], json!([]));
    sim.end_step(1);
    std::sync::Arc::into_inner(sim).unwrap().shutdown().await;
}

/// A hold released before any request took it holds nothing, and the
/// waiter hears so; a hold of a step ends with that step.
#[tokio::test]
async fn a_during_hold_released_untaken_holds_nothing() {
    let sim = start(plan()).await;
    sim.begin_step(1, Some(1));
    let hold = sim.arm_during(creates()).unwrap();
    sim.release_during(hold);
    assert_eq!(sim.wait_during_held(hold).await, None);
    let (status, _) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
    assert_eq!(status, 201);
    let other = sim.arm_during(Match::default()).unwrap();
    sim.end_step(1);
    assert_eq!(sim.wait_during_held(other).await, None);
    sim.shutdown().await;
}

/// The harness waits for the event a webhook delivers: woken by the commit
/// that produces it, not by polling; and a wait whose give-up comes first
/// answers what it found by then.
#[tokio::test]
async fn waiting_for_an_event_wakes_at_the_commit_that_makes_it() {
    let mut plan = plan();
    plan.webhooks = Some(
        lostreply_simulator::Webhooks::builder()
            .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned())
            .build(),
    );
    let sim = std::sync::Arc::new(start(plan).await);
    let none = sim
        .wait_for_event(|_, events| events.first().map(|e| e.id.clone()), async {})
        .await;
    assert_eq!(none, None);
    let waiter = {
        let sim = sim.clone();
        tokio::spawn(async move {
            sim.wait_for_event(
                |ledger, events| {
                    let id = ledger.first()?.id.to_string();
                    events.iter().find(|e| e.object_id == id).map(|e| e.kind)
                },
                std::future::pending(),
            )
            .await
        })
    };
    let (status, _) = json(post(&sim, A, "tickets", &json!({"a": 1}), None).await).await;
    assert_eq!(status, 201);
    assert_eq!(
        waiter.await.unwrap(),
        Some(lostreply_simulator::EventKind::Created)
    );
    std::sync::Arc::into_inner(sim).unwrap().shutdown().await;
}

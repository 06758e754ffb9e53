//! The reference adapter against a real simulator on 127.0.0.1:0: lost
//! answers, replays, lookups, races, expired keys, asynchronous work, signed
//! events and a crash after the commit. Each test checks what the adapter
//! claimed against the simulator's ledger and journal.

use std::sync::Arc;
use std::time::Duration;

use lostreply_harness::adapter::{Adapter, AdapterFactory};
use lostreply_harness::protocol::{
    Common, ExecuteRequest, Operation, OperationRequest, OutcomeKind, OutcomeReply, WebhookRequest,
};
use lostreply_reference::ReferenceFactory;
use lostreply_simulator::{
    Asynchronous, FaultResponse, FaultRule, Idempotency, IdempotencyMode, Lookup, Match, Plan,
    Position, Release, RequestKind, ServeOptions, SettleResult, Simulator, StallThen, Webhooks,
};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// Short, so stalls end quickly; long enough that a loaded machine answers in time.
const CLIENT_TIMEOUT_MS: u64 = 1_500;

struct Run {
    sim: Simulator,
    plan: Plan,
    dir: tempfile::TempDir,
}

fn plan(mode: IdempotencyMode, lookup: Lookup, faults: Vec<FaultRule>) -> Plan {
    {
        let mut changed = Plan::default();
        changed.idempotency = {
            let mut changed = Idempotency::default();
            changed.mode = mode;
            changed
        };
        changed.lookup = lookup;
        changed.faults = faults;
        changed
    }
}

fn create_fault(nth: u32, at: Position, response: FaultResponse) -> FaultRule {
    FaultRule::builder()
        .when({
            let mut changed = Match::default();
            changed.method = Some("POST".into());
            changed.resource = Some("tickets".into());
            changed.nth = Some(nth);
            changed
        })
        .at(at)
        .response(response)
        .build()
}

/// A Stripe-style provider with every lookup, and `faults`.
fn stripe(faults: Vec<FaultRule>) -> Plan {
    plan(IdempotencyMode::Stripe, Lookup::default(), faults)
}

/// The first create's response and its immediate retry's are both lost after
/// the commit.
fn first_two_answers_lost() -> Vec<FaultRule> {
    vec![
        create_fault(1, Position::AfterCommit, FaultResponse::Drop),
        create_fault(2, Position::AfterCommit, FaultResponse::Drop),
    ]
}

const NO_LOOKUP: Lookup = Lookup::NONE;
const SEARCH_ONLY: Lookup = {
    let mut lookup = Lookup::NONE;
    lookup.client_reference = true;
    lookup
};

impl Run {
    async fn start(plan: Plan) -> Run {
        let sim = Simulator::start(plan.clone(), ServeOptions::default())
            .await
            .unwrap();
        Run {
            sim,
            plan,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn adapter(&self) -> Box<dyn Adapter> {
        ReferenceFactory.build(self.dir.path()).unwrap()
    }

    fn common(&self) -> Common {
        lostreply_harness::run::common(
            &self.plan,
            &self.sim,
            &self.plan.tenants[0],
            CLIENT_TIMEOUT_MS,
        )
    }

    fn execute_request(&self) -> ExecuteRequest {
        let mut args = serde_json::Map::new();
        args.insert("title".into(), "Purchase review".into());
        args.insert("amount".into(), 1200.into());
        ExecuteRequest::new(
            Operation::new("op-1", "create", "tickets", args),
            self.common(),
        )
    }

    fn op(&self) -> OperationRequest {
        OperationRequest::new("op-1", self.common())
    }

    async fn execute(&self, adapter: &dyn Adapter) -> OutcomeReply {
        adapter.execute(self.execute_request()).await.unwrap()
    }

    /// Executes, where the answer cannot be known.
    async fn execute_unknown(&self, adapter: &dyn Adapter) -> OutcomeReply {
        let reply = self.execute(adapter).await;
        assert_eq!(reply.outcome, OutcomeKind::Unknown, "{reply:?}");
        reply
    }

    /// The ledger's effects of our tenant (seed objects excluded).
    fn effects(&self) -> Vec<lostreply_simulator::Effect> {
        self.sim
            .ledger()
            .into_iter()
            .filter(|e| e.request_seq.is_some())
            .collect()
    }

    fn creates(&self) -> Vec<lostreply_simulator::JournalEntry> {
        self.sim
            .journal()
            .into_iter()
            .filter(|j| j.kind == Some(RequestKind::Create))
            .collect()
    }

    /// Invariants 1, 2 and 5 for the one operation: exactly one effect, the
    /// claimed object is it, and every create carried one key and one body.
    fn assert_one_effect_claimed(&self, reply: &OutcomeReply) {
        let effects = self.effects();
        assert_eq!(effects.len(), 1, "effects: {effects:#?}");
        assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
        assert_eq!(
            reply.provider_ref.as_deref(),
            Some(effects[0].id.as_str()),
            "{reply:?}"
        );
        assert_eq!(effects[0].client_reference.as_deref(), Some("op-1"));
        let creates = self.creates();
        // A request dropped before it was read has no fingerprint: nothing to compare.
        let fingerprints: Vec<_> = creates
            .iter()
            .filter_map(|c| c.fingerprint.clone())
            .collect();
        assert!(
            fingerprints.windows(2).all(|w| w[0] == w[1]),
            "{fingerprints:?}"
        );
        let keys: Vec<_> = creates.iter().map(|c| c.idempotency_key.clone()).collect();
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "{keys:?}");
    }
}

#[tokio::test]
async fn the_ok_path_creates_once_with_key_and_reference() {
    let run = Run::start(stripe(vec![])).await;
    let adapter = run.adapter();
    let reply = run.execute(adapter.as_ref()).await;
    run.assert_one_effect_claimed(&reply);
    let effect = &run.effects()[0];
    assert_eq!(effect.idempotency_key.as_deref(), Some("lr-op-1"));
    assert_eq!(
        effect.metadata.as_ref().map(|m| m.get()),
        Some(r#"{"operation_id":"op-1"}"#)
    );
    assert_eq!(
        serde_json::Value::Object(effect.args.to_map()),
        serde_json::json!({"title": "Purchase review", "amount": 1200})
    );
    assert_eq!(run.creates().len(), 1);
    // Executing again reports the record and sends nothing.
    let journal = run.sim.journal().len();
    assert_eq!(run.execute(adapter.as_ref()).await, reply);
    assert_eq!(run.sim.journal().len(), journal);
    run.sim.shutdown().await;
}

#[tokio::test]
async fn a_response_dropped_after_commit_is_recovered_by_a_replay() {
    let faults = vec![create_fault(1, Position::AfterCommit, FaultResponse::Drop)];
    let run = Run::start(stripe(faults)).await;
    let reply = run.execute(run.adapter().as_ref()).await;
    run.assert_one_effect_claimed(&reply);
    let creates = run.creates();
    assert_eq!(creates.len(), 2, "{creates:#?}");
    assert!(creates[1].replayed, "the retry is a replay: {creates:#?}");
    assert!(
        reply.evidence.contains("retry with the same key"),
        "{}",
        reply.evidence
    );
    run.sim.shutdown().await;
}

#[tokio::test]
async fn when_the_retry_is_lost_too_a_reconcile_replays_later() {
    let faults = vec![
        create_fault(1, Position::AfterCommit, FaultResponse::Reset),
        create_fault(
            2,
            Position::AfterCommit,
            FaultResponse::Stall {
                then: StallThen::Abandon,
                until: Release::ClientGone,
            },
        ),
    ];
    let run = Run::start(plan(IdempotencyMode::Ietf, Lookup::default(), faults)).await;
    let adapter = run.adapter();
    let reply = run.execute(adapter.as_ref()).await;
    assert_eq!(
        (reply.outcome, reply.needs_review),
        (OutcomeKind::Unknown, false),
        "{reply:?}"
    );
    assert!(reply.evidence.contains("timeout"), "{}", reply.evidence);
    let reply = adapter.reconcile(run.op()).await.unwrap();
    run.assert_one_effect_claimed(&reply);
    assert!(
        reply.evidence.starts_with("replay with the same key"),
        "{}",
        reply.evidence
    );
    run.sim.shutdown().await;
}

#[tokio::test]
async fn status_sends_nothing_to_the_provider() {
    let faults = vec![create_fault(
        1,
        Position::AfterCommit,
        FaultResponse::Status {
            code: 500,
            retry_after_s: None,
        },
    )];
    let run = Run::start(plan(IdempotencyMode::None, NO_LOOKUP, faults)).await;
    let adapter = run.adapter();
    let executed = run.execute(adapter.as_ref()).await;
    assert_eq!(
        executed.outcome,
        OutcomeKind::Unknown,
        "a 500 after commit is ambiguous"
    );
    let journal = run.sim.journal();
    let status = adapter.status(run.op()).await.unwrap();
    assert_eq!(status, executed);
    // A fresh instance (another process) reads the same record.
    assert_eq!(run.adapter().status(run.op()).await.unwrap(), executed);
    assert_eq!(run.sim.journal(), journal);
    run.sim.shutdown().await;
}

#[tokio::test]
async fn without_keys_a_search_finds_the_committed_effect() {
    let faults = vec![create_fault(1, Position::AfterCommit, FaultResponse::Drop)];
    let run = Run::start(plan(IdempotencyMode::None, SEARCH_ONLY, faults)).await;
    let adapter = run.adapter();
    run.execute_unknown(adapter.as_ref()).await;
    assert_eq!(run.creates().len(), 1, "no immediate retry without keys");
    let reply = adapter.reconcile(run.op()).await.unwrap();
    run.assert_one_effect_claimed(&reply);
    assert_eq!(run.creates().len(), 1, "found, not re-created");
    assert!(
        reply.evidence.contains("search by client_reference"),
        "{}",
        reply.evidence
    );
    run.sim.shutdown().await;
}

#[tokio::test]
async fn without_keys_a_search_that_proves_absence_allows_one_re_create() {
    let faults = vec![create_fault(1, Position::BeforeRead, FaultResponse::Drop)];
    let run = Run::start(plan(IdempotencyMode::None, SEARCH_ONLY, faults)).await;
    let adapter = run.adapter();
    run.execute_unknown(adapter.as_ref()).await;
    assert!(run.effects().is_empty());
    let reply = adapter.reconcile(run.op()).await.unwrap();
    run.assert_one_effect_claimed(&reply);
    assert!(
        reply.evidence.contains("none of ours, so created again"),
        "{}",
        reply.evidence
    );
    run.sim.shutdown().await;
}

#[tokio::test]
async fn two_racing_reconcilers_create_once() {
    // No keys, search only, and a search slow enough that both reconcilers
    // would search before either creates, were it not for the lock.
    let mut faults = vec![create_fault(1, Position::BeforeRead, FaultResponse::Drop)];
    faults.push(
        FaultRule::builder()
            .when({
                let mut changed = Match::default();
                changed.method = Some("GET".into());
                changed.query = Some("client_reference".into());
                changed
            })
            .at(Position::BeforeCommit)
            .response(FaultResponse::Delay {
                delay: Duration::from_millis(300),
            })
            .build(),
    );
    let run = Run::start(plan(IdempotencyMode::None, SEARCH_ONLY, faults)).await;
    run.execute_unknown(run.adapter().as_ref()).await;
    // Two instances over one directory: two worker processes sharing a store.
    let (first, second) = (run.adapter(), run.adapter());
    let (a, b) = tokio::join!(first.reconcile(run.op()), second.reconcile(run.op()));
    let (a, b) = (a.unwrap(), b.unwrap());
    run.assert_one_effect_claimed(&a);
    run.assert_one_effect_claimed(&b);
    assert_eq!(
        run.creates().len(),
        2,
        "the lost first create and one re-create"
    );
    run.sim.shutdown().await;
}

#[tokio::test]
async fn after_key_retention_the_object_is_looked_up_not_replayed() {
    let run = Run::start(stripe(first_two_answers_lost())).await;
    let adapter = run.adapter();
    run.execute_unknown(adapter.as_ref()).await;
    run.sim.advance(Duration::from_secs(25 * 3600));
    let reply = adapter.reconcile(run.op()).await.unwrap();
    run.assert_one_effect_claimed(&reply);
    assert_eq!(run.creates().len(), 2, "an expired key is never replayed");
    run.sim.shutdown().await;
}

#[tokio::test]
async fn expired_keys_and_no_lookup_go_to_a_person() {
    let faults = first_two_answers_lost();
    let run = Run::start(plan(IdempotencyMode::Stripe, NO_LOOKUP, faults)).await;
    let adapter = run.adapter();
    run.execute(adapter.as_ref()).await;
    run.sim.advance(Duration::from_secs(25 * 3600));
    let reply = adapter.reconcile(run.op()).await.unwrap();
    assert_eq!(
        (reply.outcome, reply.needs_review),
        (OutcomeKind::Unknown, true),
        "{reply:?}"
    );
    assert_eq!(run.effects().len(), 1);
    assert_eq!(run.creates().len(), 2);
    run.sim.shutdown().await;
}

#[tokio::test]
async fn asynchronous_work_stays_pending_until_it_settles() {
    let mut plan = stripe(vec![]);
    plan.asynchronous = Some(
        Asynchronous::builder()
            .settle_after(Duration::from_secs(60))
            .result(SettleResult::Failed)
            .build(),
    );
    let run = Run::start(plan).await;
    let adapter = run.adapter();
    let reply = run.execute(adapter.as_ref()).await;
    assert_eq!(reply.outcome, OutcomeKind::Pending, "{reply:?}");
    assert_eq!(
        adapter.reconcile(run.op()).await.unwrap().outcome,
        OutcomeKind::Pending
    );
    run.sim.advance(Duration::from_secs(61));
    let reply = adapter.reconcile(run.op()).await.unwrap();
    assert_eq!(
        reply.outcome,
        OutcomeKind::Failed,
        "a settled failure is a confirmed failure"
    );
    assert_eq!(
        reply.provider_ref,
        run.effects().first().map(|e| e.id.clone())
    );
    assert_eq!(run.creates().len(), 1);
    run.sim.shutdown().await;
}

#[tokio::test]
async fn signed_events_from_the_simulator_are_applied_once() {
    let mut plan = plan(IdempotencyMode::Stripe, NO_LOOKUP, first_two_answers_lost());
    plan.webhooks = Some(Webhooks::builder().secret(SECRET.into()).build());
    let run = Run::start(plan).await;
    let adapter = run.adapter();
    run.execute_unknown(adapter.as_ref()).await;
    let events = run.sim.events();
    assert_eq!(events.len(), 1, "{events:#?}");
    let deliver = |delivery: lostreply_simulator::Delivery| {
        WebhookRequest::new(delivery.headers, delivery.body, run.common())
    };
    let delivery = run.sim.sign(&events[0]).unwrap();
    let mut forged = deliver(delivery.clone());
    forged.body = forged.body.replace("succeeded", "failed");
    assert_ne!(
        forged.body, delivery.body,
        "the forgery must change the body"
    );
    let reply = adapter.webhook(forged).await.unwrap();
    assert!(!reply.accepted);
    assert_eq!(
        adapter.status(run.op()).await.unwrap().outcome,
        OutcomeKind::Unknown
    );
    for _ in 0..2 {
        let reply = adapter.webhook(deliver(delivery.clone())).await.unwrap();
        assert_eq!(
            (reply.accepted, reply.operation_id.as_deref()),
            (true, Some("op-1"))
        );
    }
    let status = adapter.status(run.op()).await.unwrap();
    run.assert_one_effect_claimed(&status);
    run.sim.shutdown().await;
}

#[tokio::test]
async fn a_crash_after_the_commit_leaves_a_record_that_finds_the_effect() {
    let run = Run::start(stripe(vec![])).await;
    // Hold the response after the commit until the worker is gone.
    let (committed_tx, committed_rx) = tokio::sync::oneshot::channel::<()>();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let slots = Arc::new(std::sync::Mutex::new((
        Some(committed_tx),
        Some(release_rx),
    )));
    run.sim.set_commit_hook(Some(Arc::new(move |_effect| {
        let (committed, release) = {
            let mut slots = slots.lock().unwrap();
            (slots.0.take(), slots.1.take())
        };
        Box::pin(async move {
            if let Some(committed) = committed {
                let _ = committed.send(());
            }
            if let Some(release) = release {
                let _ = release.await;
            }
        })
    })));
    let worker = {
        let adapter: Arc<dyn Adapter> = Arc::from(run.adapter());
        let request = run.execute_request();
        tokio::spawn(async move { adapter.execute(request).await })
    };
    tokio::time::timeout(Duration::from_secs(10), committed_rx)
        .await
        .unwrap()
        .unwrap();
    worker.abort();
    assert!(worker.await.unwrap_err().is_cancelled());
    drop(release_tx);
    run.sim.set_commit_hook(None);
    // A fresh worker over the same directory.
    let reply = run.adapter().reconcile(run.op()).await.unwrap();
    run.assert_one_effect_claimed(&reply);
    run.sim.shutdown().await;
}

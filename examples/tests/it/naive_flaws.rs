//! Each naive adapter really has its flaw: for every lost-response case, a
//! small situation of that case run against a real simulator, checked with the
//! case's invariant. The reference adapter must pass every situation and the
//! case's naive adapter must be caught by it. (The scenario files are the real
//! CI gate; this keeps the adapters honest on their own.)

use std::sync::Arc;
use std::time::Duration;

use crate::common;
use lostreply_harness::adapter::{Adapter, AdapterFactory};
use lostreply_harness::protocol::{
    Common, ExecuteRequest, Operation, OperationRequest, OutcomeKind, OutcomeReply, Resolution,
    ResolveRequest, WebhookRequest,
};
use lostreply_reference::ReferenceFactory;
use lostreply_simulator::{
    Asynchronous, FaultResponse, FaultRule, Idempotency, IdempotencyMode, Lookup, Match, Plan,
    Position, RequestKind, ServeOptions, SettleResult, Simulator, Webhooks,
};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NO_LOOKUP: Lookup = Lookup::NONE;
const SEARCH_ONLY: Lookup = {
    let mut lookup = Lookup::NONE;
    lookup.client_reference = true;
    lookup
};

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

/// A Stripe-style provider with every lookup, and `faults`.
fn stripe(faults: Vec<FaultRule>) -> Plan {
    plan(IdempotencyMode::Stripe, Lookup::default(), faults)
}

/// `plan` with signed webhooks.
fn with_webhooks(plan: Plan) -> Plan {
    {
        let mut changed = plan;
        changed.webhooks = Some(Webhooks::builder().secret(SECRET.into()).build());
        changed
    }
}

fn post_fault(nth: u32, at: Position, response: FaultResponse) -> FaultRule {
    FaultRule::builder()
        .when({
            let mut changed = Match::default();
            changed.method = Some("POST".into());
            changed.nth = Some(nth);
            changed
        })
        .at(at)
        .response(response)
        .build()
}

/// A violation, in words.
type Checked = Result<(), String>;

struct Probe<'f> {
    factory: &'f dyn AdapterFactory,
    sim: Simulator,
    plan: Plan,
    dir: tempfile::TempDir,
}

impl<'f> Probe<'f> {
    async fn start(factory: &'f dyn AdapterFactory, plan: Plan) -> Probe<'f> {
        let sim = Simulator::start(plan.clone(), ServeOptions::default())
            .await
            .unwrap();
        Probe {
            factory,
            sim,
            plan,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn adapter(&self) -> Box<dyn Adapter> {
        self.factory.build(self.dir.path()).unwrap()
    }

    fn common(&self) -> Common {
        lostreply_harness::run::common(&self.plan, &self.sim, &self.plan.tenants[0], 1_500)
    }

    fn execute_request(&self, op: &str) -> ExecuteRequest {
        let mut args = serde_json::Map::new();
        args.insert("title".into(), format!("Purchase review {op}").into());
        args.insert("amount".into(), 1200.into());
        ExecuteRequest::new(Operation::new(op, "create", "tickets", args), self.common())
    }

    async fn execute(&self, adapter: &dyn Adapter, op: &str) -> OutcomeReply {
        adapter.execute(self.execute_request(op)).await.unwrap()
    }

    /// A fresh adapter that has executed `op` and reconciled it once.
    async fn execute_and_reconcile(&self, op: &str) -> Box<dyn Adapter> {
        let adapter = self.adapter();
        self.execute(adapter.as_ref(), op).await;
        adapter.reconcile(self.op(op)).await.unwrap();
        adapter
    }

    fn op(&self, op: &str) -> OperationRequest {
        OperationRequest::new(op, self.common())
    }

    /// Effects attributed to `op` by its arguments' title.
    fn effects_of(&self, op: &str) -> Vec<lostreply_simulator::Effect> {
        let title = serde_json::Value::from(format!("Purchase review {op}"));
        self.sim
            .ledger()
            .into_iter()
            .filter(|e| e.args.to_map().get("title") == Some(&title))
            .collect()
    }

    /// Invariant 1: at most one effect per operation.
    fn at_most_once(&self, op: &str) -> Checked {
        match self.effects_of(op).len() {
            0 | 1 => Ok(()),
            n => Err(format!("{op}: {n} effects")),
        }
    }

    /// Invariant 5: one key and one body on every create.
    fn same_key_and_args(&self) -> Checked {
        let creates: Vec<_> = self
            .sim
            .journal()
            .into_iter()
            .filter(|j| j.kind == Some(RequestKind::Create))
            .collect();
        let keys: Vec<_> = creates.iter().map(|c| c.idempotency_key.clone()).collect();
        let bodies: Vec<_> = creates
            .iter()
            .filter_map(|c| c.fingerprint.clone())
            .collect();
        if keys.windows(2).any(|w| w[0] != w[1]) {
            return Err(format!("keys differ across attempts: {keys:?}"));
        }
        if bodies.windows(2).any(|w| w[0] != w[1]) {
            return Err(format!("bodies differ across attempts: {bodies:?}"));
        }
        Ok(())
    }

    /// Invariants 2 and 3 against the final `status`, plus the allowed outcomes.
    async fn final_is(&self, op: &str, allowed: &[OutcomeKind]) -> Checked {
        let reply = self.adapter().status(self.op(op)).await.unwrap();
        if !allowed.contains(&reply.outcome) {
            return Err(format!(
                "{op}: final {:?}, allowed {allowed:?} ({})",
                reply.outcome, reply.evidence
            ));
        }
        let effects = self.effects_of(op);
        match reply.outcome {
            OutcomeKind::Succeeded => {
                let named = effects
                    .iter()
                    .any(|e| Some(&e.id) == reply.provider_ref.as_ref());
                if !named {
                    return Err(format!(
                        "{op}: succeeded names {:?}, not an effect of it",
                        reply.provider_ref
                    ));
                }
            }
            OutcomeKind::Failed => {
                if effects
                    .iter()
                    .any(|e| e.status != lostreply_simulator::ObjectStatus::Failed)
                {
                    return Err(format!("{op}: failed while an effect exists"));
                }
            }
            OutcomeKind::Pending | OutcomeKind::Unknown => {}
        }
        Ok(())
    }
}

const SUCCEEDED: &[OutcomeKind] = &[OutcomeKind::Succeeded];

/// Runs case `case`'s situation with `factory`; `Err` names the violation.
async fn situation(case: u8, factory: &dyn AdapterFactory) -> Checked {
    match case {
        1 => case_1(factory).await,
        2 | 4 => case_2_4(factory).await,
        3 => case_3(factory).await,
        5 => case_5(factory).await,
        6 => case_6(factory).await,
        7 => case_7(factory).await,
        8 => case_8(factory).await,
        9 => case_9(factory).await,
        10 => case_10(factory).await,
        _ => Err(format!("no situation for case {case}")),
    }
}

/// Case 1: the create is lost before the provider reads it; a reconcile must find out and finish it.
async fn case_1(factory: &dyn AdapterFactory) -> Checked {
    use FaultResponse::Drop;
    use Position::BeforeRead;
    let p = Probe::start(factory, stripe(vec![post_fault(1, BeforeRead, Drop)])).await;
    p.execute_and_reconcile("op-1").await;
    p.final_is("op-1", SUCCEEDED).await
}

/// Cases 2 and 4: the response is lost after the commit; whatever follows must not create a second effect.
async fn case_2_4(factory: &dyn AdapterFactory) -> Checked {
    use FaultResponse::Drop;
    use Position::AfterCommit;
    let p = Probe::start(factory, stripe(vec![post_fault(1, AfterCommit, Drop)])).await;
    p.execute_and_reconcile("op-1").await;
    p.at_most_once("op-1")?;
    p.same_key_and_args()?;
    p.final_is("op-1", SUCCEEDED).await
}

/// Case 3: the work is still processing, then settles failed.
async fn case_3(factory: &dyn AdapterFactory) -> Checked {
    let mut plan = stripe(vec![]);
    plan.asynchronous = Some(
        Asynchronous::builder()
            .settle_after(Duration::from_secs(60))
            .result(SettleResult::Failed)
            .build(),
    );
    let p = Probe::start(factory, plan).await;
    let adapter = p.execute_and_reconcile("op-1").await;
    p.final_is("op-1", &[OutcomeKind::Pending, OutcomeKind::Unknown])
        .await?;
    p.sim.advance(Duration::from_secs(61));
    adapter.reconcile(p.op("op-1")).await.unwrap();
    p.at_most_once("op-1")?;
    p.final_is("op-1", &[OutcomeKind::Failed]).await
}

/// Case 5: two operations with identical arguments are two effects.
async fn case_5(factory: &dyn AdapterFactory) -> Checked {
    let p = Probe::start(factory, stripe(vec![])).await;
    let adapter = p.adapter();
    p.execute(adapter.as_ref(), "op-1").await;
    p.execute(adapter.as_ref(), "op-2").await;
    p.final_is("op-1", SUCCEEDED).await?;
    p.final_is("op-2", SUCCEEDED).await
}

/// Case 6: a forged event must not move the operation.
async fn case_6(factory: &dyn AdapterFactory) -> Checked {
    use FaultResponse::Drop;
    use Position::AfterCommit;
    let faults = vec![
        post_fault(1, AfterCommit, Drop),
        post_fault(2, AfterCommit, Drop),
    ];
    let plan = with_webhooks(plan(IdempotencyMode::Stripe, NO_LOOKUP, faults));
    let p = Probe::start(factory, plan).await;
    let adapter = p.adapter();
    let before = p.execute(adapter.as_ref(), "op-1").await;
    let event = p.sim.events().into_iter().next().expect("a created event");
    let delivery = p.sim.sign(&event).unwrap();
    let forged = WebhookRequest::new(
        delivery.headers,
        delivery.body.replace("tickets.created", "tickets.failed"),
        p.common(),
    );
    adapter.webhook(forged).await.unwrap();
    let after = adapter.status(p.op("op-1")).await.unwrap();
    if after.outcome != before.outcome {
        return Err(format!(
            "a forged event moved {:?} to {:?}",
            before.outcome, after.outcome
        ));
    }
    Ok(())
}

/// Case 7: two reconcilers race over one lost create.
async fn case_7(factory: &dyn AdapterFactory) -> Checked {
    use FaultResponse::Drop;
    use Position::BeforeRead;
    let slow_search = FaultRule::builder()
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
        .build();
    let faults = vec![post_fault(1, BeforeRead, Drop), slow_search];
    let p = Probe::start(factory, plan(IdempotencyMode::None, SEARCH_ONLY, faults)).await;
    p.execute(p.adapter().as_ref(), "op-1").await;
    let (a, b) = (p.adapter(), p.adapter());
    let (ra, rb) = tokio::join!(a.reconcile(p.op("op-1")), b.reconcile(p.op("op-1")));
    ra.unwrap();
    rb.unwrap();
    p.at_most_once("op-1")
}

/// Case 8: the worker dies right after the remote commit and a fresh one picks the operation up.
async fn case_8(factory: &dyn AdapterFactory) -> Checked {
    let p = Probe::start(factory, stripe(vec![])).await;
    let (committed_tx, committed_rx) = tokio::sync::oneshot::channel::<()>();
    let committed = Arc::new(std::sync::Mutex::new(Some(committed_tx)));
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    p.sim.set_commit_hook(Some(Arc::new(move |_effect| {
        if let Some(tx) = committed.lock().unwrap().take() {
            let _ = tx.send(());
        }
        let mut release = release_rx.clone();
        Box::pin(async move {
            let _ = release.wait_for(|go| *go).await;
        })
    })));
    let worker = {
        let adapter: Arc<dyn Adapter> = Arc::from(p.adapter());
        let request = p.execute_request("op-1");
        tokio::spawn(async move { adapter.execute(request).await })
    };
    tokio::time::timeout(Duration::from_secs(10), committed_rx)
        .await
        .unwrap()
        .unwrap();
    worker.abort();
    let _ = worker.await;
    let _ = release_tx.send(true);
    p.sim.set_commit_hook(None);
    // The restarted worker picks the operation up again.
    let fresh = p.adapter();
    fresh.reconcile(p.op("op-1")).await.unwrap();
    fresh.execute(p.execute_request("op-1")).await.unwrap();
    p.at_most_once("op-1")?;
    p.final_is("op-1", SUCCEEDED).await
}

/// Case 9: the idempotency key expires before the reconcile.
async fn case_9(factory: &dyn AdapterFactory) -> Checked {
    use FaultResponse::Drop;
    use Position::AfterCommit;
    let faults = vec![
        post_fault(1, AfterCommit, Drop),
        post_fault(2, AfterCommit, Drop),
    ];
    let p = Probe::start(factory, stripe(faults)).await;
    let adapter = p.adapter();
    p.execute(adapter.as_ref(), "op-1").await;
    p.sim.advance(Duration::from_secs(25 * 3600));
    adapter.reconcile(p.op("op-1")).await.unwrap();
    p.at_most_once("op-1")?;
    p.final_is("op-1", SUCCEEDED).await
}

/// Case 10: an operator resolves the operation, then late events arrive.
async fn case_10(factory: &dyn AdapterFactory) -> Checked {
    use FaultResponse::Drop;
    use Position::AfterCommit;
    let faults = vec![post_fault(1, AfterCommit, Drop)];
    let plan = with_webhooks(plan(IdempotencyMode::None, NO_LOOKUP, faults));
    let p = Probe::start(factory, plan).await;
    let adapter = p.execute_and_reconcile("op-1").await;
    // The operator looked in the provider's console: it is there.
    let effect = p.effects_of("op-1").first().map(|e| e.id.to_string());
    let resolution = Resolution::new(OutcomeKind::Succeeded, effect, "found in the console");
    adapter
        .resolve(ResolveRequest::new("op-1", resolution, p.common()))
        .await
        .unwrap();
    for event in p.sim.events() {
        let delivery = p.sim.sign(&event).unwrap();
        let late = WebhookRequest::new(delivery.headers, delivery.body, p.common());
        adapter.webhook(late).await.unwrap();
    }
    p.execute(adapter.as_ref(), "op-1").await;
    p.at_most_once("op-1")?;
    p.final_is("op-1", SUCCEEDED).await
}

async fn check(case: u8) {
    let reference = situation(case, &ReferenceFactory).await;
    assert_eq!(
        reference,
        Ok(()),
        "the reference adapter must pass case {case}"
    );
    let naive = lostreply_examples::naive_adapter(case).expect("a naive adapter per case");
    let caught = situation(case, naive).await;
    assert!(
        caught.is_err(),
        "{} was not caught by case {case}",
        naive.name
    );
    eprintln!(
        "case {case}: {} caught: {}",
        naive.name,
        caught.unwrap_err()
    );
}

#[tokio::test]
async fn case_01_fails_on_timeout() {
    let _alone = common::module_alone(module_path!());
    check(1).await;
}
#[tokio::test]
async fn case_02_fresh_key_per_attempt() {
    let _alone = common::module_alone(module_path!());
    check(2).await;
}
#[tokio::test]
async fn case_03_processing_is_done() {
    let _alone = common::module_alone(module_path!());
    check(3).await;
}
#[tokio::test]
async fn case_04_tagged_retries() {
    let _alone = common::module_alone(module_path!());
    check(4).await;
}
#[tokio::test]
async fn case_05_action_keyed() {
    let _alone = common::module_alone(module_path!());
    check(5).await;
}
#[tokio::test]
async fn case_06_trusting_webhooks() {
    let _alone = common::module_alone(module_path!());
    check(6).await;
}
#[tokio::test]
async fn case_07_unlocked_reconciler() {
    let _alone = common::module_alone(module_path!());
    check(7).await;
}
#[tokio::test]
async fn case_08_memory_only() {
    let _alone = common::module_alone(module_path!());
    check(8).await;
}
#[tokio::test]
async fn case_09_eternal_keys() {
    let _alone = common::module_alone(module_path!());
    check(9).await;
}
#[tokio::test]
async fn case_10_retry_after_review() {
    let _alone = common::module_alone(module_path!());
    check(10).await;
}

#[test]
fn there_is_one_named_naive_adapter_per_case() {
    let _alone = common::module_alone(module_path!());
    let adapters = lostreply_examples::naive_adapters();
    let cases: Vec<u8> = adapters.iter().map(|(case, _)| *case).collect();
    assert_eq!(cases, (1..=10).collect::<Vec<u8>>());
    let mut names: Vec<String> = adapters.iter().map(|(_, f)| f.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 10);
    assert!(lostreply_examples::naive_adapter(0).is_none());
    assert!(lostreply_examples::naive_adapter(11).is_none());
}

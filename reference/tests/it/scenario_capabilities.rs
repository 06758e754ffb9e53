//! The scenario format's orderings and answers, run: each fixture in
//! harness/tests/scenario/capabilities/ against the reference adapter over
//! loopback, in process and as a process, and what the run shows that the
//! situation really happened (the delivery made after the commit, the call
//! that started while another's request was held, the answer sent).

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::scenario;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reference::ReferenceFactory;
use lostreply_reports::model::{Report, ScenarioReport, Verdict};

fn fixture(name: &str) -> scenario::model::Scenario {
    let path = format!(
        "{}/../harness/tests/scenario/capabilities/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    scenario::load(std::path::Path::new(&path)).expect("the fixture is valid")
}

fn run(name: &str, adapter: AdapterUnderTest, seed: u64) -> ScenarioReport {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let options = RunOptions::new(adapter).seed(seed).jobs(1);
    let report: Report = runtime.block_on(run_suite(&[fixture(name)], &options, |_| {}));
    report.scenarios.into_iter().next().unwrap()
}

fn in_process() -> AdapterUnderTest {
    AdapterUnderTest::InProcess(std::sync::Arc::new(ReferenceFactory))
}

/// The reference adapter served as a process by the `lostreply` binary,
/// when it is built (`cargo build -p lostreply`); otherwise in process only.
fn as_process() -> Option<AdapterUnderTest> {
    let binary = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/debug/lostreply")
        .canonicalize()
        .ok()?;
    let command = format!("{} adapter reference", binary.display());
    Some(AdapterUnderTest::Process(
        ProcessCommand::parse(&command).ok()?,
    ))
}

fn passed(report: &ScenarioReport) {
    let why: Vec<String> = report
        .violations
        .iter()
        .map(|v| format!("{:?}: {}", v.check, v.message))
        .chain(
            report
                .errors
                .iter()
                .map(|e| format!("error: {}", e.message)),
        )
        .collect();
    assert_eq!(report.verdict, Verdict::Passed, "{}: {why:#?}", report.id);
}

fn call<'a>(
    report: &'a ScenarioReport,
    step: u32,
    name: &str,
) -> &'a lostreply_reports::model::CallRecord {
    report
        .calls
        .iter()
        .find(|c| c.step == step && c.call.as_str() == name)
        .unwrap_or_else(|| panic!("no {name} call in step {step}"))
}

/// A webhook beside the execute whose create is held after the commit is
/// delivered: it waited for the commit, so the event existed.
#[test]
fn a_webhook_beside_a_held_create_is_delivered_after_the_commit() {
    for seed in 1..=3 {
        let report = run("webhook-while-create-held.yaml", in_process(), seed);
        passed(&report);
        assert_eq!(report.deliveries.len(), 1, "{:#?}", report.steps);
        assert_eq!(report.deliveries[0].step, 1);
        // The event is about the object the held create committed.
        let created = report.journal.iter().find(|r| r.effect.is_some()).unwrap();
        assert!(created.seq < report.journal.len() as u64 + 1);
        assert_eq!(report.ledger.len(), 1);
    }
}

/// `during: {kind: create}`: the delivery starts once the create has
/// committed and its answer is held, and the execute's answer leaves only
/// after the delivery returned.
#[test]
fn a_webhook_during_the_create_runs_while_its_answer_is_held() {
    let mut adapters = vec![in_process()];
    adapters.extend(as_process());
    for adapter in adapters {
        let report = run("webhook-during-held-create.yaml", adapter, 7);
        passed(&report);
        assert_eq!(report.deliveries.len(), 1);
        let label = report.steps[0].label.to_string();
        assert!(!label.contains("started after"), "{label}");
        // The delivery started once the create had committed.
        let webhook = call(&report, 1, "webhook");
        let create = report.journal.iter().find(|r| r.effect.is_some()).unwrap();
        assert!(u64::from(webhook.start_ms) >= create.start_ms, "{create:?}");
    }
}

/// `during: {kind: search}` on a resolve: it starts once the reconcile's
/// search is held, and the search's answer leaves once it has returned.
#[test]
fn a_resolve_during_the_reconciles_search_is_ordered_by_construction() {
    let mut adapters = vec![in_process()];
    adapters.extend(as_process());
    for adapter in adapters {
        let report = run("resolve-during-reconcile-lookup.yaml", adapter, 11);
        passed(&report);
        let label = report.steps[1].label.to_string();
        assert!(!label.contains("started after"), "{label}");
        let resolve = call(&report, 2, "resolve");
        let reconcile = call(&report, 2, "reconcile");
        let search = report
            .journal
            .iter()
            .find(|r| r.kind.map(|k| k.as_str()) == Some("search"))
            .expect("the reconcile searched");
        assert!(u64::from(resolve.start_ms) >= search.start_ms, "{search:?}");
        assert!(resolve.start_ms <= reconcile.end_ms);
    }
}

/// A 429 with a chosen Retry-After refuses the create; the report names it.
#[test]
fn a_rate_limit_with_a_chosen_retry_after_is_answered_and_named() {
    let report = run("rate-limited-retry-after.yaml", in_process(), 3);
    passed(&report);
    let refused = &report.journal[0];
    assert_eq!(
        refused.fault.as_ref().map(|f| f.to_string()).as_deref(),
        Some("before_commit status 429 (Retry-After 30) (rule 1)")
    );
    assert_eq!(refused.fate.to_string(), "sent 429");
    assert!(report.journal[1..].iter().all(|r| r.fault.is_none()));
}

/// A 429 sent to a replay attempt is recorded as that 429, not a replay.
#[test]
fn a_429_answering_a_replay_attempt_is_not_called_a_replay() {
    let report = run("replay-answered-by-429.yaml", in_process(), 5);
    passed(&report);
    let refused = report
        .journal
        .iter()
        .find(|r| {
            r.fault
                .as_ref()
                .is_some_and(|f| f.to_string().contains("status 429"))
        })
        .expect("the replay attempt met the 429");
    assert!(!refused.replayed, "{refused:?}");
    assert_eq!(
        refused.fate.to_string(),
        "sent 429 (a replay attempt: the saved answer was not sent)"
    );
    // The reconcile's replay is a replay.
    assert!(report.journal.iter().any(|r| r.replayed));
}

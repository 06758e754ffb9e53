//! A real run keeps the requests it made from the scenario's operations as
//! those operations: the harness's own writing of an `execute`, `status` or
//! `reconcile` request must be what `RecordedRequest` writes from the operation,
//! byte for byte, or each would silently be kept as text again (correct, but
//! the memory a million-operation run saves would be lost). Runs built-in
//! scenarios, an HTTP one and an MCP one (`call_tool`), with the reference
//! adapter against a real simulator on 127.0.0.1. Likewise a plain step's
//! label (`execute op-1`), kept as the step's call.

use std::sync::Arc;

use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::protocol::CallName;
use lostreply_harness::run::{observe, operation};
use lostreply_harness::scenario::model::{OperationSpec, Scenario, Step};
use lostreply_reference::ReferenceFactory;
use lostreply_reports::model::{FromOperation, StepVerb};

fn builtin(path: &str) -> Scenario {
    lostreply_harness::builtin::scenarios()
        .unwrap()
        .into_iter()
        .find(|s| s.path.rsplit('/').next() == Some(path))
        .unwrap_or_else(|| panic!("no built-in scenario {path}"))
}

async fn requests_and_labels_are_kept_as_what_made_them(path: &str) {
    let scenario = builtin(path);
    let adapter = AdapterUnderTest::InProcess(Arc::new(ReferenceFactory));
    let obs = observe(&scenario, &adapter, lostreply_harness::seed::DEFAULT_SEED).await;
    assert!(obs.errors.is_empty(), "{:?}", obs.errors);
    let spec = |id: &str| -> &OperationSpec {
        obs.scenario
            .operations
            .iter()
            .find(|op| op.id == id)
            .unwrap()
    };
    let (mut executes, mut about) = (0, 0);
    for call in &obs.calls {
        let value = call.request.to_value();
        assert_eq!(value["protocol"], 1, "{path}: {value}");
        let id = call.operation_id.as_deref().unwrap_or_default();
        match (call.name, call.request.made_from()) {
            (CallName::Execute, Some(FromOperation::Operation { op, .. })) => {
                assert!(OperationSpec::ptr_eq(op, spec(id)), "{path}: {id}");
                assert_eq!(
                    value["operation"],
                    serde_json::to_value(operation(spec(id))).unwrap()
                );
                executes += 1;
            }
            (CallName::Status | CallName::Reconcile, Some(FromOperation::Id { id: kept, .. })) => {
                assert_eq!(kept.as_str(), id);
                assert_eq!(value["operation_id"], id);
                about += 1;
            }
            (CallName::Execute | CallName::Status | CallName::Reconcile, _) => {
                panic!(
                    "{path}: a {:?} request kept as text: {}",
                    call.name, call.request
                )
            }
            (CallName::Resolve | CallName::Webhook, _) => {}
        }
    }
    assert!(
        executes > 0 && about > 0,
        "{path}: {executes} executes, {about} others"
    );
    // A plain step's label (`execute op-1`, nothing noted) is kept as its
    // call, and it is the call that step made.
    let mut kept_labels = 0;
    for (report, step) in obs.steps.iter().zip(&obs.scenario.steps) {
        if let Some((verb, op)) = report.label.call() {
            let made = match step {
                Step::Execute { op, crash: None } => Some((StepVerb::Execute, op)),
                Step::Reconcile { op, crash: None } => Some((StepVerb::Reconcile, op)),
                Step::Status { op } => Some((StepVerb::Status, op)),
                _ => None,
            };
            assert_eq!(made, Some((verb, op)), "{path}: step {}", report.number);
            assert_eq!(report.label.text(), format!("{} {op}", verb.as_str()));
            kept_labels += 1;
        }
    }
    assert!(kept_labels > 0, "{path}: no label kept as its call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_runs_requests_and_labels_are_kept_as_what_made_them() {
    requests_and_labels_are_kept_as_what_made_them("case02-lost-after-commit.yaml").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_runs_requests_and_labels_are_kept_as_what_made_them() {
    requests_and_labels_are_kept_as_what_made_them("mcp-lost-after-commit.yaml").await;
}

/// What the provider and the adapter both name is kept once: an effect's
/// `client_reference` that is an operation's id is the scenario's copy of
/// it, and an outcome's `provider_ref` that is an effect's id is the
/// ledger's copy (equal text either way, so nothing the checks read
/// changes; without it a million-operation run held each id twice).
/// `references_sent`: whether the adapter sends operation ids as client
/// references there (the MCP profile's tools take none).
async fn ids_named_by_both_sides_are_kept_once(path: &str, references_sent: bool) {
    use lostreply_reports::model::SharedStr;
    let scenario = builtin(path);
    let adapter = AdapterUnderTest::InProcess(Arc::new(ReferenceFactory));
    let obs = observe(&scenario, &adapter, lostreply_harness::seed::DEFAULT_SEED).await;
    assert!(obs.errors.is_empty(), "{:?}", obs.errors);
    let mut references = 0;
    for effect in &obs.ledger {
        let Some(reference) = &effect.client_reference else {
            continue;
        };
        let op = obs
            .scenario
            .operations
            .iter()
            .find(|op| op.id == *reference);
        if let Some(op) = op {
            assert!(SharedStr::ptr_eq(reference, &op.id), "{path}: {reference}");
            references += 1;
        }
    }
    let mut refs = 0;
    for outcome in obs.calls.iter().filter_map(|c| c.outcome()) {
        let Some(named) = &outcome.provider_ref else {
            continue;
        };
        if let Some(effect) = obs.ledger.iter().find(|e| e.id == *named) {
            assert!(SharedStr::ptr_eq(named, &effect.id), "{path}: {named}");
            refs += 1;
        }
    }
    assert!(
        (references > 0) == references_sent && refs > 0,
        "{path}: {references} client references and {refs} provider refs shared"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_runs_ids_named_by_both_sides_are_kept_once() {
    ids_named_by_both_sides_are_kept_once("case02-lost-after-commit.yaml", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_runs_ids_named_by_both_sides_are_kept_once() {
    ids_named_by_both_sides_are_kept_once("mcp-lost-after-commit.yaml", false).await;
}

//! Situations a scenario sets up that no step can carry out or no correct
//! adapter can pass, and the keys that order calls and choose answers: each
//! refusal at its line and column, with the reason.

use crate::located::{diagnostics, one_error};
use lostreply_harness::scenario::{self, model::Step};
use lostreply_simulator::FaultResponse;

/// A valid scenario: op-1 is executed at step 1, reconciled at step 2.
/// Lines 1 to 11; what `with` appends starts at line 12.
const BASE: &str = "\
version: 1
id: situations
title: A valid base for situations
provider:
  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
operations:
  - {id: op-1, resource: tickets}
  - {id: op-2, resource: tickets}
steps:
  - execute: op-1
  - reconcile: op-1
";

fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

#[test]
fn base_is_valid() {
    scenario::parse(BASE, "case.yaml").unwrap();
}

#[test]
fn a_rate_limit_chooses_its_retry_after() {
    let rule = |value: &str| {
        format!(
            "{}faults:\n  - when: {{kind: create}}\n    response: {{status: {value}}}\n",
            BASE
        )
    };
    let parsed = scenario::parse(&rule("{code: 429, retry_after: 30s}"), "x").unwrap();
    assert_eq!(
        parsed.plan.faults[0].response,
        FaultResponse::Status {
            code: 429,
            retry_after_s: Some(30)
        }
    );
    let plain = scenario::parse(&rule("429"), "x").unwrap();
    assert_eq!(
        plain.plan.faults[0].response,
        FaultResponse::Status {
            code: 429,
            retry_after_s: None
        }
    );
    scenario::parse(&rule("{code: 503, retry_after: 0s}"), "x").unwrap();
    one_error(
        &rule("{code: 429, retry_after: 1500ms}"),
        14,
        "1500ms",
        "whole seconds",
    );
    one_error(
        &rule("{code: 429, retry_after: 2d}"),
        14,
        "2d",
        "retry_after must be at most 1day",
    );
    one_error(
        &rule("{code: 429, retry_after: 30}"),
        14,
        "30}",
        "bad duration `30` for retry_after",
    );
    one_error(
        &rule("{code: 500, retry_after: 5s}"),
        14,
        "5s",
        "retry_after goes with 429",
    );
    one_error(&rule("{code: 200}"), 14, "200", "not an HTTP error status");
    one_error(
        &rule("{code: 429, after: 5s}"),
        14,
        "after",
        "unknown field",
    );
}

#[test]
fn until_on_a_stall_after_the_commit_is_refused() {
    let text = with(
        "faults:\n  - when: {step: 1, kind: create}\n    response: {stall: {until: {end_of_step: 2}}}\n",
    );
    one_error(
        &text,
        14,
        "{end_of_step",
        "at after_commit the effect has committed",
    );
    // Before the commit it holds the key in flight: accepted.
    scenario::parse(
        &with("faults:\n  - when: {step: 1, kind: create}\n    response: {stall: {then: commit, until: {end_of_step: 2}}}\n"),
        "x",
    )
    .unwrap();
}

#[test]
fn retention_without_keys_is_refused() {
    let text = BASE.replace(
        "provider:\n",
        "provider:\n  idempotency: {mode: none, retention: 24h}\n",
    );
    one_error(&text, 5, "24h", "mode `none` remembers none");
}

#[test]
fn a_resolve_needs_an_execute_before_it() {
    one_error(
        &with("  - {resolve: op-2, outcome: failed, provider_ref: null}\n"),
        12,
        "op-2",
        "comes before any `execute: op-2`",
    );
    let text = with("  - {resolve: op-2, outcome: succeeded, provider_ref: ledger}\n");
    one_error(
        &text,
        12,
        "op-2",
        "`provider_ref: ledger` would name no effect",
    );
    // Beside the first execute, unordered: refused; ordered by `during`: accepted.
    one_error(
        &with("  - parallel: [{execute: op-2}, {resolve: op-2, outcome: failed, provider_ref: null}]\n"),
        12,
        "op-2, outcome",
        "give it `during: {kind: create}`",
    );
    scenario::parse(
        &with("  - parallel: [{execute: op-2}, {resolve: op-2, outcome: failed, provider_ref: ledger, during: {kind: create}}]\n"),
        "x",
    )
    .unwrap();
    scenario::parse(
        &with("  - {resolve: op-1, outcome: succeeded, provider_ref: ledger}\n"),
        "x",
    )
    .unwrap();
}

#[test]
fn ledger_for_an_operation_without_an_effect_is_refused() {
    let text = with(
        "  - {resolve: op-1, outcome: succeeded, provider_ref: ledger}\nexpect:\n  effects: {op-1: 0}\n",
    );
    one_error(&text, 12, "ledger", "expect.effects says it has none");
    let refused = format!(
        "{BASE}  - {{resolve: op-1, outcome: succeeded, provider_ref: ledger}}\nfaults:\n  - when: {{kind: create}}\n    at: before_commit\n    response: {{status: 500}}\n"
    );
    one_error(&refused, 12, "ledger", "refuses every create of `tickets`");
    // One step scoped refusal leaves other creates free: accepted.
    let scoped = refused.replace("{kind: create}", "{kind: create, step: 1}");
    scenario::parse(&scoped, "x").unwrap();
}

#[test]
fn a_webhook_needs_an_effect_that_can_exist() {
    one_error(
        &with("  - {webhook: op-2, event: created}\n"),
        12,
        "op-2",
        "no effect of `op-2` can exist at step 3",
    );
    let asynchronous = BASE.replace(
        "provider:\n",
        "provider:\n  asynchronous: {settle_after: 1m}\n",
    );
    one_error(
        &format!("{asynchronous}  - {{webhook: op-1, event: succeeded}}\n"),
        13,
        "succeeded",
        "only 0s pass on the simulator clock",
    );
    scenario::parse(
        &format!("{asynchronous}  - advance: 1m\n  - {{webhook: op-1, event: succeeded}}\n"),
        "x",
    )
    .unwrap();
    one_error(
        &format!("{asynchronous}  - parallel: [{{execute: op-2}}, {{webhook: op-2, event: succeeded}}]\n"),
        13,
        "succeeded",
        "cannot settle in it",
    );
    // Beside its execute, a `created` event waits for the commit: accepted.
    let parsed = scenario::parse(
        &with("  - parallel: [{execute: op-2}, {webhook: op-2, event: created}]\n"),
        "x",
    )
    .unwrap();
    assert!(matches!(parsed.steps[2], Step::Parallel(_)));
}

#[test]
fn during_orders_calls_of_a_parallel_step_only() {
    one_error(
        &with("  - {reconcile: op-1, during: {kind: search}}\n"),
        12,
        "{kind",
        "it belongs to a call inside `parallel`",
    );
    let all = with("  - parallel: [{reconcile: op-1, during: {kind: search}}, {status: op-1, during: {kind: create}}]\n");
    one_error(&all, 12, "parallel", "none starts first");
    one_error(
        &with("  - parallel: [{reconcile: op-1}, {status: op-1, during: {kind: search, method: POST}}]\n"),
        12,
        "search, method",
        "no request is both POST and kind search",
    );
    one_error(
        &with("  - parallel: [{reconcile: op-1}, {status: op-1, during: {nth: 1}}]\n"),
        12,
        "nth",
        "unknown field `nth`",
    );
    let parsed = scenario::parse(
        &with("  - parallel: [{reconcile: op-1}, {status: op-1, during: {kind: search, resource: tickets}}]\n"),
        "x",
    )
    .unwrap();
    let Step::Parallel(calls) = &parsed.steps[2] else {
        panic!("a parallel step")
    };
    assert!(
        matches!(&calls[1], Step::During { call, .. } if matches!(**call, Step::Status { .. }))
    );
}

/// An unkeyed create held before its commit until step 3 ends: while it is
/// held nothing can tell the adapter, and after it no step can.
const HELD_UNKEYED: &str = "\
version: 1
id: held-unkeyed
title: An unkeyed create held until after the reconcile
provider:
  idempotency: {mode: none}
  lookup: {retrieve: false, client_reference: false, list_recent: false}
operations:
  - {id: op-1, resource: tickets}
faults:
  - when: {step: 1, kind: create}
    response: {stall: {then: commit, until: {end_of_step: 3}}}
steps:
  - execute: op-1
  - advance: 1m
  - reconcile: op-1
";

#[test]
fn an_unkeyed_create_held_past_the_reconcile_cannot_be_known() {
    one_error(
        &format!("{HELD_UNKEYED}expect:\n  after_step: {{3: {{op-1: [succeeded, pending]}}}}\n"),
        17,
        "op-1",
        "with no key, nothing tells it the create is in flight",
    );
    one_error(
        &format!("{HELD_UNKEYED}expect:\n  final: {{op-1: [succeeded]}}\n"),
        17,
        "op-1",
        "the provider has no keys",
    );
    one_error(
        &format!("{HELD_UNKEYED}expect:\n  effects: {{op-1: 0}}\n"),
        17,
        "op-1",
        "then commits it",
    );
    // What a correct adapter can say is accepted.
    scenario::parse(
        &format!("{HELD_UNKEYED}expect:\n  after_step: {{3: {{op-1: [unknown]}}}}\n  final: {{op-1: [unknown, succeeded]}}\n"),
        "x",
    )
    .unwrap();
    // A lookup after the commit can find it: `succeeded` is possible.
    let later = HELD_UNKEYED.replace("client_reference: false", "client_reference: true");
    scenario::parse(
        &format!("{later}  - reconcile: op-1\nexpect:\n  final: {{op-1: [succeeded]}}\n"),
        "x",
    )
    .unwrap();
}

/// A keyed create held until step 4 ends, while the clock passes its key's
/// retention at step 2: it commits after its key expired.
const HELD_PAST_RETENTION: &str = "\
version: 1
id: held-past-retention
title: A held create commits after its key expired
provider:
  idempotency: {mode: stripe, retention: 24h}
  lookup: {retrieve: true, client_reference: false, list_recent: false}
operations:
  - {id: op-1, resource: tickets}
faults:
  - when: {step: 1, kind: create}
    response: {stall: {then: commit, until: {end_of_step: 3}}}
steps:
  - execute: op-1
  - advance: 25h
  - reconcile: op-1
  - reconcile: op-1
";

#[test]
fn a_create_that_commits_after_its_key_expired_cannot_be_known_without_a_lookup() {
    let found = diagnostics(&format!(
        "{HELD_PAST_RETENTION}expect:\n  final: {{op-1: [succeeded]}}\n"
    ));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].line, 18);
    assert!(
        found[0]
            .message
            .contains("its key's retention (1day) has passed by step 3"),
        "{}",
        found[0].message
    );
    // Within retention, a later reconcile replays the key: possible.
    let retained = HELD_PAST_RETENTION.replace("advance: 25h", "advance: 1h");
    scenario::parse(
        &format!("{retained}expect:\n  final: {{op-1: [succeeded]}}\n"),
        "x",
    )
    .unwrap();
    // While held, a keyed adapter may know `pending` (409 in flight).
    scenario::parse(
        &format!("{HELD_PAST_RETENTION}expect:\n  after_step: {{3: {{op-1: [pending]}}}}\n"),
        "x",
    )
    .unwrap();
    one_error(
        &format!(
            "{HELD_PAST_RETENTION}expect:\n  after_step: {{3: {{op-1: [succeeded, failed]}}}}\n"
        ),
        18,
        "op-1",
        "`pending` (its key in flight) is the most it can learn",
    );
}

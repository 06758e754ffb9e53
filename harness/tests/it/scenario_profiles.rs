//! `provider.profile`: a scenario that names a provider's wire. What it may
//! name is the profile's (collections, lookups, body fields), each mistake
//! reported at its line and column; what the adapter is given is what that
//! wire carries (a Stripe form body's arguments are strings).

use std::path::Path;
use std::time::Duration;

use crate::located::one_error;
use lostreply_harness::scenario::{self, ScenarioError};
use lostreply_simulator::{IdempotencyMode, Plan};
use serde_json::json;

/// A valid Stripe scenario to break one line at a time (line numbers matter).
const BASE: &str = "\
version: 1
id: stripe-base
title: A valid Stripe scenario
provider:
  profile: stripe
  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
operations:
  - {id: op-1, resource: customers, args: {name: Jenny, balance: 1200}}
  - {id: op-2, resource: payment_intents, args: {amount: 1200, currency: usd, confirm: true}}
steps:
  - execute: op-1
  - reconcile: op-2
";

/// BASE with `extra` appended (its first line is line 13).
fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

/// BASE with `line` added to the provider section (it becomes line 7, and
/// the operations move one line down).
fn with_provider(line: &str) -> String {
    BASE.replace("operations:\n", &format!("{line}\noperations:\n"))
}

#[test]
fn a_stripe_scenario_carries_its_profile_and_string_arguments() {
    let s = scenario::parse(BASE, "case.yaml").unwrap();
    assert_eq!(s.plan.profile.name, "stripe");
    // Stripe keys creates by default, for 24 hours.
    assert_eq!(s.plan.idempotency.mode, IdempotencyMode::Stripe);
    assert_eq!(s.plan.idempotency.retention, Duration::from_secs(24 * 3600));
    assert_eq!(
        serde_json::Value::Object(s.operations[0].args.to_map()),
        json!({"name": "Jenny", "balance": "1200"})
    );
    assert_eq!(
        serde_json::Value::Object(s.operations[1].args.to_map()),
        json!({"amount": "1200", "currency": "usd", "confirm": "true"})
    );
}

#[test]
fn without_a_profile_nothing_changes() {
    let text = BASE
        .replace("  profile: stripe\n", "")
        .replace("customers", "tickets")
        .replace("payment_intents", "charges");
    let s = scenario::parse(&text, "case.yaml").unwrap();
    assert_eq!(s.plan.profile.name, "generic");
    assert_eq!(s.plan.idempotency, Plan::default().idempotency);
    assert_eq!(
        serde_json::Value::Object(s.operations[0].args.to_map()),
        json!({"name": "Jenny", "balance": 1200})
    );
}

#[test]
fn a_written_idempotency_mode_wins_over_the_profiles() {
    let s = scenario::parse(&with_provider("  idempotency: {mode: none}"), "case.yaml").unwrap();
    assert_eq!(s.plan.idempotency.mode, IdempotencyMode::None);
    assert_eq!(s.plan.idempotency.retention, Duration::from_secs(24 * 3600));
}

#[test]
fn seed_objects_take_the_wire_form_too() {
    let text = with_provider(
        "  seed_objects: [{tenant: sk_test_b, resource: customers, args: {balance: 5}}]",
    );
    let s = scenario::parse(&text, "case.yaml").unwrap();
    assert_eq!(
        serde_json::Value::Object(s.plan.seed_objects[0].args.clone()),
        json!({"balance": "5"})
    );
}

#[test]
fn an_unknown_profile_is_reported_at_its_name_with_the_known_ones() {
    one_error(
        &BASE.replace("profile: stripe", "profile: strip"),
        5,
        "strip",
        "unknown provider profile `strip`: one of generic, stripe, openai, anthropic",
    );
}

#[test]
fn operations_name_the_profiles_collections() {
    one_error(
        &BASE.replace("resource: customers", "resource: tickets"),
        8,
        "tickets",
        "resource `tickets` is not one of profile stripe's resources (customers, \
         payment_intents, refunds)",
    );
}

#[test]
fn seed_objects_name_the_profiles_collections() {
    one_error(
        &with_provider("  seed_objects: [{tenant: sk_test_b, resource: tickets}]"),
        7,
        "tickets",
        "not one of profile stripe's resources (customers, payment_intents, refunds)",
    );
}

#[test]
fn provider_resources_restrict_the_profiles_further() {
    one_error(
        &with_provider("  resources: [customers, payment_intents, tickets]"),
        7,
        "tickets",
        "resource `tickets` is not one of profile stripe's resources",
    );
    one_error(
        &with_provider("  resources: [customers]"),
        10,
        "payment_intents",
        "resource `payment_intents` is not one of provider.resources (customers)",
    );
}

#[test]
fn fault_rules_name_the_profiles_collections() {
    one_error(
        &with("faults: [{when: {resource: tickets}, response: drop}]\n"),
        13,
        "tickets",
        "not one of profile stripe's resources",
    );
}

#[test]
fn a_search_is_matched_by_kind_not_by_the_generic_query() {
    let rule = "faults: [{when: {resource: customers, kind: search}, response: drop}]\n";
    let s = scenario::parse(&with(rule), "case.yaml").unwrap();
    assert_eq!(
        s.plan.faults[0].when.kind,
        Some(lostreply_simulator::RequestKind::Search)
    );
    one_error(
        &with("faults: [{when: {kind: search, query: client_reference}, response: drop}]\n"),
        13,
        "client_reference",
        "`query` names the generic API's parameters; profile stripe has lookups of its own",
    );
}

#[test]
fn a_lookup_the_profile_does_not_offer_is_a_rule_that_never_applies() {
    one_error(
        &with("faults: [{when: {resource: refunds, kind: search}, response: drop}]\n"),
        13,
        "search",
        "profile stripe has no search of refunds",
    );
}

#[test]
fn asynchronous_needs_a_status_field_in_the_profile() {
    one_error(
        &with_provider("  asynchronous: {settle_after: 1m}"),
        9,
        "customers",
        "resource `customers` has no status field in profile stripe: its objects cannot be \
         processing",
    );
}

#[test]
fn a_profiles_own_body_fields_are_not_arguments() {
    one_error(
        &BASE.replace(
            "args: {name: Jenny,",
            "args: {expand: customer, name: Jenny,",
        ),
        8,
        "{expand",
        "`expand` is a field of profile stripe's create body that is not an argument",
    );
}

#[test]
fn a_forged_webhook_step_is_valid_under_a_profile() {
    // The step list ends the base text, so an appended step joins it.
    let text = with("  - {webhook: op-1, event: created, forged: true}\n");
    scenario::parse(&text, "case.yaml").unwrap();
}

/// The built-in Stripe profile's published file, renamed.
fn acme_profile() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::read_to_string(root.join("profiles/stripe.yaml"))
        .unwrap()
        .replace("\nname: stripe\n", "\nname: acme\n")
}

#[test]
fn a_profile_file_is_read_beside_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/acme.yaml"), acme_profile()).unwrap();
    let path = dir.path().join("case.yaml");
    std::fs::write(
        &path,
        BASE.replace("profile: stripe", "profile: profiles/acme.yaml"),
    )
    .unwrap();
    let s = scenario::load(&path).unwrap();
    assert_eq!(s.plan.profile.name, "acme");
    assert_eq!(
        serde_json::Value::Object(s.operations[0].args.to_map()),
        json!({"name": "Jenny", "balance": "1200"})
    );
}

#[test]
fn a_broken_profile_file_is_reported_at_the_scenarios_line_naming_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let broken = acme_profile().replace("\nname: acme\n", "\nname: acme\nbogus: 1\n");
    std::fs::write(dir.path().join("acme.yaml"), broken).unwrap();
    let path = dir.path().join("case.yaml");
    std::fs::write(&path, BASE.replace("profile: stripe", "profile: acme.yaml")).unwrap();
    let err = scenario::load(&path).unwrap_err();
    assert!(matches!(err, ScenarioError::Invalid { .. }));
    let found = err.diagnostics();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0].line, found[0].column), (5, 12));
    let profile_file = dir.path().join("acme.yaml").display().to_string();
    assert!(
        found[0].message.starts_with(&format!("{profile_file}:")),
        "the profile file's own place comes first: {}",
        found[0].message
    );
    assert!(found[0].message.contains("bogus"), "{}", found[0].message);

    let missing = BASE.replace("profile: stripe", "profile: nowhere/acme.yaml");
    std::fs::write(&path, missing).unwrap();
    let err = scenario::load(&path).unwrap_err();
    assert_eq!(err.diagnostics()[0].line, 5);
    assert!(
        err.diagnostics()[0]
            .message
            .contains("cannot read the profile"),
        "{err}"
    );
}

#[test]
fn the_generic_contract_only_gains_its_profile_and_scheme() {
    let plan = {
        let mut changed = Plan::default();
        changed.webhooks = Some(
            lostreply_simulator::Webhooks::builder()
                .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned())
                .build(),
        );
        changed
    };
    let contract = lostreply_harness::run::contract_for_plan(&plan);
    assert_eq!(
        serde_json::to_string(&contract).unwrap(),
        "{\"profile\":\"generic\",\
         \"idempotency\":{\"mode\":\"none\",\"header\":\"Idempotency-Key\",\"retention_s\":86400},\
         \"lookup\":{\"retrieve\":true,\"client_reference\":true,\"list_recent\":true},\
         \"asynchronous\":false,\
         \"webhooks\":{\"secret\":\"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\",\"scheme\":\"standard_webhooks\"}}"
    );
    let stripe = scenario::parse(BASE, "case.yaml").unwrap();
    let contract =
        serde_json::to_value(lostreply_harness::run::contract_for_plan(&stripe.plan)).unwrap();
    assert_eq!(contract["profile"], "stripe");
    assert_eq!(contract["idempotency"]["mode"], "stripe");
    assert_eq!(contract["webhooks"]["scheme"], "stripe");
}

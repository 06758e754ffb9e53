//! The JSON Schema agrees with the parser: it lists the format's keys and
//! forms, accepts the valid fixtures and rejects shapes the parser rejects.

use std::collections::BTreeSet;

use lostreply_harness::scenario;
use serde_json::Value;

use crate::json_schema::check;

const FULL: &str = include_str!("../scenario/full.yaml");
const MINIMAL: &str = include_str!("../scenario/minimal.yaml");
const MCP: &str = include_str!("../scenario/mcp.yaml");

fn def<'a>(schema: &'a Value, name: &str) -> &'a Value {
    &schema["$defs"][name]
}

#[test]
fn lists_the_top_level_keys() {
    let schema = scenario::schema();
    let keys: BTreeSet<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected: BTreeSet<&str> = [
        "version",
        "id",
        "title",
        "case",
        "tags",
        "client_timeout",
        "call_deadline",
        "provider",
        "operations",
        "faults",
        "steps",
        "expect",
        "mcp",
    ]
    .into();
    assert_eq!(keys, expected);
    assert_eq!(schema["additionalProperties"], false);
    let required: BTreeSet<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        ["version", "id", "title", "operations", "steps"].into()
    );
    assert!(schema["properties"]["client_timeout"]["description"]
        .as_str()
        .unwrap()
        .contains("250ms"));
}

#[test]
fn lists_the_fault_response_forms() {
    let schema = scenario::schema();
    let forms = def(&schema, "FaultResponse")["oneOf"].as_array().unwrap();
    let plain: Vec<&str> = forms[0]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(plain, vec!["drop", "reset", "stall", "idle", "ok"]);
    let keyed: Vec<&str> = forms[1..]
        .iter()
        .map(|form| form["required"][0].as_str().unwrap())
        .collect();
    assert_eq!(keyed, vec!["stall", "delay", "status", "partial", "gather"]);
}

#[test]
fn lists_the_mcp_keys_and_fault_forms() {
    let schema = scenario::schema();
    let keys: BTreeSet<&str> = def(&schema, "Mcp")["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected: BTreeSet<&str> = [
        "revision",
        "revisions",
        "answer",
        "client",
        "tools",
        "retrieval",
        "tasks",
        "defects",
        "limits",
    ]
    .into();
    assert_eq!(keys, expected);
    let forms = def(&schema, "McpFault")["oneOf"].as_array().unwrap();
    let plain: Vec<&str> = forms[0]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        plain,
        vec!["ok", "never", "stall", "drop", "reset", "prime_then_close"]
    );
    let keyed: Vec<&str> = forms[1..]
        .iter()
        .map(|form| form["required"][0].as_str().unwrap())
        .collect();
    assert_eq!(
        keyed,
        vec![
            "slow",
            "stall",
            "late",
            "is_error",
            "rpc_error",
            "http",
            "drop",
            "reset",
            "task",
            "prime_then_close"
        ]
    );
    let profiles: Vec<&str> = def(&schema, "ClientProfile")["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        profiles,
        lostreply_harness::scenario::client_profiles::profile_names()
    );
    let fault_keys: BTreeSet<&str> = def(&schema, "Fault")["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        fault_keys,
        ["when", "at", "response", "call", "cancel"].into()
    );
}

#[test]
fn lists_the_provider_keys_and_step_forms() {
    let schema = scenario::schema();
    let keys: BTreeSet<&str> = def(&schema, "Provider")["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected: BTreeSet<&str> = [
        "profile",
        "idempotency",
        "lookup",
        "asynchronous",
        "webhooks",
        "seed_objects",
        "tenants",
        "resources",
        "limits",
    ]
    .into();
    assert_eq!(keys, expected);
    // A built-in name, or a path to a profile file.
    let profile = &def(&schema, "ProviderProfile")["anyOf"];
    assert_eq!(
        profile[0]["enum"],
        serde_json::json!(["generic", "stripe", "openai", "anthropic"])
    );
    assert!(profile[1]["pattern"].as_str().unwrap().contains("ya?ml"));
    let actions: Vec<&str> = def(&schema, "Step")["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|form| form["required"][0].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        vec![
            "execute",
            "reconcile",
            "status",
            "advance",
            "parallel",
            "webhook",
            "resolve"
        ]
    );
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap()
}

#[test]
fn accepts_what_the_parser_accepts() {
    let schema = scenario::schema();
    for text in [FULL, MINIMAL, MCP] {
        scenario::parse(text, "x").unwrap();
        if let Err(why) = check(&schema, &schema, &yaml(text), "$") {
            panic!("the schema rejects a valid scenario: {why}");
        }
    }
}

#[test]
fn rejects_shapes_the_parser_rejects() {
    let schema = scenario::schema();
    let broken = [
        ("version: 1\n", "version: 1\nbogus: 1\n"),
        ("- execute: op-1\n", "- {execute: op-1, retry: 3}\n"),
        ("- execute: op-1\n", "- {execute: op-1, reconcile: op-1}\n"),
        (
            "- execute: op-1\n",
            "- parallel: [{advance: 1h}, {status: op-1}]\n",
        ),
        ("steps:", "faults: [{response: dorp}]\nsteps:"),
        ("steps:", "faults: [{response: {status: 700}}]\nsteps:"),
        (
            "steps:",
            "faults: [{response: {delay: 1s, status: 500}}]\nsteps:",
        ),
        (
            "steps:",
            "faults: [{when: {method: PUT}, response: drop}]\nsteps:",
        ),
        ("steps:", "case: 11\nsteps:"),
        ("steps:", "mcp: {client: {profile: cursor}}\nsteps:"),
        ("steps:", "mcp: {client: {profile: cline, idle: 5}}\nsteps:"),
        (
            "steps:",
            "mcp: {client: {profile: cline}, revision: 2024-11-05}\nsteps:",
        ),
        (
            "steps:",
            "mcp: {client: {profile: cline}}\nfaults: [{call: dorp}]\nsteps:",
        ),
        (
            "steps:",
            "mcp: {client: {profile: cline}}\nfaults: [{call: {late: 1s, never: 1}}]\nsteps:",
        ),
        (
            "steps:",
            "mcp: {client: {profile: cline}}\nfaults: [{call: {drop: before_read}}]\nsteps:",
        ),
        (
            "steps:",
            "mcp: {client: {profile: cline}}\nfaults: [{call: never, cancel: maybe}]\nsteps:",
        ),
        ("steps:", "client_timeout: 250\nsteps:"),
        ("operations:", "provider: {profile: strip}\noperations:"),
    ];
    for (from, to) in broken {
        let text = MINIMAL.replace(from, to);
        assert_ne!(text, MINIMAL, "{from:?} not in the fixture");
        assert!(
            scenario::parse(&text, "x").is_err(),
            "the parser accepts {text}"
        );
        assert!(
            check(&schema, &schema, &yaml(&text), "$").is_err(),
            "the schema accepts {text}"
        );
    }
}

/// The capabilities' fixtures (`during`, a status with its `Retry-After`)
/// are valid to the schema as to the parser; `during` outside `parallel`
/// and a `retry_after` without a unit's mapping keys are not.
#[test]
fn knows_during_and_retry_after() {
    let schema = scenario::schema();
    for name in [
        "webhook-while-create-held.yaml",
        "webhook-during-held-create.yaml",
        "resolve-during-reconcile-lookup.yaml",
        "rate-limited-retry-after.yaml",
        "replay-answered-by-429.yaml",
    ] {
        let path = format!(
            "{}/tests/scenario/capabilities/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        scenario::parse(&text, &path).unwrap();
        if let Err(why) = check(&schema, &schema, &yaml(&text), "$") {
            panic!("the schema rejects {name}: {why}");
        }
    }
    let minimal_with = |step: &str| MINIMAL.replace("  - execute: op-1", step);
    let outside = minimal_with("  - {execute: op-1, during: {kind: create}}");
    assert!(check(&schema, &schema, &yaml(&outside), "$").is_err());
    let unknown = "faults:\n  - response: {status: {code: 429, after: 5s}}\n";
    assert!(check(&schema, &schema, &yaml(&format!("{MINIMAL}{unknown}")), "$").is_err());
}

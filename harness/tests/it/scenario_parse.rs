//! Scenario files that are valid: every key lands in the right typed value, and
//! every default is the documented one.

use std::collections::BTreeSet;
use std::time::Duration;

use lostreply_harness::protocol::OutcomeKind;
use lostreply_harness::scenario::model::{CrashPoint, OpId, ResolveRef, Step};
use lostreply_harness::scenario::{self, ScenarioError};
use lostreply_simulator::{
    EventKind, FaultResponse, FaultRule, IdempotencyMode, Match, Plan, Position, Release,
    RequestKind, SettleResult, StallThen,
};

const FULL: &str = include_str!("../scenario/full.yaml");
const MINIMAL: &str = include_str!("../scenario/minimal.yaml");

fn parse_ok(text: &str) -> scenario::model::Scenario {
    match scenario::parse(text, "test.yaml") {
        Ok(s) => s,
        Err(err) => panic!("expected a valid scenario, got:\n{err}"),
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn rule(when: Match, at: Position, response: FaultResponse) -> FaultRule {
    FaultRule::builder()
        .when(when)
        .at(at)
        .response(response)
        .build()
}

#[test]
fn full_scenario_top_level_and_provider() {
    let s = parse_ok(FULL);
    assert_eq!(s.path, "test.yaml");
    assert_eq!(s.id, "everything-at-once");
    assert_eq!(s.title, "Every key of the format at least once");
    assert_eq!(s.case, Some(2));
    assert_eq!(s.tags, vec!["lost-response", "case-2"]);
    assert_eq!(s.client_timeout, ms(300));
    assert_eq!(s.call_deadline, secs(20));

    let plan = &s.plan;
    assert_eq!(plan.tenants, vec!["sk_test_a", "sk_test_b", "sk_test_c"]);
    assert_eq!(
        plan.resources,
        Some(
            ["refunds", "tickets"]
                .into_iter()
                .map(String::from)
                .collect::<BTreeSet<_>>()
        )
    );
    assert_eq!(plan.idempotency.mode, IdempotencyMode::Stripe);
    assert_eq!(plan.idempotency.retention, secs(24 * 3600));
    assert!(!plan.idempotency.required);
    assert!(plan.lookup.retrieve);
    assert!(!plan.lookup.client_reference);
    assert!(plan.lookup.list_recent);
    let asynchronous = plan.asynchronous.unwrap();
    assert_eq!(asynchronous.settle_after, secs(60));
    assert_eq!(asynchronous.result, SettleResult::Succeeded);
    assert_eq!(
        plan.webhooks.as_ref().unwrap().secret,
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    );
    assert_eq!(plan.limits.stall_cap, secs(2));
    assert_eq!(plan.limits.max_body_bytes, 4096);
    assert_eq!(plan.limits.max_objects, Plan::default().limits.max_objects);
    assert_eq!(plan.seed, 0, "the runner sets the seed");
    assert_eq!(plan.clock_start_ms, Plan::default().clock_start_ms);

    assert_eq!(plan.seed_objects.len(), 2);
    let seed = &plan.seed_objects[0];
    assert_eq!(seed.tenant, "sk_test_b");
    assert_eq!(seed.resource, "tickets");
    assert_eq!(seed.args.get("title").unwrap(), "Purchase review");
    assert_eq!(seed.client_reference.as_deref(), Some("other-1"));
    assert_eq!(seed.age, secs(120));
    let bare = &plan.seed_objects[1];
    assert!(bare.args.is_empty());
    assert_eq!(bare.client_reference, None);
    assert_eq!(bare.age, Duration::ZERO);
}

#[test]
fn full_scenario_operations_keep_yaml_types() {
    let s = parse_ok(FULL);
    assert_eq!(s.operations.len(), 2);
    let op = &s.operations[0];
    assert_eq!(op.id, "op-1");
    assert_eq!(op.resource, "tickets");
    let args = op.args.to_map();
    assert_eq!(args.get("amount").unwrap(), 1200);
    // `y` is not a boolean (YAML 1.2 core booleans only).
    assert_eq!(args.get("flag").unwrap(), "y");
    // Argument order is the file's, in the map and in the text kept.
    assert_eq!(
        args.keys().collect::<Vec<_>>(),
        vec!["title", "amount", "flag"]
    );
    assert!(op.args.text().starts_with(r#"{"title":"#));
    assert_eq!(s.operations[1].args.text(), "{}");
}

#[test]
fn full_scenario_faults() {
    let s = parse_ok(FULL);
    let m = |f: fn(&mut Match)| {
        let mut when = Match::default();
        f(&mut when);
        when
    };
    let expected = vec![
        rule(
            m(|w| {
                w.method = Some("POST".into());
                w.resource = Some("tickets".into());
                w.nth = Some(1);
            }),
            Position::AfterCommit,
            FaultResponse::Drop,
        ),
        rule(
            m(|w| {
                w.method = Some("POST".into());
                w.resource = Some("tickets".into());
                w.nth = Some(2);
            }),
            Position::BeforeCommit,
            FaultResponse::Stall {
                then: StallThen::Commit,
                until: Release::ClientGone,
            },
        ),
        rule(
            m(|w| {
                w.kind = Some(RequestKind::Create);
                w.nth = Some(3);
            }),
            // `then` given, `at` not: a stall about the commit strikes before it.
            Position::BeforeCommit,
            FaultResponse::Stall {
                then: StallThen::Abandon,
                until: Release::ClientGone,
            },
        ),
        rule(
            m(|w| {
                w.method = Some("GET".into());
                w.query = Some("client_reference".into());
            }),
            Position::AfterCommit,
            FaultResponse::Delay { delay: ms(300) },
        ),
        rule(
            m(|w| {
                w.kind = Some(RequestKind::Retrieve);
                w.tenant = Some("sk_test_a".into());
                w.nth = Some(1);
            }),
            Position::AfterCommit,
            FaultResponse::Status {
                code: 503,
                retry_after_s: None,
            },
        ),
        rule(
            m(|w| {
                w.kind = Some(RequestKind::List);
                w.nth = Some(2);
            }),
            Position::AfterCommit,
            FaultResponse::Partial { bytes: 12 },
        ),
        rule(
            m(|w| {
                w.kind = Some(RequestKind::List);
                w.nth = Some(3);
            }),
            Position::AfterCommit,
            FaultResponse::Idle,
        ),
        rule(
            m(|w| {
                w.resource = Some("refunds".into());
                w.nth = Some(1);
            }),
            Position::BeforeRead,
            FaultResponse::Reset,
        ),
        rule(
            m(|w| {
                w.resource = Some("refunds".into());
                w.nth = Some(2);
            }),
            Position::BeforeRead,
            FaultResponse::Stall {
                then: StallThen::Abandon,
                until: Release::ClientGone,
            },
        ),
        rule(
            m(|w| {
                w.kind = Some(RequestKind::Search);
                w.query = Some("client_reference".into());
                w.nth = Some(9);
            }),
            Position::AfterCommit,
            FaultResponse::Ok,
        ),
    ];
    assert_eq!(s.plan.faults, expected);
}

#[test]
fn full_scenario_steps() {
    let s = parse_ok(FULL);
    let op = |id: &str| -> OpId { id.into() };
    // Every step names its operation with the declared id's one copy.
    let declared = s.operations[0].id.as_str().as_ptr();
    let Step::Execute { op: first, .. } = &s.steps[0] else {
        panic!("step 1 is an execute")
    };
    assert_eq!(first.as_str().as_ptr(), declared);
    let (final_key, _) = s.expect.final_outcomes.get_key_value("op-1").unwrap();
    assert_eq!(final_key.as_str().as_ptr(), declared);
    let expected = vec![
        Step::Execute {
            op: op("op-1"),
            crash: None,
        },
        Step::Execute {
            op: op("op-1"),
            crash: Some(CrashPoint::AfterCommit),
        },
        Step::Advance {
            by: secs(25 * 3600),
        },
        Step::Reconcile {
            op: op("op-1"),
            crash: None,
        },
        Step::Parallel(vec![
            Step::Reconcile {
                op: op("op-1"),
                crash: None,
            },
            Step::Reconcile {
                op: op("op-1"),
                crash: None,
            },
            Step::Execute {
                op: op("op-2"),
                crash: None,
            },
        ]),
        Step::Webhook {
            op: op("op-1"),
            event: EventKind::Created,
            deliveries: 1,
            forged: false,
        },
        Step::Webhook {
            op: op("op-1"),
            event: EventKind::Succeeded,
            deliveries: 2,
            forged: false,
        },
        Step::Webhook {
            op: op("op-1"),
            event: EventKind::Failed,
            deliveries: 1,
            forged: true,
        },
        Step::Resolve {
            op: op("op-2"),
            outcome: OutcomeKind::Failed,
            provider_ref: ResolveRef::None,
            evidence: scenario::DEFAULT_EVIDENCE.into(),
        },
        Step::Resolve {
            op: op("op-1"),
            outcome: OutcomeKind::Succeeded,
            provider_ref: ResolveRef::Ledger,
            evidence: "found it in the dashboard".into(),
        },
        Step::Resolve {
            op: op("op-1"),
            outcome: OutcomeKind::Succeeded,
            provider_ref: ResolveRef::Literal("tkt_x".into()),
            evidence: "operator decision".into(),
        },
        Step::Status { op: op("op-1") },
        Step::Reconcile {
            op: op("op-2"),
            crash: Some(CrashPoint::AfterCommit),
        },
    ];
    assert_eq!(s.steps, expected);
}

#[test]
fn full_scenario_expectations() {
    let s = parse_ok(FULL);
    let e = &s.expect;
    assert_eq!(e.final_outcomes["op-1"][..], [OutcomeKind::Succeeded]);
    assert_eq!(
        e.final_outcomes["op-2"][..],
        [OutcomeKind::Failed],
        "a single name is a list of one"
    );
    assert_eq!(e.after_step.keys().copied().collect::<Vec<_>>(), vec![4, 5]);
    assert_eq!(
        e.after_step[&4]["op-1"][..],
        [OutcomeKind::Pending, OutcomeKind::Unknown]
    );
    assert_eq!(e.after_step[&5]["op-1"][..], [OutcomeKind::Succeeded]);
    assert_eq!(e.after_step[&5]["op-2"][..], [OutcomeKind::Unknown]);
    assert_eq!(e.effects["op-1"], 1);
    assert_eq!(e.effects["op-2"], 0);
    assert!(!e.needs_review["op-1"]);
    assert!(e.needs_review["op-2"]);
}

#[test]
fn minimal_scenario_gets_every_default() {
    let s = parse_ok(MINIMAL);
    assert_eq!(s.case, None);
    assert!(s.tags.is_empty());
    assert_eq!(s.client_timeout, ms(250));
    assert_eq!(s.client_timeout, scenario::DEFAULT_CLIENT_TIMEOUT);
    assert_eq!(s.call_deadline, secs(30));
    assert_eq!(s.call_deadline, scenario::DEFAULT_CALL_DEADLINE);

    let plan = &s.plan;
    let defaults = Plan::default();
    assert_eq!(plan.tenants, vec!["sk_test_a", "sk_test_b"]);
    assert_eq!(plan.resources, None);
    assert_eq!(plan.idempotency, defaults.idempotency);
    assert_eq!(plan.idempotency.mode, IdempotencyMode::None);
    assert_eq!(plan.lookup, defaults.lookup);
    assert_eq!(plan.asynchronous, None);
    assert_eq!(plan.webhooks, None);
    assert!(plan.seed_objects.is_empty());
    assert!(plan.faults.is_empty());
    assert_eq!(plan.limits.stall_cap, secs(3));
    assert_eq!(plan.limits.stall_cap, scenario::DEFAULT_STALL_CAP);
    assert_eq!(plan.limits.max_body_bytes, 64 * 1024);
    assert_eq!(plan.seed, 0);
    assert_eq!(s.expect, Default::default());
}

#[test]
fn provider_with_some_keys_keeps_defaults_for_the_rest() {
    let s = parse_ok(
        "version: 1\nid: x\ntitle: t\n\
         provider:\n  idempotency: {mode: ietf, required: true}\n  lookup: {list_recent: false}\n\
         \x20 asynchronous: {settle_after: 5m}\n\
         operations: [{id: a, resource: r}]\nsteps: [{execute: a}]\n",
    );
    assert_eq!(s.plan.idempotency.mode, IdempotencyMode::Ietf);
    assert!(s.plan.idempotency.required);
    assert_eq!(s.plan.idempotency.retention, secs(24 * 3600));
    assert!(s.plan.lookup.retrieve && s.plan.lookup.client_reference && !s.plan.lookup.list_recent);
    assert_eq!(s.plan.asynchronous.unwrap().result, SettleResult::Succeeded);
    assert_eq!(s.plan.limits.stall_cap, secs(3));
}

#[test]
fn every_idempotency_mode_name_is_accepted() {
    for mode in IdempotencyMode::ALL {
        let text = format!(
            "version: 1\nid: x\ntitle: t\nprovider: {{idempotency: {{mode: {}}}}}\n\
             operations: [{{id: a, resource: r}}]\nsteps: [{{execute: a}}]\n",
            mode.name()
        );
        assert_eq!(parse_ok(&text).plan.idempotency.mode, mode);
    }
}

#[test]
fn fault_defaults_for_position() {
    let s = parse_ok(
        "version: 1\nid: x\ntitle: t\noperations: [{id: a, resource: r}]\nsteps: [{execute: a}]\n\
         faults:\n\
         \x20 - {when: {nth: 1}, response: drop}\n\
         \x20 - {when: {nth: 2}, response: stall}\n\
         \x20 - {when: {nth: 3, method: POST}, response: {stall: {then: commit}}}\n\
         \x20 - {when: {nth: 4}, response: {status: 429}, at: before_commit}\n\
         \x20 - {response: ok}\n",
    );
    let at: Vec<Position> = s.plan.faults.iter().map(|f| f.at).collect();
    assert_eq!(
        at,
        vec![
            Position::AfterCommit,
            Position::AfterCommit,
            Position::BeforeCommit,
            Position::BeforeCommit,
            Position::AfterCommit,
        ]
    );
    assert_eq!(
        s.plan.faults[4].when,
        Match::default(),
        "no `when`: every request"
    );
}

#[test]
fn load_reads_a_file_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("case.yaml");
    std::fs::write(&path, MINIMAL).unwrap();
    let s = scenario::load(&path).unwrap();
    assert_eq!(s.path, path.display().to_string());
    assert_eq!(s.id, "minimal");
}

#[test]
fn load_reports_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.yaml");
    let err = scenario::load(&path).unwrap_err();
    assert!(matches!(err, ScenarioError::Read { .. }), "{err:?}");
    assert!(err.diagnostics().is_empty());
    let text = err.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    assert!(text.contains("cannot read"), "{text}");
}

#[test]
fn load_reports_bytes_that_are_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.yaml");
    std::fs::write(&path, b"version: 1\nid: \xff\xfe\n").unwrap();
    let err = scenario::load(&path).unwrap_err();
    let diagnostic = &err.diagnostics()[0];
    assert_eq!((diagnostic.line, diagnostic.column), (2, 5));
    assert!(
        diagnostic.message.contains("not UTF-8"),
        "{}",
        diagnostic.message
    );
}

#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../../../docs/scenario-format.md");
    let start = doc.rfind("```yaml\n").unwrap() + "```yaml\n".len();
    let example = &doc[start..];
    let example = &example[..example.find("```").unwrap()];
    let s = parse_ok(example);
    assert_eq!(s.id, "lost-after-commit");
    assert_eq!(s.plan.faults[0].at, Position::AfterCommit);
    assert_eq!(s.plan.faults[0].when.steps, Some([1].into_iter().collect()));
    assert_eq!(s.steps.len(), 5);
}

/// The library sets up situations, not request counts: a rule that counts
/// (`nth`, `times`) is scoped to a step, so one request more or fewer inside a
/// call never changes what a scenario tests (ARCHITECTURE.md).
#[test]
fn built_in_rules_that_count_are_scoped_to_a_step() {
    for scenario in lostreply_harness::builtin::scenarios().unwrap() {
        for (i, rule) in scenario.plan.faults.iter().enumerate() {
            let counts = rule.when.nth.is_some() || rule.when.times.is_some();
            assert!(
                !counts || rule.when.steps.is_some(),
                "{}: fault rule {} counts requests across the whole run",
                scenario.id,
                i + 1
            );
        }
    }
}

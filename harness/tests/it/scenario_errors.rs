//! Scenario files that are wrong: each problem is reported at its line and
//! column with a message that says what to do, several in one pass, and no
//! input makes the parser panic.

use crate::located::{column_of, diagnostics, one_error};
use lostreply_harness::scenario::{self, ScenarioError};

/// A valid scenario to break one line at a time. Line numbers matter: tests
/// replace or append lines and expect diagnostics at known places.
const BASE: &str = "\
version: 1
id: base
title: A valid base
provider:
  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
operations:
  - {id: op-1, resource: tickets}
  - {id: op-2, resource: tickets}
steps:
  - execute: op-1
  - reconcile: op-2
";

/// BASE with `extra` appended (its first line is line 12).
fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

#[test]
fn base_is_valid() {
    scenario::parse(BASE, "case.yaml").unwrap();
}

#[test]
fn display_is_path_line_col_message_then_source_and_caret() {
    let err = scenario::parse(&with("bogus: 1\n"), "scenarios/x.yaml").unwrap_err();
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("scenarios/x.yaml:12:1: unknown field `bogus`"),
        "{text}"
    );
    assert_eq!(lines[1], "12 | bogus: 1");
    assert_eq!(lines[2], "   | ^");
}

#[test]
fn caret_sits_under_the_column() {
    let err = scenario::parse(&with("expect: {effects: {op-9: 1}}\n"), "x.yaml").unwrap_err();
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "12 | expect: {effects: {op-9: 1}}");
    assert_eq!(lines[2], "   |                    ^");
}

#[test]
fn unknown_keys() {
    one_error(&with("bogus: 1\n"), 12, "bogus", "unknown field `bogus`");
    let text = BASE.replace("  webhooks: {", "  webhooks: {colour: red, ");
    one_error(&text, 5, "colour", "unknown field `colour`");
    one_error(
        &with("expect: {finals: {op-1: succeeded}}\n"),
        12,
        "finals",
        "unknown field `finals`",
    );
    one_error(
        &with("faults: [{when: {methd: POST}, response: drop}]\n"),
        12,
        "methd",
        "unknown field `methd`",
    );
    one_error(
        &BASE.replace("  - execute: op-1", "  - {execute: op-1, retry: 3}"),
        10,
        "retry",
        "unknown field `retry`",
    );
}

#[test]
fn wrong_types() {
    one_error(&with("case: two\n"), 12, "two", "whole number");
    one_error(&with("tags: lost-response\n"), 12, "lost", "list");
    let ops = "operations:\n  - {id: op-1, resource: tickets}\n  - {id: op-2, resource: tickets}";
    one_error(&BASE.replace(ops, "operations: op-1"), 6, "op-1", "list");
    one_error(
        &with("expect: {needs_review: {op-1: maybe}}\n"),
        12,
        "maybe",
        "",
    );
}

#[test]
fn missing_required_key() {
    let found = diagnostics(&BASE.replace("title: A valid base\n", ""));
    assert_eq!(found.len(), 1);
    assert!(
        found[0].message.contains("missing field `title`"),
        "{:?}",
        found[0]
    );
    assert!(found[0].line >= 1);
}

#[test]
fn bad_durations() {
    one_error(
        &with("client_timeout: 250\n"),
        12,
        "250",
        "bad duration `250` for client_timeout",
    );
    one_error(
        &with("call_deadline: soon\n"),
        12,
        "soon",
        "bad duration `soon`",
    );
    one_error(
        &BASE.replace("  - execute: op-1", "  - advance: 25 hourz"),
        10,
        "25",
        "bad duration",
    );
    let retention = BASE.replace(
        "  webhooks:",
        "  idempotency: {mode: stripe, retention: 24x}\n  webhooks:",
    );
    one_error(&retention, 5, "24x", "for retention");
    one_error(
        &with("client_timeout: 2m\n"),
        12,
        "2m",
        "client_timeout must be between 1ms and 1m",
    );
    one_error(
        &BASE.replace("  - execute: op-1", "  - advance: 0s"),
        10,
        "0s",
        "advance must be between",
    );
    one_error(
        &with("client_timeout: 5s\ncall_deadline: 5s\n"),
        13,
        "5s",
        "longer than client_timeout",
    );
}

#[test]
fn bad_version_and_case() {
    one_error(
        &BASE.replace("version: 1", "version: 2"),
        1,
        "2",
        "unsupported format version 2",
    );
    one_error(&with("case: 11\n"), 12, "11", "case 11 does not exist");
    one_error(&with("case: 0\n"), 12, "0", "1 to 10");
}

#[test]
fn duplicate_ids_and_keys() {
    let text = BASE.replace("{id: op-2,", "{id: op-1,");
    let found = diagnostics(&text);
    // The duplicate, and the step naming `op-2` that is now undeclared.
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_eq!(
        (found[0].line, found[0].column),
        (8, column_of(&text, 8, "op-1"))
    );
    assert!(found[0]
        .message
        .contains("duplicate operation id `op-1` (first declared at line 7)"));
    assert!(found[1]
        .message
        .contains("operation `op-2` is not declared"));

    one_error(&with("id: again\n"), 12, "id", "duplicate mapping key");
    let text = with("expect: {effects: {op-1: 1, op-1: 0}}\n");
    let found = diagnostics(&text);
    assert_eq!(found.len(), 1);
    assert!(found[0].message.contains("duplicate"), "{:?}", found[0]);
    assert_eq!(found[0].line, 12);
}

#[test]
fn bad_names() {
    let op1 = "{id: op-1, resource: tickets}";
    one_error(
        &BASE.replace(op1, "{id: op-1, resource: Tickets}"),
        7,
        "Tickets",
        "resource name `Tickets` is not valid",
    );
    let long = "r".repeat(41);
    one_error(
        &BASE.replace(op1, &format!("{{id: op-1, resource: {long}}}")),
        7,
        "rrr",
        "at most 40",
    );
    let restricted = BASE.replace("  webhooks:", "  resources: [refunds]\n  webhooks:");
    let found = diagnostics(&restricted);
    assert_eq!(found.len(), 2, "both operations name tickets: {found:#?}");
    assert_eq!(
        (found[0].line, found[0].column),
        (8, column_of(&restricted, 8, "tickets"))
    );
    assert!(found[0]
        .message
        .contains("resource `tickets` is not one of provider.resources (refunds)"));
    one_error(
        &BASE.replace("id: base", "id: has space"),
        2,
        "has",
        "scenario id `has space` is not valid",
    );
    let bad_op = BASE
        .replace("{id: op-1,", "{id: -op,")
        .replace("execute: op-1", "execute: -op");
    one_error(&bad_op, 7, "-op", "operation id `-op`");
}

#[test]
fn undeclared_operations_everywhere() {
    let declared = "operation `op-3` is not declared in operations: (op-1, op-2)";
    one_error(
        &BASE.replace("  - execute: op-1", "  - execute: op-3"),
        10,
        "op-3",
        declared,
    );
    one_error(
        &with("expect: {final: {op-3: succeeded}}\n"),
        12,
        "op-3",
        "`op-3` is not declared",
    );
    one_error(
        &with("expect: {effects: {op-3: 1}}\n"),
        12,
        "op-3",
        "`op-3` is not declared",
    );
    one_error(
        &with("expect: {needs_review: {op-3: true}}\n"),
        12,
        "op-3",
        "`op-3` is not declared",
    );
    one_error(
        &with("  - parallel: [{reconcile: op-1}, {status: op-9}]\n"),
        12,
        "op-9",
        "`op-9` is not declared",
    );
    one_error(
        &with("  - {resolve: op-7, outcome: failed, provider_ref: null}\n"),
        12,
        "op-7",
        "`op-7`",
    );
    one_error(
        &with("  - {webhook: op-7, event: created}\n"),
        12,
        "op-7",
        "`op-7`",
    );
}

#[test]
fn after_step_must_name_a_step_that_answers() {
    let after = |n: &str, rest: &str| {
        with(&format!(
            "{rest}expect: {{after_step: {{{n}: {{op-1: [pending]}}}}}}\n"
        ))
    };
    one_error(
        &after("3", ""),
        12,
        "3:",
        "no such step (steps are numbered 1 to 2)",
    );
    one_error(&after("0", ""), 12, "0:", "no such step");
    one_error(
        &after("2", ""),
        12,
        "op-1",
        "that step is about `op-2`, not `op-1`",
    );
    one_error(
        &after("3", "  - advance: 1h\n"),
        13,
        "op-1",
        "moves the clock",
    );
    one_error(
        &after("3", "  - {execute: op-1, crash: after_commit}\n"),
        13,
        "op-1",
        "crashes the adapter",
    );
    one_error(
        &after("3", "  - {webhook: op-1, event: created}\n"),
        13,
        "op-1",
        "webhook step",
    );
    one_error(
        &after("3", "  - parallel: [{status: op-2}, {status: op-2}]\n"),
        13,
        "op-1",
        "no call in that parallel step",
    );
    // A parallel step answers for the operations its calls are about.
    let parallel = with("  - parallel: [{reconcile: op-1}, {status: op-2}]\nexpect: {after_step: {3: {op-2: unknown}}}\n");
    scenario::parse(&parallel, "x").unwrap();
}

#[test]
fn effects_beyond_at_most_once_cannot_hold() {
    one_error(
        &with("expect: {effects: {op-1: 2}}\n"),
        12,
        "2",
        "at most one effect per operation",
    );
}

#[test]
fn impossible_fault_rules() {
    let fault = |rule: &str| with(&format!("faults:\n  - {rule}\n"));
    // Line 13 holds the rule.
    one_error(
        &fault("{at: before_commit, response: {partial: 12}}"),
        13,
        "before_commit",
        "no response yet",
    );
    one_error(
        &fault("{at: before_read, response: idle}"),
        13,
        "before_read",
        "no response yet",
    );
    let then_late = "{when: {method: POST}, at: after_commit, response: {stall: {then: commit}}}";
    one_error(
        &fault(then_late),
        13,
        "commit}",
        "at after_commit there is nothing left to decide",
    );
    one_error(
        &fault("{at: before_read, response: {stall: {then: abandon}}}"),
        13,
        "abandon",
        "before_read",
    );
    let then_get = "{when: {method: GET}, response: {stall: {then: commit}}}";
    one_error(&fault(then_get), 13, "commit", "must match only creates");
    one_error(
        &fault("{response: {stall: {then: commit}}}"),
        13,
        "commit",
        "must match only creates",
    );
    one_error(
        &fault("{response: {status: 700}}"),
        13,
        "700",
        "status 700 is not an HTTP error status",
    );
    one_error(&fault("{response: {status: 302}}"), 13, "302", "400 to 599");
    one_error(
        &fault("{when: {nth: 0}, response: drop}"),
        13,
        "0",
        "nth counts from 1",
    );
    let get_create = "{when: {method: GET, kind: create}, response: drop}";
    one_error(
        &fault(get_create),
        13,
        "create",
        "no request is both GET and kind create",
    );
    one_error(
        &fault("{when: {method: POST, kind: search}, response: drop}"),
        13,
        "search",
        "both POST and kind search",
    );
    one_error(
        &fault("{when: {method: POST, query: limit}, response: drop}"),
        13,
        "limit",
        "a create (POST) has no query",
    );
    one_error(
        &fault("{when: {kind: search, query: limit}, response: drop}"),
        13,
        "limit",
        "belongs to list requests",
    );
    one_error(
        &fault("{when: {method: PUT}, response: drop}"),
        13,
        "PUT",
        "unknown variant `PUT`",
    );
    one_error(
        &fault("{response: {delay: 5s}}"),
        13,
        "5s",
        "delay must be between 1ms and 3s",
    );
    one_error(
        &fault("{response: dorp}"),
        13,
        "dorp",
        "unknown fault response `dorp`: one of ok, drop",
    );
    let found = diagnostics(&fault("{response: {delay: 1s, status: 500}}"));
    assert_eq!(found.len(), 1);
    assert!(
        found[0]
            .message
            .contains("exactly one key; `status` is one too many"),
        "{:?}",
        found[0]
    );
    one_error(&fault("{response: status}"), 13, "status", "needs a value");
    one_error(
        &fault("{when: {tenant: sk_live_x}, response: drop}"),
        13,
        "sk_live_x",
        "tenant `sk_live_x` is not one of provider.tenants",
    );
    one_error(
        &fault("{when: {resource: Bad}, response: drop}"),
        13,
        "Bad",
        "resource name `Bad`",
    );
}

#[test]
fn shadowed_fault_rules_are_reported() {
    let text = with(
        "faults:\n  - {when: {method: POST}, response: drop}\n  - {when: {method: POST, nth: 2}, response: reset}\n",
    );
    one_error(
        &text,
        14,
        "{",
        "fault rule 2 can never apply: rule 1 (line 13)",
    );
    let same_nth = with(
        "faults:\n  - {when: {kind: create, nth: 2}, response: drop}\n  - {when: {kind: create, nth: 2}, response: reset}\n",
    );
    one_error(&same_nth, 14, "{", "can never apply");
    // A narrower rule first does not shadow a wider one, nor do different nth.
    scenario::parse(
        &with("faults:\n  - {when: {method: POST, nth: 1}, response: drop}\n  - {when: {method: POST, nth: 2}, response: drop}\n  - {when: {resource: tickets}, response: reset}\n"),
        "x",
    )
    .unwrap();
}

#[test]
fn stalls_must_outlast_the_client() {
    let text = with("client_timeout: 5s\nfaults:\n  - {at: before_read, response: stall}\n");
    one_error(
        &text,
        14,
        "stall",
        "stall_cap (3s) is not longer than client_timeout (5s)",
    );
    let idle = with("client_timeout: 3s\ncall_deadline: 9s\nfaults:\n  - {response: idle}\n");
    one_error(&idle, 15, "idle", "is not longer than client_timeout");
}

#[test]
fn step_forms() {
    let step = |s: &str| BASE.replace("  - execute: op-1", &format!("  - {s}"));
    // Resolves and webhooks come after op-1's execute (step 2, line 11).
    let later = |s: &str| BASE.replace("  - reconcile: op-2", &format!("  - {s}"));
    // Positions are values' positions: the second action's value.
    one_error(
        &step("{execute: op-1, reconcile: op-2}"),
        10,
        "op-2",
        "a step has one action, and this one has `execute` and `reconcile`",
    );
    one_error(
        &step("{crash: after_commit}"),
        10,
        "{",
        "a step needs one action",
    );
    one_error(
        &step("{status: op-1, crash: after_commit}"),
        10,
        "after_commit",
        "`crash` does not go with `status`",
    );
    let event = "`event` does not go with `execute` (`execute` takes only crash, during)";
    one_error(
        &step("{execute: op-1, event: created}"),
        10,
        "created",
        event,
    );
    one_error(
        &step("{execute: op-1, crash: before_commit}"),
        10,
        "before_commit",
        "unknown variant `before_commit`",
    );
    one_error(
        &step("parallel: [{reconcile: op-1}, {advance: 1h}]"),
        10,
        "1h",
        "`advance` cannot run inside `parallel`",
    );
    let nested = "parallel: [{reconcile: op-1}, {parallel: [{status: op-1}, {status: op-2}]}]";
    one_error(
        &step(nested),
        10,
        "[{status",
        "`parallel` cannot run inside `parallel`",
    );
    one_error(
        &step("parallel: [{reconcile: op-1}]"),
        10,
        "[",
        "2 to 16 calls",
    );
    one_error(
        &later("{resolve: op-1, outcome: succeeded}"),
        11,
        "{",
        "needs `provider_ref`",
    );
    one_error(
        &later("{resolve: op-1, provider_ref: ledger}"),
        11,
        "{",
        "needs `outcome`",
    );
    one_error(
        &later("{resolve: op-1, outcome: pending, provider_ref: null}"),
        11,
        "pending",
        "unknown variant `pending`",
    );
    one_error(
        &later("{resolve: op-1, outcome: failed, provider_ref: \"\"}"),
        11,
        "\"\"",
        "provider_ref must be 1 to 255",
    );
    one_error(&later("{webhook: op-1}"), 11, "{", "needs `event`");
    one_error(
        &later("{webhook: op-1, event: created, duplicate: 0}"),
        11,
        "0",
        "total number of deliveries",
    );
}

#[test]
fn webhook_rules() {
    let no_webhooks = BASE.replace(
        "provider:\n  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}\n",
        "",
    );
    let text = format!("{no_webhooks}  - {{webhook: op-1, event: created}}\n");
    one_error(&text, 10, "op-1", "needs `provider.webhooks`");
    one_error(
        &with("  - {webhook: op-1, event: succeeded}\n"),
        12,
        "succeeded",
        "objects settle only when provider.asynchronous",
    );
    let settles_failed = BASE.replace(
        "provider:\n",
        "provider:\n  asynchronous: {settle_after: 1m, result: failed}\n",
    );
    let text = format!("{settles_failed}  - {{webhook: op-1, event: succeeded}}\n");
    one_error(&text, 13, "succeeded", "asynchronous objects settle failed");
    // Forged events may claim anything.
    scenario::parse(
        &with("  - {webhook: op-1, event: failed, forged: true}\n"),
        "x",
    )
    .unwrap();
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    one_error(
        &BASE.replace(secret, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        5,
        "MfKQ",
        "starts with `whsec_`",
    );
    one_error(
        &BASE.replace(secret, "whsec_not*base64"),
        5,
        "whsec",
        "not valid base64",
    );
}

#[test]
fn provider_rules() {
    let provider = |lines: &str| BASE.replace("provider:\n", &format!("provider:\n{lines}"));
    let modes = "unknown idempotency mode `strip`: one of none, stripe, ietf";
    one_error(
        &provider("  idempotency: {mode: strip}\n"),
        5,
        "strip",
        modes,
    );
    one_error(
        &provider("  idempotency: {mode: stripe, required: true}\n"),
        5,
        "true",
        "`required: true` is an ietf rule",
    );
    let seed = "  seed_objects: [{tenant: sk_test_z, resource: tickets}]\n";
    one_error(
        &provider(seed),
        5,
        "sk_test_z",
        "tenant `sk_test_z` is not one of provider.tenants (sk_test_a, sk_test_b)",
    );
    one_error(
        &provider("  tenants: [sk_test_a, sk_test_a]\n"),
        5,
        "sk_test_a]",
        "listed twice",
    );
    one_error(
        &provider("  tenants: []\n"),
        5,
        "[",
        "at least one credential",
    );
    one_error(
        &provider("  tenants: [\"sk test\"]\n"),
        5,
        "\"sk",
        "visible ASCII",
    );
    one_error(&provider("  resources: []\n"), 5, "[", "leave it out");
    one_error(
        &provider("  limits: {stall_cap: 2m}\n"),
        5,
        "2m",
        "stall_cap must be between 1ms and 1m",
    );
    one_error(
        &provider("  limits: {max_body_bytes: 0}\n"),
        5,
        "0",
        "max_body_bytes must be between 1",
    );
    one_error(
        &provider("  asynchronous: {settle_after: 0s}\n"),
        5,
        "0s",
        "settle_after must be between",
    );
    let reserved = BASE.replace(
        "{id: op-1, resource: tickets}",
        "{id: op-1, resource: tickets, args: {metadata: {a: 1}}}",
    );
    one_error(&reserved, 7, "{metadata", "`metadata` is a reserved field");
    let big = BASE
        .replace("provider:\n", "provider:\n  limits: {max_body_bytes: 10}\n")
        .replace(
            "{id: op-1, resource: tickets}",
            "{id: op-1, resource: tickets, args: {title: a long enough title}}",
        );
    one_error(&big, 8, "{title", "more than max_body_bytes (10)");
}

#[test]
fn several_errors_in_one_pass_in_file_order() {
    let text = BASE
        .replace("version: 1", "version: 3")
        .replace(
            "{id: op-2, resource: tickets}",
            "{id: op-2, resource: Tickets}",
        )
        .replace("  - execute: op-1", "  - execute: op-5");
    let text = format!("{text}expect: {{effects: {{op-1: 7}}}}\n");
    let found = diagnostics(&text);
    let places: Vec<(u64, u64)> = found.iter().map(|d| (d.line, d.column)).collect();
    let expected = vec![
        (1, column_of(&text, 1, "3")),
        (8, column_of(&text, 8, "Tickets")),
        (10, column_of(&text, 10, "op-5")),
        (12, column_of(&text, 12, "7")),
    ];
    assert_eq!(places, expected, "{found:#?}");
    let rendered = scenario::parse(&text, "f.yaml").unwrap_err().to_string();
    assert_eq!(rendered.matches("f.yaml:").count(), 4, "{rendered}");
}

#[test]
fn too_many_problems_are_counted_not_listed() {
    let mut text = BASE.to_owned();
    for _ in 0..80 {
        text.push_str("  - execute: nope\n");
    }
    let err = scenario::parse(&text, "x").unwrap_err();
    let ScenarioError::Invalid {
        diagnostics,
        omitted,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(diagnostics.len(), scenario::MAX_DIAGNOSTICS);
    assert_eq!(*omitted, 80 - scenario::MAX_DIAGNOSTICS);
    assert!(err
        .to_string()
        .ends_with(&format!("... and {omitted} more")));
}

#[test]
fn empty_and_comment_only_files() {
    let found = diagnostics("");
    assert_eq!((found[0].line, found[0].column), (1, 1));
    assert!(found[0].message.contains("the file is empty"));
    one_error("# nothing yet\n\n", 1, "#", "the file is empty");
}

#[test]
fn garbage_never_panics_and_always_has_a_place() {
    let deep_flow = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let deep_map = format!("{}1{}", "{a: ".repeat(3000), "}".repeat(3000));
    let huge_number = format!("version: 1{}\n", "9".repeat(400));
    let long_line = format!("title: {}\n", "x".repeat(100_000));
    let binary: String = (0u8..=255).map(char::from).collect();
    let alias_bomb = "a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
    let samples: Vec<String> = vec![
        "".into(),
        "- 1\n- 2\n".into(),
        "42".into(),
        "null".into(),
        "~".into(),
        "\"just a string\"".into(),
        "version: 1\n\tid: x\n".into(),
        "\t\t\t".into(),
        "version: 1\nid: [unclosed\n".into(),
        "version: 1\nid: {a: }\n}}}}".into(),
        "---\nversion: 1\n---\nversion: 1\n".into(),
        "version: !!binary aGVsbG8=\n".into(),
        "version: *undefined\n".into(),
        "? [complex, key]\n: value\n".into(),
        "version: 1\nversion: 1\n".into(),
        "%YAML 9.9\n---\na: 1\n".into(),
        "\u{feff}version: 1\n".into(),
        "version: 1\r\nid: x\rtitle: y\n".into(),
        "version: -1\n".into(),
        "version: 1e999\n".into(),
        "version: 0x10\n".into(),
        "version: 1\ncase: 300\n".into(),
        "version: 1\nsteps: [[[[[]]]]]\n".into(),
        "version: 1\nexpect: {after_step: {99999999999999999999999: {}}}\n".into(),
        "version: 1\nexpect: {after_step: {-1: {}}}\n".into(),
        "version: 1\nfaults: [{response: {partial: 99999999999999999999}}]\n".into(),
        "version: 1\noperations: [{id: a, resource: r, args: [1, 2]}]\n".into(),
        "version: 1\noperations: [{id: a, resource: r, args: {1: x, .nan: y}}]\n".into(),
        BASE.replace(
            "  - execute: op-1",
            "  - {advance: 99999999999999999999999h}",
        ),
        BASE.replace("  - execute: op-1", "  - {advance: 9999999999999h}"),
        BASE.replace("  - execute: op-1", "  - parallel: 3"),
        BASE.replace(
            "  - execute: op-1",
            "  - {resolve: op-1, outcome: failed, provider_ref: [1]}",
        ),
        BASE.replace(
            "  - execute: op-1",
            "  - {webhook: op-1, event: created, duplicate: -1}",
        ),
        deep_flow,
        deep_map,
        huge_number,
        long_line,
        binary,
        alias_bomb.into(),
        "\u{0}\u{1}\u{1b}[31mred".into(),
    ];
    for sample in &samples {
        let err =
            scenario::parse(sample, "junk.yaml").expect_err(sample.get(..40).unwrap_or(sample));
        assert!(!err.diagnostics().is_empty());
        let text = err.to_string();
        assert!(text.starts_with("junk.yaml:"), "{text}");
        // Control characters from the input never reach the terminal raw.
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{text:?}"
        );
        for d in err.diagnostics() {
            assert!(d.line >= 1, "no place for {d:?}");
        }
    }
}

#[test]
fn a_missing_file_and_an_oversized_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    std::fs::write(
        &path,
        "#".repeat(usize::try_from(scenario::MAX_FILE_BYTES).unwrap() + 1),
    )
    .unwrap();
    let err = scenario::load(&path).unwrap_err();
    assert!(err.to_string().contains("at most 1048576"), "{err}");
}

#[test]
fn step_scopes_name_steps_that_exist() {
    one_error(
        &with("faults:\n  - when: {step: 3, kind: create}\n    response: drop\n"),
        13,
        "3",
        "step 3 is not a step of this scenario (steps 1 to 2)",
    );
    one_error(
        &with("faults:\n  - when: {step: [1, 0]}\n    response: drop\n"),
        13,
        "0]",
        "step 0 is not a step",
    );
}

#[test]
fn nth_and_times_exclude_each_other() {
    one_error(
        &with("faults:\n  - when: {step: 1, nth: 1, times: 2}\n    response: drop\n"),
        13,
        "2}",
        "nth and times exclude each other",
    );
    one_error(
        &with("faults:\n  - when: {times: 0}\n    response: drop\n"),
        13,
        "0}",
        "at least 1",
    );
}

#[test]
fn a_hold_names_a_step_that_exists() {
    one_error(
        &with(
            "faults:\n  - when: {kind: create}\n    response: {stall: {then: commit, until: {end_of_step: 9}}}\n",
        ),
        14,
        "9",
        "end_of_step 9 is not a step of this scenario",
    );
}

#[test]
fn a_gather_is_answered_before_its_client_gives_up() {
    one_error(
        &with("faults:\n  - when: {kind: search}\n    response: {gather: {requests: 2, at_most: 2s}}\n"),
        14,
        "2s",
        "must be shorter than client_timeout",
    );
    one_error(
        &with("faults:\n  - when: {kind: search}\n    response: {gather: {requests: 1, at_most: 100ms}}\n"),
        14,
        "1,",
        "at least 2 requests",
    );
}

#[test]
fn a_step_scoped_rule_is_shadowed_only_by_a_rule_covering_its_steps() {
    // Step 1 does not cover step 2: both rules can fire.
    scenario::parse(
        &with("faults:\n  - when: {step: 1}\n    response: drop\n  - when: {step: 2}\n    response: reset\n"),
        "case.yaml",
    )
    .unwrap();
    one_error(
        &with("faults:\n  - when: {step: [1, 2]}\n    response: drop\n  - when: {step: 2, kind: create}\n    response: reset\n"),
        15,
        "when",
        "can never apply",
    );
}

#[test]
fn needs_review_from_step_names_a_step_that_exists() {
    one_error(
        &with("expect:\n  needs_review_from_step: {op-1: 5}\n"),
        13,
        "5",
        "needs_review_from_step 5: there is no such step",
    );
}

//! The `mcp:` section, `tool:` operations and `call:` fault rules: what a
//! valid file becomes (the simulator's `McpPlan`, the harness's setup, the
//! adapter's contract), how real figures are scaled, and every located error.

use std::collections::BTreeSet;
use std::time::Duration;

use lostreply_harness::run::{contract, contract_mcp, operation};
use lostreply_harness::scenario::client_profiles::IdleReset;

use crate::located::{diagnostics, one_error};
use lostreply_harness::scenario;
use lostreply_simulator::mcp::{
    AnswerStyle, CancelPolicy, CommitPoint, Defect, McpFault, McpMatch, McpPlan, McpRule, PaidTool,
    Revision, Stream, TaskEnd, TaskSupport,
};
use lostreply_simulator::{Release, StallThen};

const FULL: &str = include_str!("../scenario/mcp.yaml");

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn parse_ok(text: &str) -> scenario::model::Scenario {
    scenario::parse(text, "mcp.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn on(tool: Option<&str>, step: u32) -> McpMatch {
    {
        let mut changed = McpMatch::default();
        changed.tool = tool.map(str::to_owned);
        changed.steps = Some(BTreeSet::from([step]));
        changed
    }
}

fn rule(when: McpMatch, fault: McpFault, cancel: CancelPolicy) -> McpRule {
    McpRule::builder()
        .when(when)
        .fault(fault)
        .cancel(cancel)
        .build()
}

/// The full fixture's MCP fault rules as the server reads them. Real
/// figures are scaled by 0.001: 6m is 360 ms, 30s is 30 ms, 400s is 400 ms.
/// The task's `after` is on the simulator clock and is not scaled.
fn full_fixture_rules() -> Vec<McpRule> {
    vec![
        rule(
            on(Some("create_charge"), 1),
            McpFault::Slow {
                work: ms(360),
                stream: Stream::HeadersThenSilence,
            },
            CancelPolicy::Ignore,
        ),
        rule(
            {
                let mut changed = on(Some("create_ticket"), 2);
                changed.nth = Some(1);
                changed
            },
            McpFault::Stall {
                then: StallThen::Commit,
                until: Release::ClientGone,
                stream: Stream::Progress { every: ms(30) },
            },
            CancelPolicy::Honour,
        ),
        rule(
            {
                let mut changed = on(Some("create_ticket"), 3);
                changed.times = Some(2);
                changed
            },
            McpFault::Late { after: ms(400) },
            CancelPolicy::Ignore,
        ),
        rule(on(None, 4), McpFault::Never, CancelPolicy::Ignore),
        rule(
            on(Some("create_charge"), 5),
            McpFault::IsError {
                status: 504,
                at: CommitPoint::AfterCommit,
                message: "upstream timeout".to_owned(),
            },
            CancelPolicy::Ignore,
        ),
        rule(
            on(Some("get_operation"), 5),
            McpFault::RpcError {
                code: -32603,
                message: "internal".to_owned(),
            },
            CancelPolicy::Ignore,
        ),
        rule(
            on(Some("create_ticket"), 5),
            McpFault::Http {
                status: 500,
                at: CommitPoint::BeforeCommit,
            },
            CancelPolicy::Ignore,
        ),
        rule(
            on(Some("create_charge"), 6),
            McpFault::Drop {
                at: CommitPoint::AfterCommit,
            },
            CancelPolicy::Ignore,
        ),
        rule(
            on(Some("create_ticket"), 6),
            McpFault::Reset {
                at: CommitPoint::BeforeCommit,
            },
            CancelPolicy::Ignore,
        ),
        rule(
            on(Some("create_charge"), 7),
            McpFault::Task {
                then: TaskEnd::Complete,
                after: Duration::from_secs(5),
            },
            CancelPolicy::Ignore,
        ),
        rule(
            on(Some("create_ticket"), 7),
            McpFault::PrimeThenClose {
                then: StallThen::Commit,
            },
            CancelPolicy::Race,
        ),
        rule(on(None, 7), McpFault::Ok, CancelPolicy::Ignore),
    ]
}

#[test]
fn the_full_fixture_becomes_the_plan_the_server_reads() {
    let s = parse_ok(FULL);
    let mcp = s.plan.mcp.as_ref().unwrap();
    assert_eq!(
        mcp.revisions,
        vec![Revision::V2025_11_25, Revision::V2025_06_18]
    );
    assert_eq!(mcp.answer, AnswerStyle::Sse);
    assert_eq!(mcp.tools[0], PaidTool::ticket());
    assert_eq!(mcp.tools[1], {
        let mut changed = PaidTool::charge();
        changed.duration_hint = Some("budget 180-300 s".to_owned());
        changed
    });
    assert!(mcp.retrieval.enabled);
    assert_eq!(mcp.retrieval.retention, Duration::from_secs(7 * 24 * 3600));
    assert_eq!(mcp.retrieval.list_limit, 20);
    assert!(mcp.tasks.enabled);
    assert_eq!(mcp.tasks.ttl, Duration::from_secs(3600));
    assert_eq!(mcp.tasks.work, Duration::from_secs(5));
    assert!(mcp.defects.is_empty());
    assert_eq!(
        (
            mcp.limits.max_sessions,
            mcp.limits.max_tasks,
            mcp.limits.max_body_bytes
        ),
        (64, 100, 65536)
    );

    assert_eq!(mcp.faults, full_fixture_rules());
    // The HTTP rule of the same list stays an HTTP rule.
    assert_eq!(s.plan.faults.len(), 1);
}

#[test]
fn the_full_fixtures_operations_and_client_are_read_as_written() {
    let s = parse_ok(FULL);
    // Operations: a tool's collection is the tool's; args never hold the key.
    let ops: Vec<(&str, &str, Option<&str>)> = s
        .operations
        .iter()
        .map(|o| (o.id.as_str(), o.resource.as_str(), o.tool.as_deref()))
        .collect();
    assert_eq!(
        ops,
        vec![
            ("op-1", "charges", Some("create_charge")),
            ("op-2", "tickets", Some("create_ticket")),
            ("op-3", "tickets", None),
        ]
    );
    assert!(!s.operations[0]
        .args
        .to_map()
        .contains_key("idempotency_key"));

    let setup = s.mcp.as_ref().unwrap();
    assert_eq!(setup.revision, Revision::V2025_11_25);
    assert_eq!(setup.client.profile, "claude-code-http");
    assert_eq!(setup.client.scale, 0.001);
    assert_eq!(setup.client.real.idle, Some(Duration::from_secs(300)));
    assert_eq!(setup.client.real.first_byte, None);
    assert_eq!(setup.client.real.idle_resets_on, IdleReset::Bytes);
}

#[test]
fn the_contract_tells_the_adapter_where_the_server_is_and_the_scaled_windows() {
    let s = parse_ok(FULL);
    let c = contract_mcp(&s, "http://127.0.0.1:4000").unwrap();
    assert_eq!(c.url, "http://127.0.0.1:4000/mcp");
    assert_eq!(c.revision, "2025-11-25");
    assert_eq!(c.tools.len(), 2);
    assert_eq!(c.tools[1].name, "create_charge");
    assert_eq!(c.tools[1].resource, "charges");
    assert_eq!(c.tools[1].key_argument.as_deref(), Some("idempotency_key"));
    assert_eq!(c.tools[0].key_argument, None);
    let retrieval = c.retrieval.unwrap();
    assert_eq!(retrieval.get, "get_operation");
    assert_eq!(retrieval.list_recent, "list_recent_operations");
    assert_eq!(retrieval.retention_s, 7 * 24 * 3600);
    assert!(c.tasks);
    assert_eq!(c.client.profile, "claude-code-http");
    assert_eq!(c.client.scale, 0.001);
    assert_eq!(c.client.wall_clock_ms, Some(100_000));
    assert_eq!(c.client.idle_ms, Some(300));
    assert_eq!(c.client.first_byte_ms, None);
    assert_eq!(c.client.background_after_ms, Some(120));
    assert_eq!(c.client.idle_resets_on, "bytes");
    assert_eq!(
        contract(&s, "http://127.0.0.1:4000").mcp,
        Some(contract_mcp(&s, "http://127.0.0.1:4000").unwrap())
    );

    // An execute of a tool operation is a `call_tool` with its tool; an HTTP one a `create`.
    let wire = serde_json::to_value(operation(&s.operations[0])).unwrap();
    assert_eq!(
        wire,
        serde_json::json!({
            "id": "op-1", "action": "call_tool", "resource": "charges",
            "tool": "create_charge", "args": {"amount": 1200, "currency": "eur"},
        })
    );
    let wire = serde_json::to_value(operation(&s.operations[2])).unwrap();
    assert_eq!(wire["action"], "create");
    assert!(wire.get("tool").is_none());
}

const BASE: &str = "\
version: 1
id: base
title: A valid MCP base
mcp:
  client: {profile: typescript-sdk, scale: 0.001}
operations:
  - {id: op-1, tool: create_ticket}
  - {id: op-2, tool: create_charge, args: {amount: 5}}
steps:
  - execute: op-1
  - reconcile: op-2
";

/// BASE with `extra` appended (its first line is line 12).
fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

#[test]
fn a_small_section_gets_every_default() {
    let s = parse_ok(BASE);
    let mcp = s.plan.mcp.as_ref().unwrap();
    assert_eq!(*mcp, {
        let mut changed = McpPlan::default();
        changed.faults = Vec::new();
        changed.tasks = {
            let mut changed = TaskSupport::default();
            changed.enabled = false;
            changed
        };
        changed
    });
    let setup = s.mcp.as_ref().unwrap();
    assert_eq!(setup.revision, scenario::DEFAULT_REVISION);
    assert_eq!(setup.client.real.wall_clock, Some(Duration::from_secs(60)));
    assert_eq!(setup.client.scaled().wall_clock, Some(ms(60)));
    // Without `mcp:` there is no MCP face at all.
    let http = scenario::parse(
        "version: 1\nid: h\ntitle: t\noperations: [{id: op-1, resource: tickets}]\nsteps: [{execute: op-1}]\n",
        "h.yaml",
    )
    .unwrap();
    assert!(http.plan.mcp.is_none() && http.mcp.is_none());
    assert_eq!(http.operations[0].tool, None);
}

#[test]
fn scale_applies_to_windows_overrides_and_fault_durations() {
    let text = BASE.replace(
        "  client: {profile: typescript-sdk, scale: 0.001}",
        "  client: {profile: custom, scale: 0.01, wall_clock: 1m, idle: 20s, idle_resets_on: progress}",
    ) + "faults:\n  - {when: {tool: create_ticket}, call: {slow: {work: 2m, stream: keep_alive, every: 5s}}}\n";
    let s = parse_ok(&text);
    let client = &s.mcp.as_ref().unwrap().client;
    assert_eq!(client.real.wall_clock, Some(Duration::from_secs(60)));
    let scaled = client.scaled();
    assert_eq!(scaled.wall_clock, Some(ms(600)));
    assert_eq!(scaled.idle, Some(ms(200)));
    assert_eq!(scaled.first_byte, None);
    assert_eq!(scaled.idle_resets_on, IdleReset::Progress);
    assert_eq!(
        s.plan.mcp.as_ref().unwrap().faults[0].fault,
        McpFault::Slow {
            work: ms(1200),
            stream: Stream::KeepAlive { every: ms(50) }
        }
    );
    // python-mcp's only limit is the read timeout the scenario gives.
    let text = BASE.replace(
        "{profile: typescript-sdk, scale: 0.001}",
        "{profile: python-mcp, scale: 0.001, wall_clock: 90s}",
    );
    let s = parse_ok(&text);
    assert_eq!(
        s.mcp.unwrap().client.scaled(),
        lostreply_harness::scenario::client_profiles::Windows {
            wall_clock: Some(ms(90)),
            ..lostreply_harness::scenario::client_profiles::Windows::NONE
        }
    );
}

#[test]
fn every_fault_key_and_name_is_accepted() {
    for (call, expect) in [
        ("ok", McpFault::Ok),
        ("never", McpFault::Never),
        (
            "drop",
            McpFault::Drop {
                at: CommitPoint::AfterCommit,
            },
        ),
        (
            "reset",
            McpFault::Reset {
                at: CommitPoint::AfterCommit,
            },
        ),
        (
            "stall",
            McpFault::Stall {
                then: StallThen::Abandon,
                until: Release::ClientGone,
                stream: Stream::Nothing,
            },
        ),
        (
            "{stall: {until: {end_of_step: 2}, stream: headers}}",
            McpFault::Stall {
                then: StallThen::Abandon,
                until: Release::StepEnd(2),
                stream: Stream::HeadersThenSilence,
            },
        ),
        (
            "prime_then_close",
            McpFault::PrimeThenClose {
                then: StallThen::Abandon,
            },
        ),
        (
            "{is_error: {status: 409}}",
            McpFault::IsError {
                status: 409,
                at: CommitPoint::AfterCommit,
                message: "error 409".to_owned(),
            },
        ),
        (
            "{rpc_error: {code: -32001}}",
            McpFault::RpcError {
                code: -32001,
                message: "Internal error".to_owned(),
            },
        ),
        (
            "{task: {then: expire}}",
            McpFault::Task {
                then: TaskEnd::Expire,
                after: Duration::from_secs(5),
            },
        ),
        (
            "{task: {then: fail, after: 1h}}",
            McpFault::Task {
                then: TaskEnd::Fail,
                after: Duration::from_secs(3600),
            },
        ),
    ] {
        let text = with(&format!(
            "faults:\n  - when: {{tool: create_ticket}}\n    call: {call}\n"
        ))
        .replace("  client:", "  tasks: {}\n  client:");
        let s = parse_ok(&text);
        assert_eq!(s.plan.mcp.unwrap().faults[0].fault, expect, "{call}");
    }
    let text = BASE.replace(
        "  client:",
        "  defects: [result_without_id, payload_mismatch]\n  client:",
    );
    let defects = parse_ok(&text).plan.mcp.unwrap().defects;
    assert_eq!(
        defects,
        BTreeSet::from([Defect::ResultWithoutId, Defect::PayloadMismatch])
    );
    let text = BASE.replace(
        "  client:",
        "  answer: json\n  revision: 2025-06-18\n  client:",
    );
    let s = parse_ok(&text);
    assert_eq!(s.plan.mcp.as_ref().unwrap().answer, AnswerStyle::Json);
    assert_eq!(s.mcp.as_ref().unwrap().revision, Revision::V2025_06_18);
    // 2025-06-18 has no tasks: the contract says so.
    assert!(!contract_mcp(&s, "http://x").unwrap().tasks);
}

#[test]
fn base_is_valid() {
    parse_ok(BASE);
}

#[test]
fn mcp_pieces_without_an_mcp_section() {
    let http_only = BASE
        .replace(
            "mcp:\n  client: {profile: typescript-sdk, scale: 0.001}\n",
            "",
        )
        .replace(
            "  - {id: op-2, tool: create_charge, args: {amount: 5}}",
            "  - {id: op-2, resource: charges}",
        );
    // Line numbers move up by two without the section.
    one_error(
        &http_only,
        5,
        "create_ticket",
        "operation calls MCP tool `create_ticket`, but the scenario has no `mcp:` section",
    );
    let text = http_only.replace("tool: create_ticket", "resource: tickets")
        + "faults:\n  - {when: {step: 1}, call: never}\n";
    one_error(
        &text,
        11,
        "never",
        "an MCP fault (`call:`) needs an `mcp:` section",
    );
}

#[test]
fn a_rule_is_http_or_mcp() {
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: never, response: drop}\n"),
        13,
        "drop",
        "`response:` (an HTTP request's fate) or `call:`",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: never, at: after_commit}\n"),
        13,
        "after_commit",
        "`at` belongs to HTTP rules",
    );
    one_error(
        &with("faults:\n  - {when: {step: 1}}\n"),
        13,
        "{when",
        "needs `response:` (for HTTP requests) or `call:` (for MCP tool calls)",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, response: drop}\n"),
        13,
        "create_ticket",
        "`tool` matches MCP tool calls",
    );
    one_error(
        &with("faults:\n  - {when: {step: 1}, response: drop, cancel: honour}\n"),
        13,
        "honour",
        "`cancel` belongs to MCP rules",
    );
    one_error(
        &with("faults:\n  - {when: {method: POST}, call: never}\n"),
        13,
        "POST",
        "`method` matches HTTP requests; an MCP rule (`call:`) matches by tool, step, nth and times",
    );
}

#[test]
fn mcp_matchers() {
    one_error(
        &with("faults:\n  - {when: {tool: create_tiket}, call: never}\n"),
        13,
        "create_tiket",
        "no tool `create_tiket` (create_ticket, create_charge, get_operation, list_recent_operations)",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket, nth: 1, times: 2}, call: never}\n"),
        13,
        "2}",
        "nth and times exclude each other",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket, step: 9}, call: never}\n"),
        13,
        "9}",
        "step 9 is not a step of this scenario (steps 1 to 2)",
    );
    one_error(
        &with("faults:\n  - {when: {step: 1}, call: never}\n  - {when: {step: 1, tool: create_ticket}, call: {late: 1s}}\n"),
        14,
        "{when",
        "fault rule 2 can never apply: rule 1 (line 13)",
    );
    // HTTP and MCP rules never shadow each other.
    parse_ok(&with(
        "faults:\n  - {when: {step: 1}, response: drop}\n  - {when: {step: 1}, call: never}\n",
    ));
}

#[test]
fn mcp_faults_that_cannot_mean_anything() {
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: dorp}\n"),
        13,
        "dorp",
        "unknown MCP fault `dorp`",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: late}\n"),
        13,
        "late",
        "`late` needs a value",
    );
    one_error(
        &with("faults:\n  - {when: {step: 1}, call: {stall: {then: commit}}}\n"),
        13,
        "commit",
        "`then: commit` commits an effect, so the rule must match only a paid tool's calls",
    );
    one_error(
        &with("faults:\n  - {when: {tool: get_operation}, call: {task: {then: complete}}}\n")
            .replace("  client:", "  tasks: {}\n  client:"),
        14,
        "{task",
        "a task fault turns a paid call into a background task",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {is_error: {status: 200}}}\n"),
        13,
        "200",
        "status 200 is not an HTTP error status",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {is_error: {status: 504}}, cancel: race}\n"),
        13,
        "race",
        "this fault answers at once",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {slow: {work: 1h}}}\n"),
        13,
        "1h",
        "work 1h scales to 3s 600ms, more than stall_cap (3s)",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {slow: {work: 400ms}}}\n"),
        13,
        "400ms",
        "work 400ms scales to 0 ms at scale 0.001",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {slow: {work: 1m, every: 5s}}}\n"),
        13,
        "5s",
        "`every` goes with stream: keep_alive or progress",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {slow: {work: 1m, stream: progress}}}\n"),
        13,
        "progress",
        "stream progress sends something at an interval: give `every`",
    );
    one_error(
        &with("faults:\n  - {when: {tool: create_ticket}, call: {stall: {until: {end_of_step: 5}}}}\n"),
        13,
        "5}",
        "end_of_step 5 is not a step of this scenario",
    );
    // A hold until the client leaves must outlast the client.
    let text = BASE.replace("scale: 0.001", "scale: 0.1")
        + "faults:\n  - {when: {tool: create_ticket}, call: never}\n";
    one_error(
        &text,
        13,
        "never",
        "stall_cap (3s) is not longer than the client's shortest window (6s scaled)",
    );
    let text = BASE.replace("  client:", "  tasks: {enabled: false}\n  client:")
        + "faults:\n  - {when: {tool: create_ticket}, call: {task: {then: complete}}}\n";
    one_error(&text, 14, "{task", "a task fault needs tasks");
    // The revision the adapter asks for decides whether tasks exist.
    let text = BASE.replace("  client:", "  revision: 2025-06-18\n  client:")
        + "faults:\n  - {when: {tool: create_ticket}, call: {task: {then: complete}}}\n";
    one_error(&text, 14, "{task", "2025-06-18 has no tasks");
}

#[test]
fn tool_operations() {
    one_error(
        &BASE.replace(
            "{id: op-1, tool: create_ticket}",
            "{id: op-1, resource: tickets, tool: create_ticket}",
        ),
        7,
        "create_ticket",
        "`resource:` (an HTTP create) or `tool:` (an MCP tool call), not both",
    );
    one_error(
        &BASE.replace("{id: op-1, tool: create_ticket}", "{id: op-1}"),
        7,
        "{id",
        "an operation needs `resource:` (an HTTP create) or `tool:`",
    );
    one_error(
        &BASE.replace("tool: create_ticket}", "tool: create_tiket}"),
        7,
        "create_tiket",
        "no paid tool `create_tiket` (create_ticket, create_charge)",
    );
    one_error(
        &BASE.replace("tool: create_ticket}", "tool: get_operation}"),
        7,
        "get_operation",
        "`get_operation` is a retrieval tool; an operation calls a paid tool",
    );
    one_error(
        &BASE.replace(
            "args: {amount: 5}",
            "args: {amount: 5, idempotency_key: k1}",
        ),
        8,
        "{amount",
        "`idempotency_key` is create_charge's idempotency key argument: the adapter adds the key",
    );
}

#[test]
fn the_mcp_section() {
    one_error(
        &BASE.replace("profile: typescript-sdk", "profile: cursor"),
        5,
        "cursor",
        "unknown client profile `cursor`: one of claude-code-http, claude-code-stdio, cline, \
         python-mcp, typescript-sdk, typescript-sdk-reset-on-progress, custom",
    );
    for bad in ["0", "1.5", "-0.1", ".nan"] {
        let text = BASE.replace("scale: 0.001", &format!("scale: {bad}"));
        one_error(&text, 5, bad, "scale must be more than 0 and at most 1");
    }
    one_error(
        &BASE.replace("profile: typescript-sdk", "profile: python-mcp"),
        5,
        "python-mcp",
        "profile python-mcp has no default limit: give `wall_clock`",
    );
    one_error(
        &BASE.replace("scale: 0.001}", "scale: 0.001, idle: 100ms}"),
        5,
        "100ms",
        "idle 100ms scales to 0 ms at scale 0.001",
    );
    one_error(
        &BASE.replace("scale: 0.001}", "scale: 0.001, idle: 5}"),
        5,
        "5}",
        "bad duration `5` for idle",
    );
    one_error(
        &BASE.replace("  client:", "  revision: 2025-03-26\n  client:"),
        5,
        "2025-03-26",
        "unknown MCP revision `2025-03-26`: one of 2025-06-18, 2025-11-25",
    );
    one_error(
        &BASE.replace(
            "  client:",
            "  revision: 2025-11-25\n  revisions: [2025-06-18]\n  client:",
        ),
        5,
        "2025-11-25",
        "the adapter is told to ask for revision 2025-11-25, which the server does not accept",
    );
    one_error(
        &BASE.replace("  client:", "  defects: [slow_answers]\n  client:"),
        5,
        "slow_answers",
        "unknown defect `slow_answers`: one of result_without_id",
    );
    one_error(
        &BASE.replace(
            "  client:",
            "  tools: [{name: create_ticket, resource: tickets}, {name: create_ticket, resource: charges}]\n  client:",
        )
        .replace("{id: op-2, tool: create_charge, args: {amount: 5}}", "{id: op-2, tool: create_ticket}"),
        5,
        "create_ticket, resource: charges",
        "tool `create_ticket` is listed twice",
    );
    one_error(
        &BASE.replace(
            "  client:",
            "  tools: [{name: create_ticket, resource: tickets}, {name: get_operation, resource: x}]\n  client:",
        )
        .replace("{id: op-2, tool: create_charge, args: {amount: 5}}", "{id: op-2, tool: create_ticket}"),
        5,
        "get_operation",
        "`get_operation` is a retrieval tool of the server, not a paid tool",
    );
    one_error(
        &BASE.replace("  client:", "  retrieval: {list_limit: 0}\n  client:"),
        5,
        "0}",
        "list_limit must be between 1 and 1000",
    );
    one_error(
        &BASE.replace("  client:", "  answer: xml\n  client:"),
        5,
        "xml",
        "",
    );
    one_error(
        &BASE.replace(
            "  client: {profile: typescript-sdk, scale: 0.001}",
            "  answer: json",
        ),
        5,
        "answer",
        "missing field `client`",
    );
}

#[test]
fn several_mcp_problems_in_one_pass() {
    let text = BASE
        .replace("profile: typescript-sdk", "profile: cursor")
        .replace("scale: 0.001", "scale: 2")
        + "faults:\n  - {when: {tool: nope, nth: 1, times: 1}, call: {is_error: {status: 700}}}\n";
    let found = diagnostics(&text);
    let places: Vec<(u64, &str)> = found
        .iter()
        .map(|d| (d.line, d.message.split(':').next().unwrap()))
        .collect();
    assert_eq!(found.len(), 5, "{places:#?}");
}

#[test]
fn the_report_shows_scaled_and_real_figures() {
    let s = parse_ok(FULL);
    let report =
        lostreply_harness::report_build::mcp_client_report(&s.mcp.as_ref().unwrap().client);
    assert_eq!(report.profile, "claude-code-http");
    assert_eq!(report.scale, 0.001);
    assert_eq!(report.idle.real_ms, Some(300_000));
    assert_eq!(report.idle.scaled_ms, Some(300));
    assert_eq!(report.wall_clock.real_ms, Some(100_000_000));
    assert_eq!(report.wall_clock.scaled_ms, Some(100_000));
    assert_eq!(
        (report.first_byte.real_ms, report.first_byte.scaled_ms),
        (None, None)
    );
    assert_eq!(report.background_after.scaled_ms, Some(120));
    assert_eq!(report.idle_resets_on, "bytes");
}

#[test]
fn the_documented_mcp_example_parses() {
    let doc = include_str!("../../../docs/scenario-format.md");
    let section = &doc[doc.find("### Example (MCP)").unwrap()..];
    let start = section.find("```yaml\n").unwrap() + "```yaml\n".len();
    let example = &section[start..];
    let example = &example[..example.find("```").unwrap()];
    let s = parse_ok(example);
    assert_eq!(s.tags, ["mcp"]);
    let fault = &s.plan.mcp.as_ref().unwrap().faults[0];
    assert_eq!(
        fault.fault,
        McpFault::Slow {
            work: ms(360),
            stream: Stream::HeadersThenSilence
        }
    );
    // 360 ms of silence outlasts the scaled idle window (5 min × 0.001).
    assert_eq!(s.mcp.unwrap().client.scaled().idle, Some(ms(300)));
}

/// The library's MCP rules set up situations too: a rule that counts is
/// scoped to a step (ARCHITECTURE.md), and every MCP scenario is tagged `mcp`.
#[test]
fn built_in_mcp_scenarios_are_tagged_and_scoped() {
    for scenario in lostreply_harness::builtin::scenarios().unwrap() {
        let Some(mcp) = &scenario.plan.mcp else {
            continue;
        };
        assert!(
            scenario.tags.iter().any(|t| t == "mcp"),
            "{} has an mcp: section but no mcp tag",
            scenario.id
        );
        for (i, rule) in mcp.faults.iter().enumerate() {
            let counts = rule.when.nth.is_some() || rule.when.times.is_some();
            assert!(
                !counts || rule.when.steps.is_some(),
                "{}: MCP rule {} counts calls across the whole run",
                scenario.id,
                i + 1
            );
        }
    }
}

//! Report fixtures shaped like real runs: the records a naive or correct adapter
//! leaves behind in the lost-response cases. Every time, id, seed and version is
//! fixed, so that snapshots are stable without redaction.

use lostreply_reports::model::*;
use serde_json::{json, Value};

/// 2026-01-01T00:00:00Z: the simulator clock at the start of every fixture scenario.
pub const SIM_START_MS: i64 = 1_767_225_600_000;
/// One hour of simulator time.
pub const HOUR_MS: i64 = 3_600_000;
/// A string that would run script if any writer forgot to escape it.
pub const HOSTILE: &str = "</script><img src=x onerror=alert(1)>";

pub const REFERENCE: &str = "builtin:reference";
pub const NAIVE: &str = "python3 examples/python/naive_adapter.py";
pub const BROKEN: &str = "python3 examples/python/broken_adapter.py";

fn report(adapter: &str, kind: AdapterKind, scenarios: Vec<ScenarioReport>) -> Report {
    Report::builder()
        .schema_version(SCHEMA_VERSION)
        .tool_version("0.0.0-test".into())
        .adapter(
            AdapterInfo::builder()
                .name(adapter.into())
                .kind(kind)
                .build(),
        )
        .seed(42)
        .duration_ms(scenarios.iter().map(|s| s.duration_ms).sum())
        .scenarios(scenarios)
        .build()
}

/// A scenario with its identity filled in and every record empty.
fn scenario(adapter: &str, id: &str, title: &str, case: Option<u8>, seed: u64) -> ScenarioReport {
    let path = match case {
        Some(n) => format!("scenarios/case{n:02}-{id}.yaml"),
        None => format!("scenarios/{id}.yaml"),
    };
    ScenarioReport::builder()
        .id(id.into())
        .title(title.into())
        .reproduce(format!(
            "lostreply run --adapter '{adapter}' --scenario {path} --seed {seed}"
        ))
        .path(path)
        .maybe_case(case)
        .tags(
            case.map(|_| vec!["lost-response".to_string()])
                .unwrap_or_default(),
        )
        .verdict(Verdict::Passed)
        .seed(seed)
        .duration_ms(0)
        .sim_start_ms(SIM_START_MS)
        .operations(Vec::new())
        .steps(Vec::new())
        .calls(Vec::new())
        .journal(Vec::new())
        .ledger(Vec::new())
        .deliveries(Vec::new())
        .violations(Vec::new())
        .findings(Vec::new())
        .errors(Vec::new())
        .signals(Default::default())
        .build()
}

fn ticket_args(amount: u64) -> Value {
    json!({"title": "Purchase review", "amount": amount})
}

fn operation(id: &str, args: Value, effects: &[&str], last: Option<Outcome>) -> OperationReport {
    OperationReport::builder()
        .operation(OperationSpec::new(OperationFields {
            id: id.into(),
            resource: "tickets".into(),
            tool: None,
            args: args.into(),
        }))
        .effects(effects.iter().map(|e| SharedStr::from(*e)).collect())
        .maybe_final_outcome(last)
        .build()
}

fn outcome(
    kind: OutcomeKind,
    provider_ref: Option<&str>,
    needs_review: bool,
    evidence: &str,
) -> Outcome {
    Outcome::builder()
        .outcome(kind)
        .maybe_provider_ref(provider_ref.map(SharedStr::from))
        .needs_review(needs_review)
        .evidence(evidence.into())
        .build()
}

fn outcome_reply(op: &str, o: &Outcome) -> Value {
    json!({
        "operation_id": op,
        "outcome": o.outcome.as_str(),
        "provider_ref": o.provider_ref,
        "needs_review": o.needs_review,
        "evidence": o.evidence,
    })
}

fn step(
    number: u32,
    label: &str,
    start_ms: u32,
    end_ms: u32,
    sim_ms: i64,
    sim_moved_ms: i64,
) -> StepReport {
    StepReport::builder()
        .number(number)
        .label(label.into())
        .start_ms(start_ms)
        .end_ms(end_ms)
        .sim_start_ms(SIM_START_MS + sim_ms)
        .sim_end_ms(SIM_START_MS + sim_ms + sim_moved_ms)
        .build()
}

/// An adapter call that replied with an outcome.
#[allow(clippy::too_many_arguments)]
fn outcome_call(
    index: u32,
    step: u32,
    call: &str,
    op: &str,
    o: &Outcome,
    start_ms: u32,
    end_ms: u32,
    sim_ms: i64,
) -> CallRecord {
    CallRecord::builder()
        .index(index)
        .step(step)
        .call(call.parse().expect("a call's name"))
        .operation_id(op.into())
        .request(call_request(call, op, sim_ms).into())
        .reply(outcome_reply(op, o).into())
        .end(CallEnd::Replied)
        .stderr(SharedStr::default())
        .start_ms(start_ms)
        .end_ms(end_ms)
        .build()
}

fn call_request(call: &str, op: &str, sim_ms: i64) -> Value {
    let now = if sim_ms == 0 {
        "2026-01-01T00:00:00Z"
    } else {
        "2026-01-01T01:00:00Z"
    };
    let mut request = json!({
        "protocol": 1,
        "now": now,
        "provider": {"base_url": "http://127.0.0.1:41817", "credential": "sk_test_a"},
        "client_timeout_ms": 1000,
    });
    if call == "execute" {
        request["operation"] =
            json!({"id": op, "action": "create", "resource": "tickets", "args": ticket_args(1200)});
    } else {
        request["operation_id"] = json!(op);
    }
    request
}

struct Req<'a> {
    seq: u64,
    start_ms: u64,
    end_ms: Option<u64>,
    method: &'a str,
    target: &'a str,
    key: Option<&'a str>,
    fault: Option<&'a str>,
    effect: Option<&'a str>,
    replayed: bool,
    fate: &'a str,
    lost: bool,
}

impl Req<'_> {
    fn record(self, sim_ms: i64) -> RequestRecord {
        let kind = match (
            self.method,
            self.target.contains('?'),
            self.target.matches('/').count(),
        ) {
            ("POST", _, _) => RequestKind::Create,
            ("GET", true, _) => RequestKind::Search,
            ("GET", false, 3) => RequestKind::Retrieve,
            _ => RequestKind::List,
        };
        RequestRecord::builder()
            .seq(self.seq)
            .sim_ms(SIM_START_MS + sim_ms)
            .start_ms(self.start_ms)
            .maybe_end_ms(self.end_ms)
            .tenant("sk_test_a".into())
            .method(self.method.into())
            .target(self.target.into())
            .kind(kind)
            .maybe_idempotency_key(self.key.map(SharedStr::from))
            .maybe_fault(self.fault.map(|f| Box::new(f.into())))
            .maybe_effect(self.effect.map(SharedStr::from))
            .replayed(self.replayed)
            .fate(self.fate.into())
            .lost(self.lost)
            .build()
    }
}

/// A create request that was answered normally (201 with an effect, else 400).
fn post<'a>(
    seq: u64,
    start_ms: u64,
    end_ms: u64,
    key: Option<&'a str>,
    effect: Option<&'a str>,
) -> Req<'a> {
    Req {
        seq,
        start_ms,
        end_ms: Some(end_ms),
        method: "POST",
        target: "/v1/tickets",
        key,
        fault: None,
        effect,
        replayed: false,
        fate: if effect.is_some() {
            "sent 201"
        } else {
            "sent 400"
        },
        lost: false,
    }
}

fn effect(
    id: &str,
    args: Value,
    key: Option<&str>,
    request_seq: Option<u64>,
    op: Option<&str>,
) -> EffectRecord {
    EffectRecord::builder()
        .id(id.into())
        .tenant("sk_test_a".into())
        .resource("tickets".into())
        .args(args.into())
        .maybe_idempotency_key(key.map(SharedStr::from))
        .sim_ms(SIM_START_MS)
        .status(ObjectStatus::Succeeded)
        .maybe_request_seq(request_seq)
        .maybe_operation_id(op.map(SharedStr::from))
        .build()
}

fn violation(check: Check, op: &str, message: &str, evidence: Vec<Evidence>) -> Violation {
    Violation::builder()
        .check(check)
        .operation_id(op.into())
        .message(message.into())
        .evidence(evidence)
        .build()
}

fn req(seq: u64) -> Evidence {
    Evidence::Request { seq }
}
fn call(index: usize) -> Evidence {
    Evidence::Call { index }
}
fn eff(id: &str) -> Evidence {
    Evidence::Effect { id: id.into() }
}

// ---------------------------------------------------------------- passing run

/// The reference adapter through case 2, case 8 and the no-evidence escalation:
/// everything holds, one operation is left for a person (the backlog).
pub fn passing_run() -> Report {
    report(
        REFERENCE,
        AdapterKind::InProcess,
        vec![
            reference_lost_after_commit(),
            reference_crash_after_commit(),
            reference_no_keys_no_lookup(),
        ],
    )
}

fn reference_lost_after_commit() -> ScenarioReport {
    let mut s = scenario(
        REFERENCE,
        "lost-after-commit",
        "The provider commits, then the response is lost",
        Some(2),
        0x5eed_0002,
    );
    let unknown = outcome(
        OutcomeKind::Unknown,
        None,
        false,
        "POST /v1/tickets timed out after 1000 ms; outcome unknown, will reconcile",
    );
    let succeeded = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0001"),
        false,
        "found tkt_0001 by client_reference op-1",
    );
    s.duration_ms = 1_215;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(succeeded.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1", 2, 1_130, 0, 0),
        step(2, "advance 1h", 1_130, 1_131, 0, HOUR_MS),
        step(3, "reconcile op-1", 1_131, 1_190, HOUR_MS, 0),
    ];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &unknown, 3, 1_128, 0),
        outcome_call(1, 3, "reconcile", "op-1", &succeeded, 1_132, 1_188, HOUR_MS),
        outcome_call(2, 0, "status", "op-1", &succeeded, 1_192, 1_210, HOUR_MS),
    ];
    s.journal = vec![
        Req {
            fault: Some("after_commit drop (rule 1)"),
            fate: "dropped",
            lost: true,
            ..post(1, 40, 52, Some("op-1"), Some("tkt_0001"))
        }
        .record(0),
        Req {
            seq: 2,
            start_ms: 1_160,
            end_ms: Some(1_171),
            method: "GET",
            target: "/v1/tickets?client_reference=op-1",
            key: None,
            fault: None,
            effect: None,
            replayed: false,
            fate: "sent 200",
            lost: false,
        }
        .record(HOUR_MS),
    ];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s.signals = lost_after_commit_signals();
    // Not what this run shows (no resolve call): a finding's place in every
    // writer, with evidence pointing at a call and an effect.
    s.findings = vec![Finding::builder()
        .kind(FindingKind::ResolutionContradictsLedger)
        .operation_id("op-1".into())
        .message(
            "the operator resolved failed (no provider_ref), but the provider holds tkt_0001"
                .into(),
        )
        .evidence(vec![
            Evidence::Call { index: 1 },
            Evidence::Effect {
                id: "tkt_0001".into(),
            },
        ])
        .build()];
    s
}

/// The signals of [`reference_lost_after_commit`]: one unknown reply, then
/// the lookup an hour later that confirmed it.
fn lost_after_commit_signals() -> Signals {
    {
        let mut changed = Signals::default();
        changed.unknown_replies = vec![UnknownReplies::builder()
            .tool("tickets".into())
            .action(Action::Execute)
            .provider("generic".into())
            .count(1)
            .build()];
        changed.ambiguities = vec![Ambiguity::builder()
            .operation_id("op-1".into())
            .since_sim_ms(SIM_START_MS)
            .confirmed(
                Confirmation::builder()
                    .call_index(1)
                    .outcome(OutcomeKind::Succeeded)
                    .after_ms(HOUR_MS as u64)
                    .by(ConfirmedBy::Lookup)
                    .build(),
            )
            .build()];
        changed.reconcile_attempts = 1;
        changed.most_reconciled = Some(
            OperationCount::builder()
                .operation_id("op-1".into())
                .count(1)
                .build(),
        );
        changed
    }
}

fn reference_crash_after_commit() -> ScenarioReport {
    let mut s = scenario(
        REFERENCE,
        "crash-after-commit",
        "The worker dies after the provider committed, before it recorded the result",
        Some(8),
        0x5eed_0008,
    );
    let succeeded = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0001"),
        false,
        "intent op-1 was durable; found tkt_0001 by client_reference op-1",
    );
    s.duration_ms = 310;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(succeeded.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1 (crash after_commit)", 1, 95, 0, 0),
        step(2, "reconcile op-1", 95, 240, 0, 0),
    ];
    s.calls = vec![
        {
            let mut changed = outcome_call(0, 1, "execute", "op-1", &succeeded, 2, 93, 0);
            changed.reply = None;
            changed.end = CallEnd::Crashed;
            changed
        },
        outcome_call(1, 2, "reconcile", "op-1", &succeeded, 96, 238, 0),
        outcome_call(2, 0, "status", "op-1", &succeeded, 242, 300, 0),
    ];
    s.journal = vec![
        Req {
            fate: "client closed the connection",
            lost: true,
            ..post(1, 61, 93, Some("op-1"), Some("tkt_0001"))
        }
        .record(0),
        Req {
            seq: 2,
            start_ms: 180,
            end_ms: Some(188),
            method: "GET",
            target: "/v1/tickets?client_reference=op-1",
            key: None,
            fault: None,
            effect: None,
            replayed: false,
            fate: "sent 200",
            lost: false,
        }
        .record(0),
    ];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s
}

fn reference_no_keys_no_lookup() -> ScenarioReport {
    let mut s = scenario(
        REFERENCE,
        "no-keys-no-lookup",
        "No idempotency keys and no lookup: escalate, do not guess",
        None,
        0x5eed_0101,
    );
    let review = outcome(
        OutcomeKind::Unknown,
        None,
        true,
        "POST /v1/tickets timed out after 1000 ms; the contract offers no key and no lookup, so a retry could duplicate",
    );
    s.tags = vec!["escalation".into()];
    s.duration_ms = 1_090;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(review.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1", 1, 1_040, 0, 0),
        step(2, "reconcile op-1", 1_040, 1_055, 0, 0),
    ];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &review, 2, 1_038, 0),
        outcome_call(1, 2, "reconcile", "op-1", &review, 1_041, 1_053, 0),
        outcome_call(2, 0, "status", "op-1", &review, 1_057, 1_080, 0),
    ];
    s.journal = vec![Req {
        fault: Some("after_commit stall (rule 1)"),
        fate: "stalled until the client left",
        lost: true,
        end_ms: Some(1_036),
        ..post(1, 35, 1_036, None, Some("tkt_0001"))
    }
    .record(0)];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        None,
        Some(1),
        Some("op-1"),
    )];
    s
}

// ------------------------------------------------------------- violations run

/// A naive process adapter caught by each invariant and by an expectation.
pub fn violations_run() -> Report {
    report(
        NAIVE,
        AdapterKind::Process,
        vec![
            naive_lost_after_commit(),
            naive_reused_key_mismatch(),
            naive_timeout_called_failure(),
            naive_webhook_regresses(),
            naive_retry_changes_args(),
            naive_status_reads_provider(),
            naive_accepts_forged_webhook(),
            naive_never_finishes(),
            naive_mcp_called_again(),
        ],
    )
}

/// An MCP scenario: the tool call outlives the client's idle window (scaled
/// from Claude Code's 5 minutes), the naive adapter calls again, two effects
/// (invariant 1). The report shows the client windows, scaled and real.
fn naive_mcp_called_again() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "mcp-idle-abort-called-again",
        "A paid tool call outlives the client's idle window; calling again pays twice",
        None,
        0x5eed_0101,
    );
    s.tags = vec!["mcp".to_owned()];
    s.mcp_client = Some(
        McpClientReport::builder()
            .profile("claude-code-http".into())
            .scale(0.001)
            .idle_resets_on("bytes".into())
            .wall_clock(
                WindowFigures::builder()
                    .real_ms(100_000_000)
                    .scaled_ms(100_000)
                    .build(),
            )
            .idle(
                WindowFigures::builder()
                    .real_ms(300_000)
                    .scaled_ms(300)
                    .build(),
            )
            .first_byte(WindowFigures::builder().build())
            .background_after(
                WindowFigures::builder()
                    .real_ms(120_000)
                    .scaled_ms(120)
                    .build(),
            )
            .build(),
    );
    let done = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0002"),
        false,
        "call_tool create_ticket",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 900;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001", "tkt_0002"],
        Some(done.clone()),
    )];
    s.steps = vec![step(1, "execute op-1", 1, 800, 0, 0)];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &done, 2, 790, 0),
        outcome_call(1, 0, "status", "op-1", &done, 802, 850, 0),
    ];
    s.journal = vec![
        Req {
            target: "/mcp",
            fault: Some("slow 360ms, stream nothing (mcp rule 1)"),
            fate: "held until the client left",
            lost: true,
            ..post(1, 10, 380, None, Some("tkt_0001"))
        }
        .record(0),
        Req {
            target: "/mcp",
            fate: "sent 200",
            ..post(2, 320, 330, None, Some("tkt_0002"))
        }
        .record(0),
    ];
    s.ledger = vec![
        effect("tkt_0001", ticket_args(1200), None, Some(1), Some("op-1")),
        effect("tkt_0002", ticket_args(1200), None, Some(2), Some("op-1")),
    ];
    s.violations = vec![violation(
        Check::Invariant(Invariant::AtMostOnce),
        "op-1",
        "op-1 has 2 effects (tkt_0001, tkt_0002)",
        vec![call(0), req(1), req(2), eff("tkt_0001"), eff("tkt_0002")],
    )];
    s
}

/// Case 2: the POST is dropped after commit, the adapter retries with a new key
/// and two effects exist (invariants 1 and 5).
pub fn naive_lost_after_commit() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "lost-after-commit",
        "The provider commits, then the response is lost",
        Some(2),
        0x5eed_0002,
    );
    let succeeded = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0002"),
        false,
        "retried after a timeout; created tkt_0002",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 1_310;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001", "tkt_0002"],
        Some(succeeded.clone()),
    )];
    s.steps = vec![step(1, "execute op-1", 2, 1_240, 0, 0)];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &succeeded, 4, 1_236, 0),
        outcome_call(1, 0, "status", "op-1", &succeeded, 1_242, 1_290, 0),
    ];
    s.journal = vec![
        Req {
            fault: Some("after_commit drop (rule 1)"),
            fate: "dropped",
            lost: true,
            ..post(
                1,
                48,
                61,
                Some("3f9c1e2a-7d44-4c1b-9a0e-5b8f2d6c1a07"),
                Some("tkt_0001"),
            )
        }
        .record(0),
        post(
            2,
            1_151,
            1_163,
            Some("8b21d07f-02c6-4e9d-b3a5-61f0c7e4d298"),
            Some("tkt_0002"),
        )
        .record(0),
    ];
    s.ledger = vec![
        effect(
            "tkt_0001",
            ticket_args(1200),
            Some("3f9c1e2a-7d44-4c1b-9a0e-5b8f2d6c1a07"),
            Some(1),
            Some("op-1"),
        ),
        effect(
            "tkt_0002",
            ticket_args(1200),
            Some("8b21d07f-02c6-4e9d-b3a5-61f0c7e4d298"),
            Some(2),
            Some("op-1"),
        ),
    ];
    s.violations = vec![
        violation(
            Check::Invariant(Invariant::AtMostOnce),
            "op-1",
            "2 effects are attributed to op-1 (tkt_0001, tkt_0002); at most 1 is allowed",
            vec![req(1), req(2), eff("tkt_0001"), eff("tkt_0002")],
        ),
        violation(
            Check::Invariant(Invariant::SameKeySameArgs),
            "op-1",
            "create attempts #1 and #2 of op-1 carried different idempotency keys",
            vec![req(1), req(2), call(0)],
        ),
    ];
    s
}

/// Case 5: keys derived from the action; the mismatch error taken for success
/// with another operation's object (invariant 2).
fn naive_reused_key_mismatch() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "reused-key-mismatch",
        "One key accidentally reused with different arguments",
        Some(5),
        0x5eed_0005,
    );
    let op1 = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0001"),
        false,
        "created tkt_0001",
    );
    let op2 = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0001"),
        false,
        "provider already has key create-tickets: tkt_0001",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 240;
    s.operations = vec![
        operation("op-1", ticket_args(1200), &["tkt_0001"], Some(op1.clone())),
        operation("op-2", ticket_args(90), &[], Some(op2.clone())),
    ];
    s.steps = vec![
        step(1, "execute op-1", 1, 60, 0, 0),
        step(2, "execute op-2", 60, 130, 0, 0),
    ];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &op1, 2, 58, 0),
        outcome_call(1, 2, "execute", "op-2", &op2, 61, 128, 0),
        outcome_call(2, 0, "status", "op-1", &op1, 132, 170, 0),
        outcome_call(3, 0, "status", "op-2", &op2, 172, 215, 0),
    ];
    s.journal = vec![
        post(1, 30, 41, Some("create-tickets"), Some("tkt_0001")).record(0),
        Req {
            fate: "sent 400 (idempotency key reused with different arguments)",
            ..post(2, 95, 104, Some("create-tickets"), None)
        }
        .record(0),
    ];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("create-tickets"),
        Some(1),
        Some("op-1"),
    )];
    s.violations = vec![violation(
        Check::Invariant(Invariant::NoSuccessWithoutEffect),
        "op-2",
        "op-2 reported succeeded with provider_ref tkt_0001, which is attributed to op-1, not op-2",
        vec![call(1), req(2), eff("tkt_0001")],
    )];
    s
}

/// Case 2 again: the connection is reset after commit and the adapter calls the
/// timeout a failure (invariant 3).
fn naive_timeout_called_failure() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "reset-after-commit",
        "The provider commits, then resets the connection",
        Some(2),
        0x5eed_0012,
    );
    let failed = outcome(
        OutcomeKind::Failed,
        None,
        false,
        "POST /v1/tickets: connection reset by peer",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 150;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(failed.clone()),
    )];
    s.steps = vec![step(1, "execute op-1", 1, 80, 0, 0)];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &failed, 2, 78, 0),
        outcome_call(1, 0, "status", "op-1", &failed, 82, 130, 0),
    ];
    s.journal = vec![Req {
        fault: Some("after_commit reset (rule 1)"),
        fate: "reset",
        lost: true,
        ..post(1, 33, 45, Some("op-1"), Some("tkt_0001"))
    }
    .record(0)];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s.violations = vec![violation(
        Check::Invariant(Invariant::NoFailureWithEffect),
        "op-1",
        "op-1 reported failed while its effect tkt_0001 exists",
        vec![call(0), req(1), eff("tkt_0001")],
    )];
    s
}

/// Case 6: a late `updated` event moves a succeeded operation back to pending
/// (invariant 4).
fn naive_webhook_regresses() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "webhook-around-poll",
        "Webhooks before and after the reconciliation poll",
        Some(6),
        0x5eed_0006,
    );
    let succeeded = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0001"),
        false,
        "created tkt_0001",
    );
    let pending = outcome(
        OutcomeKind::Pending,
        Some("tkt_0001"),
        false,
        "event evt_0002 says tkt_0001 is processing",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 330;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(pending.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1", 1, 70, 0, 0),
        step(2, "webhook op-1 created", 70, 140, 0, 0),
        step(3, "webhook op-1 updated (delayed)", 140, 210, 0, 0),
    ];
    let webhook = |index: u32, step_no: u32, start: u32, end: u32| {
        CallRecord::builder().index(index).step(step_no).call(CallName::Webhook).operation_id("op-1".into()).request(json!({"protocol": 1, "headers": {"lostreply-signature": "t=1767225600,v1=5d41402abc4b2a76"}, "body": "{\"id\":\"evt\"}"}).into()).reply(json!({"accepted": true, "operation_id": "op-1"}).into()).end(CallEnd::Replied).stderr(SharedStr::default()).start_ms(start).end_ms(end).build()
    };
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &succeeded, 2, 68, 0),
        webhook(1, 2, 71, 138),
        webhook(2, 3, 141, 208),
        outcome_call(3, 0, "status", "op-1", &pending, 212, 300, 0),
    ];
    s.journal = vec![post(1, 31, 40, Some("op-1"), Some("tkt_0001")).record(0)];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s.deliveries = vec![
        DeliveryRecord::builder()
            .step(2)
            .event_id("evt_0001".into())
            .event_type("tickets.created".into())
            .forged(false)
            .attempt(1)
            .call_index(1)
            .build(),
        DeliveryRecord::builder()
            .step(3)
            .event_id("evt_0002".into())
            .event_type("tickets.updated".into())
            .forged(false)
            .attempt(1)
            .call_index(2)
            .build(),
    ];
    s.violations = vec![violation(
        Check::Invariant(Invariant::TerminalIsFinal),
        "op-1",
        "op-1 was reported succeeded (call 0) and later pending (call 3)",
        vec![call(0), Evidence::Delivery { call_index: 2 }, call(3)],
    )];
    s
}

/// Case 4: the retry after a drop sends different arguments under the same key
/// (invariant 5).
fn naive_retry_changes_args() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "replay-same-key",
        "The same key replayed with identical arguments",
        Some(4),
        0x5eed_0004,
    );
    let unknown = outcome(
        OutcomeKind::Unknown,
        None,
        false,
        "retry rejected: Keys for idempotent requests can only be used with the same parameters",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 1_260;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(unknown.clone()),
    )];
    s.steps = vec![step(1, "execute op-1", 1, 1_190, 0, 0)];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &unknown, 2, 1_188, 0),
        outcome_call(1, 0, "status", "op-1", &unknown, 1_192, 1_240, 0),
    ];
    s.journal = vec![
        Req {
            fault: Some("after_commit drop (rule 1)"),
            fate: "dropped",
            lost: true,
            ..post(1, 36, 47, Some("op-1"), Some("tkt_0001"))
        }
        .record(0),
        Req {
            fate: "sent 400 (idempotency key reused with different arguments)",
            ..post(2, 1_140, 1_150, Some("op-1"), None)
        }
        .record(0),
    ];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s.violations = vec![violation(
        Check::Invariant(Invariant::SameKeySameArgs),
        "op-1",
        "create attempts #1 and #2 of op-1 carried different arguments (amount 1200, then 1250)",
        vec![req(1), req(2), call(0)],
    )];
    s
}

/// `status` asks the provider instead of the store (invariant 6).
fn naive_status_reads_provider() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "status-is-read-only",
        "status answers from the store and sends nothing",
        None,
        0x5eed_0106,
    );
    let succeeded = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_0001"),
        false,
        "GET tkt_0001: succeeded",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 160;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &["tkt_0001"],
        Some(succeeded.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1", 1, 60, 0, 0),
        step(2, "status op-1", 60, 120, 0, 0),
    ];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &succeeded, 2, 58, 0),
        outcome_call(1, 2, "status", "op-1", &succeeded, 61, 118, 0),
        outcome_call(2, 0, "status", "op-1", &succeeded, 121, 150, 0),
    ];
    s.journal = vec![
        post(1, 30, 39, Some("op-1"), Some("tkt_0001")).record(0),
        Req {
            seq: 2,
            start_ms: 90,
            end_ms: Some(96),
            method: "GET",
            target: "/v1/tickets/tkt_0001",
            key: None,
            fault: None,
            effect: None,
            replayed: false,
            fate: "sent 200",
            lost: false,
        }
        .record(0),
    ];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s.violations = vec![violation(
        Check::Invariant(Invariant::StatusIsReadOnly),
        "op-1",
        "status for op-1 (call 1) sent GET /v1/tickets/tkt_0001 to the provider",
        vec![call(1), req(2)],
    )];
    s
}

/// Case 6: a webhook with a bad signature is accepted and changes the operation
/// (invariant 7).
fn naive_accepts_forged_webhook() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "forged-webhook",
        "A forged event must change nothing",
        Some(6),
        0x5eed_0016,
    );
    let unknown = outcome(
        OutcomeKind::Unknown,
        None,
        false,
        "POST /v1/tickets timed out after 1000 ms",
    );
    let succeeded = outcome(
        OutcomeKind::Succeeded,
        Some("tkt_f0rg3d"),
        false,
        "event evt_forged_01: tickets.created",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 1_200;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &[],
        Some(succeeded.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1", 1, 1_060, 0, 0),
        step(2, "webhook op-1 created (forged)", 1_060, 1_120, 0, 0),
    ];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &unknown, 2, 1_058, 0),
        CallRecord::builder().index(1).step(2).call(CallName::Webhook).operation_id("op-1".into()).request(json!({"protocol": 1, "headers": {"lostreply-signature": "t=1767225600,v1=0000000000000000"}, "body": "{\"id\":\"evt_forged_01\"}"}).into()).reply(json!({"accepted": true, "operation_id": "op-1"}).into()).end(CallEnd::Replied).stderr(SharedStr::default()).start_ms(1_061).end_ms(1_118).build(),
        outcome_call(2, 0, "status", "op-1", &succeeded, 1_121, 1_180, 0),
    ];
    s.journal = vec![Req {
        fault: Some("before_read drop (rule 1)"),
        fate: "dropped before reading",
        lost: true,
        ..post(1, 31, 36, Some("op-1"), None)
    }
    .record(0)];
    s.deliveries = vec![DeliveryRecord::builder()
        .step(2)
        .event_id("evt_forged_01".into())
        .event_type("tickets.created".into())
        .forged(true)
        .attempt(1)
        .call_index(1)
        .build()];
    s.violations = vec![violation(
        Check::Invariant(Invariant::ForgedWebhookInert),
        "op-1",
        "a forged tickets.created event (bad signature) was accepted and moved op-1 from unknown to succeeded",
        vec![Evidence::Delivery { call_index: 1 }, call(0), call(2)],
    )];
    s
}

/// Case 1: the request never reached the provider and the adapter never
/// finishes the operation (an `expect.final` failure).
fn naive_never_finishes() -> ScenarioReport {
    let mut s = scenario(
        NAIVE,
        "timeout-before-receipt",
        "The request times out before the provider reads it",
        Some(1),
        0x5eed_0001,
    );
    let pending = outcome(
        OutcomeKind::Pending,
        None,
        false,
        "request sent; waiting for the provider",
    );
    s.verdict = Verdict::Violated;
    s.duration_ms = 1_150;
    s.operations = vec![operation(
        "op-1",
        ticket_args(1200),
        &[],
        Some(pending.clone()),
    )];
    s.steps = vec![
        step(1, "execute op-1", 1, 1_045, 0, 0),
        step(2, "advance 25h", 1_045, 1_046, 0, 25 * HOUR_MS),
        step(3, "reconcile op-1", 1_046, 1_090, 25 * HOUR_MS, 0),
    ];
    s.calls = vec![
        outcome_call(0, 1, "execute", "op-1", &pending, 2, 1_043, 0),
        outcome_call(1, 3, "reconcile", "op-1", &pending, 1_047, 1_088, HOUR_MS),
        outcome_call(2, 0, "status", "op-1", &pending, 1_091, 1_130, HOUR_MS),
    ];
    s.journal = vec![Req {
        fault: Some("before_read stall (rule 1)"),
        fate: "stalled until the client left",
        lost: true,
        ..post(1, 30, 1_041, Some("op-1"), None)
    }
    .record(0)];
    s.violations = vec![violation(
        Check::Expectation {
            key: "final".into(),
        },
        "op-1",
        "the final outcome of op-1 was pending; the scenario allows failed or unknown",
        vec![call(2), req(1)],
    )];
    s
}

// ------------------------------------------------------------------ error run

/// A broken process adapter: bad JSON with a traceback on stderr, a call past
/// its deadline, and an infrastructure failure.
pub fn adapter_error_run() -> Report {
    report(
        BROKEN,
        AdapterKind::Process,
        vec![broken_bad_json(), broken_deadline(), infra_failure()],
    )
}

fn broken_bad_json() -> ScenarioReport {
    let mut s = scenario(
        BROKEN,
        "lost-after-commit",
        "The provider commits, then the response is lost",
        Some(2),
        0x5eed_0002,
    );
    s.verdict = Verdict::AdapterError;
    s.duration_ms = 1_180;
    s.operations = vec![operation("op-1", ticket_args(1200), &["tkt_0001"], None)];
    s.steps = vec![step(1, "execute op-1", 2, 1_150, 0, 0)];
    s.calls = vec![{
        let mut changed = outcome_call(
            0,
            1,
            "execute",
            "op-1",
            &outcome(OutcomeKind::Unknown, None, false, ""),
            3,
            1_148,
            0,
        );
        changed.reply = None;
        changed.end = CallEnd::BadReply {
            message: "expected value at line 1 column 1".into(),
        };
        changed.stderr = [
            "INFO creating ticket for op-1",
            "Traceback (most recent call last):",
            "  File \"examples/python/broken_adapter.py\", line 88, in execute",
            "    resp = session.post(url, json=args, timeout=1.0)",
            "  File \"/usr/lib/python3/dist-packages/requests/sessions.py\", line 637, in post",
            "    return self.request(\"POST\", url, data=data, json=json, **kwargs)",
            "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port=41817): Read timed out. (read timeout=1.0)",
            "",
        ]
        .join("\n").into();
        changed
    }];
    s.journal = vec![Req {
        fault: Some("after_commit drop (rule 1)"),
        fate: "dropped",
        lost: true,
        ..post(1, 44, 57, Some("op-1"), Some("tkt_0001"))
    }
    .record(0)];
    s.ledger = vec![effect(
        "tkt_0001",
        ticket_args(1200),
        Some("op-1"),
        Some(1),
        Some("op-1"),
    )];
    s.errors = vec![ErrorRecord::builder().step(1).call_index(0).message("execute op-1: stdout was not the JSON object the protocol asks for (expected value at line 1 column 1)".into()).build()];
    s
}

fn broken_deadline() -> ScenarioReport {
    let mut s = scenario(
        BROKEN,
        "still-processing",
        "The provider is still processing when reconciliation starts",
        Some(3),
        0x5eed_0003,
    );
    let pending = outcome(
        OutcomeKind::Pending,
        Some("tkt_0001"),
        false,
        "tkt_0001 is processing",
    );
    s.verdict = Verdict::AdapterError;
    s.duration_ms = 30_140;
    s.operations = vec![operation("op-1", ticket_args(1200), &["tkt_0001"], None)];
    s.steps = vec![
        step(1, "execute op-1", 1, 70, 0, 0),
        step(2, "reconcile op-1", 70, 30_075, 0, 0),
    ];
    s.calls = vec![outcome_call(0, 1, "execute", "op-1", &pending, 2, 68, 0), {
        let mut changed = outcome_call(1, 2, "reconcile", "op-1", &pending, 72, 30_072, 0);
        changed.reply = None;
        changed.end = CallEnd::Deadline {
            deadline_ms: 30_000,
        };
        changed.stderr =
            "polling tkt_0001 until it settles\npolling tkt_0001 until it settles\n".into();
        changed
    }];
    s.journal = vec![
        Req {
            fate: "sent 202",
            ..post(1, 30, 40, Some("op-1"), Some("tkt_0001"))
        }
        .record(0),
        Req {
            seq: 2,
            start_ms: 110,
            end_ms: Some(118),
            method: "GET",
            target: "/v1/tickets/tkt_0001",
            key: None,
            fault: None,
            effect: None,
            replayed: false,
            fate: "sent 200",
            lost: false,
        }
        .record(0),
    ];
    s.ledger = vec![{
        let mut changed = effect(
            "tkt_0001",
            ticket_args(1200),
            Some("op-1"),
            Some(1),
            Some("op-1"),
        );
        changed.status = ObjectStatus::Processing;
        changed
    }];
    s.errors = vec![ErrorRecord::builder()
        .step(2)
        .call_index(1)
        .message("reconcile op-1: still running after its 30000 ms deadline; killed".into())
        .build()];
    s
}

fn infra_failure() -> ScenarioReport {
    let mut s = scenario(
        BROKEN,
        "weak-evidence",
        "Another actor's similar object must not be claimed",
        None,
        0x5eed_0104,
    );
    s.verdict = Verdict::InfraError;
    s.duration_ms = 5_003;
    s.operations = vec![operation("op-1", ticket_args(1200), &[], None)];
    s.errors = vec![ErrorRecord::builder()
        .step(0)
        .message(
            "the simulator did not accept connections on 127.0.0.1:41817 within 5000 ms".into(),
        )
        .build()];
    s
}

// ---------------------------------------------------------------- hostile run

/// The case 2 violation with every adapter- or scenario-supplied string made
/// hostile: if any writer forgets to escape, markup gets through.
pub fn hostile_run() -> Report {
    let mut s = naive_lost_after_commit();
    s.id = format!("lost{HOSTILE}");
    s.title = format!("Title {HOSTILE} | pipe `tick` *star*");
    s.path = format!("scenarios/{HOSTILE}.yaml");
    s.reproduce = format!("lostreply run --scenario '{HOSTILE}'");
    s.tags = vec![HOSTILE.into()];
    s.operations[0].operation.make_mut().id = format!("op{HOSTILE}").into();
    s.operations[0].operation.make_mut().args = json!({HOSTILE: HOSTILE}).into();
    s.calls[0].reply =
        Some(json!({"outcome": HOSTILE, "provider_ref": HOSTILE, "evidence": HOSTILE}).into());
    s.calls[1].stderr = format!("{HOSTILE}\n\u{1b}[31mred\u{1b}[0m\n").into();
    s.journal[0].target = format!("/v1/tickets?q={HOSTILE}").into();
    s.journal[0].fault = Some(Box::new(HOSTILE.into()));
    s.journal[1].fate = HOSTILE.into();
    s.ledger[0].id = HOSTILE.into();
    s.steps[0].label = HOSTILE.into();
    s.violations[0].message = HOSTILE.into();
    s.violations[0].operation_id = Some(HOSTILE.into());
    s.violations[0]
        .evidence
        .push(Evidence::Effect { id: HOSTILE.into() });
    s.violations[1].check = Check::Expectation {
        key: HOSTILE.into(),
    };
    s.deliveries = vec![DeliveryRecord::builder()
        .step(1)
        .event_id(HOSTILE.into())
        .event_type(HOSTILE.into())
        .forged(true)
        .attempt(1)
        .call_index(0)
        .build()];
    s.errors = vec![ErrorRecord::builder()
        .step(1)
        .call_index(1)
        .message(HOSTILE.into())
        .build()];
    // An operator backlog entry made of hostile text as well.
    let mut review = reference_no_keys_no_lookup();
    review.id = HOSTILE.into();
    review.operations[0].operation.make_mut().resource = HOSTILE.into();
    if let Some(o) = review.operations[0].final_outcome.as_mut() {
        o.evidence = HOSTILE.into();
    }
    // Signals whose every name is hostile text.
    s.signals = hostile_signals();
    let mut report = report(HOSTILE, AdapterKind::Process, vec![s, review]);
    report.tool_version = HOSTILE.into();
    report
}

/// Signals naming a hostile tool, provider and operations.
fn hostile_signals() -> Signals {
    let mut signals = lost_after_commit_signals();
    signals.unknown_replies[0].tool = HOSTILE.into();
    signals.unknown_replies[0].provider = format!("{HOSTILE}\"\\\n").into();
    signals.most_reconciled = Some(
        OperationCount::builder()
            .operation_id(HOSTILE.into())
            .count(2)
            .build(),
    );
    signals.left_unknown = 1;
    signals.oldest_unknown = Some(
        OperationAge::builder()
            .operation_id(HOSTILE.into())
            .age_ms(1)
            .build(),
    );
    signals
}

/// Every fixture run, named for snapshot files.
pub fn all_runs() -> Vec<(&'static str, Report)> {
    vec![
        ("passing", passing_run()),
        ("violations", violations_run()),
        ("adapter_error", adapter_error_run()),
    ]
}

//! Turns an [`Observation`] and its violations into the report model the writers read.

use lostreply_reports::model::{
    CallEnd, CallRecord, Check, EffectRecord, ErrorRecord, McpClientReport, OperationReport,
    Outcome, RequestRecord, ScenarioReport, SharedJson, SharedStr, Verdict, Violation,
    WindowFigures,
};
use lostreply_reports::shared_str::Recent;
use lostreply_simulator::{
    Effect, FaultResponse, JournalEntry, ObjectStatus, Release, ResponseFate, StallThen,
};

use crate::check::attribution::Attribution;
use crate::run::observation::Observation;
use crate::scenario::client_profiles::McpClient;

/// The report of one scenario run.
///
/// Records that say the same thing share one copy of the text
/// ([`SharedStr`]): each operation's id is made once and shared by its calls
/// and effects, each effect's id and key once and shared by the request that
/// created it, and the handful of values a field repeats (tenant, method,
/// fate, a call's name) once each through [`Recent`]. At a million
/// operations that is four allocations an operation instead of twenty.
pub fn scenario_report(
    obs: &Observation,
    attribution: &Attribution<'_>,
    violations: Vec<Violation>,
    reproduce: String,
) -> ScenarioReport {
    let s = &obs.scenario;
    let mut errors: Vec<ErrorRecord> = obs.errors.clone();
    for call in &obs.calls {
        if let Some(message) = call_error(&call.end) {
            errors.push(ErrorRecord {
                step: call.step,
                call_index: Some(call.index),
                message,
            });
        }
    }
    let verdict = verdict(&violations, obs.infra_failed, !errors.is_empty());
    // By operation position, walked once: a lookup per operation in the
    // `BTreeMap` of a million ids was some twenty string compares each.
    let mut final_status = vec![None; s.operations.len()];
    for (op, &index) in &obs.final_status {
        if let Some(slot) = attribution
            .op_position(op)
            .and_then(|p| final_status.get_mut(p))
        {
            *slot = Some(index);
        }
    }
    let final_outcome = |position: usize| {
        final_status
            .get(position)
            .copied()
            .flatten()
            .and_then(|index| obs.calls.get(index)?.outcome.as_ref())
    };
    // The observation's records hold their text shared: a record of the
    // report takes it by a reference count. Only the scenario's operation ids
    // are plain strings, made shared here once.
    let op_ids: Vec<SharedStr> = s
        .operations
        .iter()
        .map(|op| op.id.as_str().into())
        .collect();
    // Each operation's arguments as text, once; an effect whose arguments are
    // its operation's, member for member, shares that text (its own would be
    // the same bytes) instead of holding a copy of its own.
    let op_args: Vec<SharedJson> = s
        .operations
        .iter()
        .map(|op| SharedJson::from_map(&op.args))
        .collect();
    let effect_args = |position: usize, e: &Effect| {
        attribution
            .group_of_effect(position)
            .and_then(|g| attribution.op_positions_of_group(g).first().copied())
            .and_then(|p| op_args.get(p))
            .filter(|text| text.as_str() == e.args.get())
            .cloned()
            // Both texts are serde_json's compact writing, so equal values in
            // the same order are equal text; other arguments are read and
            // written again, which is the same bytes.
            .unwrap_or_else(|| {
                serde_json::from_str::<serde_json::Value>(e.args.get())
                    .map(SharedJson::from)
                    .unwrap_or_else(|_| SharedJson::new(&serde_json::Value::Null))
            })
    };
    let mut text = Texts::default();
    let operations = s
        .operations
        .iter()
        .enumerate()
        .map(|(position, op)| {
            let effects: Vec<SharedStr> = attribution
                .group_at(position)
                .map(|g| {
                    attribution
                        .effect_positions(g)
                        .iter()
                        .filter_map(|&p| obs.ledger.get(p).map(|e| e.id.clone()))
                        .collect()
                })
                .unwrap_or_default();
            OperationReport {
                id: op_ids[position].clone(),
                resource: text.resource.get(&op.resource),
                args: op_args[position].clone(),
                final_outcome: final_outcome(position).map(|o| Outcome {
                    outcome: o.outcome,
                    provider_ref: o.provider_ref.clone(),
                    needs_review: o.needs_review,
                    evidence: o.evidence.clone(),
                }),
                effects,
            }
        })
        .collect();
    let calls = obs
        .calls
        .iter()
        .map(|c| CallRecord {
            index: c.index,
            step: c.step,
            call: text.call.get(c.name.as_str()),
            operation_id: c.operation_id.clone(),
            request: c.request.clone(),
            reply: c.reply.clone(),
            end: c.end.clone(),
            stderr: c.stderr.clone(),
            start_ms: c.start_ms,
            end_ms: c.end_ms,
        })
        .collect();
    let journal = obs
        .journal
        .iter()
        .map(|e| request_record(e, obs.simulator_offset_ms, &mut text))
        .collect();
    let ledger = obs
        .ledger
        .iter()
        .enumerate()
        .map(|(position, e)| EffectRecord {
            id: e.id.clone(),
            tenant: e.tenant.clone(),
            resource: e.resource.clone(),
            args: effect_args(position, e),
            idempotency_key: e.idempotency_key.clone(),
            sim_ms: e.created_at_ms,
            status: text.status.get(status_name(e.status)),
            request_seq: e.request_seq,
            operation_id: attribution
                .group_of_effect(position)
                .and_then(|g| attribution.op_positions_of_group(g).first())
                .and_then(|&p| op_ids.get(p).cloned()),
        })
        .collect();
    ScenarioReport {
        id: s.id.clone(),
        title: s.title.clone(),
        path: s.path.clone(),
        case: s.case,
        tags: s.tags.clone(),
        verdict,
        seed: obs.seed,
        reproduce,
        duration_ms: obs.duration_ms,
        sim_start_ms: obs.sim_start_ms,
        operations,
        steps: obs.steps.clone(),
        calls,
        journal,
        ledger,
        deliveries: obs.deliveries.clone(),
        violations,
        errors,
        mcp_client: s.mcp.as_ref().map(|m| mcp_client_report(&m.client)),
    }
}

/// The fields whose few values repeat across a run's records, each with the
/// values it said last ([`Recent`]), and a buffer to write a value into
/// before it is looked up.
#[derive(Default)]
struct Texts {
    target: Recent,
    kind: Recent,
    fate: Recent,
    fault: Recent,
    status: Recent,
    resource: Recent,
    call: Recent,
    scratch: String,
}

/// An MCP scenario's client windows, real and scaled, for the report.
pub fn mcp_client_report(client: &McpClient) -> McpClientReport {
    let scaled = client.scaled();
    let ms = |w: Option<std::time::Duration>| {
        w.map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX))
    };
    let figures = |real, scaled| WindowFigures {
        real_ms: ms(real),
        scaled_ms: ms(scaled),
    };
    McpClientReport {
        profile: client.profile.clone(),
        scale: client.scale,
        idle_resets_on: client.real.idle_resets_on.name().to_owned(),
        wall_clock: figures(client.real.wall_clock, scaled.wall_clock),
        idle: figures(client.real.idle, scaled.idle),
        first_byte: figures(client.real.first_byte, scaled.first_byte),
        background_after: figures(client.real.background_after, scaled.background_after),
    }
}

/// A broken invariant is proven whatever else went wrong. An expectation is only
/// as good as the adapter's answers: when the adapter failed to answer, the
/// verdict is its error (the unmet expectations are still listed).
fn verdict(violations: &[Violation], infra_failed: bool, adapter_failed: bool) -> Verdict {
    let invariant_broken = violations.iter().any(|v| match v.check {
        Check::Invariant(_) => true,
        Check::Expectation { .. } => false,
    });
    if invariant_broken {
        Verdict::Violated
    } else if infra_failed {
        Verdict::InfraError
    } else if adapter_failed {
        Verdict::AdapterError
    } else if violations.is_empty() {
        Verdict::Passed
    } else {
        Verdict::Violated
    }
}

fn call_error(end: &CallEnd) -> Option<String> {
    match end {
        CallEnd::Replied | CallEnd::Crashed => None,
        CallEnd::Exited { code: Some(code) } => {
            Some(format!("the adapter exited with code {code}"))
        }
        CallEnd::Exited { code: None } => Some("the adapter was killed by a signal".to_owned()),
        CallEnd::BadReply { message } => Some(format!("bad reply: {message}")),
        CallEnd::Deadline { deadline_ms } => Some(format!(
            "the adapter outlived its {deadline_ms} ms deadline and was killed"
        )),
        CallEnd::Failed { message } => Some(format!("the adapter failed: {message}")),
    }
}

fn status_name(status: ObjectStatus) -> &'static str {
    match status {
        ObjectStatus::Processing => "processing",
        ObjectStatus::Succeeded => "succeeded",
        ObjectStatus::Failed => "failed",
    }
}

/// `drop`, `stall then commit`, `status 500`.
pub fn fault_name(response: &FaultResponse) -> String {
    match response {
        FaultResponse::Ok => "ok".to_owned(),
        FaultResponse::Drop => "drop".to_owned(),
        FaultResponse::Reset => "reset".to_owned(),
        FaultResponse::Stall { then, until } => {
            let then = match then {
                StallThen::Abandon => "",
                StallThen::Commit => " then commit",
            };
            match until {
                Release::ClientGone => format!("stall{then}"),
                Release::StepEnd(step) => format!("stall until step {step} ends{then}"),
            }
        }
        FaultResponse::Gather { requests, at_most } => format!(
            "gather {requests} (at most {})",
            humantime::format_duration(*at_most)
        ),
        FaultResponse::Delay { delay } => format!("delay {}", humantime::format_duration(*delay)),
        FaultResponse::Status { code } => format!("status {code}"),
        FaultResponse::Partial { bytes } => format!("partial {bytes} bytes"),
        FaultResponse::Idle => "idle".to_owned(),
    }
}

/// Writes what became of the response into `out` (a reused buffer: the
/// text is then shared, not kept), and says whether it was lost.
fn fate_text(fate: &ResponseFate, out: &mut String) -> bool {
    use std::fmt::Write as _;
    // Writing into a `String` cannot fail.
    let _ = match fate {
        ResponseFate::InProgress => write!(out, "still in progress"),
        ResponseFate::Sent { status } => write!(out, "sent {status}"),
        ResponseFate::Dropped => write!(out, "dropped (closed without a byte)"),
        ResponseFate::Reset => write!(out, "reset (TCP RST)"),
        ResponseFate::Stalled { client_left: true } => write!(out, "stalled until the client left"),
        ResponseFate::Stalled { client_left: false } => write!(out, "stalled until the cap"),
        ResponseFate::Cancelled => write!(out, "ended by the client's cancel"),
        ResponseFate::Truncated { status, bytes } => {
            write!(out, "{status} truncated after {bytes} body bytes")
        }
        ResponseFate::Idle {
            status,
            client_left,
        } => {
            let until = if *client_left {
                "the client left"
            } else {
                "the cap"
            };
            write!(out, "{status} headers, then silence until {until}")
        }
    };
    !matches!(fate, ResponseFate::Sent { .. })
}

/// Path and query; for an MCP request, the path, then what the JSON-RPC body
/// asked (`/mcp tools/call create_ticket`): every `/mcp` request has the same
/// path, so the method and tool are what tells a timeline's rows apart.
fn request_target(e: &JournalEntry) -> String {
    let mut target = match &e.query {
        Some(q) => format!("{}?{q}", e.path),
        None => e.path.to_string(),
    };
    if let Some(rpc) = &e.rpc {
        if !rpc.method.is_empty() {
            target.push(' ');
            target.push_str(&rpc.method);
        }
        if let Some(tool) = &rpc.tool {
            target.push(' ');
            target.push_str(tool);
        }
    }
    target
}

/// The fault that struck: an HTTP rule (`after_commit drop (rule 1)`), or an
/// MCP rule (`mcp stall (MCP rule 1)`: the n-th rule with `call:`), with a client's cancel when one arrived
/// while the server held the call.
fn request_fault(e: &JournalEntry) -> Option<String> {
    let http = e.fault.as_deref().map(|f| {
        format!(
            "{} {} (rule {})",
            f.at.name(),
            fault_name(&f.response),
            f.rule + 1
        )
    });
    let rpc = e.rpc.as_ref();
    let mcp = rpc
        .and_then(|r| r.fault.as_ref())
        .map(|f| format!("mcp {} (MCP rule {})", f.name, f.rule + 1));
    let cancelled = rpc
        .and_then(|r| r.cancelled.as_ref())
        .map(|c| format!("the client cancelled (request #{})", c.request_seq));
    let parts: Vec<String> = [http, mcp, cancelled].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn request_record(e: &JournalEntry, offset_ms: u64, text: &mut Texts) -> RequestRecord {
    text.scratch.clear();
    let lost = fate_text(&e.fate, &mut text.scratch);
    let fate = text.fate.get(&text.scratch);
    let target = if e.query.is_none() && e.rpc.is_none() {
        e.path.clone()
    } else {
        text.target.get(&request_target(e))
    };
    RequestRecord {
        seq: e.seq,
        sim_ms: e.at_ms,
        start_ms: e.real_start_ms + offset_ms,
        end_ms: e.real_end_ms.map(|t| t + offset_ms),
        tenant: e.tenant.clone(),
        method: e.method.clone(),
        target,
        kind: e.kind.map(|k| text.kind.get(k.name())),
        idempotency_key: e.idempotency_key.clone(),
        fault: request_fault(e).map(|f| text.fault.get(&f)),
        effect: e.effect.clone(),
        replayed: e.replayed,
        fate,
        lost,
    }
}

//! Turns an [`Observation`] and its violations into the report model the writers read.

use lostreply_reports::model as report;
use lostreply_reports::model::Signals;
use lostreply_reports::model::{
    CallRecord, EffectRecord, ErrorRecord, Fate, Fault, Finding, HttpFault, McpClientReport,
    McpFaultKind, OperationReport, OperationSpec, Outcome, RequestRecord, ResponseEnd,
    ScenarioReport, SharedJson, Verdict, Violation, WindowFigures,
};
use lostreply_reports::shared_str::Recent;
use lostreply_simulator::mcp::McpFault;
use lostreply_simulator::{
    FaultResponse, JournalEntry, JsonText, McpFaultSeen, ObjectStatus, Plan, Position, Release,
    RequestKind, ResponseFate, StallThen,
};

use crate::check::attribution::Attribution;
use crate::check::grouped::Grouped;
use crate::phase::{Phase, PhaseEnd};
use crate::position::{Pos, NONE};
use crate::run::observation::{Call, CallStderr, Observation};
use crate::scenario::client_profiles::McpClient;
use crate::two_threads::{self, both};

/// The report of one scenario run, from its observation (handed over: the
/// report takes its records' text by moving it), the part of the report made
/// while the observation was still borrowed ([`prepare`]), and the checks'
/// violations.
///
/// Why the observation is consumed: on a run of a million operations the
/// report's calls, requests and effects are millions of records whose text
/// the observation already holds. Moved, each record's text changes hands
/// without touching it (a shared copy would touch every reference count, a
/// cache miss each), and each list is rewritten in the allocation that held
/// the observation's list, so the report adds almost no memory of its own.
/// Records that say the same thing share one copy of the text
/// ([`SharedStr`](lostreply_reports::shared_str::SharedStr)): a request's target through [`Recent`], an effect's
/// arguments with its operation's when they are the same text. The closed
/// sets (a call's name, a request's kind and fate, the fault that struck, an
/// object's status) are the report's enums, made from the harness's and
/// the simulator's own.
///
/// The ledger's records are made first, and the operations' next, once the
/// effects' own copies of their arguments are freed. A large run (from
/// [`two_threads::FROM_RECORDS`] calls, requests and effects) then makes the
/// calls' records on one thread and the journal's on another; the report is
/// the same either way.
pub fn scenario_report(
    obs: Observation,
    prepared: Prepared,
    violations: Vec<Violation>,
    reproduce: String,
) -> ScenarioReport {
    scenario_report_phases(obs, prepared, violations, reproduce, &mut |_| {})
}

/// [`scenario_report`], telling `done` when the ledger's records are made
/// (the effects' own copies of their arguments are freed then), so that a
/// binary may give that memory back ([`PhaseEnd`]).
pub fn scenario_report_phases(
    obs: Observation,
    prepared: Prepared,
    violations: Vec<Violation>,
    reproduce: String,
    done: &mut dyn FnMut(PhaseEnd),
) -> ScenarioReport {
    let two_threads =
        obs.calls.len() + obs.journal.len() + obs.ledger.len() >= two_threads::FROM_RECORDS;
    scenario_report_with(obs, prepared, violations, reproduce, two_threads, done)
}

/// [`scenario_report`] on one thread or two, as asked (public for the tests
/// that compare the two).
#[doc(hidden)]
pub fn scenario_report_on(
    obs: Observation,
    prepared: Prepared,
    violations: Vec<Violation>,
    reproduce: String,
    two_threads: bool,
) -> ScenarioReport {
    scenario_report_with(
        obs,
        prepared,
        violations,
        reproduce,
        two_threads,
        &mut |_| {},
    )
}

fn scenario_report_with(
    obs: Observation,
    prepared: Prepared,
    violations: Vec<Violation>,
    reproduce: String,
    two_threads: bool,
    done: &mut dyn FnMut(PhaseEnd),
) -> ScenarioReport {
    let Prepared {
        signals,
        effects_of_op,
        op_of_effect,
        findings,
    } = prepared;
    let mut obs = obs;
    let ledger = ledger_records(&mut obs, &op_of_effect);
    drop(op_of_effect);
    done(PhaseEnd::new(Phase::LedgerRecords, two_threads));
    let operations = operation_records(&obs, &effects_of_op, &ledger);
    drop(effects_of_op);
    let Observation {
        scenario,
        seed,
        calls,
        stderr,
        steps,
        deliveries,
        journal,
        simulator_offset_ms,
        sim_start_ms,
        mut errors,
        infra_failed,
        duration_ms,
        ..
    } = obs;
    // The calls on one thread, the journal on another when the run is
    // large: independent records, each list rewritten in place.
    let plan = &scenario.plan;
    let (journal, (calls, call_errors)) = both(
        two_threads,
        || {
            let mut targets = Recent::default();
            journal
                .into_iter()
                .map(|e| request_record(e, simulator_offset_ms, plan, &mut targets))
                .collect::<Vec<RequestRecord>>()
        },
        || call_records(calls, stderr),
    );
    // The observation's errors first, then the calls' in call order.
    errors.extend(call_errors);
    let verdict = verdict(&violations, infra_failed, !errors.is_empty());
    ScenarioReport::builder()
        .maybe_mcp_client(scenario.mcp.as_ref().map(|m| mcp_client_report(&m.client)))
        .signals(signals)
        .id(scenario.id)
        .title(scenario.title)
        .path(scenario.path)
        .maybe_case(scenario.case)
        .tags(scenario.tags)
        .verdict(verdict)
        .seed(seed)
        .reproduce(reproduce)
        .duration_ms(duration_ms)
        .sim_start_ms(sim_start_ms)
        .operations(operations)
        .steps(steps)
        .calls(calls)
        .journal(journal)
        .ledger(ledger)
        .deliveries(deliveries)
        .violations(violations)
        .findings(findings)
        .errors(errors)
        .build()
}

/// The ledger's records, made first and alone: an effect's arguments are
/// its operation's text (shared, not kept twice). A run's collection shared
/// those of effects that name their operation; any other effect's own copy
/// is freed here and, on a large run, given back before the operations'
/// records are made. `op_of_effect`: [`Prepared::op_of_effect`].
fn ledger_records(obs: &mut Observation, op_of_effect: &[Pos]) -> Vec<EffectRecord> {
    let operations = &obs.scenario.operations;
    std::mem::take(&mut obs.ledger)
        .into_iter()
        .enumerate()
        .map(|(position, e)| {
            let op = op_of_effect
                .get(position)
                .and_then(|&p| operations.get(p as usize));
            EffectRecord::builder()
                .args(effect_args(op, &e.args))
                .id(e.id)
                .tenant(e.tenant)
                .resource(e.resource)
                .maybe_idempotency_key(e.idempotency_key)
                .sim_ms(e.created_at_ms)
                .status(object_status(e.status))
                .maybe_request_seq(e.request_seq.map(|seq| seq.get()))
                .maybe_operation_id(op.map(|op| op.id.clone()))
                .build()
        })
        .collect()
}

/// The calls' records, and an error record for each call that ended in an
/// adapter error, in call order.
fn call_records(calls: Vec<Call>, stderr: CallStderr) -> (Vec<CallRecord>, Vec<ErrorRecord>) {
    let mut errors = Vec::new();
    // The tails in order of position, taken as their calls come.
    let mut tails = stderr.into_inner().into_iter().peekable();
    let records = calls
        .into_iter()
        .enumerate()
        .map(|(index, mut c)| {
            if let Some(message) = c.end.adapter_failure() {
                errors.push(
                    ErrorRecord::builder()
                        .step(c.step_number())
                        .call_index(index)
                        .message(message)
                        .build(),
                );
            }
            let reply = c.take_reply();
            let stderr = tails
                .next_if(|(at, _)| *at as usize == index)
                .map(|(_, tail)| tail)
                .unwrap_or_default();
            CallRecord::builder()
                .index(u32::try_from(index).unwrap_or(u32::MAX))
                .step(c.step)
                .call(c.name)
                .maybe_operation_id(c.operation_id)
                .request(c.request)
                .maybe_reply(reply)
                .end(c.end)
                .stderr(stderr)
                .start_ms(c.start_ms)
                .end_ms(c.end_ms)
                .build()
        })
        .collect();
    (records, errors)
}

/// The part of a report that needs the attribution: each operation's
/// effects and, by ledger position, the operation an effect is filed under,
/// as positions. Made while the observation is borrowed, so that the
/// attribution can be freed before [`scenario_report`] takes the
/// observation and makes the records (at a million operations the
/// operations' records made here, beside the attribution, were the highest
/// point of checking and reporting).
#[derive(Debug)]
pub struct Prepared {
    /// The production signals (`crate::signals`): they read which operation
    /// each create and effect belongs to, as the checks attributed them.
    signals: Signals,
    /// By operation position: the ledger positions of its group's effects.
    effects_of_op: Grouped,
    /// By ledger position: the position of the first operation of the
    /// effect's group, or [`NONE`] (which names no operation) if it has none.
    /// (A `u32`: 4 bytes an effect where `Option<usize>` took 16.)
    op_of_effect: Vec<Pos>,
    /// The resolutions that contradict the ledger (`check::resolution`).
    findings: Vec<Finding>,
}

/// See [`Prepared`].
pub fn prepare(obs: &Observation, attribution: &Attribution<'_>) -> Prepared {
    // Each operation's group's effects, copied: an operation whose group
    // has several lists them again (few do).
    let effects_of_op =
        Grouped::from_lists(obs.scenario.operations.len(), obs.ledger.len(), |op| {
            attribution
                .group_at(op)
                .map_or(&[][..], |g| attribution.effect_positions(g))
        });
    let op_of_effect = (0..obs.ledger.len())
        .map(|position| {
            attribution
                .group_of_effect(position)
                .and_then(|g| attribution.op_positions_of_group(g).first().copied())
                .unwrap_or(NONE)
        })
        .collect();
    Prepared {
        signals: crate::signals::compute(obs, attribution),
        effects_of_op,
        op_of_effect,
        findings: crate::check::resolution::findings(obs, attribution),
    }
}

/// The operations' records: each the scenario's operation (shared), its
/// effects' ids (from the ledger's records) and its final outcome (from the
/// calls, before their records take their replies).
fn operation_records(
    obs: &Observation,
    effects_of_op: &Grouped,
    ledger: &[EffectRecord],
) -> Vec<OperationReport> {
    obs.scenario
        .operations
        .iter()
        .enumerate()
        .map(|(position, op)| {
            OperationReport::builder()
                .operation(op.clone())
                .effects(
                    effects_of_op
                        .of(position)
                        .iter()
                        .filter_map(|&p| ledger.get(p as usize).map(|e| e.id.clone()))
                        .collect(),
                )
                .maybe_final_outcome(obs.final_outcome(position).map(|o| {
                    Outcome::builder()
                        .outcome(o.outcome)
                        .maybe_provider_ref(o.provider_ref.clone())
                        .needs_review(o.needs_review)
                        .evidence(o.evidence.clone())
                        .build()
                }))
                .build()
        })
        .collect()
}

/// An effect's arguments for the report: its operation's text when they are
/// the same text (both are serde_json's compact writing, so equal values in
/// the same order are equal text), otherwise its own, read and written again
/// (the same bytes).
fn effect_args(op: Option<&OperationSpec>, args: &JsonText) -> SharedJson {
    match op {
        Some(op) if op.args.text() == args.get() => op.args.clone(),
        _ => SharedJson::from_map(&args.to_map()),
    }
}

/// An MCP scenario's client windows, real and scaled, for the report.
pub fn mcp_client_report(client: &McpClient) -> McpClientReport {
    let scaled = client.scaled();
    let ms = |w: Option<std::time::Duration>| {
        w.map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX))
    };
    let figures = |real, scaled| {
        WindowFigures::builder()
            .maybe_real_ms(ms(real))
            .maybe_scaled_ms(ms(scaled))
            .build()
    };
    McpClientReport::builder()
        .profile(client.profile.clone())
        .scale(client.scale)
        .idle_resets_on(client.real.idle_resets_on.name().to_owned())
        .wall_clock(figures(client.real.wall_clock, scaled.wall_clock))
        .idle(figures(client.real.idle, scaled.idle))
        .first_byte(figures(client.real.first_byte, scaled.first_byte))
        .background_after(figures(
            client.real.background_after,
            scaled.background_after,
        ))
        .build()
}

/// A broken invariant is proven whatever else went wrong. An expectation is only
/// as good as the adapter's answers: when the adapter failed to answer, the
/// verdict is its error (the unmet expectations are still listed).
pub fn verdict(violations: &[Violation], infra_failed: bool, adapter_failed: bool) -> Verdict {
    let invariant_broken = violations.iter().any(|v| v.check.proven_by_the_record());
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

fn object_status(status: ObjectStatus) -> report::ObjectStatus {
    match status {
        ObjectStatus::Processing => report::ObjectStatus::Processing,
        ObjectStatus::Succeeded => report::ObjectStatus::Succeeded,
        ObjectStatus::Failed => report::ObjectStatus::Failed,
    }
}

/// A request's kind, as the report names it.
pub fn request_kind(kind: RequestKind) -> report::RequestKind {
    match kind {
        RequestKind::Create => report::RequestKind::Create,
        RequestKind::Retrieve => report::RequestKind::Retrieve,
        RequestKind::Search => report::RequestKind::Search,
        RequestKind::List => report::RequestKind::List,
    }
}

/// Where a simulator fault rule strikes, as the report names it.
pub fn fault_point(at: Position) -> report::FaultPoint {
    match at {
        Position::BeforeRead => report::FaultPoint::BeforeRead,
        Position::BeforeCommit => report::FaultPoint::BeforeCommit,
        Position::AfterCommit => report::FaultPoint::AfterCommit,
    }
}

/// `drop`, `stall then commit`, `status 500`, as the report keeps them.
pub fn fault_response(response: &FaultResponse) -> report::FaultResponse {
    match *response {
        FaultResponse::Ok => report::FaultResponse::Ok,
        FaultResponse::Drop => report::FaultResponse::Drop,
        FaultResponse::Reset => report::FaultResponse::Reset,
        FaultResponse::Stall { then, until } => report::FaultResponse::Stall {
            then: match then {
                StallThen::Abandon => report::StallThen::Abandon,
                StallThen::Commit => report::StallThen::Commit,
            },
            until: match until {
                Release::ClientGone => report::Release::ClientGone,
                Release::StepEnd(step) => report::Release::StepEnd(step),
            },
        },
        FaultResponse::Gather { requests, at_most } => {
            report::FaultResponse::Gather { requests, at_most }
        }
        FaultResponse::Delay { delay } => report::FaultResponse::Delay { delay },
        FaultResponse::Status {
            code,
            retry_after_s,
        } => report::FaultResponse::Status {
            code,
            retry_after_s,
        },
        FaultResponse::Partial { bytes } => report::FaultResponse::Partial {
            // A body is never `u64::MAX` bytes long; saturated all the same.
            bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
        },
        FaultResponse::Idle => report::FaultResponse::Idle,
    }
}

fn mcp_fault_kind(fault: &McpFault) -> McpFaultKind {
    match fault {
        McpFault::Ok => McpFaultKind::Ok,
        McpFault::Slow { .. } => McpFaultKind::Slow,
        McpFault::Stall { .. } => McpFaultKind::Stall,
        McpFault::Late { .. } => McpFaultKind::Late,
        McpFault::Never => McpFaultKind::Never,
        McpFault::IsError { .. } => McpFaultKind::IsError,
        McpFault::RpcError { .. } => McpFaultKind::RpcError,
        McpFault::Http { .. } => McpFaultKind::Http,
        McpFault::Drop { .. } => McpFaultKind::Drop,
        McpFault::Reset { .. } => McpFaultKind::Reset,
        McpFault::Task { .. } => McpFaultKind::Task,
        McpFault::PrimeThenClose { .. } => McpFaultKind::PrimeThenClose,
    }
}

/// The MCP rule that decided a call: the plan's rule at the journal's
/// index. (The simulator chose it from this plan, so it is there; a rule
/// that were not is read from the name the journal gives it.)
fn mcp_fault(seen: &McpFaultSeen, plan: &Plan) -> Option<report::McpFault> {
    let kind = plan
        .mcp
        .as_ref()
        .and_then(|mcp| mcp.faults.get(seen.rule))
        .map(|rule| mcp_fault_kind(&rule.fault))
        .or_else(|| seen.name.parse().ok())?;
    Some(
        report::McpFault::builder()
            .rule(seen.rule.saturating_add(1))
            .kind(kind)
            .build(),
    )
}

/// How the response ended.
fn response_end(fate: &ResponseFate) -> ResponseEnd {
    match *fate {
        ResponseFate::InProgress => ResponseEnd::InProgress,
        // The report's `sent` is what the adapter could have read; whether
        // its client had already left is the journal's detail.
        ResponseFate::Sent {
            status,
            client_left: _,
        } => ResponseEnd::Sent { status },
        ResponseFate::Dropped => ResponseEnd::Dropped,
        ResponseFate::Reset => ResponseEnd::Reset,
        ResponseFate::Stalled { client_left } => ResponseEnd::Stalled { client_left },
        ResponseFate::Cancelled => ResponseEnd::Cancelled,
        ResponseFate::Truncated { status, bytes } => ResponseEnd::Truncated { status, bytes },
        ResponseFate::Idle {
            status,
            client_left,
        } => ResponseEnd::Idle {
            status,
            client_left,
        },
    }
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
/// MCP rule (`mcp stall (MCP rule 1)`: the n-th rule with `call:`), with a
/// client's cancel when one arrived while the server held the call.
fn request_fault(e: &JournalEntry, plan: &Plan) -> Option<Box<Fault>> {
    let http = e.fault.as_deref().map(|f| {
        HttpFault::builder()
            .rule(f.rule.saturating_add(1))
            .at(fault_point(f.at))
            .response(fault_response(&f.response))
            .build()
    });
    let rpc = e.rpc.as_ref();
    let mcp = rpc
        .and_then(|r| r.fault.as_ref())
        .and_then(|f| mcp_fault(f, plan));
    let cancelled_by = rpc
        .and_then(|r| r.cancelled.as_ref())
        .map(|c| c.request_seq);
    (http.is_some() || mcp.is_some() || cancelled_by.is_some()).then(|| {
        Box::new(Fault::Parts {
            http,
            mcp,
            cancelled_by,
        })
    })
}

fn request_record(
    e: JournalEntry,
    offset_ms: u64,
    plan: &Plan,
    targets: &mut Recent,
) -> RequestRecord {
    let end = response_end(&e.fate);
    // A fault that answered a replay attempt is what was sent (its status,
    // or nothing), not a replay.
    let replayed = e.replay_sent();
    let fate = Fate::Ended {
        end,
        unsent_replay: e.replayed && !replayed,
    };
    let fault = request_fault(&e, plan);
    let target = if e.query.is_none() && e.rpc.is_none() {
        e.path
    } else {
        targets.get(&request_target(&e))
    };
    RequestRecord::builder()
        .seq(e.seq)
        .sim_ms(e.at_ms)
        .start_ms(e.real_start_ms + offset_ms)
        .maybe_end_ms(e.real_end_ms.map(|t| t.get() + offset_ms))
        .maybe_tenant(e.tenant)
        .method(e.method)
        .target(target)
        .maybe_kind(e.kind.map(request_kind))
        .maybe_idempotency_key(e.idempotency_key)
        .maybe_fault(fault)
        .maybe_effect(e.effect)
        .replayed(replayed)
        .fate(fate)
        .lost(end.is_lost())
        .build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use super::*;

    /// The report spells a fault's durations itself; they read as the
    /// scenario's own `humantime` spelling of them.
    #[test]
    fn durations_are_spelled_as_humantime_spells_them() {
        let year_ms = 31_557_600_000;
        let month_ms = 2_630_016_000;
        let day_ms = 86_400_000;
        let mut durations: Vec<Duration> = [
            0,
            1,
            300,
            999,
            1000,
            1500,
            59_999,
            60_000,
            90_000,
            3_600_000,
            day_ms,
            2 * day_ms + 1,
            month_ms,
            2 * month_ms + day_ms,
            year_ms + month_ms + 1,
            3 * year_ms + 11 * month_ms + 30 * day_ms + 86_399_999,
        ]
        .into_iter()
        .map(Duration::from_millis)
        .collect();
        durations.extend([Duration::new(7, 1_002_003), Duration::from_nanos(1)]);
        for d in durations {
            let delay = fault_response(&FaultResponse::Delay { delay: d });
            assert_eq!(
                delay.to_string(),
                format!("delay {}", humantime::format_duration(d))
            );
            let gather = fault_response(&FaultResponse::Gather {
                requests: 3,
                at_most: d,
            });
            assert_eq!(
                gather.to_string(),
                format!("gather 3 (at most {})", humantime::format_duration(d))
            );
        }
    }

    /// Without the plan's rule, an MCP fault is read from the journal's name
    /// for it, and says it as the journal does.
    #[test]
    fn an_mcp_fault_says_its_journal_name() {
        for kind in McpFaultKind::ALL {
            let seen = McpFaultSeen {
                rule: 2,
                name: kind.as_str().to_owned(),
            };
            let fault = mcp_fault(&seen, &Plan::default()).unwrap();
            assert_eq!(fault.kind, *kind);
            assert_eq!(fault.rule, 3);
        }
    }
}

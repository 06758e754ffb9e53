//! An upstream run in the run report's model, so that every writer (terminal,
//! JSON, JUnit, Markdown, HTML) shows it as it shows a simulator run. What
//! differs is said where it lies: the requests are the proxy's journal, the
//! ledger is what the read-back found (an object the read-back only counted
//! is named `counted:MARKER:N`, since no id was read), and the clock is the
//! real one.

use std::collections::BTreeMap;
use std::time::Instant;

use lostreply_harness::protocol::{CallName, OutcomeKind};

use lostreply_harness::report_build::{fault_point, fault_response, request_kind};
use lostreply_harness::scenario::model::Scenario;
use lostreply_reports::model::{
    Action, CallRecord, EffectRecord, ErrorRecord, Fate, Fault, HttpFault, ObjectStatus,
    OperationReport, Outcome, RequestRecord, ResponseEnd, ScenarioReport, SharedJson, SharedStr,
    Signals, UnknownReplies, Verdict, Violation,
};

use super::drive::{Driven, Made};
use crate::proxy::rules::Facts;
use crate::proxy::{Entry, Fate as ProxyFate, HeldUntil};
use crate::readback::Found;

/// What one scenario's report is made of.
pub(super) struct Parts<'a> {
    pub scenario: &'a Scenario,
    pub seed: u64,
    pub reproduce: String,
    pub started: Instant,
    pub credential: &'a str,
    pub markers: &'a [String],
    pub driven: Driven,
    pub journal: Vec<Entry>,
    pub found: Vec<Found>,
    pub violations: Vec<Violation>,
    pub findings: Vec<lostreply_reports::model::Finding>,
    pub errors: Vec<ErrorRecord>,
}

/// The scenario's report.
pub(super) fn scenario_report(parts: Parts<'_>) -> ScenarioReport {
    let Parts {
        scenario,
        seed,
        reproduce,
        started,
        credential,
        markers,
        driven,
        journal,
        found,
        violations,
        findings,
        mut errors,
    } = parts;
    errors.extend(driven.errors);
    let verdict = verdict(&errors, &driven.calls, &violations);
    let ledger = ledger(scenario, credential, markers, &found);
    let signals = signals(scenario, &driven.calls);
    ScenarioReport::builder()
        .id(scenario.id.clone())
        .title(scenario.title.clone())
        .path(scenario.path.clone())
        .maybe_case(scenario.case)
        .tags(scenario.tags.clone())
        .verdict(verdict)
        .seed(seed)
        .reproduce(reproduce)
        .duration_ms(started.elapsed().as_millis() as u64)
        .sim_start_ms(driven.steps.first().map_or(0, |s| s.sim_start_ms))
        .operations(operations(scenario, &ledger, &driven.calls))
        .steps(driven.steps)
        .calls(calls(scenario, driven.calls))
        .journal(journal.into_iter().map(|e| request(e, started)).collect())
        .ledger(ledger)
        .deliveries(Vec::new())
        .violations(violations)
        .findings(findings)
        .errors(errors)
        .signals(signals)
        .build()
}

/// The production signals the calls show: unknown replies by resource and
/// call, reconcile attempts, and the final statuses' reviews and unknowns.
/// Those the simulator's clock and ledger make (ambiguities' ages, keys near
/// expiry, late duplicates) stay empty: behind a real service there is no
/// clock the harness moves and no ledger with commit times.
fn signals(scenario: &Scenario, calls: &[Made]) -> Signals {
    let mut unknown: BTreeMap<(SharedStr, Action), u64> = BTreeMap::new();
    let mut signals = Signals::default();
    for call in calls {
        let Some(op) = scenario.operations.get(call.op) else {
            continue;
        };
        if call.name == CallName::Reconcile {
            signals.reconcile_attempts += 1;
        }
        let unknown_reply = call
            .outcome
            .as_ref()
            .is_some_and(|o| o.outcome == OutcomeKind::Unknown);
        if let (true, Some(action)) = (unknown_reply, lostreply_harness::signals::action(call.name))
        {
            *unknown.entry((op.resource.clone(), action)).or_default() += 1;
        }
        if call.step == 0 {
            if let Some(o) = &call.outcome {
                signals.needs_review += u64::from(o.needs_review);
                signals.left_unknown += u64::from(o.outcome == OutcomeKind::Unknown);
            }
        }
    }
    let provider = SharedStr::from(scenario.plan.profile.name.as_str());
    signals.unknown_replies = unknown
        .into_iter()
        .map(|((tool, action), count)| {
            UnknownReplies::builder()
                .tool(tool)
                .action(action)
                .provider(provider.clone())
                .count(count)
                .build()
        })
        .collect();
    signals
}

/// As the harness decides a verdict from the same three facts.
fn verdict(errors: &[ErrorRecord], calls: &[Made], violations: &[Violation]) -> Verdict {
    let adapter_failed = calls.iter().any(|c| c.end.adapter_failure().is_some());
    lostreply_harness::report_build::verdict(violations, !errors.is_empty(), adapter_failed)
}

/// The objects the read-back found, as the report's ledger.
fn ledger(
    scenario: &Scenario,
    credential: &str,
    markers: &[String],
    found: &[Found],
) -> Vec<EffectRecord> {
    let mut ledger = Vec::new();
    for ((op, marker), found) in scenario.operations.iter().zip(markers).zip(found) {
        let ids: Vec<String> = match &found.ids {
            Some(ids) => ids.clone(),
            None => (1..=found.count)
                .map(|n| format!("counted:{marker}:{n}"))
                .collect(),
        };
        for id in ids {
            ledger.push(
                EffectRecord::builder()
                    .id(SharedStr::from(id))
                    .tenant(SharedStr::from(credential))
                    .resource(op.resource.clone())
                    .args(op.args.clone())
                    .sim_ms(0)
                    .status(ObjectStatus::Succeeded)
                    .operation_id(op.id.clone())
                    .build(),
            );
        }
    }
    ledger
}

fn operations(
    scenario: &Scenario,
    ledger: &[EffectRecord],
    calls: &[Made],
) -> Vec<OperationReport> {
    scenario
        .operations
        .iter()
        .enumerate()
        .map(|(position, op)| {
            let effects = ledger
                .iter()
                .filter(|e| e.operation_id.as_ref() == Some(&op.id))
                .map(|e| e.id.clone())
                .collect();
            let last = calls
                .iter()
                .rev()
                .find(|c| c.step == 0 && c.op == position)
                .and_then(|c| c.outcome.as_ref());
            OperationReport::builder()
                .operation(op.clone())
                .effects(effects)
                .maybe_final_outcome(last.map(|o| {
                    Outcome::builder()
                        .outcome(o.outcome)
                        .maybe_provider_ref(o.provider_ref.as_deref().map(SharedStr::from))
                        .needs_review(o.needs_review)
                        .evidence(SharedStr::from(o.evidence.as_str()))
                        .build()
                }))
                .build()
        })
        .collect()
}

fn calls(scenario: &Scenario, calls: Vec<Made>) -> Vec<CallRecord> {
    calls
        .into_iter()
        .enumerate()
        .map(|(index, c)| {
            CallRecord::builder()
                .index(u32::try_from(index).unwrap_or(u32::MAX))
                .step(c.step)
                .call(c.name)
                .maybe_operation_id(scenario.operations.get(c.op).map(|op| op.id.clone()))
                .request(SharedJson::new(&c.request).into())
                .maybe_reply(c.reply.as_ref().map(|r| SharedJson::new(r).into()))
                .end(c.end)
                .stderr(SharedStr::from(c.stderr))
                .start_ms(u32::try_from(c.start_ms).unwrap_or(u32::MAX))
                .end_ms(u32::try_from(c.end_ms).unwrap_or(u32::MAX))
                .build()
        })
        .collect()
}

fn ms_since(started: Instant, at: Instant) -> u64 {
    at.saturating_duration_since(started).as_millis() as u64
}

/// A journal entry of the proxy as the report's request.
fn request(e: Entry, started: Instant) -> RequestRecord {
    let end = response_end(&e);
    let kind = Facts::read(&e.method, &e.path, None).kind.map(request_kind);
    let fault = e.fault.as_ref().map(|f| {
        Box::new(Fault::Parts {
            http: Some(
                HttpFault::builder()
                    .rule(f.rule)
                    .at(fault_point(f.at))
                    .response(fault_response(&f.response))
                    .build(),
            ),
            mcp: None,
            cancelled_by: None,
        })
    });
    RequestRecord::builder()
        .seq(e.seq)
        .sim_ms(0)
        .start_ms(ms_since(started, e.arrived))
        .maybe_end_ms(e.ended.map(|t| ms_since(started, t)))
        .method(SharedStr::from(e.method))
        .target(SharedStr::from(e.path))
        .maybe_kind(kind)
        .maybe_idempotency_key(e.key.map(SharedStr::from))
        .maybe_fault(fault)
        .replayed(false)
        .fate(Fate::Ended {
            end,
            unsent_replay: false,
        })
        .lost(end.is_lost())
        .build()
}

/// How the client's answer ended, in the report's words.
fn response_end(e: &Entry) -> ResponseEnd {
    let client_left = e.held_until == Some(HeldUntil::ClientLeft);
    match e.fate {
        ProxyFate::Pending => ResponseEnd::InProgress,
        ProxyFate::Answered | ProxyFate::ErrorStatus | ProxyFate::UpstreamUnanswered => {
            ResponseEnd::Sent {
                status: e.client_status.unwrap_or(502),
            }
        }
        ProxyFate::Dropped => ResponseEnd::Dropped,
        ProxyFate::Reset => ResponseEnd::Reset,
        ProxyFate::Stalled => ResponseEnd::Stalled { client_left },
        ProxyFate::Truncated => ResponseEnd::Truncated {
            status: e.client_status.unwrap_or(0),
            bytes: cut_to(e),
        },
        ProxyFate::HeadersOnly => ResponseEnd::Idle {
            status: e.client_status.unwrap_or(0),
            client_left,
        },
    }
}

/// The body bytes a `partial` rule let through.
fn cut_to(e: &Entry) -> u32 {
    match e.fault.as_ref().map(|f| f.response) {
        Some(lostreply_simulator::FaultResponse::Partial { bytes }) => {
            u32::try_from(bytes).unwrap_or(u32::MAX)
        }
        _ => 0,
    }
}

//! The invariants judged from outside a real service: what the contract's
//! read-back finds of each operation's marker after the run, and what the
//! proxy's journal saw the adapter send. The seven invariants of
//! docs/scenario-format.md mean what they mean against the simulator; what
//! changes is the evidence. Effects are the objects carrying an operation's
//! marker (counted, with their ids where the read-back lists objects); the
//! create attempts of an operation are the create requests whose body
//! carries its marker. A person's decision relayed by the adapter is the
//! person's word: it is not judged as the adapter's claim, and a decision
//! the read-back contradicts is a finding.

use std::collections::BTreeMap;

use lostreply_harness::check::resolution::Decision;
use lostreply_harness::protocol::{CallName, OutcomeKind, OutcomeReply};
use lostreply_harness::scenario::model::Scenario;
use lostreply_reports::model::{Check, Evidence, Finding, FindingKind, Invariant, Violation};
use lostreply_simulator::RequestKind;

use super::drive::Made;
use crate::proxy::rules::Facts;
use crate::proxy::Entry;
use crate::readback::Found;

/// Everything the judge reads.
pub(super) struct Seen<'a> {
    pub scenario: &'a Scenario,
    /// By operation position: its marker.
    pub markers: &'a [String],
    pub calls: &'a [Made],
    pub journal: &'a [Entry],
    /// By operation position: what the read-back found.
    pub found: &'a [Found],
    /// Object ids a `retrieve` through the contract answered for (true) or
    /// refused with 404 (false); only for counted read-backs.
    pub retrieved: &'a BTreeMap<String, bool>,
    /// Whether the scenario's provider documents idempotency keys.
    pub keyed: bool,
}

/// The violations, in the invariants' order, and the findings.
pub(super) fn judge(seen: &Seen<'_>) -> (Vec<Violation>, Vec<Finding>) {
    let mut v = Vec::new();
    at_most_once(seen, &mut v);
    success_has_effect(seen, &mut v);
    failure_has_no_effect(seen, &mut v);
    terminal_is_final(seen, &mut v);
    same_key_same_body(seen, &mut v);
    status_is_read_only(seen, &mut v);
    (v, findings(seen))
}

fn violation(
    invariant: Invariant,
    op: Option<&str>,
    message: String,
    evidence: Vec<Evidence>,
) -> Violation {
    Violation::builder()
        .check(Check::Invariant(invariant))
        .maybe_operation_id(op.map(str::to_owned))
        .message(message)
        .evidence(evidence)
        .build()
}

fn op_id<'a>(seen: &'a Seen<'_>, position: usize) -> &'a str {
    seen.scenario.operations[position].id.as_str()
}

fn effect_evidence(found: &Found) -> Vec<Evidence> {
    found
        .ids
        .iter()
        .flatten()
        .map(|id| Evidence::Effect { id: id.clone() })
        .collect()
}

fn read_as(found: &Found) -> String {
    match &found.ids {
        Some(ids) if !ids.is_empty() => format!(
            "{} by {}: {}",
            found.count,
            found.method.name(),
            ids.join(", ")
        ),
        _ => format!("{} by {}", found.count, found.method.name()),
    }
}

/// Invariant 1: at most one object carries each operation's marker.
fn at_most_once(seen: &Seen<'_>, v: &mut Vec<Violation>) {
    for (position, found) in seen.found.iter().enumerate() {
        if found.count > 1 {
            let op = op_id(seen, position);
            let mut evidence = effect_evidence(found);
            evidence.extend(creates_of(seen, position).map(|e| Evidence::Request { seq: e.seq }));
            v.push(violation(
                Invariant::AtMostOnce,
                Some(op),
                format!(
                    "{op}: the service holds {} objects carrying its marker {} (read back {})",
                    found.count,
                    seen.markers[position],
                    read_as(found)
                ),
                evidence,
            ));
        }
    }
}

/// The calls of an operation that carry an outcome, in the order they were made.
fn outcome_calls<'a>(
    seen: &'a Seen<'_>,
    position: usize,
) -> impl Iterator<Item = (usize, &'a Made, &'a OutcomeReply)> {
    seen.calls
        .iter()
        .enumerate()
        .filter(move |(_, c)| c.op == position)
        .filter_map(|(i, c)| c.outcome.as_ref().map(|o| (i, c, o)))
}

/// Whether `call`'s reply relays a person's decision made in a `resolve`
/// of the same operation that started before the reply was given.
fn relays_person(seen: &Seen<'_>, call: &Made, reply: &OutcomeReply) -> bool {
    seen.calls.iter().any(|resolve| {
        resolve.name == CallName::Resolve
            && resolve.op == call.op
            && call.end_ms >= resolve.start_ms
            && Decision::from_request(&resolve.request).is_some_and(|d| d.is_said_by(reply))
    })
}

/// Invariant 2: `succeeded` names an object that carries the operation's marker.
fn success_has_effect(seen: &Seen<'_>, v: &mut Vec<Violation>) {
    for (position, found) in seen.found.iter().enumerate() {
        let op = op_id(seen, position);
        for (index, call, reply) in outcome_calls(seen, position) {
            if reply.outcome != OutcomeKind::Succeeded || relays_person(seen, call, reply) {
                continue;
            }
            if let Some(problem) = success_problem(seen, found, reply.provider_ref.as_deref()) {
                let mut evidence = vec![Evidence::Call { index }];
                evidence.extend(effect_evidence(found));
                v.push(violation(
                    Invariant::NoSuccessWithoutEffect,
                    Some(op),
                    format!("{op}: {} {problem}", call.name.as_str()),
                    evidence,
                ));
                break;
            }
        }
    }
}

fn success_problem(seen: &Seen<'_>, found: &Found, named: Option<&str>) -> Option<String> {
    let Some(named) = named else {
        return Some("reported succeeded naming no object".to_owned());
    };
    if found.count == 0 {
        return Some(format!(
            "reported succeeded with {named}, but no object carries the operation's marker (read back {})",
            read_as(found)
        ));
    }
    match &found.ids {
        Some(ids) if !ids.is_empty() && !ids.iter().any(|id| id == named) => Some(format!(
            "reported succeeded with {named}, which is not an object carrying the operation's marker (read back {})",
            read_as(found)
        )),
        Some(_) => None,
        None => (seen.retrieved.get(named) == Some(&false)).then(|| {
            format!("reported succeeded with {named}, which the service's retrieve does not find (404)")
        }),
    }
}

/// Invariant 3: `failed` while an object carries the operation's marker.
fn failure_has_no_effect(seen: &Seen<'_>, v: &mut Vec<Violation>) {
    for (position, found) in seen.found.iter().enumerate() {
        if found.count == 0 {
            continue;
        }
        let op = op_id(seen, position);
        let failed = outcome_calls(seen, position).find(|(_, call, reply)| {
            reply.outcome == OutcomeKind::Failed && !relays_person(seen, call, reply)
        });
        if let Some((index, call, _)) = failed {
            let mut evidence = vec![Evidence::Call { index }];
            evidence.extend(effect_evidence(found));
            v.push(violation(
                Invariant::NoFailureWithEffect,
                Some(op),
                format!(
                    "{op}: {} reported failed, but the service holds {} (read back {})",
                    call.name.as_str(),
                    plural(
                        found.count,
                        "object carrying its marker",
                        "objects carrying its marker"
                    ),
                    read_as(found)
                ),
                evidence,
            ));
        }
    }
}

/// Invariant 4: once `succeeded` or `failed`, every later report says the
/// same (a `succeeded` naming no object may come to name one; a pending or
/// unknown reply of a call that started before the terminal one ended ran
/// beside it and is not later).
fn terminal_is_final(seen: &Seen<'_>, v: &mut Vec<Violation>) {
    for position in 0..seen.found.len() {
        let op = op_id(seen, position);
        let mut terminal: Option<(usize, &Made, &OutcomeReply)> = None;
        for (index, call, reply) in outcome_calls(seen, position) {
            let Some((first_index, first_call, first)) = terminal else {
                if matches!(reply.outcome, OutcomeKind::Succeeded | OutcomeKind::Failed) {
                    terminal = Some((index, call, reply));
                }
                continue;
            };
            let names_the_object = first.outcome == OutcomeKind::Succeeded
                && first.provider_ref.is_none()
                && reply.outcome == OutcomeKind::Succeeded;
            let formed_before = call.start_ms < first_call.end_ms
                && matches!(reply.outcome, OutcomeKind::Pending | OutcomeKind::Unknown);
            if names_the_object {
                terminal = Some((index, call, reply));
            } else if formed_before {
                continue;
            } else if first.outcome != reply.outcome || first.provider_ref != reply.provider_ref {
                v.push(violation(
                    Invariant::TerminalIsFinal,
                    Some(op),
                    format!(
                        "{op}: reported {} ({}) in call {first_index}, then {} ({}) in call {index}",
                        first.outcome.as_str(),
                        first.provider_ref.as_deref().unwrap_or("no ref"),
                        reply.outcome.as_str(),
                        reply.provider_ref.as_deref().unwrap_or("no ref"),
                    ),
                    vec![Evidence::Call { index: first_index }, Evidence::Call { index }],
                ));
                break;
            }
        }
    }
}

/// Whether a journaled request is a create.
fn is_create(entry: &Entry) -> bool {
    Facts::read(&entry.method, &entry.path, None).kind == Some(RequestKind::Create)
}

fn body_of(entry: &Entry) -> &[u8] {
    entry.body.as_deref().unwrap_or_default()
}

/// The create requests whose body carries the operation's marker.
fn creates_of<'a>(seen: &'a Seen<'_>, position: usize) -> impl Iterator<Item = &'a Entry> {
    let marker = seen.markers[position].as_bytes();
    seen.journal
        .iter()
        .filter(move |e| is_create(e) && crate::proxy::carries(body_of(e), marker))
}

/// Bodies compared as JSON values where both parse (the order of members is
/// not an argument), as bytes otherwise.
fn same_body(a: &[u8], b: &[u8]) -> bool {
    match (
        serde_json::from_slice::<serde_json::Value>(a),
        serde_json::from_slice::<serde_json::Value>(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Invariant 5: every create attempt of an operation carries the same key
/// (where the provider documents keys) and the same body; a create that
/// carries no operation's marker was asked for by no operation.
fn same_key_same_body(seen: &Seen<'_>, v: &mut Vec<Violation>) {
    for position in 0..seen.found.len() {
        let op = op_id(seen, position);
        let mut creates = creates_of(seen, position);
        let Some(first) = creates.next() else {
            continue;
        };
        for other in creates {
            let problem = if seen.keyed && other.key != first.key {
                Some(format!(
                    "key {} on request #{}, key {} on request #{}",
                    first.key.as_deref().unwrap_or("(none)"),
                    first.seq,
                    other.key.as_deref().unwrap_or("(none)"),
                    other.seq
                ))
            } else if !same_body(body_of(first), body_of(other)) {
                Some(format!(
                    "request #{} sent another body than request #{}",
                    other.seq, first.seq
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                v.push(violation(
                    Invariant::SameKeySameArgs,
                    Some(op),
                    format!("{op}: its create attempts differ: {problem}"),
                    vec![
                        Evidence::Request { seq: first.seq },
                        Evidence::Request { seq: other.seq },
                    ],
                ));
                break;
            }
        }
    }
    let orphans = seen.journal.iter().filter(|e| {
        is_create(e)
            && !seen
                .markers
                .iter()
                .any(|m| crate::proxy::carries(body_of(e), m.as_bytes()))
    });
    for orphan in orphans {
        v.push(violation(
            Invariant::SameKeySameArgs,
            None,
            format!(
                "create request #{} ({} {}) carries no operation's marker: the adapter created something no operation asked for, or sent the operation's id nowhere the read-back looks",
                orphan.seq, orphan.method, orphan.path
            ),
            vec![Evidence::Request { seq: orphan.seq }],
        ));
    }
}

/// Invariant 6: a `status` call that ran alone sent nothing to the service.
fn status_is_read_only(seen: &Seen<'_>, v: &mut Vec<Violation>) {
    for (index, call) in seen.calls.iter().enumerate() {
        let Some((before, after)) = call.journal else {
            continue;
        };
        if call.name != CallName::Status || after <= before {
            continue;
        }
        let op = op_id(seen, call.op);
        v.push(violation(
            Invariant::StatusIsReadOnly,
            Some(op),
            format!(
                "{op}: status sent {} to the service",
                plural((after - before) as usize, "request", "requests")
            ),
            std::iter::once(Evidence::Call { index })
                .chain((before + 1..=after).map(|seq| Evidence::Request { seq }))
                .collect(),
        ));
    }
}

/// A resolution the read-back contradicts: `failed` while an object carries
/// the marker, or `succeeded` while none does.
fn findings(seen: &Seen<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, call) in seen.calls.iter().enumerate() {
        if call.name != CallName::Resolve {
            continue;
        }
        let (Some(Decision { outcome, .. }), Some(found)) = (
            Decision::from_request(&call.request),
            seen.found.get(call.op),
        ) else {
            continue;
        };
        let contradicted = match outcome {
            OutcomeKind::Failed => found.count > 0,
            OutcomeKind::Succeeded => found.count == 0,
            OutcomeKind::Pending | OutcomeKind::Unknown => false,
        };
        if contradicted {
            let op = op_id(seen, call.op);
            let mut evidence = vec![Evidence::Call { index }];
            evidence.extend(effect_evidence(found));
            out.push(
                Finding::builder()
                    .kind(FindingKind::ResolutionContradictsLedger)
                    .operation_id(op.to_owned())
                    .message(format!(
                        "{op}: a person resolved it as {}, and the service holds {} (read back {})",
                        outcome.as_str(),
                        plural(
                            found.count,
                            "object carrying its marker",
                            "objects carrying its marker"
                        ),
                        read_as(found)
                    ))
                    .evidence(evidence)
                    .build(),
            );
        }
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

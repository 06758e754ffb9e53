//! The seven invariants.

use lostreply_reports::model::{Check, Evidence, Invariant, Violation};
use lostreply_simulator::{Effect, ObjectStatus, Plan};

use super::attribution::Attribution;
use super::grouped::{pos, Pos, NONE};
use super::index::Index;
use super::resolution;
use super::truth::status_at;
use crate::protocol::{CallName, OutcomeKind, OutcomeReply};
use crate::run::observation::{Call, CallAt, Observation};

pub(crate) fn check_all(obs: &Observation, a: &Attribution<'_>, ix: &Index<'_>) -> Vec<Violation> {
    let mut v = Vec::new();
    at_most_once(obs, a, &mut v);
    success_has_effect(obs, a, ix, &mut v);
    failure_has_no_effect(obs, a, ix, &mut v);
    terminal_is_final(obs, ix, &mut v);
    same_key_same_args(obs, a, &mut v);
    status_is_read_only(obs, &mut v);
    forged_changes_nothing(obs, &mut v);
    resolution::review_after_contradiction(obs, a, &mut v);
    v
}

/// The person's decisions the operation at `position` took (see
/// [`resolution::relays_person`]): empty, unallocated, for most operations.
fn persons_word<'o>(ix: &Index<'o>, position: usize) -> Vec<resolution::Applied<'o>> {
    resolution::applied(
        ix.outcome_calls_at(position)
            .filter(|c| c.name == CallName::Resolve),
    )
}

fn effect_evidence(effects: &[&Effect]) -> Vec<Evidence> {
    let mut ev = Vec::new();
    for e in effects {
        if let Some(seq) = e.request() {
            ev.push(Evidence::Request { seq });
        }
        ev.push(Evidence::Effect {
            id: e.id.to_string(),
        });
    }
    ev
}

/// Invariant 1: at most one effect per logical operation (a group: no more than its operations).
fn at_most_once(obs: &Observation, a: &Attribution<'_>, v: &mut Vec<Violation>) {
    for g in 0..a.group_count() {
        let ops = a.ops_of_group(g).len();
        // Counted first: the effects are gathered only for a breach.
        if a.effect_positions(g).len() > ops {
            let effects = a.effects_of_group(g, &obs.ledger);
            let ids: Vec<&str> = effects.iter().map(|e| e.id.as_str()).collect();
            let keys: Vec<String> = effects
                .iter()
                .map(|e| e.idempotency_key.as_deref().unwrap_or("no key").to_owned())
                .collect();
            let who = a.group_label(g);
            v.push(
                Violation::builder()
                    .check(Check::Invariant(Invariant::AtMostOnce))
                    .maybe_operation_id(a.first_op(g).map(str::to_owned))
                    .message(format!(
                        "{who}: {} effects for {} operation(s): {} (keys: {})",
                        effects.len(),
                        ops,
                        ids.join(", "),
                        keys.join(", ")
                    ))
                    .evidence(effect_evidence(&effects))
                    .build(),
            );
        }
    }
}

/// Invariant 2: `succeeded` names a provider_ref that is one of the operation's effects,
/// done (not still processing, not settled failed), and claimed by no other operation.
fn success_has_effect(
    obs: &Observation,
    a: &Attribution<'_>,
    ix: &Index<'_>,
    v: &mut Vec<Violation>,
) {
    // By ledger position, the first operation (and call) that claimed each
    // effect, as positions ([`NONE`]: not claimed; 8 bytes an effect where
    // the id and call took 24, a million of them at the checks' peak): a
    // ref with no problem names an effect of the ledger, and two refs name
    // the same effect exactly when they are the same id.
    let mut claimed: Vec<(Pos, Pos)> = vec![(NONE, NONE); obs.ledger.len()];
    for (position, op) in obs.scenario.operations.iter().enumerate() {
        let Some(g) = a.group_at(position) else {
            continue;
        };
        let mut reported = false;
        let person = persons_word(ix, position);
        for call in ix.outcome_calls_at(position) {
            let Some(reply) = call.outcome() else {
                continue;
            };
            if reply.outcome != OutcomeKind::Succeeded || resolution::relays_person(&person, call) {
                continue;
            }
            let effect = reply.provider_ref.as_deref().and_then(|r| ix.effect(r));
            let problem = success_problem(obs, a, g, reply.provider_ref.as_deref(), effect, call);
            if let Some(problem) = problem {
                if !reported {
                    let mut evidence = vec![call.evidence()];
                    if let Some((_, e)) = effect {
                        evidence.push(Evidence::Effect {
                            id: e.id.to_string(),
                        });
                    }
                    evidence.extend(effect_evidence(&a.effects_of_group(g, &obs.ledger)));
                    v.push(
                        Violation::builder()
                            .check(Check::Invariant(Invariant::NoSuccessWithoutEffect))
                            .operation_id(op.id.to_string())
                            .message(format!("{}: {} {problem}", op.id, call.name.as_str()))
                            .evidence(evidence)
                            .build(),
                    );
                    reported = true;
                }
                continue;
            }
            let (Some(r), Some((p, _))) = (&reply.provider_ref, effect) else {
                continue;
            };
            if let Some(slot) = claimed.get_mut(p) {
                if let Some(violation) = claim(obs, slot, position, call, r) {
                    v.push(violation);
                }
            }
        }
    }
}

/// What is wrong with a `succeeded` that names `provider_ref` (found in the
/// ledger as `effect`), for an operation of group `g`; `None` when nothing is.
fn success_problem(
    obs: &Observation,
    a: &Attribution<'_>,
    g: usize,
    provider_ref: Option<&str>,
    effect: Option<(usize, &Effect)>,
    call: CallAt<'_>,
) -> Option<String> {
    match (provider_ref, effect) {
        (None, _) => Some("reports succeeded with no provider_ref".to_owned()),
        (Some(r), None) => Some(format!(
            "reports succeeded with provider_ref {r}, which is not in the ledger"
        )),
        (Some(r), Some((p, _))) if a.group_of_effect(p) != Some(g) => Some(format!(
            "reports succeeded with provider_ref {r}, which is not an effect of this operation"
        )),
        (Some(r), Some((_, e)))
            if status_at(&obs.scenario.plan, e, call.sim_ms) == ObjectStatus::Processing =>
        {
            Some(format!("reports succeeded while {r} is still processing"))
        }
        (Some(_), Some(_)) => None,
    }
}

/// Claims the effect `r` (whose `slot` holds its first claim) for the
/// operation at `position`: a violation when another operation claimed it
/// first.
fn claim(
    obs: &Observation,
    slot: &mut (Pos, Pos),
    position: usize,
    call: CallAt<'_>,
    r: &str,
) -> Option<Violation> {
    // Operation ids are unique: another position is another operation.
    match *slot {
        (NONE, _) => {
            *slot = (pos(position), pos(call.position));
            None
        }
        (other, other_call) if other != pos(position) => {
            let operations = &obs.scenario.operations;
            let op = operations.get(position).map_or("", |o| o.id.as_str());
            let other = operations.get(other as usize).map_or("", |o| o.id.as_str());
            Some(
                Violation::builder()
                    .check(Check::Invariant(Invariant::NoSuccessWithoutEffect))
                    .operation_id(op.to_owned())
                    .message(format!("{op} and {other} both claim the one effect {r}"))
                    .evidence(vec![
                        Evidence::Call {
                            index: other_call as usize,
                        },
                        call.evidence(),
                        Evidence::Effect { id: r.to_string() },
                    ])
                    .build(),
            )
        }
        _ => None,
    }
}

/// Invariant 3: no failure while an effect exists; an object that settled `failed` is a
/// confirmed failure, so claiming success for it is the violation instead.
fn failure_has_no_effect(
    obs: &Observation,
    a: &Attribution<'_>,
    ix: &Index<'_>,
    v: &mut Vec<Violation>,
) {
    let plan = &obs.scenario.plan;
    for (position, op) in obs.scenario.operations.iter().enumerate() {
        let Some(g) = a.group_at(position) else {
            continue;
        };
        let effects = || {
            a.effect_positions(g)
                .iter()
                .filter_map(|&p| obs.ledger.get(p as usize))
        };
        let person = persons_word(ix, position);
        let share = shared_group(a, ix, g);
        for call in ix.outcome_calls_at(position) {
            let Some(reply) = call.outcome() else {
                continue;
            };
            if resolution::relays_person(&person, call) {
                continue;
            }
            let mut problem = failure_problem(plan, &op.id, effects, call, reply, share);
            if let (Some(_), Some((_, live)), OutcomeKind::Failed) =
                (share, &problem, reply.outcome)
            {
                if !live
                    .iter()
                    .any(|e| e.client_reference.as_deref() == Some(op.id.as_str()))
                    && live.len() <= possible_owners(obs, a, ix, g, position, live)
                {
                    problem = None;
                }
            }
            if let Some((message, shown)) = problem {
                let mut evidence = vec![call.evidence()];
                evidence.extend(effect_evidence(&shown));
                v.push(
                    Violation::builder()
                        .check(Check::Invariant(Invariant::NoFailureWithEffect))
                        .operation_id(op.id.to_string())
                        .message(message)
                        .evidence(evidence)
                        .build(),
                );
                break;
            }
        }
    }
}

/// For a group of operations with identical arguments, how many of its
/// effects the operations that never reported `failed` account for: its
/// effects cannot be told apart by their arguments, so a `failed` in it is
/// judged by counting. `None` for a group of one operation.
fn shared_group(a: &Attribution<'_>, ix: &Index<'_>, g: usize) -> Option<usize> {
    let positions = a.op_positions_of_group(g);
    if positions.len() < 2 {
        return None;
    }
    let failed = positions
        .iter()
        .filter(|&&p| reported_failed(ix, p as usize))
        .count();
    Some(positions.len() - failed)
}

/// How many other operations of group `g` could own one of `live` (effects
/// live when the operation at `position` said `failed`) without a `failed`
/// of their own being wrong: those that never said `failed`, on their own
/// word, while that effect was live. The count `shared_group` makes takes
/// every operation that ever said `failed` out; one that said it only once
/// the effect had settled failed could own it all along.
fn possible_owners(
    obs: &Observation,
    a: &Attribution<'_>,
    ix: &Index<'_>,
    g: usize,
    position: usize,
    live: &[&Effect],
) -> usize {
    let plan = &obs.scenario.plan;
    a.op_positions_of_group(g)
        .iter()
        .map(|&p| p as usize)
        .filter(|&p| p != position)
        .filter(|&p| {
            let person = persons_word(ix, p);
            let said_failed: Vec<i64> = ix
                .outcome_calls_at(p)
                .filter(|call| {
                    call.outcome()
                        .is_some_and(|r| r.outcome == OutcomeKind::Failed)
                        && !resolution::relays_person(&person, *call)
                })
                .map(|call| call.sim_ms)
                .collect();
            live.iter().any(|e| {
                said_failed
                    .iter()
                    .all(|&at| status_at(plan, e, at) == ObjectStatus::Failed)
            })
        })
        .count()
}

/// Whether the operation at `position` reported `failed` on its own word
/// (not relaying a person's decision).
fn reported_failed(ix: &Index<'_>, position: usize) -> bool {
    let person = persons_word(ix, position);
    ix.outcome_calls_at(position).any(|call| {
        call.outcome()
            .is_some_and(|r| r.outcome == OutcomeKind::Failed)
            && !resolution::relays_person(&person, call)
    })
}

/// What is wrong with a `failed` (an effect is live) or a `succeeded` (its
/// effect settled failed) about operation `op`, with the effects shown as
/// evidence; `None` when nothing is. `share`: for an operation whose group
/// shares its arguments, how many live effects its other operations account
/// for; a `failed` is then wrong only when the group's live effects outnumber
/// them, or an effect names `op` as its `client_reference`.
fn failure_problem<'l, I: Iterator<Item = &'l Effect>>(
    plan: &Plan,
    op: &str,
    effects: impl Fn() -> I,
    call: CallAt<'_>,
    reply: &OutcomeReply,
    share: Option<usize>,
) -> Option<(String, Vec<&'l Effect>)> {
    // Gathered only for the outcome that needs them: one Vec per call
    // would be most of this check's allocations at a million operations.
    match reply.outcome {
        OutcomeKind::Failed => {
            // `failed` is true only once every effect has settled failed: an
            // object still processing at the reply could not have told anyone.
            let live: Vec<&Effect> = effects()
                .filter(|e| status_at(plan, e, call.sim_ms) != ObjectStatus::Failed)
                .collect();
            let wrong = match share {
                None => !live.is_empty(),
                Some(room) => {
                    live.len() > room
                        || live
                            .iter()
                            .any(|e| e.client_reference.as_deref() == Some(op))
                }
            };
            wrong.then(|| {
                (
                    format!(
                        "{op}: {} reports failed, but the provider holds {}{}",
                        call.name.as_str(),
                        ids(&live),
                        if live.iter().all(|e| e.status == ObjectStatus::Failed) {
                            " (still processing at that moment: it settled failed only later)"
                        } else {
                            ""
                        }
                    ),
                    live,
                )
            })
        }
        OutcomeKind::Succeeded => {
            let settled_failed: Vec<&Effect> = effects()
                // The status first: comparing every effect's id (cold
                // memory) would be most of this check at a million
                // operations.
                .filter(|e| {
                    e.status == ObjectStatus::Failed
                        && Some(e.id.as_str()) == reply.provider_ref.as_deref()
                })
                .collect();
            (!settled_failed.is_empty()).then(|| {
                (
                    format!(
                        "{op}: {} reports succeeded, but {} settled failed",
                        call.name.as_str(),
                        ids(&settled_failed)
                    ),
                    effects().collect(),
                )
            })
        }
        OutcomeKind::Pending | OutcomeKind::Unknown => None,
    }
}

/// True when `call` may have begun before `terminal` ended. Times are
/// whole milliseconds: inside one step (a `parallel` one), a call that
/// began in the millisecond the other ended may have begun first; a call
/// of a later step began after every call of an earlier one had ended.
fn ran_beside(call: &Call, terminal: &Call) -> bool {
    call.start_ms < terminal.end_ms
        || (call.step == terminal.step && call.step != 0 && call.start_ms == terminal.end_ms)
}

fn ids(effects: &[&Effect]) -> String {
    effects
        .iter()
        .map(|e| e.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Invariant 4: once `succeeded` or `failed` is reported, every later report says the same
/// (a `succeeded` without an id may come to name one; a non-terminal reply of a call that
/// ran beside the terminal one is not later than it).
fn terminal_is_final(obs: &Observation, ix: &Index<'_>, v: &mut Vec<Violation>) {
    for (position, op) in obs.scenario.operations.iter().enumerate() {
        let mut terminal: Option<CallAt<'_>> = None;
        for call in ix.outcome_calls_at(position) {
            let Some(reply) = call.outcome() else {
                continue;
            };
            match terminal.and_then(|t| t.call.outcome().map(|o| (t, o))) {
                None => {
                    if matches!(reply.outcome, OutcomeKind::Succeeded | OutcomeKind::Failed) {
                        terminal = Some(call);
                    }
                }
                Some((first_call, first)) => {
                    // A `succeeded` with no id (a person's word may name
                    // none) may later name the object: that adds, it
                    // changes nothing (invariant 2 judges the id).
                    let names_the_object = first.outcome == OutcomeKind::Succeeded
                        && first.provider_ref.is_none()
                        && reply.outcome == OutcomeKind::Succeeded;
                    // A call that began before the terminal one ended ran
                    // beside it: its `pending` or `unknown` may have been
                    // formed first (a lock released before its process
                    // exits), so only its own terminal claim is judged.
                    let formed_before = ran_beside(call.call, first_call.call)
                        && matches!(reply.outcome, OutcomeKind::Pending | OutcomeKind::Unknown);
                    if names_the_object {
                        terminal = Some(call);
                    } else if formed_before {
                        continue;
                    } else if first.outcome != reply.outcome
                        || first.provider_ref != reply.provider_ref
                    {
                        v.push(
                            Violation::builder()
                                .check(Check::Invariant(Invariant::TerminalIsFinal))
                                .operation_id(op.id.to_string())
                                .message(format!(
                                    "{}: reported {} ({}) in call {}, then {} ({}) in call {}",
                                    op.id,
                                    first.outcome.as_str(),
                                    first.provider_ref.as_deref().unwrap_or("no ref"),
                                    first_call.position,
                                    reply.outcome.as_str(),
                                    reply.provider_ref.as_deref().unwrap_or("no ref"),
                                    call.position
                                ))
                                .evidence(vec![first_call.evidence(), call.evidence()])
                                .build(),
                        );
                        break;
                    }
                }
            }
        }
    }
}

/// Invariant 5: every create attempt of one operation carries the same key (where the
/// contract has keys) and the same arguments.
fn same_key_same_args(obs: &Observation, a: &Attribution<'_>, v: &mut Vec<Violation>) {
    let keyed = obs.scenario.plan.idempotency.mode != lostreply_simulator::IdempotencyMode::None;
    for g in 0..a.group_count() {
        // Ops sharing arguments on purpose are separate actions with separate keys;
        // the per-operation key rule only applies to single-operation groups.
        let requests = || {
            a.request_positions(g)
                .iter()
                .filter_map(|&p| obs.journal.get(p as usize))
        };
        let Some(first) = requests().next() else {
            continue;
        };
        let Some(op) = a.ops_of_group(g).next() else {
            continue;
        };
        let single = a.ops_of_group(g).len() == 1;
        for r in requests() {
            if a.changed_arguments.contains(&r.seq) {
                v.push(
                    Violation::builder()
                        .check(Check::Invariant(Invariant::SameKeySameArgs))
                        .operation_id(op.id.to_string())
                        .message(format!(
                            "{}: create request #{} carries other arguments than the operation's",
                            op.id, r.seq
                        ))
                        .evidence(vec![
                            Evidence::Request { seq: first.seq },
                            Evidence::Request { seq: r.seq },
                        ])
                        .build(),
                );
                break;
            }
            if keyed && single && r.idempotency_key != first.idempotency_key {
                v.push(
                    Violation::builder()
                        .check(Check::Invariant(Invariant::SameKeySameArgs))
                        .operation_id(op.id.to_string())
                        .message(format!(
                            "{}: create request #{} carries key {}, but #{} carried {}",
                            op.id,
                            r.seq,
                            r.idempotency_key.as_deref().unwrap_or("none"),
                            first.seq,
                            first.idempotency_key.as_deref().unwrap_or("none")
                        ))
                        .evidence(vec![
                            Evidence::Request { seq: first.seq },
                            Evidence::Request { seq: r.seq },
                        ])
                        .build(),
                );
                break;
            }
        }
    }
    for &seq in &a.unattributed_requests {
        v.push(Violation::builder().check(Check::Invariant(Invariant::SameKeySameArgs)).message(format!("create request #{seq} matches no operation's arguments or reference: the adapter created something no operation asked for")).evidence(vec![Evidence::Request { seq }]).build());
    }
}

/// Invariant 6: `status` sends nothing to the provider. Checked on calls made alone (in a
/// `parallel` step other calls' requests interleave and cannot be told apart).
fn status_is_read_only(obs: &Observation, v: &mut Vec<Violation>) {
    for call in CallAt::all(&obs.calls) {
        if call.name != CallName::Status {
            continue;
        }
        let Some((before, after)) = call.journal_window.get() else {
            continue;
        };
        let (before, after) = (before as usize, after as usize);
        if after > before {
            let seqs: Vec<u64> = obs.journal
                [before.min(obs.journal.len())..after.min(obs.journal.len())]
                .iter()
                .map(|e| e.seq)
                .collect();
            let mut evidence = vec![call.evidence()];
            evidence.extend(seqs.iter().map(|&seq| Evidence::Request { seq }));
            v.push(
                Violation::builder()
                    .check(Check::Invariant(Invariant::StatusIsReadOnly))
                    .maybe_operation_id(call.operation_id.as_deref().map(str::to_owned))
                    .message(format!(
                        "{}: status call {} sent {} request(s) to the provider",
                        call.operation_id.as_deref().unwrap_or("?"),
                        call.position,
                        seqs.len()
                    ))
                    .evidence(evidence)
                    .build(),
            );
        }
    }
}

/// Invariant 7: a forged webhook changes nothing: it is not accepted, the store's record
/// is the same before and after, and no effect appears.
fn forged_changes_nothing(obs: &Observation, v: &mut Vec<Violation>) {
    for probe in &obs.forged {
        let delivery = &obs.calls[probe.delivery];
        let before = probe.before.and_then(|i| obs.calls[i].outcome());
        let after = probe.after.and_then(|i| obs.calls[i].outcome());
        let accepted = delivery.webhook().is_some_and(|w| w.accepted);
        // The record is what the contract defines; `evidence` is free text an
        // adapter may rephrase (a timestamp, a counter) without changing anything.
        let record = |o: Option<&crate::protocol::OutcomeReply>| {
            o.map(|o| (o.outcome, o.provider_ref.clone(), o.needs_review))
        };
        let changed = record(before) != record(after);
        let grew = probe.ledger_len.1 > probe.ledger_len.0;
        let mut what = Vec::new();
        if accepted {
            what.push("accepted it".to_owned());
        }
        if changed {
            what.push(format!(
                "its record went from {} to {}",
                before.map(|o| o.outcome.as_str()).unwrap_or("no answer"),
                after.map(|o| o.outcome.as_str()).unwrap_or("no answer")
            ));
        }
        if grew {
            what.push("a new effect appeared".to_owned());
        }
        if !what.is_empty() {
            v.push(
                Violation::builder()
                    .check(Check::Invariant(Invariant::ForgedWebhookInert))
                    .operation_id(probe.operation_id.clone())
                    .message(format!(
                        "{}: a forged webhook (wrong signature) was delivered and the adapter {}",
                        probe.operation_id,
                        what.join("; ")
                    ))
                    .evidence(
                        probe
                            .before
                            .map(|index| Evidence::Call { index })
                            .into_iter()
                            .chain([Evidence::Delivery {
                                call_index: probe.delivery,
                            }])
                            .chain(probe.after.map(|index| Evidence::Call { index }))
                            .collect(),
                    )
                    .build(),
            );
        }
    }
}

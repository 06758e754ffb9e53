//! A `resolve` relays a person's decision: what the operator's console said
//! is the person's word, not the adapter's claim. An adapter that applies it
//! as the protocol requires is not judged by invariants 2 and 3 for it, even
//! when the ledger says otherwise; the report shows such a resolution as a
//! finding of its own, with the evidence, so that a person looks again.
//!
//! One rule follows from a resolution's finality (docs/adapter-protocol.md,
//! "When evidence contradicts a resolution"): a genuine event that arrives
//! after it and contradicts it leaves the outcome as decided and raises the
//! operation for review again (`needs_review: true`). Checked on the final
//! `status`, whatever the adapter did in between.

use lostreply_reports::model::{
    Check, EventShows, Evidence, Finding, FindingKind, Rule, Violation,
};
use lostreply_simulator::{Effect, ObjectStatus};

use super::attribution::Attribution;
use super::truth::status_at;
use crate::protocol::{CallName, OutcomeKind, OutcomeReply};
use crate::run::observation::{Call, CallAt, Observation};

/// A person's decision as the harness sent it in a `resolve` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `succeeded` or `failed`.
    pub outcome: OutcomeKind,
    /// The object the person named, if one.
    pub provider_ref: Option<String>,
}

impl Decision {
    /// What a `resolve` call asked, read from its request.
    fn asked(call: &Call) -> Option<Decision> {
        if call.name != CallName::Resolve {
            return None;
        }
        Decision::from_request(&call.request.to_value())
    }

    /// The decision a `resolve` request carries (its `resolution`).
    pub fn from_request(request: &serde_json::Value) -> Option<Decision> {
        let resolution = request.get("resolution")?;
        let outcome = match resolution.get("outcome")?.as_str()? {
            "succeeded" => OutcomeKind::Succeeded,
            "failed" => OutcomeKind::Failed,
            _ => return None,
        };
        let provider_ref = resolution
            .get("provider_ref")
            .and_then(|r| r.as_str())
            .map(str::to_owned);
        Some(Decision {
            outcome,
            provider_ref,
        })
    }

    /// True when `reply` says exactly this decision.
    pub fn is_said_by(&self, reply: &OutcomeReply) -> bool {
        reply.outcome == self.outcome
            && reply.provider_ref.as_deref() == self.provider_ref.as_deref()
    }

    fn describe(&self) -> String {
        match &self.provider_ref {
            Some(r) => format!("{} ({r})", self.outcome.as_str()),
            None => format!("{} (no provider_ref)", self.outcome.as_str()),
        }
    }
}

/// A decision an operation's record took: the `resolve` call whose reply
/// relays it.
#[derive(Clone, Copy)]
pub(crate) struct Applied<'o> {
    pub call: CallAt<'o>,
}

impl Applied<'_> {
    fn decision(&self) -> Option<Decision> {
        Decision::asked(self.call.call)
    }
}

/// The decisions `calls` (one operation's outcome calls, in the order they
/// ended) applied: each `resolve` whose reply says what it was asked.
pub(crate) fn applied<'o>(calls: impl Iterator<Item = CallAt<'o>>) -> Vec<Applied<'o>> {
    calls
        .filter(|call| {
            let (Some(decision), Some(reply)) = (Decision::asked(call.call), call.outcome()) else {
                return false;
            };
            decision.is_said_by(reply)
        })
        .map(|call| Applied { call })
        .collect()
}

/// True when `call`'s reply is the person's word: it says what a decision
/// the record took says, and it is that `resolve` or came after it. Such a
/// reply relays the person, and is not judged as the adapter's claim.
pub(crate) fn relays_person(decisions: &[Applied<'_>], call: CallAt<'_>) -> bool {
    let Some(reply) = call.outcome() else {
        return false;
    };
    decisions.iter().any(|d| {
        (d.call.position == call.position || call.end_ms >= d.call.start_ms)
            && d.decision()
                .is_some_and(|decision| decision.is_said_by(reply))
    })
}

/// The `resolve` calls of the run, by the position of their operation in
/// the scenario, in call order: one pass over the calls (few are resolves),
/// so that a run of a million operations is not scanned once per operation.
fn resolves_by_operation<'o>(
    obs: &'o Observation,
    a: &Attribution<'_>,
) -> std::collections::BTreeMap<usize, Vec<CallAt<'o>>> {
    let mut by_op: std::collections::BTreeMap<usize, Vec<CallAt<'o>>> =
        std::collections::BTreeMap::new();
    for call in CallAt::all(&obs.calls) {
        if call.name != CallName::Resolve {
            continue;
        }
        let Some(position) = call
            .operation_id
            .as_deref()
            .and_then(|id| a.op_position(id))
        else {
            continue;
        };
        by_op.entry(position).or_default().push(call);
    }
    by_op
}

/// What the ledger says against `decision` at simulator time `at_ms`, given
/// the operation's effects: a sentence, or `None` when it agrees.
fn contradiction(
    obs: &Observation,
    decision: &Decision,
    effects: &[&Effect],
    at_ms: i64,
) -> Option<String> {
    let plan = &obs.scenario.plan;
    let failed = |e: &Effect| status_at(plan, e, at_ms) == ObjectStatus::Failed;
    match (decision.outcome, decision.provider_ref.as_deref()) {
        (OutcomeKind::Failed, _) => {
            let live: Vec<&str> = effects
                .iter()
                .filter(|e| !failed(e))
                .map(|e| e.id.as_str())
                .collect();
            (!live.is_empty()).then(|| format!("the provider holds {}", live.join(", ")))
        }
        (_, Some(r)) => match effects.iter().find(|e| e.id.as_str() == r) {
            None if obs.ledger.iter().any(|e| e.id.as_str() == r) => {
                Some(format!("{r} is not an effect of this operation"))
            }
            None => Some(format!("{r} is not in the provider's ledger")),
            Some(e) if failed(e) => Some(format!("{r} settled failed")),
            Some(_) => {
                let others: Vec<&str> = effects
                    .iter()
                    .filter(|e| e.id.as_str() != r && !failed(e))
                    .map(|e| e.id.as_str())
                    .collect();
                (!others.is_empty())
                    .then(|| format!("the provider also holds {}", others.join(", ")))
            }
        },
        (_, None) => (effects.iter().all(|e| failed(e))).then(|| {
            if effects.is_empty() {
                "the provider holds no effect of this operation".to_owned()
            } else {
                "every effect of this operation settled failed".to_owned()
            }
        }),
    }
}

fn effect_evidence<'e>(effects: &'e [&'e Effect]) -> impl Iterator<Item = Evidence> + 'e {
    effects.iter().map(|e| Evidence::Effect {
        id: e.id.to_string(),
    })
}

/// The resolutions that contradict the ledger at the moment they were
/// applied, as findings (never violations: the decision is the person's).
pub(crate) fn findings(obs: &Observation, a: &Attribution<'_>) -> Vec<Finding> {
    let mut found = Vec::new();
    for (position, calls) in resolves_by_operation(obs, a) {
        let (Some(op), Some(group)) = (obs.scenario.operations.get(position), a.group_at(position))
        else {
            continue;
        };
        for applied in applied(calls.into_iter()) {
            let Some(decision) = applied.decision() else {
                continue;
            };
            let effects = a.effects_of_group(group, &obs.ledger);
            if let Some(why) = contradiction(obs, &decision, &effects, applied.call.sim_ms) {
                let mut evidence = vec![applied.call.evidence()];
                evidence.extend(effect_evidence(&effects));
                found.push(
                    Finding::builder()
                        .kind(FindingKind::ResolutionContradictsLedger)
                        .operation_id(op.id.to_string())
                        .message(format!(
                            "the operator resolved {}, but {why}",
                            decision.describe()
                        ))
                        .evidence(evidence)
                        .build(),
                );
            }
        }
    }
    found
}

/// The rule: a genuine event delivered after the operation's last applied
/// decision, about one of its effects, that contradicts that decision,
/// leaves the outcome as decided and the operation in review at the end.
/// Where operations share their arguments, an effect is the operation's
/// when its `client_reference` names it.
pub(crate) fn review_after_contradiction(
    obs: &Observation,
    a: &Attribution<'_>,
    v: &mut Vec<Violation>,
) {
    for (position, resolves) in resolves_by_operation(obs, a) {
        let (Some(op), Some(group)) = (obs.scenario.operations.get(position), a.group_at(position))
        else {
            continue;
        };
        let Some(last) = applied(resolves.into_iter()).pop() else {
            continue;
        };
        let Some(decision) = last.decision() else {
            continue;
        };
        let mut effects = a.effects_of_group(group, &obs.ledger);
        if a.op_positions_of_group(group).len() > 1 {
            // Operations with identical arguments: an event tells an adapter
            // about one of them only through the reference its object
            // carries, so only an object naming this operation is its.
            effects.retain(|e| e.client_reference.as_deref() == Some(op.id.as_str()));
        }
        let Some((delivery, why)) = contradicting_delivery(obs, &decision, &effects, last) else {
            continue;
        };
        let Some(status) = obs.final_status.get(position).and_then(|i| {
            let call = obs.calls.get(i)?;
            Some(CallAt { position: i, call })
        }) else {
            continue;
        };
        let Some(reply) = status.outcome() else {
            continue;
        };
        if reply.needs_review && reply.outcome == decision.outcome {
            continue;
        }
        let what = if reply.outcome != decision.outcome {
            format!("the final status says {}", reply.outcome.as_str())
        } else {
            "the final status has needs_review false".to_owned()
        };
        v.push(Violation::builder().check(Check::Rule {
                rule: Rule::ReviewAfterContradiction,
            }).operation_id(op.id.to_string()).message(format!(
                "{}: the operator resolved {}, then a genuine event showed that {why}; {what}: a contradicted resolution keeps its outcome and is raised for review again",
                op.id,
                decision.describe()
            )).evidence(vec![
                last.call.evidence(),
                Evidence::Delivery {
                    call_index: delivery,
                },
                status.evidence(),
            ]).build());
    }
}

/// What an event about `effect`, of the operation, delivered at simulator
/// time `at_ms`, shows against `decision`: a sentence, or `None` when it
/// agrees. An object is judged by its state at the delivery: one still
/// processing contradicts no `failed` yet (it may settle failed, and an
/// adapter that looks it up then may rightly wait for its settling), one
/// settled failed agrees with it; an object settled failed contradicts a
/// success only by an event that says so: a `created` event tells nothing
/// of what became of it.
fn event_contradicts(
    obs: &Observation,
    decision: &Decision,
    effect: &Effect,
    at_ms: i64,
    shows: Option<EventShows>,
) -> Option<String> {
    let id = effect.id.as_str();
    let status = status_at(&obs.scenario.plan, effect, at_ms);
    let failed = status == ObjectStatus::Failed;
    // Reports written before deliveries said what they show: the state at
    // the delivery stands in.
    let says_failed = shows.map_or(failed, |s| s == EventShows::Failed);
    match (decision.outcome, decision.provider_ref.as_deref()) {
        (OutcomeKind::Failed, _) => {
            (status == ObjectStatus::Succeeded).then(|| format!("the provider holds {id}"))
        }
        (_, Some(r)) if r == id => says_failed.then(|| format!("{id} settled failed")),
        (_, Some(_)) => {
            (status == ObjectStatus::Succeeded).then(|| format!("the provider also holds {id}"))
        }
        (_, None) => says_failed.then(|| format!("{id} settled failed")),
    }
}

/// The first genuine delivery after `last` ended, of an event not delivered
/// before it (a repeat of an event the adapter had before the decision is
/// no new evidence, and a correct adapter dedupes it), about an effect of
/// the operation, whose effect's state at the delivery contradicts
/// `decision`: its call index and why.
fn contradicting_delivery(
    obs: &Observation,
    decision: &Decision,
    effects: &[&Effect],
    last: Applied<'_>,
) -> Option<(usize, String)> {
    let before_decision = |event_id: &str| {
        obs.deliveries.iter().any(|d| {
            d.event_id == event_id
                && obs
                    .calls
                    .get(d.call_index)
                    .is_some_and(|c| c.start_ms < last.call.end_ms)
        })
    };
    obs.deliveries.iter().find_map(|d| {
        let call = obs.calls.get(d.call_index)?;
        if d.forged || call.start_ms < last.call.end_ms || before_decision(&d.event_id) {
            return None;
        }
        let about = d.object_id.as_deref()?;
        let effect = effects.iter().find(|e| e.id.as_str() == about)?;
        let why = event_contradicts(obs, decision, effect, call.sim_ms, d.shows)?;
        Some((d.call_index, why))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use lostreply_reports::model::SharedJson;
    use lostreply_reports::model::{
        Check, DeliveryRecord, FindingKind, Invariant, RecordedRequest, Rule,
    };
    use lostreply_simulator::RequestKind;
    use serde_json::json;

    use super::*;
    use crate::check::check;
    use crate::signals::tests::{Run, T0};
    use CallName::{Execute, Reconcile, Resolve, Webhook};
    use OutcomeKind::{Failed, Succeeded, Unknown};

    /// op-1's create committed `tkt_1` and its answer was lost.
    fn lost_after_commit() -> Run {
        let mut run = Run::new();
        let create = run.request(RequestKind::Create, "a", T0);
        run.commit(create, "tkt_1");
        run.call(Execute, "op-1", Some(Unknown), T0, 1);
        run
    }

    /// A `resolve` of op-1 asking `outcome` (no id), its reply saying `said`.
    fn resolve(run: &mut Run, outcome: OutcomeKind, said: OutcomeKind) -> usize {
        let call = run.call(Resolve, "op-1", Some(said), T0, 0);
        run.obs.calls[call].request = RecordedRequest::from(SharedJson::new(&json!({
            "operation_id": "op-1",
            "resolution": {"outcome": outcome.as_str(), "provider_ref": null,
                           "evidence": "looked", "by": "operator"},
        })));
        call
    }

    fn checks_of(run: &Run) -> Vec<Check> {
        let attribution = Attribution::of(&run.obs);
        check(&run.obs, &attribution)
            .into_iter()
            .map(|v| v.check)
            .collect()
    }

    fn findings_of(run: &Run) -> Vec<FindingKind> {
        let attribution = Attribution::of(&run.obs);
        findings(&run.obs, &attribution)
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }

    const NO_FAILURE: Check = Check::Invariant(Invariant::NoFailureWithEffect);

    #[test]
    fn a_relayed_decision_against_the_ledger_is_a_finding_not_a_violation() {
        let mut run = lost_after_commit();
        resolve(&mut run, Failed, Failed);
        run.final_status(0, Failed, false, T0);
        assert!(
            !checks_of(&run).contains(&NO_FAILURE),
            "{:?}",
            checks_of(&run)
        );
        assert_eq!(
            findings_of(&run),
            [FindingKind::ResolutionContradictsLedger]
        );
    }

    #[test]
    fn the_adapters_own_failed_is_still_judged() {
        let mut run = lost_after_commit();
        // A resolve asking `succeeded` whose reply says `failed` relays nothing.
        resolve(&mut run, Succeeded, Failed);
        run.call(Reconcile, "op-1", Some(Failed), T0, 0);
        run.final_status(0, Failed, false, T0);
        assert!(checks_of(&run).contains(&NO_FAILURE));
        assert!(findings_of(&run).is_empty());
    }

    /// The genuine `created` event about `tkt_1`, delivered in a call
    /// starting at `start_ms`.
    fn deliver_created(run: &mut Run, start_ms: u32) {
        deliver(run, start_ms, "evt_1", None);
    }

    fn deliver(run: &mut Run, start_ms: u32, event_id: &str, shows: Option<EventShows>) {
        let delivery = run.call(Webhook, "op-1", None, T0, 0);
        run.obs.calls[delivery].start_ms = start_ms;
        run.obs.deliveries.push(
            DeliveryRecord::builder()
                .step(1)
                .event_id(event_id.into())
                .event_type("tickets.created".into())
                .object_id("tkt_1".into())
                .maybe_shows(shows)
                .forged(false)
                .attempt(1)
                .call_index(delivery)
                .build(),
        );
    }

    /// `tkt_1` settled failed; a person said `succeeded` (no id); then an
    /// event showing `shows` about it.
    fn succeeded_then_event(shows: EventShows) -> Vec<Check> {
        let mut run = lost_after_commit();
        run.obs.ledger[0].status = ObjectStatus::Failed;
        let decided = resolve(&mut run, Succeeded, Succeeded);
        run.obs.calls[decided].end_ms = 10;
        deliver(&mut run, 20, "evt_2", Some(shows));
        run.final_status(0, Succeeded, false, T0);
        checks_of(&run)
    }

    #[test]
    fn only_an_event_that_says_failed_shows_a_failure() {
        let rule = Check::Rule {
            rule: Rule::ReviewAfterContradiction,
        };
        // A `created` event says the object exists, not what became of it.
        assert!(!succeeded_then_event(EventShows::Created).contains(&rule));
        assert!(succeeded_then_event(EventShows::Failed).contains(&rule));
    }

    /// A decision of `failed` ending at 10 ms, the genuine `created` event
    /// about `tkt_1` delivered at `deliveries_ms`; the final status in
    /// review or not.
    fn contradicted_at(deliveries_ms: &[u32], review: bool) -> Vec<Check> {
        let mut run = lost_after_commit();
        let decided = resolve(&mut run, Failed, Failed);
        run.obs.calls[decided].start_ms = 5;
        run.obs.calls[decided].end_ms = 10;
        for &at in deliveries_ms {
            deliver_created(&mut run, at);
        }
        run.final_status(0, Failed, review, T0);
        checks_of(&run)
    }

    fn contradicted(review: bool) -> Vec<Check> {
        contradicted_at(&[20], review)
    }

    #[test]
    fn an_event_the_adapter_had_before_the_decision_is_no_new_evidence() {
        let rule = Check::Rule {
            rule: Rule::ReviewAfterContradiction,
        };
        // Delivered at 2 ms (before the decision) and again at 20 ms: a
        // repeat that a correct adapter dedupes.
        assert!(!contradicted_at(&[2, 20], false).contains(&rule));
    }

    /// A `failed` decided while the object is still processing: its
    /// `created` event contradicts nothing yet (it may settle failed).
    #[test]
    fn an_object_still_processing_contradicts_no_failed_yet() {
        let rule = Check::Rule {
            rule: Rule::ReviewAfterContradiction,
        };
        let mut run = lost_after_commit();
        run.obs.scenario.plan.asynchronous = Some(
            lostreply_simulator::plan::Asynchronous::builder()
                .settle_after(std::time::Duration::from_secs(3600))
                .result(lostreply_simulator::plan::SettleResult::Succeeded)
                .build(),
        );
        let decided = resolve(&mut run, Failed, Failed);
        run.obs.calls[decided].start_ms = 5;
        run.obs.calls[decided].end_ms = 10;
        deliver_created(&mut run, 20);
        run.final_status(0, Failed, false, T0);
        assert!(!checks_of(&run).contains(&rule));
    }

    #[test]
    fn a_contradicted_decision_must_be_raised_for_review_again() {
        let rule = Check::Rule {
            rule: Rule::ReviewAfterContradiction,
        };
        assert!(contradicted(false).contains(&rule));
        assert!(!contradicted(true).contains(&rule));
    }

    /// A terminal reply in a call over `0..100` ms real time, and an
    /// `unknown` in a call over `start..start + 50`.
    fn unknown_after_terminal(start: u32) -> Vec<Check> {
        let mut run = lost_after_commit();
        let done = run.call(Reconcile, "op-1", Some(Failed), T0, 0);
        run.obs.calls[done].end_ms = 100;
        let other = run.call(Reconcile, "op-1", Some(Unknown), T0, 0);
        run.obs.calls[other].start_ms = start;
        run.obs.calls[other].end_ms = start + 50;
        checks_of(&run)
    }

    #[test]
    fn an_unknown_formed_beside_a_terminal_reply_is_not_later_than_it() {
        let terminal_is_final = Check::Invariant(Invariant::TerminalIsFinal);
        assert!(!unknown_after_terminal(60).contains(&terminal_is_final));
        assert!(unknown_after_terminal(110).contains(&terminal_is_final));
    }

    /// Times are whole milliseconds: a call of the same step that began in
    /// the millisecond the terminal one ended may have begun first; one of a
    /// later step began after it.
    #[test]
    fn an_unknown_begun_the_millisecond_a_terminal_reply_ended_is_beside_it_only_in_its_step() {
        let terminal_is_final = Check::Invariant(Invariant::TerminalIsFinal);
        assert!(!unknown_after_terminal(100).contains(&terminal_is_final));
        let mut run = lost_after_commit();
        let done = run.call(Reconcile, "op-1", Some(Failed), T0, 0);
        run.obs.calls[done].end_ms = 100;
        let later = run.call(Reconcile, "op-1", Some(Unknown), T0, 0);
        run.obs.calls[later].step = 2;
        run.obs.calls[later].start_ms = 100;
        run.obs.calls[later].end_ms = 150;
        assert!(checks_of(&run).contains(&terminal_is_final));
    }
}

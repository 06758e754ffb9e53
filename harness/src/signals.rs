//! The production signals of one scenario run ([`Signals`]), from its
//! observation: the adapter's calls and replies, the provider's journal and
//! ledger, and which operation each create and effect belongs to (the
//! checks' attribution, which [`crate::report_build::prepare`] holds when it
//! calls [`compute`]). docs/report-json.md defines each signal; the rules are
//! restated beside the code that applies them.
//!
//! The provider a reply is counted under is the scenario's declared profile
//! name, carried as a label: no signal depends on which profile served a
//! request. Everything here is one pass over the calls, plus passes over the
//! journal and the groups that only run when something calls for them, and
//! keeps state only for the operations that were ambiguous, reconciled or
//! duplicated (a million-operation run that answers plainly allocates
//! nothing per operation).

use std::collections::BTreeMap;

use lostreply_reports::model::{
    Action, Ambiguity, Confirmation, ConfirmedBy, KeyNearExpiry, LateDuplicate, OperationAge,
    OperationCount, OutcomeKind, SharedStr, Signals, UnknownReplies,
};
use lostreply_simulator::fixed_map::{map_with_capacity, FixedMap};
use lostreply_simulator::{IdempotencyMode, JournalEntry, RequestKind};

use crate::check::attribution::Attribution;
use crate::protocol::CallName;
use crate::run::observation::{Call, Observation};

/// A key is near its expiry when less than this share of its retention is
/// left: 1/10.
const NEAR_EXPIRY_DIVISOR: i64 = 10;

/// The signals of `obs`; `attribution` must be the one built from it.
pub fn compute(obs: &Observation, attribution: &Attribution<'_>) -> Signals {
    let duplicated = duplicated_operations(attribution);
    let calls = CallScan::run(obs, attribution, &duplicated);
    let mut signals = {
        let mut changed = Signals::default();
        changed.keys_near_expiry = keys_near_expiry(obs, attribution);
        changed.late_duplicates = late_duplicates(obs, attribution, &calls.first_final);
        changed.reconcile_attempts = calls.reconcile_attempts;
        changed
    };
    signals.unknown_replies = calls
        .unknown
        .into_iter()
        .map(|((tool, action, provider), count)| {
            UnknownReplies::builder()
                .tool(tool)
                .action(action)
                .provider(provider)
                .count(count)
                .build()
        })
        .collect();
    signals.most_reconciled = most_reconciled(obs, &calls.reconciles);
    let mut ambiguous: Vec<(usize, AmbiguityState)> = calls.ambiguous.into_iter().collect();
    ambiguous.sort_unstable_by_key(|(position, _)| *position);
    // An operation left unknown was reported ambiguous (its final status
    // at least): its age runs from its first ambiguous reply to that status.
    for (position, state) in &ambiguous {
        let left_unknown = obs
            .final_outcome(*position)
            .is_some_and(|o| o.outcome == OutcomeKind::Unknown);
        if !left_unknown {
            continue;
        }
        let age_ms = final_call_sim_ms(obs, *position).map_or(0, |end| {
            end.saturating_sub(state.since_sim_ms).max(0).unsigned_abs()
        });
        let older = signals
            .oldest_unknown
            .as_ref()
            .is_none_or(|o| age_ms > o.age_ms);
        if older {
            signals.oldest_unknown = Some(
                OperationAge::builder()
                    .operation_id(operation_id(obs, *position))
                    .age_ms(age_ms)
                    .build(),
            );
        }
    }
    for position in 0..obs.scenario.operations.len() {
        if let Some(o) = obs.final_outcome(position) {
            signals.needs_review += u64::from(o.needs_review);
            signals.left_unknown += u64::from(o.outcome == OutcomeKind::Unknown);
        }
    }
    signals.ambiguities = ambiguous
        .into_iter()
        .map(|(position, state)| {
            Ambiguity::builder()
                .operation_id(operation_id(obs, position))
                .since_sim_ms(state.since_sim_ms)
                .maybe_confirmed(state.confirmed)
                .build()
        })
        .collect();
    signals
}

/// The id of the operation at `position`, shared.
fn operation_id(obs: &Observation, position: usize) -> SharedStr {
    obs.scenario
        .operations
        .get(position)
        .map(|op| op.id.clone())
        .unwrap_or_default()
}

/// The simulator clock of the final `status` call of the operation at `position`.
fn final_call_sim_ms(obs: &Observation, position: usize) -> Option<i64> {
    obs.final_status
        .get(position)
        .and_then(|i| obs.calls.get(i))
        .map(|c| c.sim_ms)
}

/// An operation reported ambiguous, as the calls go by.
#[derive(Debug, Default)]
struct AmbiguityState {
    since_sim_ms: i64,
    /// What the latest evidence of its calls since then showed.
    evidence: Option<ConfirmedBy>,
    confirmed: Option<Confirmation>,
}

/// What one pass over the calls gathers.
struct CallScan {
    /// Unknown replies by tool, action and provider.
    unknown: BTreeMap<(SharedStr, Action, SharedStr), u64>,
    /// By operation position: its ambiguity, for those that had one.
    ambiguous: FixedMap<usize, AmbiguityState>,
    /// By operation position: its reconcile calls, for those that had any.
    reconciles: FixedMap<usize, u64>,
    reconcile_attempts: u64,
    /// By operation position, for the operations of groups with more
    /// effects than operations: the first call whose reply said
    /// `succeeded` or `failed`.
    first_final: FixedMap<usize, usize>,
}

impl CallScan {
    /// `duplicated`: the positions, sorted, of the operations whose group
    /// has more effects than operations.
    fn run(obs: &Observation, attribution: &Attribution<'_>, duplicated: &[usize]) -> CallScan {
        let labels = Labels::of(obs);
        let mut scan = CallScan {
            unknown: BTreeMap::new(),
            ambiguous: map_with_capacity(0),
            reconciles: map_with_capacity(0),
            reconcile_attempts: 0,
            first_final: map_with_capacity(0),
        };
        for (index, call) in obs.calls.iter().enumerate() {
            // The harness's own `status` probes around a forged delivery
            // are its looking, not the adapter's answers in the run.
            if call.probe {
                continue;
            }
            let outcome = call.outcome().map(|o| o.outcome);
            // Most calls of a plain run matter to no signal: their
            // operation is not looked up (a million-operation run makes two
            // million calls).
            let matters = call.name == CallName::Reconcile
                || matches!(outcome, Some(OutcomeKind::Unknown | OutcomeKind::Pending))
                || !scan.ambiguous.is_empty()
                || !duplicated.is_empty();
            if !matters {
                continue;
            }
            let Some(position) = call
                .operation_id
                .as_deref()
                .and_then(|id| attribution.op_position(id))
            else {
                continue;
            };
            if call.name == CallName::Reconcile {
                scan.reconcile_attempts += 1;
                *scan.reconciles.entry(position).or_default() += 1;
            }
            if outcome == Some(OutcomeKind::Unknown) {
                if let Some(action) = action(call.name) {
                    *scan
                        .unknown
                        .entry(labels.of_call(obs, position, action))
                        .or_default() += 1;
                }
            }
            let is_final = matches!(outcome, Some(OutcomeKind::Succeeded | OutcomeKind::Failed));
            if is_final && duplicated.binary_search(&position).is_ok() {
                scan.first_final.entry(position).or_insert(index);
            }
            scan.follow_ambiguity(obs, attribution, index, position, outcome);
        }
        scan
    }

    /// An ambiguity starts at the operation's first `unknown` or `pending`
    /// reply, and ends at the first `succeeded` or `failed` one after it;
    /// what confirmed it is that call's own evidence, or else the latest
    /// evidence of the operation's calls in between.
    fn follow_ambiguity(
        &mut self,
        obs: &Observation,
        attribution: &Attribution<'_>,
        index: usize,
        position: usize,
        outcome: Option<OutcomeKind>,
    ) {
        let Some(call) = obs.calls.get(index) else {
            return;
        };
        match self.ambiguous.get_mut(&position) {
            None => {
                if matches!(outcome, Some(OutcomeKind::Unknown | OutcomeKind::Pending)) {
                    self.ambiguous.insert(
                        position,
                        AmbiguityState {
                            since_sim_ms: call.sim_ms,
                            ..AmbiguityState::default()
                        },
                    );
                }
            }
            Some(state) if state.confirmed.is_some() => {}
            Some(state) => {
                let evidence = call_evidence(obs, attribution, index, position);
                match outcome {
                    Some(kind @ (OutcomeKind::Succeeded | OutcomeKind::Failed)) => {
                        state.confirmed = Some(
                            Confirmation::builder()
                                .call_index(u32::try_from(index).unwrap_or(u32::MAX))
                                .outcome(kind)
                                .after_ms(
                                    call.sim_ms
                                        .saturating_sub(state.since_sim_ms)
                                        .max(0)
                                        .unsigned_abs(),
                                )
                                .by(evidence.or(state.evidence).unwrap_or(ConfirmedBy::Other))
                                .build(),
                        );
                    }
                    Some(OutcomeKind::Unknown | OutcomeKind::Pending) | None => {
                        if evidence.is_some() {
                            state.evidence = evidence;
                        }
                    }
                }
            }
        }
    }
}

/// The action a reply answered; a webhook's reply has no outcome.
pub fn action(name: CallName) -> Option<Action> {
    match name {
        CallName::Execute => Some(Action::Execute),
        CallName::Reconcile => Some(Action::Reconcile),
        CallName::Resolve => Some(Action::Resolve),
        CallName::Status => Some(Action::Status),
        CallName::Webhook => None,
    }
}

/// The labels an unknown reply is counted under: the scenario's declared
/// provider (its profile's name), made once.
struct Labels {
    provider: SharedStr,
    mcp: SharedStr,
}

impl Labels {
    fn of(obs: &Observation) -> Labels {
        Labels {
            provider: SharedStr::from(obs.scenario.plan.profile.name.as_str()),
            mcp: SharedStr::from("mcp"),
        }
    }

    /// The tool (an MCP operation's tool, or the resource), the action and
    /// the provider (`mcp` for an MCP operation).
    fn of_call(
        &self,
        obs: &Observation,
        position: usize,
        action: Action,
    ) -> (SharedStr, Action, SharedStr) {
        match obs.scenario.operations.get(position) {
            Some(op) => match &op.tool {
                Some(tool) => (tool.clone(), action, self.mcp.clone()),
                None => (op.resource.clone(), action, self.provider.clone()),
            },
            None => (SharedStr::default(), action, self.provider.clone()),
        }
    }
}

/// What a call shows about its operation's outcome:
/// - a `resolve` call: a person;
/// - a `webhook` call with a genuine delivery the adapter accepted: an event;
/// - otherwise by the provider requests the call made: a replayed create
///   (replay), else a create that made an effect (new attempt), else a
///   lookup (retrieve, search, list, an MCP retrieval tool);
/// - nothing else.
fn call_evidence(
    obs: &Observation,
    attribution: &Attribution<'_>,
    index: usize,
    position: usize,
) -> Option<ConfirmedBy> {
    let call = obs.calls.get(index)?;
    match call.name {
        CallName::Resolve => Some(ConfirmedBy::Person),
        CallName::Webhook => {
            let forged = obs
                .deliveries
                .iter()
                .any(|d| d.call_index == index && d.forged);
            let accepted = call.webhook().is_some_and(|w| w.accepted);
            (accepted && !forged).then_some(ConfirmedBy::Event)
        }
        CallName::Execute | CallName::Reconcile | CallName::Status => {
            let mut replay = false;
            let mut new_attempt = false;
            let mut lookup = false;
            for_each_request(obs, attribution, call, position, |r| {
                let create = r.kind == Some(RequestKind::Create);
                replay |= create && r.replayed;
                new_attempt |= create && !r.replayed && r.effect.is_some();
                lookup |= matches!(
                    r.kind,
                    Some(RequestKind::Retrieve | RequestKind::Search | RequestKind::List)
                );
            });
            if replay {
                Some(ConfirmedBy::Replay)
            } else if new_attempt {
                Some(ConfirmedBy::NewAttempt)
            } else if lookup {
                Some(ConfirmedBy::Lookup)
            } else {
                None
            }
        }
    }
}

/// Calls `f` with each provider request `call` made: those the journal
/// received while it ran alone; for a call inside a `parallel` step, where
/// requests interleave, the creates of its step attributed to its operation.
fn for_each_request(
    obs: &Observation,
    attribution: &Attribution<'_>,
    call: &Call,
    position: usize,
    mut f: impl FnMut(&JournalEntry),
) {
    match call.journal_window.get() {
        Some((before, after)) => {
            let window = obs
                .journal
                .get(before as usize..after as usize)
                .unwrap_or_default();
            window.iter().for_each(f);
        }
        None => {
            let Some(group) = attribution.group_at(position) else {
                return;
            };
            for &p in attribution.request_positions(group) {
                if let Some(r) = obs.journal.get(p as usize) {
                    if r.step.map(|s| s.get()) == Some(call.step) {
                        f(r);
                    }
                }
            }
        }
    }
}

/// The operation with the most reconcile calls (the first in the
/// scenario's order on a tie).
fn most_reconciled(obs: &Observation, reconciles: &FixedMap<usize, u64>) -> Option<OperationCount> {
    let (&position, &count) = reconciles
        .iter()
        .max_by_key(|(&position, &count)| (count, std::cmp::Reverse(position)))?;
    Some(
        OperationCount::builder()
            .operation_id(operation_id(obs, position))
            .count(count)
            .build(),
    )
}

/// Requests of the adapter's tenant that sent a key with less than a tenth
/// of its retention left, or after it expired. A key's retention runs from
/// its first use (the provider forgets it that long after); a request that
/// finds it expired uses it afresh, and its retention runs from there.
fn keys_near_expiry(obs: &Observation, attribution: &Attribution<'_>) -> Vec<KeyNearExpiry> {
    let idempotency = &obs.scenario.plan.idempotency;
    if idempotency.mode == IdempotencyMode::None {
        return Vec::new();
    }
    let retention_ms = i64::try_from(idempotency.retention.as_millis()).unwrap_or(i64::MAX);
    let near_ms = retention_ms / NEAR_EXPIRY_DIVISOR;
    // No request can come near a key's expiry before the clock has moved
    // that far: most runs never do, and keep no table of keys.
    let (Some(first), Some(last)) = (obs.journal.first(), obs.journal.last()) else {
        return Vec::new();
    };
    if last.at_ms.saturating_sub(first.at_ms) < retention_ms.saturating_sub(near_ms) {
        return Vec::new();
    }
    let mut first_use: FixedMap<&str, i64> = map_with_capacity(0);
    let mut found = Vec::new();
    for (position, r) in obs.journal.iter().enumerate() {
        let (Some(key), Some(tenant)) = (r.idempotency_key.as_deref(), r.tenant.as_deref()) else {
            continue;
        };
        if tenant != obs.credential {
            continue;
        }
        let start = *first_use.entry(key).or_insert(r.at_ms);
        let remaining_ms = retention_ms.saturating_sub(r.at_ms.saturating_sub(start));
        if remaining_ms <= 0 {
            first_use.insert(key, r.at_ms);
        }
        if remaining_ms < near_ms {
            found.push((position, r.seq, remaining_ms));
        }
    }
    if found.is_empty() {
        return Vec::new();
    }
    // The operation each request's create is attributed to: one walk over
    // the groups' requests, only when some key came near its expiry.
    let mut operation_of: FixedMap<usize, SharedStr> = map_with_capacity(found.len());
    for group in 0..attribution.group_count() {
        let requests = attribution.request_positions(group);
        for &p in requests {
            if found.iter().any(|(position, _, _)| *position == p as usize) {
                if let Some(first_op) = attribution.first_op(group) {
                    let id = attribution
                        .op_position(first_op)
                        .map(|op| operation_id(obs, op))
                        .unwrap_or_default();
                    operation_of.insert(p as usize, id);
                }
            }
        }
    }
    found
        .into_iter()
        .map(|(position, seq, remaining_ms)| {
            KeyNearExpiry::builder()
                .maybe_operation_id(operation_of.remove(&position))
                .seq(seq)
                .remaining_ms(remaining_ms)
                .build()
        })
        .collect()
}

/// The positions, sorted, of the operations whose group has more effects
/// than operations (each operation may have one).
fn duplicated_operations(attribution: &Attribution<'_>) -> Vec<usize> {
    let mut found: Vec<usize> = (0..attribution.group_count())
        .filter(|&g| {
            attribution.effect_positions(g).len() > attribution.op_positions_of_group(g).len()
        })
        .flat_map(|g| {
            attribution
                .op_positions_of_group(g)
                .iter()
                .map(|&p| p as usize)
        })
        .collect();
    found.sort_unstable();
    found
}

/// Effects beyond a group's operations' count (each operation may have one,
/// and the first ones in ledger order are theirs) that the provider made
/// after an operation of the group had been reported `succeeded` or
/// `failed`: their request arrived after that call ended (in the journal's
/// order for a call that ran alone, in a later step for one in `parallel`).
fn late_duplicates(
    obs: &Observation,
    attribution: &Attribution<'_>,
    first_final: &FixedMap<usize, usize>,
) -> Vec<LateDuplicate> {
    let mut found = Vec::new();
    for group in 0..attribution.group_count() {
        let ops = attribution.op_positions_of_group(group);
        let effects = attribution.effect_positions(group);
        if effects.len() <= ops.len() {
            continue;
        }
        let Some(final_call) = ops
            .iter()
            .filter_map(|&p| first_final.get(&(p as usize)).copied())
            .min()
        else {
            continue;
        };
        let Some(call) = obs.calls.get(final_call) else {
            continue;
        };
        let Some(&first_op) = ops.first() else {
            continue;
        };
        for &e in effects.get(ops.len()..).unwrap_or_default() {
            let Some(effect) = obs.ledger.get(e as usize) else {
                continue;
            };
            let request = effect.request().and_then(|seq| {
                obs.journal
                    .binary_search_by_key(&seq, |r| r.seq)
                    .ok()
                    .map(|position| (position, obs.journal.get(position)))
            });
            let Some((request_position, Some(request))) = request else {
                continue;
            };
            let later = match call.journal_window.get() {
                Some((_, after)) => request_position >= after as usize,
                None => request.step.is_some_and(|s| s.get() > call.step),
            };
            if later {
                found.push((
                    e,
                    LateDuplicate::builder()
                        .operation_id(operation_id(obs, first_op as usize))
                        .effect_id(effect.id.clone())
                        .reported_final_call(u32::try_from(final_call).unwrap_or(u32::MAX))
                        .build(),
                ));
            }
        }
    }
    found.sort_unstable_by_key(|(e, _)| *e);
    found.into_iter().map(|(_, d)| d).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]
    use lostreply_reports::model::{CallEnd, DeliveryRecord, OutcomeReply, SharedJson};
    use lostreply_simulator::{
        canonical_json, nonmax_u32, Effect, JsonText, ObjectStatus, ResponseFate,
    };
    use serde_json::json;

    use super::*;
    use crate::run::observation::{FinalCalls, JournalWindow, Reply, TextReply};

    pub(crate) const T0: i64 = 1_767_225_600_000;
    const HOUR_MS: i64 = 3_600_000;

    /// A run of four operations (`op-1` … `op-4`, titles `a` … `d`) on a
    /// provider with 10-hour keys, to which each test adds its calls,
    /// requests and effects by hand.
    pub(crate) struct Run {
        pub(crate) obs: Observation,
    }

    impl Run {
        pub(crate) fn new() -> Run {
            let yaml = "version: 1\nid: t\ntitle: t\n\
                provider:\n  idempotency: {mode: stripe, retention: 10h}\n  \
                lookup: {retrieve: true, client_reference: true, list_recent: true}\n\
                operations:\n\
                \x20 - {id: op-1, resource: tickets, args: {title: a}}\n\
                \x20 - {id: op-2, resource: tickets, args: {title: b}}\n\
                \x20 - {id: op-3, resource: tickets, args: {title: c}}\n\
                \x20 - {id: op-4, resource: tickets, args: {title: d}}\n\
                steps:\n  - execute: op-1\n";
            let scenario = crate::scenario::parse(yaml, "t.yaml").unwrap();
            let operations = scenario.operations.len();
            Run {
                obs: Observation {
                    scenario,
                    seed: 1,
                    credential: "sk_test_a".to_owned(),
                    calls: Vec::new(),
                    stderr: Default::default(),
                    steps: Vec::new(),
                    deliveries: Vec::new(),
                    forged: Vec::new(),
                    ledger: Vec::new(),
                    journal: Vec::new(),
                    simulator_offset_ms: 0,
                    sim_start_ms: T0,
                    final_status: FinalCalls::new(operations),
                    errors: Vec::new(),
                    infra_failed: false,
                    duration_ms: 0,
                },
            }
        }

        /// A call of `op` at `sim_ms`, replying `outcome`, made while the
        /// journal grew by `requests` (a call that ran alone). Its position.
        pub(crate) fn call(
            &mut self,
            name: CallName,
            op: &str,
            outcome: Option<OutcomeKind>,
            sim_ms: i64,
            requests: u32,
        ) -> usize {
            let before = self.journal_len_at_calls();
            let reply = outcome.map_or(Reply::Absent, |outcome| {
                Reply::Outcome(OutcomeReply::new(op, outcome, "e"))
            });
            self.obs.calls.push(Call {
                step: 1,
                name,
                probe: false,
                start_ms: 0,
                end_ms: 0,
                journal_window: JournalWindow::new(before, before + requests),
                operation_id: Some(op.into()),
                request: SharedJson::new(&json!({})).into(),
                reply,
                end: CallEnd::Replied,
                sim_ms,
            });
            self.obs.calls.len() - 1
        }

        /// Where the last call's journal window ended (0 before any call).
        fn journal_len_at_calls(&self) -> u32 {
            self.obs
                .calls
                .last()
                .and_then(|c| c.journal_window.get())
                .map_or(0, |(_, after)| after)
        }

        /// A request to the provider; its seq.
        pub(crate) fn request(&mut self, kind: RequestKind, title: &str, sim_ms: i64) -> u64 {
            let seq = self.obs.journal.len() as u64 + 1;
            let create = kind == RequestKind::Create;
            self.obs.journal.push(JournalEntry {
                seq,
                at_ms: sim_ms,
                real_start_ms: 0,
                real_end_ms: None,
                tenant: Some("sk_test_a".into()),
                method: if create { "POST" } else { "GET" }.into(),
                path: "/v1/tickets".into(),
                query: None,
                kind: Some(kind),
                resource: Some("tickets".into()),
                idempotency_key: create.then(|| SharedStr::from(format!("key-{title}"))),
                fingerprint: create.then(|| canonical_json(&json!({"title": title})).into()),
                fault: None,
                effect: None,
                replayed: false,
                step: Some(nonmax_u32(1)),
                rpc: None,
                fate: ResponseFate::Sent {
                    status: 200,
                    client_left: false,
                },
            });
            seq
        }

        /// The create at `seq` made an effect.
        pub(crate) fn commit(&mut self, seq: u64, id: &str) {
            let entry = &mut self.obs.journal[seq as usize - 1];
            entry.effect = Some(id.into());
            self.obs.ledger.push(Effect {
                seq: self.obs.ledger.len() as u64 + 1,
                id: id.into(),
                tenant: "sk_test_a".into(),
                resource: "tickets".into(),
                args: JsonText::of(&serde_json::Map::new()),
                client_reference: None,
                metadata: None,
                idempotency_key: entry.idempotency_key.clone(),
                fingerprint: Default::default(),
                attempt: 1,
                created_at_ms: entry.at_ms,
                status: ObjectStatus::Succeeded,
                request_seq: Some(lostreply_simulator::nonmax_u64(seq)),
            });
        }

        /// The final status of `op` (its position `position`): `outcome`.
        pub(crate) fn final_status(
            &mut self,
            position: usize,
            outcome: OutcomeKind,
            review: bool,
            sim_ms: i64,
        ) {
            let op = format!("op-{}", position + 1);
            let call = self.call(CallName::Status, &op, Some(outcome), sim_ms, 0);
            self.obs.calls[call].step = 0;
            if let Some(o) = self.obs.calls[call].outcome_mut() {
                o.needs_review = review;
            }
            self.obs.final_status.set(position, call);
        }

        fn signals(&self) -> Signals {
            let attribution = Attribution::of(&self.obs);
            compute(&self.obs, &attribution)
        }
    }

    use CallName::{Execute, Reconcile, Resolve, Status, Webhook};
    use OutcomeKind::{Pending, Succeeded, Unknown};

    #[test]
    fn unknown_replies_are_counted_by_tool_action_and_provider() {
        let mut run = Run::new();
        run.call(Execute, "op-1", Some(Unknown), T0, 0);
        run.call(Reconcile, "op-1", Some(Unknown), T0, 0);
        run.call(Reconcile, "op-2", Some(Unknown), T0, 0);
        run.call(Reconcile, "op-2", Some(Pending), T0, 0);
        // The harness's own probe is not counted.
        let probe = run.call(Status, "op-1", Some(Unknown), T0, 0);
        run.obs.calls[probe].probe = true;
        let counts: Vec<(String, Action, String, u64)> = run
            .signals()
            .unknown_replies
            .into_iter()
            .map(|u| {
                (
                    u.tool.to_string(),
                    u.action,
                    u.provider.to_string(),
                    u.count,
                )
            })
            .collect();
        let generic = |action, count| ("tickets".to_owned(), action, "generic".to_owned(), count);
        assert_eq!(
            counts,
            [generic(Action::Execute, 1), generic(Action::Reconcile, 2)]
        );
    }

    #[test]
    fn an_mcp_operation_is_counted_under_its_tool_and_mcp() {
        let mut run = Run::new();
        run.obs.scenario.operations[0].make_mut().tool = Some("create_ticket".into());
        run.call(Execute, "op-1", Some(Unknown), T0, 0);
        let u = &run.signals().unknown_replies[0];
        assert_eq!(
            (u.tool.as_str(), u.provider.as_str()),
            ("create_ticket", "mcp")
        );
    }

    /// op-1 by replay, op-2 by lookup, op-3 by event, op-4 by a person; each
    /// first ambiguous at its own time, confirmed later.
    fn four_confirmations() -> Run {
        let mut run = Run::new();
        // op-1: the create lost, then replayed on reconcile 5 s later.
        let lost = run.request(RequestKind::Create, "a", T0);
        run.commit(lost, "tkt_1");
        run.call(Execute, "op-1", Some(Unknown), T0, 1);
        let replayed = run.request(RequestKind::Create, "a", T0 + 5_000);
        run.obs.journal[replayed as usize - 1].replayed = true;
        run.call(Reconcile, "op-1", Some(Succeeded), T0 + 5_000, 1);
        // op-2: pending, then a lookup finds it 60 s later.
        run.call(Execute, "op-2", Some(Pending), T0, 0);
        run.request(RequestKind::Retrieve, "b", T0 + 60_000);
        run.call(Reconcile, "op-2", Some(OutcomeKind::Failed), T0 + 60_000, 1);
        // op-3: unknown; an event, then a status that reads the store.
        run.call(Execute, "op-3", Some(Unknown), T0 + 1_000, 0);
        let hook = run.call(Webhook, "op-3", None, T0 + 2_000, 0);
        run.obs.calls[hook].reply = Reply::Text(Box::new(TextReply {
            text: SharedJson::new(&json!({"accepted": true, "operation_id": "op-3"})),
            outcome: None,
        }));
        let delivery: DeliveryRecord = serde_json::from_value(json!({
            "step": 1, "event_id": "evt_1", "event_type": "tickets.created",
            "forged": false, "attempt": 1, "call_index": hook,
        }))
        .unwrap();
        run.obs.deliveries.push(delivery);
        run.call(Status, "op-3", Some(Succeeded), T0 + 3_000, 0);
        // op-4: unknown, then a person's resolution an hour later.
        run.call(Execute, "op-4", Some(Unknown), T0, 0);
        run.call(Resolve, "op-4", Some(Succeeded), T0 + HOUR_MS, 0);
        run
    }

    /// An ambiguity as the test reads it: operation, start after `T0`, and
    /// what confirmed it after how long.
    type Seen<'a> = (&'a str, i64, Option<(ConfirmedBy, u64)>);

    #[test]
    fn each_confirmation_says_what_it_rests_on_and_how_long_it_took() {
        let signals = four_confirmations().signals();
        let seen: Vec<Seen<'_>> = signals
            .ambiguities
            .iter()
            .map(|a| {
                (
                    a.operation_id.as_str(),
                    a.since_sim_ms - T0,
                    a.confirmed.as_ref().map(|c| (c.by, c.after_ms)),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("op-1", 0, Some((ConfirmedBy::Replay, 5_000))),
                ("op-2", 0, Some((ConfirmedBy::Lookup, 60_000))),
                ("op-3", 1_000, Some((ConfirmedBy::Event, 2_000))),
                ("op-4", 0, Some((ConfirmedBy::Person, HOUR_MS as u64))),
            ]
        );
    }

    #[test]
    fn a_forged_delivery_confirms_nothing() {
        let mut run = four_confirmations();
        run.obs.deliveries[0].forged = true;
        let signals = run.signals();
        let op3 = signals.ambiguities[2].confirmed.as_ref().unwrap();
        assert_eq!(op3.by, ConfirmedBy::Other);
    }

    #[test]
    fn a_create_sent_again_that_commits_is_a_new_attempt() {
        let mut run = Run::new();
        run.request(RequestKind::Create, "a", T0);
        run.call(Execute, "op-1", Some(Unknown), T0, 1);
        run.request(RequestKind::Retrieve, "a", T0 + 1);
        let again = run.request(RequestKind::Create, "a", T0 + 1);
        run.commit(again, "tkt_1");
        run.call(Reconcile, "op-1", Some(Succeeded), T0 + 1, 2);
        let a = &run.signals().ambiguities[0];
        assert_eq!(a.confirmed.as_ref().unwrap().by, ConfirmedBy::NewAttempt);
    }

    #[test]
    fn keys_near_and_past_their_expiry_are_found() {
        let mut run = Run::new();
        run.request(RequestKind::Create, "a", T0);
        // 8 h in: 2 h of 10 left, not near.
        run.request(RequestKind::Create, "a", T0 + 8 * HOUR_MS);
        // 9.5 h in: half an hour left, under the tenth (1 h).
        run.request(RequestKind::Create, "a", T0 + 9 * HOUR_MS + HOUR_MS / 2);
        // 11 h in: expired an hour ago; its retention starts again here.
        run.request(RequestKind::Create, "a", T0 + 11 * HOUR_MS);
        run.request(RequestKind::Create, "a", T0 + 12 * HOUR_MS);
        // Another key, used once.
        run.request(RequestKind::Create, "b", T0 + 12 * HOUR_MS);
        let found: Vec<(Option<String>, u64, i64)> = run
            .signals()
            .keys_near_expiry
            .into_iter()
            .map(|k| (k.operation_id.map(|o| o.to_string()), k.seq, k.remaining_ms))
            .collect();
        assert_eq!(
            found,
            [
                (Some("op-1".to_owned()), 3, HOUR_MS / 2),
                (Some("op-1".to_owned()), 4, -HOUR_MS),
            ]
        );
    }

    #[test]
    fn a_provider_without_keys_has_no_expiry() {
        let mut run = Run::new();
        run.obs.scenario.plan.idempotency.mode = IdempotencyMode::None;
        run.request(RequestKind::Create, "a", T0);
        run.request(RequestKind::Create, "a", T0 + 11 * HOUR_MS);
        assert!(run.signals().keys_near_expiry.is_empty());
    }

    #[test]
    fn a_duplicate_made_after_the_final_answer_is_late() {
        let mut run = Run::new();
        // op-1: one effect, reported succeeded, then a second effect.
        let first = run.request(RequestKind::Create, "a", T0);
        run.commit(first, "tkt_1");
        run.call(Execute, "op-1", Some(Succeeded), T0, 1);
        let again = run.request(RequestKind::Create, "a", T0);
        run.commit(again, "tkt_2");
        run.call(Reconcile, "op-1", Some(Succeeded), T0, 1);
        // op-2: two effects, both before its first final answer: a
        // duplicate, but not a late one.
        let one = run.request(RequestKind::Create, "b", T0);
        run.commit(one, "tkt_3");
        let two = run.request(RequestKind::Create, "b", T0);
        run.commit(two, "tkt_4");
        run.call(Execute, "op-2", Some(Succeeded), T0, 2);
        let late = run.signals().late_duplicates;
        assert_eq!(late.len(), 1, "{late:?}");
        assert_eq!(
            (late[0].operation_id.as_str(), late[0].effect_id.as_str()),
            ("op-1", "tkt_2")
        );
        assert_eq!(late[0].reported_final_call, 0);
    }

    #[test]
    fn reconcile_attempts_are_counted_with_the_most_reconciled_operation() {
        let mut run = Run::new();
        for _ in 0..3 {
            run.call(Reconcile, "op-2", Some(Unknown), T0, 0);
        }
        run.call(Reconcile, "op-1", Some(Unknown), T0, 0);
        run.call(Reconcile, "op-3", Some(Unknown), T0, 0);
        run.call(Reconcile, "op-3", Some(Unknown), T0, 0);
        run.call(Reconcile, "op-3", Some(Unknown), T0, 0);
        let signals = run.signals();
        assert_eq!(signals.reconcile_attempts, 7);
        // A tie goes to the first in the scenario's order.
        let most = signals.most_reconciled.unwrap();
        assert_eq!((most.operation_id.as_str(), most.count), ("op-2", 3));
    }

    #[test]
    fn escalations_and_the_oldest_unknown_come_from_the_final_status() {
        let mut run = Run::new();
        run.call(Execute, "op-1", Some(Unknown), T0 + HOUR_MS, 0);
        run.call(Execute, "op-2", Some(Unknown), T0, 0);
        run.call(Execute, "op-3", Some(Succeeded), T0, 0);
        run.final_status(0, Unknown, true, T0 + 25 * HOUR_MS);
        run.final_status(1, Unknown, false, T0 + 25 * HOUR_MS);
        run.final_status(2, Succeeded, false, T0 + 25 * HOUR_MS);
        let signals = run.signals();
        assert_eq!((signals.needs_review, signals.left_unknown), (1, 2));
        let oldest = signals.oldest_unknown.unwrap();
        assert_eq!(
            (oldest.operation_id.as_str(), oldest.age_ms),
            ("op-2", 25 * HOUR_MS as u64)
        );
    }

    #[test]
    fn a_plain_run_has_no_signals() {
        let mut run = Run::new();
        let seq = run.request(RequestKind::Create, "a", T0);
        run.commit(seq, "tkt_1");
        run.call(Execute, "op-1", Some(Succeeded), T0, 1);
        run.final_status(0, Succeeded, false, T0);
        assert_eq!(run.signals(), Signals::default());
    }
}

//! Drives one scenario's steps against a running simulator and the adapter,
//! recording everything into an [`Observation`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lostreply_reports::model::{
    CallEnd, DeliveryRecord, ErrorRecord, EventShows, MadeFrom, RecordedRequest, SharedJson,
    SharedStr, SharedTail, StepLabel, StepReport, StepVerb,
};
use lostreply_simulator::sync::{into_inner, lock};
use lostreply_simulator::{Effect, Simulator};
use serde_json::{json, Value};
use tokio::sync::{oneshot, watch};

use super::call_log::CallLog;
use super::contract::common_fields;
use super::observation::{Call, CallStderr, FinalCalls, ForgedProbe, JournalWindow, Reply};
use crate::driver::{CallOutput, Session};
use crate::protocol::{CallName, OutcomeReply, WebhookReply};
use crate::scenario::model::{CrashPoint, OpId, OperationSpec, ResolveRef, Scenario, Step};

/// How long a commit may wait for the harness to kill the adapter: bounded, so a
/// harness bug cannot hang the simulator.
const CRASH_GATE_WAIT: Duration = Duration::from_secs(10);

/// Beyond `stall_cap`, how long a step's end waits for the provider to go quiet.
const QUIET_MARGIN: Duration = Duration::from_secs(2);

/// How many adapter calls a step starts at once (what a gather may wait for).
fn live_calls(step: &Step) -> usize {
    match step {
        Step::Parallel(inner) => inner.iter().map(live_calls).sum(),
        Step::Webhook { deliveries, .. } => *deliveries as usize,
        Step::During { call, .. } => live_calls(call),
        Step::Execute { .. }
        | Step::Reconcile { .. }
        | Step::Status { .. }
        | Step::Resolve { .. }
        | Step::Advance { .. } => 1,
    }
}

/// The calls of a `parallel` step still open, which the calls that wait
/// (a webhook for its event, a call for its `during` request) give up on.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// `execute` and `reconcile` calls started and not returned (a `during`
    /// one counts once it starts): what may still commit an effect.
    committers: usize,
    /// Calls without `during` not returned: what may still send the request
    /// a `during` call waits for.
    plain: usize,
}

/// One delivery a parallel step made: its call, and what the report says of it.
struct MadeDelivery {
    index: usize,
    event: lostreply_simulator::Event,
    forged: bool,
    attempt: u32,
    op: OpId,
}

/// The state of one scenario run while its steps execute.
pub(super) struct StepRunner<'a> {
    pub scenario: &'a Scenario,
    pub sim: &'a Simulator,
    pub session: &'a Session,
    pub started: Instant,
    pub credential: String,
    pub forged_secret: String,
    pub calls: Mutex<CallLog>,
    /// The common fields of the latest request, shared by the next ones.
    pub common_tail: Mutex<Option<SharedTail>>,
    pub steps: Vec<StepReport>,
    pub deliveries: Vec<DeliveryRecord>,
    pub forged: Vec<ForgedProbe>,
    pub errors: Mutex<Vec<ErrorRecord>>,
    pub notes: Mutex<Vec<(usize, String)>>,
}

/// What the steps recorded, handed to the observation.
pub(super) struct Recorded {
    pub calls: Vec<Call>,
    pub stderr: CallStderr,
    pub steps: Vec<StepReport>,
    pub deliveries: Vec<DeliveryRecord>,
    pub forged: Vec<ForgedProbe>,
    pub errors: Vec<ErrorRecord>,
}

/// A signed (or forged) delivery ready to hand to the adapter.
struct PreparedDelivery {
    spec: CallSpec,
    event: lostreply_simulator::Event,
    forged: bool,
    attempt: u32,
}

/// One adapter call to make.
struct CallSpec {
    name: CallName,
    op: Option<OpId>,
    /// What is sent.
    request: Value,
    /// The request as the observation keeps it.
    recorded: RecordedRequest,
    crash: Option<CrashPoint>,
    probe: bool,
}

impl<'a> StepRunner<'a> {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn operation(&self, id: &str) -> Option<&'a OperationSpec> {
        self.scenario.operations.iter().find(|o| o.id == id)
    }

    /// Runs every step in order. The simulator knows which step runs (fault
    /// rules scoped to steps, gathers, holds until a step's end), and each step
    /// ends only once the provider has finished with its requests, so a commit
    /// made after the client left lands before the next step on every run.
    pub async fn run_steps(&mut self) {
        for (i, step) in self.scenario.steps.iter().enumerate() {
            let number = i + 1;
            let start_ms = self.now_ms();
            let sim_start_ms = self.sim.now_ms();
            let step_id = u32::try_from(number).unwrap_or(u32::MAX);
            self.sim.begin_step(step_id, Some(live_calls(step)));
            let mut label = self.run_step(number, step).await;
            self.sim.end_step(step_id);
            let busy = self.sim.wait_quiet(self.quiet_bound()).await;
            if !busy.is_empty() {
                let seqs: Vec<String> = busy.iter().map(|seq| format!("#{seq}")).collect();
                self.steps_note(
                    number,
                    format!(
                        "the provider was still busy with {} when the next step began",
                        seqs.join(", ")
                    ),
                );
            }
            for (_, note) in lock(&self.notes).iter().filter(|(n, _)| *n == number) {
                label.push_str(&format!(" ({note})"));
            }
            self.steps.push(
                StepReport::builder()
                    .number(saturating_u32(number))
                    .label(kept_label(&label, step))
                    .start_ms(saturating_u32(start_ms))
                    .end_ms(saturating_u32(self.now_ms()))
                    .sim_start_ms(sim_start_ms)
                    .sim_end_ms(self.sim.now_ms())
                    .build(),
            );
        }
    }

    /// How long the harness waits, between steps, for the provider to finish
    /// requests whose clients are gone: their stalls notice at once, so the
    /// bound only matters when something kept a connection open.
    fn quiet_bound(&self) -> Duration {
        self.scenario.plan.limits.stall_cap + QUIET_MARGIN
    }

    /// Asks `status` of every operation, once, after the last step.
    pub async fn final_sweep(&mut self) -> FinalCalls {
        let mut finals = FinalCalls::new(self.scenario.operations.len());
        for (position, op) in self.scenario.operations.iter().enumerate() {
            let spec = self.status_spec(&op.id, false);
            let index = self.call_one(0, spec, true).await;
            finals.set(position, index);
        }
        finals
    }

    async fn run_step(&mut self, number: usize, step: &Step) -> String {
        match step {
            Step::Advance { by } => {
                self.sim.advance(*by);
                format!("advance {}", humantime::format_duration(*by))
            }
            Step::Parallel(inner) => {
                self.run_parallel(number, inner).await;
                step_label(step)
            }
            Step::Webhook {
                op,
                event,
                deliveries,
                forged,
            } => {
                self.deliver(number, op, *event, *deliveries, *forged).await;
                step_label(step)
            }
            Step::Execute { .. }
            | Step::Reconcile { .. }
            | Step::Status { .. }
            | Step::Resolve { .. }
            | Step::During { .. } => match self.call_spec(step) {
                Some(spec) => {
                    let index = self.call_one(number, spec, true).await;
                    let crashed = self
                        .with_calls(|c| c.get(index).is_some_and(|c| c.end == CallEnd::Crashed));
                    let mut label = step_label(step);
                    if matches!(
                        step,
                        Step::Execute { crash: Some(_), .. }
                            | Step::Reconcile { crash: Some(_), .. }
                    ) && !crashed
                    {
                        label.push_str(" (crash point not reached)");
                    }
                    label
                }
                None => step_label(step),
            },
        }
    }

    /// Runs a `parallel` step's calls at once. A call with `during` starts
    /// once the provider holds the request it waits for, and that answer
    /// goes once the call has returned; a webhook waits for its event (its
    /// create may commit inside the step). Neither waits past the calls that
    /// could still bring what it waits for.
    async fn run_parallel(&mut self, number: usize, inner: &[Step]) {
        // A `during` call counts as a committer only once it has started.
        let committers = inner
            .iter()
            .filter(|s| !matches!(s, Step::During { .. }) && is_committer(s))
            .count();
        let plain = inner
            .iter()
            .filter(|s| !matches!(s, Step::During { .. }))
            .count();
        let open = watch::channel(Open { committers, plain }).0;
        // Armed before any call starts, so no request of the step passes first.
        let holds: Vec<_> = inner
            .iter()
            .map(|s| match s {
                Step::During { during, .. } => self.sim.arm_during(during.as_ref().clone()),
                _ => None,
            })
            .collect();
        let ledger_before = self.sim.ledger_len();
        let branches = inner
            .iter()
            .zip(holds)
            .map(|(s, hold)| self.parallel_call(number, s, hold, &open));
        let made: Vec<MadeDelivery> = futures::future::join_all(branches)
            .await
            .into_iter()
            .flatten()
            .collect();
        // Beside an execute or a reconcile, an effect the step makes is
        // theirs to make: the ledger then says nothing about the forgery.
        // (A `during` execute or reconcile counts too, started or not.)
        let ledger_after = if inner.iter().any(is_committer) {
            ledger_before
        } else {
            self.sim.ledger_len()
        };
        for d in made {
            if d.forged {
                // No before/after probes inside a race: the reply (and, with
                // nothing else that creates, the ledger) still shows whether
                // the forgery was taken.
                self.forged.push(ForgedProbe {
                    operation_id: d.op.to_string(),
                    before: None,
                    delivery: d.index,
                    after: None,
                    ledger_len: (ledger_before, ledger_after),
                });
            }
            self.record_delivery(number, &d.event, d.forged, d.attempt, d.index);
        }
    }

    /// One call of a `parallel` step, with its waits; the deliveries it made.
    async fn parallel_call(
        &self,
        number: usize,
        step: &Step,
        hold: Option<lostreply_simulator::DuringId>,
        open: &watch::Sender<Open>,
    ) -> Vec<MadeDelivery> {
        let (call, during) = match step {
            Step::During { call, during } => (call.as_ref(), Some(during.as_ref())),
            other => (other, None),
        };
        let ordered = match (hold, during) {
            (Some(hold), Some(during)) => self.await_held(number, call, hold, during, open).await,
            _ => false,
        };
        if during.is_some() && is_committer(call) {
            open.send_modify(|o| o.committers += 1);
        }
        let made = match call {
            Step::Webhook {
                op,
                event,
                deliveries,
                forged,
            } => {
                self.parallel_webhook(number, op, *event, *deliveries, *forged, open)
                    .await
            }
            other => {
                if let Some(spec) = self.call_spec(other) {
                    self.call_one(number, spec, false).await;
                }
                // A gather stops waiting for requests this call can no longer send.
                self.sim.call_ended();
                Vec::new()
            }
        };
        if let (true, Some(hold)) = (ordered, hold) {
            self.sim.release_during(hold);
        }
        open.send_modify(|o| {
            if is_committer(call) {
                o.committers = o.committers.saturating_sub(1);
            }
            if during.is_none() {
                o.plain = o.plain.saturating_sub(1);
            }
        });
        made
    }

    /// Waits until `hold` holds its request (true), or until no call that
    /// could send one is left (false: the hold is dropped and a note says
    /// the call ran unordered, after the others).
    async fn await_held(
        &self,
        number: usize,
        call: &Step,
        hold: lostreply_simulator::DuringId,
        during: &lostreply_simulator::Match,
        open: &watch::Sender<Open>,
    ) -> bool {
        let mut open_rx = open.subscribe();
        let held = tokio::select! {
            seq = self.sim.wait_during_held(hold) => seq.is_some(),
            _ = open_rx.wait_for(|o| o.plain == 0) => false,
        };
        if !held {
            self.sim.release_during(hold);
            // Taken between the two: it is held after all.
            if self.sim.wait_during_held(hold).await.is_some() {
                return true;
            }
            self.steps_note(
                number,
                format!(
                    "`{}`: no request matching {} reached the provider while the other calls \
                     ran; it started after they returned",
                    step_label(call),
                    match_label(during)
                ),
            );
        }
        held
    }

    /// A webhook inside `parallel`: waits for its event (the create of its
    /// operation may commit while the step runs), then delivers. When every
    /// call that could commit has returned and the provider is quiet with
    /// no such event, nothing can be delivered, and the run says so as an
    /// error: the step the scenario wrote did not happen.
    async fn parallel_webhook(
        &self,
        number: usize,
        op: &OpId,
        kind: lostreply_simulator::EventKind,
        deliveries: u32,
        forged: bool,
        open: &watch::Sender<Open>,
    ) -> Vec<MadeDelivery> {
        let mut open_rx = open.subscribe();
        let give_up = async {
            let _ = open_rx.wait_for(|o| o.committers == 0).await;
            // A commit made after its client left lands before this.
            self.sim.wait_quiet(self.quiet_bound()).await;
        };
        let event = self
            .sim
            .wait_for_event(
                |ledger, events| self.event_of(ledger, events, op, kind),
                give_up,
            )
            .await;
        let Some(event) = event else {
            for _ in 0..deliveries {
                self.sim.call_ended();
            }
            self.infra_error(
                number,
                format!(
                    "`webhook {op} {}` delivered nothing: no {} event about an object of {op} \
                     existed by the time every call of the step that could commit one had \
                     returned",
                    kind.name(),
                    kind.name()
                ),
            );
            return Vec::new();
        };
        let calls = self
            .sign_deliveries(number, op, &event, deliveries, forged)
            .into_iter()
            .map(|d| async move {
                let index = self.call_one(number, d.spec, false).await;
                self.sim.call_ended();
                MadeDelivery {
                    index,
                    event: d.event,
                    forged: d.forged,
                    attempt: d.attempt,
                    op: op.clone(),
                }
            });
        futures::future::join_all(calls).await
    }

    fn with_calls<R>(&self, f: impl FnOnce(&mut CallLog) -> R) -> R {
        f(&mut lock(&self.calls))
    }

    fn status_spec(&self, op: &OpId, probe: bool) -> CallSpec {
        let (request, recorded) = self.with_common(json!({ "operation_id": op }), MadeFrom::Id(op));
        CallSpec {
            name: CallName::Status,
            op: Some(op.clone()),
            request,
            recorded,
            crash: None,
            probe,
        }
    }

    /// A call's own fields with the common ones after them: the request to
    /// send, and as the observation keeps it (the common fields' text shared
    /// with the calls before, while they stay the same; the own fields as
    /// what they were made from, when they are exactly that written out).
    fn with_common(&self, own: Value, made_from: MadeFrom<'_>) -> (Value, RecordedRequest) {
        match (
            own,
            common_fields(self.scenario, self.sim, &self.credential),
        ) {
            (Value::Object(mut request), Value::Object(common)) => {
                let recorded = match self.common_tail(&common) {
                    Some(tail) => RecordedRequest::recorded(&request, &tail, made_from),
                    None => SharedJson::from_map(&request).into(),
                };
                request.extend(common);
                (Value::Object(request), recorded)
            }
            // Never (both are objects by construction): sent and kept as built.
            (own, _) => {
                let recorded = SharedJson::new(&own).into();
                (own, recorded)
            }
        }
    }

    /// The common fields as a shared tail: the one made for an earlier call
    /// while they are the same (they change only with the clock's `now`).
    fn common_tail(&self, common: &serde_json::Map<String, Value>) -> Option<SharedTail> {
        let fresh = SharedTail::of_members(common)?;
        let mut cached = lock(&self.common_tail);
        match cached.as_ref() {
            Some(tail) if *tail == fresh => Some(tail.clone()),
            _ => Some(cached.insert(fresh).clone()),
        }
    }

    /// The call a step makes; `None` for steps that are not a single call.
    fn call_spec(&self, step: &Step) -> Option<CallSpec> {
        let (name, op, request, made_from, crash) = match step {
            Step::Execute { op, crash } => {
                let spec = self.operation(op)?;
                let request = json!({ "operation": super::contract::operation(spec) });
                (
                    CallName::Execute,
                    op,
                    request,
                    MadeFrom::Operation(spec),
                    *crash,
                )
            }
            Step::Reconcile { op, crash } => (
                CallName::Reconcile,
                op,
                json!({ "operation_id": op }),
                MadeFrom::Id(op),
                *crash,
            ),
            Step::Status { op } => (
                CallName::Status,
                op,
                json!({ "operation_id": op }),
                MadeFrom::Id(op),
                None,
            ),
            Step::Resolve {
                op,
                outcome,
                provider_ref,
                evidence,
            } => {
                let provider_ref = match provider_ref {
                    ResolveRef::None => None,
                    ResolveRef::Literal(id) => Some(id.clone()),
                    ResolveRef::Ledger => {
                        let ledger = self.sim.ledger();
                        self.objects_of(&ledger, op).first().map(|e| e.id.clone())
                    }
                };
                let request = json!({ "operation_id": op, "resolution": {
                    "outcome": outcome, "provider_ref": provider_ref, "evidence": evidence, "by": "operator",
                }});
                (CallName::Resolve, op, request, MadeFrom::Nothing, None)
            }
            Step::During { call, .. } => return self.call_spec(call),
            Step::Advance { .. } | Step::Parallel(_) | Step::Webhook { .. } => return None,
        };
        let (request, recorded) = self.with_common(request, made_from);
        Some(CallSpec {
            name,
            op: Some(op.clone()),
            request,
            recorded,
            crash,
            probe: false,
        })
    }

    /// A `provider_ref` naming an effect is kept as the ledger's copy of its
    /// id: equal text, so the observation says the same, and a
    /// million-operation run does not hold each id twice (the copy read
    /// from the reply is freed at once, before the next call, where a copy
    /// freed after the run would leave its hole behind).
    fn share_provider_ref(&self, outcome: &mut OutcomeReply) {
        let shared = outcome
            .provider_ref
            .as_deref()
            .and_then(|id| self.sim.effect_id(id));
        if shared.is_some() {
            outcome.provider_ref = shared;
        }
    }

    /// The adapter tenant's effects in `ledger` whose arguments are this
    /// operation's. Operations may share their arguments: an object whose
    /// reference names this operation is its own, so it comes first (a
    /// stable sort keeps the ledger's order otherwise).
    fn objects_of<'l>(&self, ledger: &'l [Effect], op: &str) -> Vec<&'l Effect> {
        let Some(spec) = self.operation(op) else {
            return Vec::new();
        };
        let args = spec.args.to_map();
        let mut objects: Vec<&Effect> = ledger
            .iter()
            .filter(|e| {
                e.request_seq.is_some()
                    && e.tenant == self.credential
                    && e.resource == spec.resource
                    && e.args.to_map() == args
            })
            .collect();
        objects.sort_by_key(|e| e.client_reference.as_deref() != Some(op));
        objects
    }

    /// A crash gate for a call that crashes after its operation's commit,
    /// and the signal it fires; nothing for any other call.
    fn crash_gate(&self, spec: &CallSpec) -> (Option<oneshot::Receiver<()>>, Option<CrashGate>) {
        match (
            spec.crash,
            spec.op.as_deref().and_then(|op| self.operation(op)),
        ) {
            (Some(CrashPoint::AfterCommit), Some(op)) => {
                let (tx, rx) = oneshot::channel();
                let gate = CrashGate::install(self.sim, &self.credential, op, tx);
                (Some(rx), Some(gate))
            }
            _ => (None, None),
        }
    }

    /// After a gated call: the adapter is dead (or finished), so the held
    /// response goes, the hook is removed, and the provider is waited for
    /// until it is done with that request (its key's result saved), as it
    /// would be by the time a real reconciler starts. A crashed adapter is
    /// built afresh.
    async fn after_crash_point(&self, step: usize, gate: CrashGate, end: &CallEnd) {
        if let Some(seq) = gate.release(self.sim) {
            let _ = tokio::time::timeout(CRASH_GATE_WAIT, self.sim.wait_request_done(seq)).await;
        }
        if *end == CallEnd::Crashed {
            if let Err(e) = self.session.rebuild() {
                self.infra_error(
                    step,
                    format!("cannot rebuild the adapter after the crash: {e}"),
                );
            }
        }
    }

    /// Notes the reply's fields the protocol does not have (they are ignored).
    fn note_unknown_fields(&self, step: usize, name: CallName, reply: &Value) {
        let extra = crate::protocol::unknown_reply_fields(name, reply);
        if !extra.is_empty() && step > 0 {
            self.steps_note(
                step,
                format!(
                    "{} reply fields outside the protocol ignored: {}",
                    name.as_str(),
                    extra.join(", ")
                ),
            );
        }
    }

    /// Makes one call, with its crash gate if the step asks for one. Returns its index.
    async fn call_one(&self, step: usize, spec: CallSpec, sequential: bool) -> usize {
        let (crash_rx, gate) = self.crash_gate(&spec);
        let journal_before = saturating_u32(self.sim.journal_len());
        let sim_ms = self.sim.now_ms();
        let start_ms = self.now_ms();
        let out = self
            .session
            .call(
                spec.name,
                &spec.request,
                self.scenario.call_deadline,
                crash_rx,
            )
            .await;
        let end_ms = self.now_ms();
        if let Some(gate) = gate {
            self.after_crash_point(step, gate, &out.end).await;
        }
        let journal_after = saturating_u32(self.sim.journal_len());
        let (mut outcome, webhook) = read_reply(spec.name, out.reply.as_ref());
        if let Some(outcome) = outcome.as_mut() {
            self.share_provider_ref(outcome);
        }
        // Only whether it reads: it is read again from the reply's text when
        // asked for (`Call::webhook`).
        let webhook_read = webhook.is_some();
        if let Some(reply) = out.reply.as_ref() {
            self.note_unknown_fields(step, spec.name, reply);
        }
        let end = shaped_end(spec.name, &out, outcome.is_some(), webhook_read);
        self.with_calls(|calls| {
            calls.push(
                Call {
                    step: saturating_u32(step),
                    name: spec.name,
                    probe: spec.probe,
                    start_ms: saturating_u32(start_ms),
                    end_ms: saturating_u32(end_ms),
                    journal_window: JournalWindow::of(
                        sequential.then_some((journal_before, journal_after)),
                    ),
                    operation_id: spec.op.clone(),
                    request: spec.recorded,
                    reply: Reply::recorded(out.reply.as_ref().map(SharedJson::new), outcome),
                    end,
                    sim_ms,
                },
                SharedStr::from(out.stderr),
            )
        })
    }

    /// Signs the deliveries of a webhook step at the current clock (forged ones
    /// with a wrong secret). Empty when the operation's object has no such event.
    fn prepare_deliveries(
        &self,
        step: usize,
        op: &OpId,
        kind: lostreply_simulator::EventKind,
        deliveries: u32,
        forged: bool,
    ) -> Vec<PreparedDelivery> {
        let Some(event) = self.event_of(&self.sim.ledger(), &self.sim.events(), op, kind) else {
            // Not an error: an adapter that never created the object leaves
            // nothing to deliver (validation refuses a step no create precedes).
            self.steps_note(
                step,
                format!("no {} event for {op}: nothing delivered", kind.name()),
            );
            return Vec::new();
        };
        self.sign_deliveries(step, op, &event, deliveries, forged)
    }

    /// The event of `kind` about an object of `op` (`objects_of`, its own
    /// first), among `ledger` and `events`.
    fn event_of(
        &self,
        ledger: &[Effect],
        events: &[lostreply_simulator::Event],
        op: &str,
        kind: lostreply_simulator::EventKind,
    ) -> Option<lostreply_simulator::Event> {
        self.objects_of(ledger, op).iter().find_map(|object| {
            events
                .iter()
                .find(|e| e.kind == kind && e.object_id.as_str() == object.id.as_str())
                .cloned()
        })
    }

    /// `deliveries` deliveries of `event`, signed at the current clock.
    fn sign_deliveries(
        &self,
        step: usize,
        op: &OpId,
        event: &lostreply_simulator::Event,
        deliveries: u32,
        forged: bool,
    ) -> Vec<PreparedDelivery> {
        let mut prepared = Vec::new();
        for attempt in 1..=deliveries.max(1) {
            // A forgery is signed in the profile's own scheme, with a wrong
            // secret (a `whsec_` one, which keys every scheme): only the
            // secret gives it away.
            let signed = if forged {
                self.sim.forge(event, &self.forged_secret)
            } else {
                self.sim.sign(event)
            };
            let Some(delivery) = signed else {
                self.infra_error(
                    step,
                    "the scenario delivers a webhook but the provider has no webhook secret"
                        .to_owned(),
                );
                return Vec::new();
            };
            let (request, recorded) = self.with_common(
                json!({ "headers": delivery.headers, "body": delivery.body }),
                MadeFrom::Nothing,
            );
            prepared.push(PreparedDelivery {
                spec: CallSpec {
                    name: CallName::Webhook,
                    op: Some(op.clone()),
                    request,
                    recorded,
                    crash: None,
                    probe: false,
                },
                event: event.clone(),
                forged,
                attempt,
            });
        }
        prepared
    }

    /// Delivers one after another; a forged delivery is framed by `status`
    /// probes so that invariant 7 can compare the record before and after.
    async fn deliver(
        &mut self,
        step: usize,
        op: &OpId,
        kind: lostreply_simulator::EventKind,
        deliveries: u32,
        forged: bool,
    ) {
        for d in self.prepare_deliveries(step, op, kind, deliveries, forged) {
            if d.forged {
                let ledger_before = self.sim.ledger_len();
                let before = self.call_one(step, self.status_spec(op, true), true).await;
                let delivery_index = self.call_one(step, d.spec, true).await;
                let after = self.call_one(step, self.status_spec(op, true), true).await;
                self.forged.push(ForgedProbe {
                    operation_id: op.to_string(),
                    before: Some(before),
                    delivery: delivery_index,
                    after: Some(after),
                    ledger_len: (ledger_before, self.sim.ledger_len()),
                });
                self.record_delivery(step, &d.event, true, d.attempt, delivery_index);
            } else {
                let index = self.call_one(step, d.spec, true).await;
                self.record_delivery(step, &d.event, false, d.attempt, index);
            }
        }
    }

    fn record_delivery(
        &mut self,
        step: usize,
        event: &lostreply_simulator::Event,
        forged: bool,
        attempt: u32,
        call_index: usize,
    ) {
        self.deliveries.push(
            DeliveryRecord::builder()
                .step(step)
                .event_id(event.id.clone())
                .event_type(event.event_type.clone())
                .object_id(event.object_id.clone())
                .shows(match event.kind {
                    lostreply_simulator::EventKind::Created => EventShows::Created,
                    lostreply_simulator::EventKind::Succeeded => EventShows::Succeeded,
                    lostreply_simulator::EventKind::Failed => EventShows::Failed,
                })
                .forged(forged)
                .attempt(attempt)
                .call_index(call_index)
                .build(),
        );
    }

    fn steps_note(&self, step: usize, note: String) {
        lock(&self.notes).push((step, note));
    }

    fn infra_error(&self, step: usize, message: String) {
        lock(&self.errors).push(ErrorRecord::builder().step(step).message(message).build());
    }

    /// Moves what the steps recorded out.
    pub fn into_parts(self) -> Recorded {
        let (calls, stderr) = into_inner(self.calls).into_calls();
        Recorded {
            calls,
            stderr,
            steps: self.steps,
            deliveries: self.deliveries,
            forged: self.forged,
            errors: into_inner(self.errors),
        }
    }
}

/// An `execute` or a `reconcile`: a call that may commit an effect.
fn is_committer(step: &Step) -> bool {
    match step {
        Step::Execute { .. } | Step::Reconcile { .. } => true,
        Step::During { call, .. } => is_committer(call),
        Step::Status { .. }
        | Step::Resolve { .. }
        | Step::Webhook { .. }
        | Step::Advance { .. }
        | Step::Parallel(_) => false,
    }
}

/// A journal length, step number or real time in ms as a call keeps it
/// (saturating: never reached).
fn saturating_u32(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

/// A call's reply read as its outcome, and how the call ended once the
/// reply's shape is judged: a reply that does not read as its call's answer
/// ends the call as a bad reply. Every runner of the protocol's calls judges
/// replies alike.
pub fn judged_reply(name: CallName, out: &CallOutput) -> (Option<OutcomeReply>, CallEnd) {
    let (outcome, webhook) = read_reply(name, out.reply.as_ref());
    let end = shaped_end(name, out, outcome.is_some(), webhook.is_some());
    (outcome, end)
}

fn read_reply(
    name: CallName,
    reply: Option<&Value>,
) -> (Option<OutcomeReply>, Option<WebhookReply>) {
    let Some(reply) = reply else {
        return (None, None);
    };
    match name {
        CallName::Webhook => (None, serde_json::from_value(reply.clone()).ok()),
        CallName::Execute | CallName::Reconcile | CallName::Resolve | CallName::Status => {
            (serde_json::from_value(reply.clone()).ok(), None)
        }
    }
}

fn bad_shape_message(name: CallName, reply: Option<&Value>) -> String {
    let err = match reply {
        Some(v) => match name {
            CallName::Webhook => serde_json::from_value::<WebhookReply>(v.clone()).err(),
            CallName::Execute | CallName::Reconcile | CallName::Resolve | CallName::Status => {
                serde_json::from_value::<OutcomeReply>(v.clone()).err()
            }
        },
        None => None,
    };
    match err {
        Some(e) => format!(
            "the {} reply does not follow the protocol: {e}",
            name.as_str()
        ),
        None => format!("the {} reply does not follow the protocol", name.as_str()),
    }
}

/// A one-line description of a step, for reports.
/// A step's label as its report keeps it: for a step that is one call about
/// one operation, with nothing noted after it, the call's verb and the
/// operation's shared id (`StepLabel::of` checks the label spells exactly that).
fn kept_label(label: &str, step: &Step) -> StepLabel {
    let call = match step {
        Step::Execute { op, crash: None } => Some((StepVerb::Execute, op)),
        Step::Reconcile { op, crash: None } => Some((StepVerb::Reconcile, op)),
        Step::Status { op } => Some((StepVerb::Status, op)),
        _ => None,
    };
    match call {
        Some((verb, op)) => StepLabel::of(label, verb, op),
        None => label.into(),
    }
}

/// A step as the report labels it: `execute op-1 (crash after_commit)`.
pub fn step_label(step: &Step) -> String {
    match step {
        Step::Execute { op, crash: None } => format!("execute {op}"),
        Step::Execute {
            op,
            crash: Some(CrashPoint::AfterCommit),
        } => format!("execute {op} (crash after_commit)"),
        Step::Reconcile { op, crash: None } => format!("reconcile {op}"),
        Step::Reconcile {
            op,
            crash: Some(CrashPoint::AfterCommit),
        } => format!("reconcile {op} (crash after_commit)"),
        Step::Status { op } => format!("status {op}"),
        Step::Advance { by } => format!("advance {}", humantime::format_duration(*by)),
        Step::Parallel(inner) => format!(
            "parallel [{}]",
            inner.iter().map(step_label).collect::<Vec<_>>().join(", ")
        ),
        Step::Webhook {
            op,
            event,
            deliveries,
            forged,
        } => {
            let mut s = format!("webhook {op} {}", event.name());
            if *deliveries > 1 {
                s.push_str(&format!(" ×{deliveries}"));
            }
            if *forged {
                s.push_str(" (forged)");
            }
            s
        }
        Step::Resolve { op, outcome, .. } => {
            format!("resolve {op} as {}", outcome.as_str())
        }
        Step::During { during, call } => {
            format!("{} during {}", step_label(call), match_label(during))
        }
    }
}

/// `{kind: search}` as a `during` key wrote it.
fn match_label(when: &lostreply_simulator::Match) -> String {
    let parts: Vec<String> = [
        when.method.as_ref().map(|m| format!("method: {m}")),
        when.resource.as_ref().map(|r| format!("resource: {r}")),
        when.kind.map(|k| format!("kind: {}", k.name())),
        when.query.as_ref().map(|q| format!("query: {q}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Holds the commit of one operation's effect until the adapter is dead.
struct CrashGate {
    dead: watch::Sender<bool>,
    /// The journal position of the request whose commit fired the crash.
    fired_by: Arc<Mutex<Option<u64>>>,
}

impl CrashGate {
    fn install(
        sim: &Simulator,
        credential: &str,
        op: &OperationSpec,
        kill: oneshot::Sender<()>,
    ) -> CrashGate {
        let (dead_tx, dead_rx) = watch::channel(false);
        let kill = Arc::new(Mutex::new(Some(kill)));
        let fired_by = Arc::new(Mutex::new(None));
        let fired = fired_by.clone();
        let credential = credential.to_owned();
        let resource = op.resource.clone();
        let args = op.args.to_map();
        let hook: lostreply_simulator::CommitHook = Arc::new(move |effect: Effect| {
            let mine = effect.tenant == credential
                && effect.resource == resource
                && effect.args.to_map() == args;
            let kill = if mine { lock(&kill).take() } else { None };
            if kill.is_some() {
                *lock(&fired) = effect.request();
            }
            let mut dead_rx = dead_rx.clone();
            Box::pin(async move {
                if let Some(kill) = kill {
                    if kill.send(()).is_ok() {
                        // Hold the response until the adapter is gone, so it never sees it.
                        let _ =
                            tokio::time::timeout(CRASH_GATE_WAIT, dead_rx.wait_for(|dead| *dead))
                                .await;
                    }
                }
            })
        });
        sim.set_commit_hook(Some(hook));
        CrashGate {
            dead: dead_tx,
            fired_by,
        }
    }

    /// Lets the held response go and removes the hook; returns the request that fired.
    fn release(self, sim: &Simulator) -> Option<u64> {
        let _ = self.dead.send(true);
        sim.set_commit_hook(None);
        *lock(&self.fired_by)
    }
}

/// How a call ended, its reply's shape judged: a reply that parses as JSON
/// but not as the protocol's shape for `name` is a bad reply.
fn shaped_end(
    name: CallName,
    out: &CallOutput,
    reads_as_outcome: bool,
    webhook_read: bool,
) -> CallEnd {
    let bad_shape = out.end == CallEnd::Replied
        && match name {
            CallName::Webhook => !webhook_read,
            CallName::Execute | CallName::Reconcile | CallName::Resolve | CallName::Status => {
                !reads_as_outcome
            }
        };
    if bad_shape {
        CallEnd::BadReply {
            message: bad_shape_message(name, out.reply.as_ref()).into(),
        }
    } else {
        out.end.clone()
    }
}

//! What one scenario run saw: every adapter call and its reply, the steps with
//! their timings, webhook deliveries and the provider's ledger and journal.
//! The checks and the report are both computed from this, and only from this.

use lostreply_reports::model::{
    CallEnd, CallReply, DeliveryRecord, ErrorRecord, Evidence, RecordedRequest, SharedJson,
    SharedStr, StepReport,
};
use lostreply_simulator::{Effect, JournalEntry, RequestKind};

use crate::position::{pos, Pos, NONE};
use crate::protocol::{CallName, OutcomeReply, WebhookReply};
use crate::scenario::model::{OperationSpec, Scenario};
use crate::seq_positions::SeqPositions;

/// One adapter call as the harness made it.
///
/// Its position in [`Observation::calls`] is where it lies, not a field:
/// [`CallAt`] pairs the two where a check needs both. (A run holds two
/// million calls; each field here is 2 MB or more of it. Without the
/// position, with the reply and its outcome kept as one [`Reply`], the
/// journal window as a [`JournalWindow`] and the stderr, rarely written, in
/// [`Observation::stderr`], a call is 112 bytes, not 144.)
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The step that made it (0: the final `status` sweep).
    pub step: u32,
    /// Which call.
    pub name: CallName,
    /// True when the harness made it to look, not the scenario (status around a
    /// forged delivery). Probes never count as the step's reported outcome.
    pub probe: bool,
    /// Real ms since the scenario started (a scenario runs far below the 49
    /// days a `u32` holds; the harness saturates rather than wraps).
    pub start_ms: u32,
    /// Real ms since the scenario started.
    pub end_ms: u32,
    /// Journal length when the call started and ended; none inside a
    /// `parallel` step, where other calls' requests interleave.
    pub journal_window: JournalWindow,
    /// The operation concerned, if one.
    pub operation_id: Option<SharedStr>,
    /// What the harness sent, as shared text, or as the scenario's operation
    /// it was made from (`RecordedRequest`): a million-operation run holds two
    /// million of these, and the report takes them over instead of copying.
    pub request: RecordedRequest,
    /// The reply, and its outcome if it reads as one.
    pub reply: Reply,
    /// How the call ended.
    pub end: CallEnd,
    /// The simulator clock during the call (ms since the Unix epoch). The clock
    /// moves only between steps, so a reply's claims are judged at this time.
    pub sim_ms: i64,
}

impl Call {
    /// The reply read as an outcome (execute, reconcile, resolve, status), if it is one.
    pub fn outcome(&self) -> Option<&OutcomeReply> {
        self.reply.outcome()
    }

    /// [`Call::outcome`], to change.
    pub fn outcome_mut(&mut self) -> Option<&mut OutcomeReply> {
        self.reply.outcome_mut()
    }

    /// The step that made it (0: the final `status` sweep), as steps are numbered.
    pub fn step_number(&self) -> usize {
        self.step as usize
    }

    /// The reply read as a webhook answer, for a `webhook` call whose reply is
    /// one. Read from the reply's text on each call: few calls are webhook
    /// deliveries, and a field for it would be 8 bytes in every call of a run.
    pub fn webhook(&self) -> Option<WebhookReply> {
        if self.name != CallName::Webhook {
            return None;
        }
        self.reply
            .text()
            .and_then(|reply| serde_json::from_str(&reply.text()).ok())
    }

    /// The reply, if one came back, however it is kept.
    pub fn reply(&self) -> Option<CallReply> {
        match &self.reply {
            Reply::Absent => None,
            Reply::Outcome(outcome) => Some(CallReply::made(outcome.clone())),
            Reply::Text(kept) => Some(kept.text.clone().into()),
        }
    }

    /// The reply, taken over: the outcome is moved, not shared (the report's
    /// records take each call's parts where they lie).
    pub fn take_reply(&mut self) -> Option<CallReply> {
        match std::mem::replace(&mut self.reply, Reply::Absent) {
            Reply::Absent => None,
            Reply::Outcome(outcome) => Some(CallReply::made(outcome)),
            Reply::Text(kept) => Some(kept.text.into()),
        }
    }
}

/// A call and its position in [`Observation::calls`], as evidence and
/// messages name it. Reads as the call.
#[derive(Debug, Clone, Copy)]
pub struct CallAt<'o> {
    /// Its position.
    pub position: usize,
    /// The call.
    pub call: &'o Call,
}

impl<'o> CallAt<'o> {
    /// Every call of `calls` with its position.
    pub fn all(calls: &'o [Call]) -> impl Iterator<Item = CallAt<'o>> {
        calls
            .iter()
            .enumerate()
            .map(|(position, call)| CallAt { position, call })
    }

    /// The evidence that names it.
    pub fn evidence(&self) -> Evidence {
        Evidence::Call {
            index: self.position,
        }
    }
}

impl std::ops::Deref for CallAt<'_> {
    type Target = Call;

    fn deref(&self) -> &Call {
        self.call
    }
}

/// A call's reply as kept: its outcome alone when the reply was exactly
/// that outcome written out (most are; the report writes the same bytes from
/// it), its text otherwise. One field rather than a reply, its outcome and a
/// flag: 32 bytes in every call instead of 49, the rare text boxed.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// No reply came back.
    Absent,
    /// The reply was exactly this outcome written out (its fields in the
    /// protocol's order).
    Outcome(OutcomeReply),
    /// The reply's text, and the outcome it reads as, if it reads as one.
    Text(Box<TextReply>),
}

/// A reply kept as its text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextReply {
    /// The raw reply's text (shared).
    pub text: SharedJson,
    /// The reply read as an outcome, if it is one.
    pub outcome: Option<OutcomeReply>,
}

impl Reply {
    /// The reply `text` (if one came back) read as `outcome`, kept as that
    /// outcome when it is exactly it written out and as text otherwise.
    pub fn recorded(text: Option<SharedJson>, outcome: Option<OutcomeReply>) -> Reply {
        match (text, outcome) {
            (None, _) => Reply::Absent,
            (Some(text), Some(outcome)) if outcome.writes_as(&text.text()) => {
                Reply::Outcome(outcome)
            }
            (Some(text), outcome) => Reply::Text(Box::new(TextReply { text, outcome })),
        }
    }

    /// The outcome it reads as, if one.
    pub fn outcome(&self) -> Option<&OutcomeReply> {
        match self {
            Reply::Absent => None,
            Reply::Outcome(outcome) => Some(outcome),
            Reply::Text(kept) => kept.outcome.as_ref(),
        }
    }

    /// [`Reply::outcome`], to change.
    pub fn outcome_mut(&mut self) -> Option<&mut OutcomeReply> {
        match self {
            Reply::Absent => None,
            Reply::Outcome(outcome) => Some(outcome),
            Reply::Text(kept) => kept.outcome.as_mut(),
        }
    }

    /// Its text, when it is kept as text.
    pub fn text(&self) -> Option<&SharedJson> {
        match self {
            Reply::Text(kept) => Some(&kept.text),
            Reply::Absent | Reply::Outcome(_) => None,
        }
    }
}

/// The journal's length when a call started and when it ended, or none
/// (a call inside a `parallel` step). Two `u32`s, none written as both at
/// `u32::MAX`: a run's journal stays far below four billion entries, and an
/// `Option` made it 12 bytes in every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalWindow {
    before: u32,
    after: u32,
}

impl JournalWindow {
    /// No window.
    pub const NONE: JournalWindow = JournalWindow {
        before: u32::MAX,
        after: u32::MAX,
    };

    /// The window from `before` to `after` (saturated below `u32::MAX`,
    /// which only [`JournalWindow::NONE`] holds).
    pub fn new(before: u32, after: u32) -> JournalWindow {
        JournalWindow {
            before: before.min(u32::MAX - 1),
            after: after.min(u32::MAX - 1),
        }
    }

    /// The window `window` names, or none.
    pub fn of(window: Option<(u32, u32)>) -> JournalWindow {
        window.map_or(JournalWindow::NONE, |(before, after)| {
            JournalWindow::new(before, after)
        })
    }

    /// The lengths before and after, if it has them.
    pub fn get(self) -> Option<(u32, u32)> {
        (self != JournalWindow::NONE).then_some((self.before, self.after))
    }
}

/// The stderr tails of the calls that wrote any, by call position, in
/// order. Kept beside the calls rather than in each: most adapters write
/// nothing there, and an empty tail in every call would be 8 bytes of two
/// million.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallStderr(Vec<(Pos, SharedStr)>);

impl CallStderr {
    /// Records `tail` as the stderr of the call at `position`, which must
    /// come after every position recorded so far; an empty tail is not kept.
    pub fn push(&mut self, position: usize, tail: SharedStr) {
        if !tail.is_empty() {
            self.0.push((pos(position), tail));
        }
    }

    /// The stderr tail of the call at `position`, if it wrote any.
    pub fn of(&self, position: usize) -> Option<&SharedStr> {
        self.0
            .binary_search_by_key(&pos(position), |(p, _)| *p)
            .ok()
            .and_then(|found| self.0.get(found))
            .map(|(_, tail)| tail)
    }

    /// Every tail with its call's position, in order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &SharedStr)> {
        self.0.iter().map(|(p, tail)| (*p as usize, tail))
    }

    /// The tails, taken over, in order of position.
    pub fn into_inner(self) -> Vec<(Pos, SharedStr)> {
        self.0
    }
}

/// A forged delivery and what the adapter's store said around it (invariant 7).
#[derive(Debug, Clone, PartialEq)]
pub struct ForgedProbe {
    /// The operation the event was about.
    pub operation_id: String,
    /// The `status` call before the delivery (none inside `parallel`).
    pub before: Option<usize>,
    /// The `webhook` call that delivered it.
    pub delivery: usize,
    /// The `status` call after (none inside `parallel`).
    pub after: Option<usize>,
    /// Effects in the ledger before and after.
    pub ledger_len: (usize, usize),
}

/// Everything a scenario run observed.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The scenario.
    pub scenario: Scenario,
    /// The seed it ran with.
    pub seed: u64,
    /// The adapter's credential (the first tenant).
    pub credential: String,
    /// Every call, in the order they started.
    pub calls: Vec<Call>,
    /// The calls' stderr tails, where not empty.
    pub stderr: CallStderr,
    /// The steps with their timings.
    pub steps: Vec<StepReport>,
    /// Webhook deliveries.
    pub deliveries: Vec<DeliveryRecord>,
    /// Forged deliveries with their before/after probes.
    pub forged: Vec<ForgedProbe>,
    /// The provider's ledger at the end.
    pub ledger: Vec<Effect>,
    /// The provider's journal at the end.
    pub journal: Vec<JournalEntry>,
    /// Real ms between the scenario's start and the simulator's start (journal times are the simulator's).
    pub simulator_offset_ms: u64,
    /// Simulator clock at start.
    pub sim_start_ms: i64,
    /// The final `status` call of each operation, by its position in the
    /// scenario's operations.
    pub final_status: FinalCalls,
    /// Adapter and infrastructure errors.
    pub errors: Vec<ErrorRecord>,
    /// True when an error came from the harness or simulator rather than the adapter.
    pub infra_failed: bool,
    /// Real duration of the run.
    pub duration_ms: u64,
}

impl Observation {
    /// The final outcome reply of the operation at `position` in the
    /// scenario's operations, if its `status` answered.
    pub fn final_outcome(&self, position: usize) -> Option<&OutcomeReply> {
        self.final_status
            .get(position)
            .and_then(|i| self.calls.get(i)?.outcome())
    }
}

/// Gives an effect attributed to `op` by its reference the operation's
/// copies of what it says again: its `client_reference` (the operation's
/// id) and, when they are the operation's text byte for byte, its
/// arguments. A run does this as it collects the ledger (the simulator's
/// copies go with the simulator, a moment later): without it a
/// million-operation run's observation held every operation's id and
/// arguments once more (some 100 bytes an operation).
pub fn share_with_operation(effect: &mut Effect, op: &OperationSpec) {
    if effect.client_reference.as_deref() != Some(op.id.as_str()) {
        return;
    }
    effect.client_reference = Some(op.id.clone());
    if let Some(shared) = op
        .args
        .whole_text()
        .and_then(|text| effect.args.same_as(text))
    {
        effect.args = shared;
    }
}

/// Frees the fingerprints that the effects say again: a committed create's
/// body is its effect's arguments and reserved fields, so the attribution
/// reads it from the effect (`split_effect`) and its canonical text (some 80
/// bytes a create, the largest text a run's records kept) need not be held
/// from the run's end. Requests that made no effect keep theirs. A run calls
/// this as it collects the ledger and journal; in a test build it first
/// checks, for every create, that the effect gives the attribution the very
/// key and references the fingerprint gives.
pub fn forget_derivable_fingerprints(journal: &mut [JournalEntry], ledger: &mut [Effect]) {
    let seqs = SeqPositions::new(journal);
    for effect in ledger {
        let Some(entry) = effect
            .request()
            .and_then(|seq| seqs.position(seq))
            .and_then(|position| journal.get_mut(position))
        else {
            continue;
        };
        let made_it = entry.kind == Some(RequestKind::Create)
            && entry.effect.as_deref() == Some(effect.id.as_str())
            && entry.fingerprint.as_deref() == Some(effect.fingerprint.as_str());
        if !made_it {
            continue;
        }
        #[cfg(debug_assertions)]
        crate::split_body::assert_derivable(entry, effect);
        entry.fingerprint = None;
        effect.fingerprint = SharedStr::default();
    }
}

/// Frees the fingerprints (their bodies' canonical text) of an observation's
/// requests and effects. Only the attribution reads them, and no report shows
/// them: [`crate::suite::check_and_report`] frees them once the attribution
/// is built, so that those a run kept (of requests that made no effect: see
/// [`forget_derivable_fingerprints`]) are not held through the checks and
/// the report. (The lists, not the observation: the
/// attribution still borrows its operations.)
pub fn forget_fingerprints(journal: &mut [JournalEntry], ledger: &mut [Effect]) {
    for entry in journal {
        entry.fingerprint = None;
    }
    for effect in ledger {
        effect.fingerprint = SharedStr::default();
    }
}

/// The final `status` call of each operation (a position in
/// [`Observation::calls`]), by the operation's position in the scenario.
///
/// Why by position and as `u32`: a million-operation run holds a million of
/// them while it is checked, and a map from each operation's id would be
/// some 31 bytes an entry where this is 4; the checks find an operation's position
/// through the attribution's lookup by id, which they hold anyway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FinalCalls(Vec<Pos>);

impl FinalCalls {
    /// No final call yet for any of `operations` operations.
    pub fn new(operations: usize) -> FinalCalls {
        FinalCalls(vec![NONE; operations])
    }

    /// Records `call` as the final call of the operation at `position` (an
    /// operation past the end, or a call past `u32::MAX`, is left without one
    /// rather than naming another).
    pub fn set(&mut self, position: usize, call: usize) {
        if let Some(slot) = self.0.get_mut(position) {
            *slot = pos(call);
        }
    }

    /// Forgets the final call of the operation at `position` (tests: a run
    /// whose sweep did not reach it).
    pub fn remove(&mut self, position: usize) {
        if let Some(slot) = self.0.get_mut(position) {
            *slot = NONE;
        }
    }

    /// The final call of the operation at `position`, if it has one.
    pub fn get(&self, position: usize) -> Option<usize> {
        self.0
            .get(position)
            .copied()
            .filter(|&call| call != NONE)
            .map(|call| call as usize)
    }

    /// Each operation's final call, by position: `None` where it has none.
    pub fn iter(&self) -> impl Iterator<Item = Option<usize>> + '_ {
        (0..self.0.len()).map(|position| self.get(position))
    }

    /// Drops every entry (the bench's accounting of what each part holds).
    pub fn clear(&mut self) {
        self.0 = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use lostreply_simulator::{JsonText, ObjectStatus};
    use serde_json::json;

    use super::*;
    use crate::scenario::model::OperationFields;

    fn effect(reference: Option<&str>, args: serde_json::Value) -> Effect {
        Effect {
            seq: 1,
            id: "tkt_1".into(),
            tenant: "sk_test_a".into(),
            resource: "tickets".into(),
            args: JsonText::of(&args),
            client_reference: reference.map(SharedStr::from),
            metadata: None,
            idempotency_key: None,
            fingerprint: SharedStr::default(),
            attempt: 1,
            created_at_ms: 0,
            status: ObjectStatus::Succeeded,
            request_seq: None,
        }
    }

    #[test]
    fn an_effect_keeps_its_operations_copies_of_the_same_text_only() {
        let op = OperationSpec::new(OperationFields {
            id: "op-1".into(),
            resource: "tickets".into(),
            tool: None,
            args: SharedJson::new(&json!({"t": "x", "n": 1})),
        });
        let op_text = op.args.whole_text().unwrap();
        // Its reference and its arguments, the same text: both shared.
        let mut same = effect(Some("op-1"), json!({"t": "x", "n": 1}));
        share_with_operation(&mut same, &op);
        assert!(SharedStr::ptr_eq(
            same.client_reference.as_ref().unwrap(),
            &op.id
        ));
        assert_eq!(same.args.get().as_ptr(), op_text.as_ptr());
        assert_eq!(same.args.get(), r#"{"t":"x","n":1}"#);
        // Other arguments (or the same in another order): its own kept.
        for args in [json!({"t": "y", "n": 1}), json!({"n": 1, "t": "x"})] {
            let mut changed = effect(Some("op-1"), args.clone());
            share_with_operation(&mut changed, &op);
            assert!(SharedStr::ptr_eq(
                changed.client_reference.as_ref().unwrap(),
                &op.id
            ));
            assert_ne!(changed.args.get().as_ptr(), op_text.as_ptr());
            assert_eq!(changed.args, JsonText::of(&args));
        }
        // Another operation's reference, or none: nothing taken.
        for reference in [Some("op-2"), None] {
            let mut other = effect(reference, json!({"t": "x", "n": 1}));
            share_with_operation(&mut other, &op);
            assert_eq!(other.client_reference.as_deref(), reference);
            assert_ne!(other.args.get().as_ptr(), op_text.as_ptr());
        }
    }
}

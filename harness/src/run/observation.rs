//! What one scenario run saw: every adapter call and its reply, the steps with
//! their timings, webhook deliveries and the provider's ledger and journal.
//! The checks and the report are both computed from this, and only from this.

use lostreply_reports::model::{
    CallEnd, CallReply, DeliveryRecord, ErrorRecord, Evidence, RecordedRequest, SharedJson,
    SharedStr, StepReport,
};
use lostreply_simulator::{Effect, JournalEntry};

use crate::position::{pos, Pos, NONE};
use crate::protocol::{CallName, OutcomeReply, WebhookReply};
use crate::scenario::model::Scenario;

/// One adapter call as the harness made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Position in [`Observation::calls`]. (`u32`, as the step and the
    /// times below: a run holds two million calls, and these four fields in
    /// 16 bytes instead of 32 made every call 144 bytes instead of 160.)
    pub index: u32,
    /// The step that made it (0: the final `status` sweep).
    pub step: u32,
    /// Which call.
    pub name: CallName,
    /// The operation concerned, if one.
    pub operation_id: Option<SharedStr>,
    /// What the harness sent, as shared text, or as the scenario's operation
    /// it was made from (`RecordedRequest`): a million-operation run holds two
    /// million of these, and the report takes them over instead of copying.
    pub request: RecordedRequest,
    /// The raw reply's text, if one came back (shared, as `request`) and it
    /// was not simply `outcome` written out: see `reply_is_outcome`, and
    /// [`Call::reply`] for the reply either way.
    pub reply: Option<SharedJson>,
    /// True when the reply was exactly `outcome` written out (its fields in
    /// the protocol's order), and is kept as it rather than as text again (decided as the
    /// call is recorded, [`crate::run::call_log`]; in padding, so free).
    pub reply_is_outcome: bool,
    /// The reply read as an outcome (execute, reconcile, resolve, status), if it is one.
    pub outcome: Option<OutcomeReply>,
    /// How the call ended.
    pub end: CallEnd,
    /// The adapter's stderr tail.
    pub stderr: SharedStr,
    /// Real ms since the scenario started (a scenario runs far below the 49
    /// days a `u32` holds; the harness saturates rather than wraps).
    pub start_ms: u32,
    /// Real ms since the scenario started.
    pub end_ms: u32,
    /// Journal length when the call started and ended; `None` inside a `parallel`
    /// step, where other calls' requests interleave. (`u32`: a run's journal
    /// stays far below four billion entries, and it is 12 bytes less per call.)
    pub journal_window: Option<(u32, u32)>,
    /// The simulator clock during the call (ms since the Unix epoch). The clock
    /// moves only between steps, so a reply's claims are judged at this time.
    pub sim_ms: i64,
    /// True when the harness made it to look, not the scenario (status around a
    /// forged delivery). Probes never count as the step's reported outcome.
    pub probe: bool,
}

impl Call {
    /// Its position in [`Observation::calls`], as evidence and records name it.
    pub fn position(&self) -> usize {
        self.index as usize
    }

    /// The evidence that names it.
    pub fn evidence(&self) -> Evidence {
        Evidence::Call {
            index: self.position(),
        }
    }

    /// The step that made it (0: the final `status` sweep), as steps are numbered.
    pub fn step_number(&self) -> usize {
        self.step as usize
    }

    /// The reply read as a webhook answer, for a `webhook` call whose reply is
    /// one. Read from the reply's text on each call: few calls are webhook
    /// deliveries, and a field for it was 8 bytes in every call of a run
    /// (two million in a million-operation run), what made a call 152
    /// bytes instead of 144.
    pub fn webhook(&self) -> Option<WebhookReply> {
        if self.name != CallName::Webhook {
            return None;
        }
        self.reply
            .as_ref()
            .and_then(|reply| serde_json::from_str(&reply.text()).ok())
    }

    /// The reply, if one came back, however it is kept.
    pub fn reply(&self) -> Option<CallReply> {
        if self.reply_is_outcome {
            self.outcome.clone().map(CallReply::Made)
        } else {
            self.reply.clone().map(CallReply::Text)
        }
    }

    /// The reply, taken over: the outcome is moved, not shared (the report's
    /// records take each call's parts where they lie).
    pub fn take_reply(&mut self) -> Option<CallReply> {
        if self.reply_is_outcome {
            self.outcome.take().map(CallReply::Made)
        } else {
            self.reply.take().map(CallReply::Text)
        }
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
            .and_then(|i| self.calls.get(i)?.outcome.as_ref())
    }
}

/// Frees the fingerprints (their bodies' canonical text) of an observation's
/// requests and effects. Only the attribution reads them, and no report shows
/// them: [`crate::suite::check_and_report`] frees them once the attribution
/// is built, so that a million of them (some 80 bytes each) are not held
/// through the checks and the report. (The lists, not the observation: the
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
/// them while it is checked, and a map from each operation's id was some 31
/// bytes an entry where this is 4; the checks find an operation's position
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

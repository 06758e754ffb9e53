//! The report model: plain data the harness fills and every writer reads.
//! Serializable both ways so that the JSON report can be read back into it.
//! Times are given by the harness (no clock here); `*_ms` fields are real
//! milliseconds since the run or scenario started, `sim_*` fields the simulator clock.

use serde::{Deserialize, Serialize};

pub use crate::shared_str::SharedStr;

pub use crate::call_reply::{CallReply, OutcomeReply};
/// The compact forms a record may be kept in: the harness builds records
/// with them, and a reader never needs them (every record reads as its one
/// text), so they stay out of the documented model.
#[doc(hidden)]
pub use crate::call_request::{FromOperation, MadeFrom};
pub use crate::call_request::{OperationFields, OperationSpec, RecordedRequest};
pub use crate::fate::{Fate, ResponseEnd};
pub use crate::fault::{
    Fault, FaultPoint, FaultResponse, HttpFault, McpFault, McpFaultKind, Release, StallThen,
};
pub use crate::invariant::Invariant;
pub use crate::kept_json::Kept;
#[doc(hidden)]
pub use crate::kept_json::MadeJson;
pub use crate::operation_report::OperationReport;
pub use crate::outcome::{Outcome, OutcomeKind};
pub use crate::record_names::{ObjectStatus, RequestKind};
pub use crate::shared_json::SharedJson;
#[doc(hidden)]
pub use crate::shared_json::SharedTail;
pub use crate::signals::{
    Action, Ambiguity, Confirmation, ConfirmedBy, ConfirmedByCounts, KeyNearExpiry, LateDuplicate,
    OperationAge, OperationCount, ScenarioOperation, SignalTotals, Signals, UnknownReplies,
};
pub use crate::step_label::StepLabel;
#[doc(hidden)]
pub use crate::step_label::StepVerb;
pub use lostreply_protocol::CallName;

/// Version of the JSON report's shape. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run: one adapter through a set of scenarios.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Report {
    /// [`SCHEMA_VERSION`] when written.
    pub schema_version: u32,
    /// lostreply's version.
    pub tool_version: String,
    /// The adapter under test.
    pub adapter: AdapterInfo,
    /// The run's seed (each scenario records its own derived seed too).
    pub seed: u64,
    /// Real duration of the whole run.
    pub duration_ms: u64,
    /// One entry per scenario, in the order they were selected (not finished);
    /// sorted by id in a merged report ([`crate::merge()`]).
    pub scenarios: Vec<ScenarioReport>,
}

/// Which part of a sharded run a report covers (`lostreply run --shard K/N`).
///
/// Deliberately not a field of [`Report`]: a shard's JSON report carries it as
/// a top-level `shard` object beside the report's own fields (written by
/// [`crate::json::write_shard_json`], read by [`crate::json::read_json_with_shard`]),
/// and the report of an unsharded run or of a merge has none.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Shard {
    /// K: which shard, from 1.
    pub index: u32,
    /// N: how many shards the selection was cut into.
    pub total: u32,
    /// How many scenarios the selection held before it was cut (all N shards together).
    pub selected: usize,
}

/// Which adapter ran.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AdapterInfo {
    /// Display name: `builtin:reference` or the command line.
    pub name: String,
    /// How it was driven.
    pub kind: AdapterKind,
}

/// How the harness drove the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AdapterKind {
    /// A Rust trait object in the harness's process.
    InProcess,
    /// One process per call, JSON on stdin and stdout.
    Process,
}

/// The verdict of one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every invariant and expectation held.
    Passed,
    /// At least one invariant or expectation was violated.
    Violated,
    /// The adapter failed to answer (non-zero exit, bad JSON, deadline, panic).
    AdapterError,
    /// The harness or simulator failed (not the adapter's fault).
    InfraError,
}

/// One scenario's run.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScenarioReport {
    /// The scenario's `id`.
    pub id: String,
    /// The scenario's `title`.
    pub title: String,
    /// Path of the scenario file as given (or `builtin:<file>`).
    pub path: String,
    /// Which of the ten lost-response cases it covers, if any.
    pub case: Option<u8>,
    /// The scenario's tags.
    pub tags: Vec<String>,
    /// The outcome.
    pub verdict: Verdict,
    /// The seed this scenario ran with.
    pub seed: u64,
    /// A shell command that reruns exactly this scenario.
    pub reproduce: String,
    /// Real duration.
    pub duration_ms: u64,
    /// Simulator clock at the start, ms since the Unix epoch.
    pub sim_start_ms: i64,
    /// The logical operations and what became of them. (This and the
    /// other long arrays are written on two threads by the JSON writer.)
    #[serde(serialize_with = "crate::pretty::serialize_chunked")]
    pub operations: Vec<OperationReport>,
    /// The steps as run.
    #[serde(serialize_with = "crate::pretty::serialize_chunked")]
    pub steps: Vec<StepReport>,
    /// Every call made to the adapter.
    #[serde(serialize_with = "crate::pretty::serialize_chunked")]
    pub calls: Vec<CallRecord>,
    /// Every request the provider saw.
    #[serde(serialize_with = "crate::pretty::serialize_chunked")]
    pub journal: Vec<RequestRecord>,
    /// Every effect in the provider's ledger.
    #[serde(serialize_with = "crate::pretty::serialize_chunked")]
    pub ledger: Vec<EffectRecord>,
    /// Webhook deliveries the harness made.
    pub deliveries: Vec<DeliveryRecord>,
    /// What failed, with evidence. Empty when passed.
    pub violations: Vec<Violation>,
    /// What the run shows that is no adapter's fault but a person should
    /// see (a resolution that contradicts the ledger). They never change
    /// the verdict. Absent from JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Adapter or infrastructure errors (the verdict says which).
    pub errors: Vec<ErrorRecord>,
    /// For an MCP scenario: the client windows the adapter was given, scaled,
    /// beside the real client's figures they stand for. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_client: Option<McpClientReport>,
    /// The production signals ([`crate::signals`]); read as empty from a
    /// report that has none.
    #[serde(default)]
    pub signals: Signals,
}

/// An MCP scenario's client windows: the named profile's real figures (with
/// the scenario's overrides) and the scaled ones the adapter applied.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct McpClientReport {
    /// The profile (`claude-code-http`, `typescript-sdk`, ..., `custom`).
    pub profile: String,
    /// The factor from real to scaled (0 < scale ≤ 1).
    pub scale: f64,
    /// What restarts the idle window: `bytes` or `progress`.
    pub idle_resets_on: String,
    /// Limit counted from the request.
    pub wall_clock: WindowFigures,
    /// Limit on silence.
    pub idle: WindowFigures,
    /// Limit until the first response byte.
    pub first_byte: WindowFigures,
    /// When the client moves a call to the background.
    pub background_after: WindowFigures,
}

impl McpClientReport {
    /// The four windows with their labels, in the order writers show them.
    pub fn windows(&self) -> [(&'static str, WindowFigures); 4] {
        [
            ("wall clock", self.wall_clock),
            ("idle", self.idle),
            ("first byte", self.first_byte),
            ("background after", self.background_after),
        ]
    }
}

/// One client window, real and scaled; `None` in both: the client has no such limit.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WindowFigures {
    /// The real client's figure, ms.
    pub real_ms: Option<u64>,
    /// What the adapter applied in this run (real × scale), ms.
    pub scaled_ms: Option<u64>,
}

/// One step of the scenario as it ran.
///
/// (Its number and real times are `u32`s, as a call's are: 40 bytes a step,
/// where `usize` and `u64` made 56, and a million-operation run has a
/// million steps.)
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepReport {
    /// 1-based step number, as `expect.after_step` counts.
    pub number: u32,
    /// Short description: `execute op-1 (crash after_commit)`, `advance 25h`
    /// (a plain `execute op-1` kept as its verb and the operation's id).
    pub label: StepLabel,
    /// Real time the step started.
    pub start_ms: u32,
    /// Real time the step ended.
    pub end_ms: u32,
    /// Simulator clock when it started.
    pub sim_start_ms: i64,
    /// Simulator clock when it ended (differs only for clock moves).
    pub sim_end_ms: i64,
}

/// One call to the adapter.
///
/// (Its numbers are `u32`s, as the harness keeps them: a call is 112
/// bytes, no more than the harness's own record of it, so that the report
/// takes the run's two million calls over where they lie.)
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// Index in `calls`, from 0 (evidence refers to it).
    pub index: u32,
    /// The step that made it (0 for the final `status` sweep).
    pub step: u32,
    /// `execute`, `reconcile`, `webhook`, `resolve` or `status`.
    pub call: CallName,
    /// The operation it concerned, if any.
    pub operation_id: Option<SharedStr>,
    /// The request sent (JSON), shared with the observation (a request
    /// made from the scenario's operation, as that operation).
    pub request: RecordedRequest,
    /// The reply, when a well-formed one came back, shared with the
    /// observation (an outcome reply that was exactly its parsed outcome, as it).
    pub reply: Option<CallReply>,
    /// How the call ended.
    pub end: CallEnd,
    /// The adapter's stderr (truncated by the harness).
    pub stderr: SharedStr,
    /// Real time the call started.
    pub start_ms: u32,
    /// Real time the call ended.
    pub end_ms: u32,
}

/// How an adapter call ended. (Messages are shared text: 16 bytes in all,
/// where a `String` would make it 32 in every one of a run's two million calls.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallEnd {
    /// A reply was read.
    Replied,
    /// The harness killed it on purpose (a `crash` step).
    Crashed,
    /// It exited with a non-zero code or a signal.
    Exited {
        /// Exit code, if it had one.
        code: Option<i32>,
    },
    /// Its stdout was not the JSON object the protocol asks for.
    BadReply {
        /// What was wrong.
        message: SharedStr,
    },
    /// It outlived its deadline and was killed.
    Deadline {
        /// The deadline.
        deadline_ms: u64,
    },
    /// An in-process adapter panicked or returned an error.
    Failed {
        /// The message.
        message: SharedStr,
    },
}

/// One request as the provider saw it (from the simulator's journal).
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestRecord {
    /// Journal position, from 1 (evidence refers to it).
    pub seq: u64,
    /// Simulator clock at arrival.
    pub sim_ms: i64,
    /// Real time at arrival (relative to the scenario's start).
    pub start_ms: u64,
    /// Real time the response ended, if it did.
    pub end_ms: Option<u64>,
    /// The tenant credential, if valid.
    pub tenant: Option<SharedStr>,
    /// HTTP method.
    pub method: SharedStr,
    /// Path and query; for an MCP request, the path, the JSON-RPC method and
    /// the tool (`/mcp tools/call create_ticket`).
    pub target: SharedStr,
    /// `create`, `retrieve`, `search`, `list`, when it addressed a collection.
    pub kind: Option<RequestKind>,
    /// Raw `Idempotency-Key`.
    pub idempotency_key: Option<SharedStr>,
    /// The fault that struck: `after_commit drop (rule 1)`, or for an MCP call
    /// `mcp stall (MCP rule 1)`, with `the client cancelled (request #7)` when a
    /// cancel arrived while the server held the call. (Boxed: few requests
    /// meet a fault, and an absent one takes 8 bytes.)
    pub fault: Option<Box<Fault>>,
    /// The effect this request committed.
    pub effect: Option<SharedStr>,
    /// True for an idempotent replay.
    pub replayed: bool,
    /// How the response ended: `sent 201`, `dropped (closed without a byte)`,
    /// `stalled until the client left`.
    pub fate: Fate,
    /// True when the client never got a complete response.
    pub lost: bool,
}

/// One effect in the ledger.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EffectRecord {
    /// Object id.
    pub id: SharedStr,
    /// Owning tenant.
    pub tenant: SharedStr,
    /// Collection.
    pub resource: SharedStr,
    /// Its arguments (shared text, not a tree copied for each of a million effects).
    pub args: SharedJson,
    /// Idempotency key it was created with.
    pub idempotency_key: Option<SharedStr>,
    /// Simulator clock at creation.
    pub sim_ms: i64,
    /// `processing`, `succeeded` or `failed`.
    pub status: ObjectStatus,
    /// The journal entry that created it (`None` for seed objects).
    pub request_seq: Option<u64>,
    /// The operation it was attributed to, if any.
    pub operation_id: Option<SharedStr>,
}

/// What a provider's event says of its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventShows {
    /// It was created (it may still be processing).
    Created,
    /// Its asynchronous work settled as a success.
    Succeeded,
    /// Its asynchronous work settled as a failure.
    Failed,
}

/// One webhook delivery by the harness.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeliveryRecord {
    /// The step that delivered it.
    pub step: usize,
    /// Event id.
    pub event_id: String,
    /// Event type: `tickets.created`.
    pub event_type: String,
    /// The id of the object the event is about (absent in reports written
    /// before deliveries named it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
    /// What the event says of its object (absent in reports written before
    /// deliveries said it): a `created` event shows that it exists, not
    /// what became of it later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shows: Option<EventShows>,
    /// True when its signature was deliberately wrong.
    pub forged: bool,
    /// Which delivery of this event this was (1, 2 for a duplicate…).
    pub attempt: u32,
    /// The call that handed it to the adapter.
    pub call_index: usize,
}

/// A broken rule.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Violation {
    /// Which rule.
    pub check: Check,
    /// The operation concerned, if one.
    pub operation_id: Option<String>,
    /// One sentence: what happened and why it breaks the rule.
    pub message: String,
    /// What shows it.
    pub evidence: Vec<Evidence>,
}

/// An invariant of docs/scenario-format.md or one of the scenario's own expectations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// One of the seven invariants checked in every scenario. In JSON, its
    /// `number` (1..=7) and `name` (`at-most-once`) beside the `kind`.
    Invariant(Invariant),
    /// A key of the scenario's `expect` section.
    Expectation {
        /// `final`, `after_step`, `effects` or `needs_review`.
        key: String,
    },
    /// A rule of the adapter protocol beyond the seven invariants, checked
    /// in every scenario where its situation arises.
    Rule {
        /// Which rule.
        rule: Rule,
    },
}

/// The adapter protocol's rules checked beside the seven invariants
/// (docs/adapter-protocol.md, "Resolutions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Rule {
    /// A final resolution that later evidence contradicts keeps its outcome
    /// and is raised for review again (`needs_review: true`).
    ReviewAfterContradiction,
}

impl Rule {
    /// The rule's name, as JSON and every writer spell it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::ReviewAfterContradiction => "review-after-contradiction",
        }
    }
}

/// Something a person should see that is no adapter's fault.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Finding {
    /// What kind of finding.
    pub kind: FindingKind,
    /// The operation concerned.
    pub operation_id: String,
    /// One sentence: what the run shows.
    pub message: String,
    /// What shows it.
    pub evidence: Vec<Evidence>,
}

/// The kinds of [`Finding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FindingKind {
    /// An operator's resolution says what the provider's ledger contradicts:
    /// `failed` while an effect exists, or `succeeded` naming no effect of
    /// the operation. The adapter applies it (a person's word is final);
    /// the report shows it so that a person looks again.
    ResolutionContradictsLedger,
}

impl FindingKind {
    /// The kind's name, as JSON and every writer spell it.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::ResolutionContradictsLedger => "resolution-contradicts-ledger",
        }
    }
}

/// A pointer to what shows a violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// A journal entry, by `seq`.
    Request {
        /// Journal position.
        seq: u64,
    },
    /// An adapter call, by `index`.
    Call {
        /// Call index.
        index: usize,
    },
    /// A ledger effect, by id.
    Effect {
        /// Object id.
        id: String,
    },
    /// A webhook delivery, by call index.
    Delivery {
        /// The call that delivered it.
        call_index: usize,
    },
}

/// An adapter or infrastructure error.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorRecord {
    /// The step it happened in (0: setup or the final sweep).
    pub step: usize,
    /// The call, if an adapter call failed.
    pub call_index: Option<usize>,
    /// What went wrong.
    pub message: String,
}

/// An operation whose final status has `needs_review`: a person must decide.
#[derive(bon::Builder, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BacklogItem {
    /// Scenario id.
    pub scenario: String,
    /// Operation id.
    pub operation_id: SharedStr,
    /// Collection.
    pub resource: SharedStr,
    /// The attempted change.
    pub args: SharedJson,
    /// The adapter's last evidence.
    pub evidence: SharedStr,
}

/// Counts by verdict.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Totals {
    /// Scenarios that passed.
    pub passed: usize,
    /// Scenarios with a violation.
    pub violated: usize,
    /// Scenarios with an adapter error.
    pub adapter_errors: usize,
    /// Scenarios with an infrastructure error.
    pub infra_errors: usize,
}

impl Report {
    /// Counts scenarios by verdict.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for s in &self.scenarios {
            match s.verdict {
                Verdict::Passed => t.passed += 1,
                Verdict::Violated => t.violated += 1,
                Verdict::AdapterError => t.adapter_errors += 1,
                Verdict::InfraError => t.infra_errors += 1,
            }
        }
        t
    }

    /// Every scenario's findings, with their scenario, in report order.
    pub fn findings(&self) -> impl Iterator<Item = (&ScenarioReport, &Finding)> {
        self.scenarios
            .iter()
            .flat_map(|s| s.findings.iter().map(move |f| (s, f)))
    }

    /// The operator's backlog: every operation whose final status has
    /// `needs_review`, across scenarios.
    pub fn backlog(&self) -> Vec<BacklogItem> {
        let mut items = Vec::new();
        for s in &self.scenarios {
            for op in &s.operations {
                if let Some(o) = &op.final_outcome {
                    // `unknown` in review, or a person's decision that later
                    // evidence contradicted, raised for review again.
                    if o.needs_review {
                        items.push(BacklogItem {
                            scenario: s.id.clone(),
                            operation_id: op.id.clone(),
                            resource: op.resource.clone(),
                            args: op.args.clone(),
                            evidence: o.evidence.clone(),
                        });
                    }
                }
            }
        }
        items
    }
}

impl Verdict {
    /// True for every verdict but [`Verdict::Passed`]: what a CI gate fails on.
    pub fn failed(self) -> bool {
        match self {
            Verdict::Passed => false,
            Verdict::Violated | Verdict::AdapterError | Verdict::InfraError => true,
        }
    }
}

impl Check {
    /// True for an invariant or a design rule: a break the ledger and the
    /// journal prove whatever else went wrong. An expectation is only as good
    /// as the adapter's answers, so an adapter's error outranks it.
    pub fn proven_by_the_record(&self) -> bool {
        match self {
            Check::Invariant(_) | Check::Rule { .. } => true,
            Check::Expectation { .. } => false,
        }
    }
}

impl CallEnd {
    /// What the adapter failed to do, when the call ended in its failure;
    /// `None` for a reply, and for a crash the scenario asked for.
    pub fn adapter_failure(&self) -> Option<String> {
        match self {
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
}

impl Verdict {
    /// The name used in JSON and in file-friendly places: `passed`, `violated`,
    /// `adapter_error`, `infra_error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Violated => "violated",
            Verdict::AdapterError => "adapter_error",
            Verdict::InfraError => "infra_error",
        }
    }
}

impl AdapterKind {
    /// `in-process` or `process`.
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterKind::InProcess => "in-process",
            AdapterKind::Process => "process",
        }
    }
}

/// Lookups that evidence needs: a violation points at records by number or id,
/// and every writer resolves those pointers the same way.
impl ScenarioReport {
    /// The journal entry with this `seq`.
    pub fn request(&self, seq: u64) -> Option<&RequestRecord> {
        self.journal.iter().find(|r| r.seq == seq)
    }

    /// The adapter call with this `index`.
    pub fn call(&self, index: usize) -> Option<&CallRecord> {
        self.calls.iter().find(|c| c.index as usize == index)
    }

    /// The ledger effect with this id.
    pub fn effect(&self, id: &str) -> Option<&EffectRecord> {
        self.ledger.iter().find(|e| e.id == id)
    }

    /// The webhook delivery made by this call.
    pub fn delivery(&self, call_index: usize) -> Option<&DeliveryRecord> {
        self.deliveries.iter().find(|d| d.call_index == call_index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A million-operation report holds millions of these records: none
    /// grows unnoticed. (A request's rare fault is boxed; its fate, its kind,
    /// a call's name and an effect's status are tags where each was a
    /// shared string's pointer.)
    #[test]
    fn records_keep_their_sizes() {
        assert_eq!(std::mem::size_of::<CallRecord>(), 112, "CallRecord");
        assert_eq!(std::mem::size_of::<RequestRecord>(), 112, "RequestRecord");
        assert_eq!(std::mem::size_of::<EffectRecord>(), 88, "EffectRecord");
        assert_eq!(std::mem::size_of::<Fate>(), 16, "Fate");
        assert_eq!(std::mem::size_of::<Option<Box<Fault>>>(), 8, "fault");
    }
}

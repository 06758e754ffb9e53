//! What the simulator remembers: the ledger of effects, the journal of requests,
//! and the webhook events it produced. These are plain data the harness reads.

use std::sync::Arc;

use futures::future::BoxFuture;
use lostreply_text::SharedStr;
use nonmax::{NonMaxU32, NonMaxU64};
use serde::Serialize;

use crate::json_text::JsonText;
use crate::plan::{Asynchronous, FaultResponse, Position, RequestKind};

/// Called after an effect commits and before its response leaves; the response
/// waits for the returned future. The harness uses it to kill an adapter "right
/// after the remote commit".
pub type CommitHook = Arc<dyn Fn(Effect) -> BoxFuture<'static, ()> + Send + Sync>;

/// The status of a provider object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObjectStatus {
    /// Asynchronous work still running.
    Processing,
    /// Done.
    Succeeded,
    /// Asynchronous work that settled as a failure: a confirmed failure, not an effect.
    Failed,
}

impl ObjectStatus {
    /// The name the API writes (its serialized form).
    pub(crate) fn wire_name(self) -> &'static str {
        match self {
            ObjectStatus::Processing => "processing",
            ObjectStatus::Succeeded => "succeeded",
            ObjectStatus::Failed => "failed",
        }
    }
}

/// One effect: an object the provider created. The ground truth the harness checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    /// Position in the ledger, from 1.
    pub seq: u64,
    /// Object id (`tkt_…`).
    pub id: SharedStr,
    /// Credential of the owning tenant.
    pub tenant: SharedStr,
    /// Collection name.
    pub resource: SharedStr,
    /// The operation's arguments (the body without reserved fields), as the
    /// compact JSON text of an object in the order sent; [`JsonText::to_map`] reads it.
    pub args: JsonText,
    /// The reserved `client_reference`, if sent.
    pub client_reference: Option<SharedStr>,
    /// The reserved `metadata`, if sent: compact JSON text of the object sent,
    /// shared with the store (as a parsed `Value` it was 80 bytes in every
    /// effect, sent or not; boxed, as few effects have one, it is 8).
    pub metadata: Option<Box<JsonText>>,
    /// The `Idempotency-Key` as received (raw header value), if any.
    pub idempotency_key: Option<SharedStr>,
    /// Canonical JSON of the request body (object keys sorted).
    pub fingerprint: SharedStr,
    /// 1-based count of create requests with this tenant, resource and fingerprint,
    /// up to the one that made this effect (2 = the second attempt committed again).
    pub attempt: u32,
    /// Creation time, simulator clock, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// Current status (asynchronous objects move from `processing`).
    pub status: ObjectStatus,
    /// The journal entry of the request that created it; `None` for seed
    /// objects. (`NonMaxU64`, as a journal entry's times: 8 bytes, not 16.)
    pub request_seq: Option<NonMaxU64>,
}

impl Effect {
    /// The journal seq of the request that created it; `None` for seed objects.
    pub fn request(&self) -> Option<u64> {
        self.request_seq.map(|seq| seq.get())
    }

    /// When an object of an asynchronous provider settles (simulator clock,
    /// ms); `None` on a synchronous one. The store settles by this and the
    /// harness judges claims by it, so both read time the same way.
    pub fn settles_at_ms(&self, asynchronous: Option<Asynchronous>) -> Option<i64> {
        let asynchronous = asynchronous?;
        let settle_ms = i64::try_from(asynchronous.settle_after.as_millis()).unwrap_or(i64::MAX);
        Some(self.created_at_ms.saturating_add(settle_ms))
    }

    /// Its status at simulator time `at_ms`: `processing` until it settles,
    /// then what it settled to (the ledger's final status).
    pub fn status_at(&self, asynchronous: Option<Asynchronous>, at_ms: i64) -> ObjectStatus {
        match self.settles_at_ms(asynchronous) {
            Some(settles) if at_ms < settles => ObjectStatus::Processing,
            Some(_) | None => self.status,
        }
    }
}

/// How a response ended, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
pub enum ResponseFate {
    /// Still being handled when the journal was read.
    InProgress,
    /// A complete response with this status.
    Sent {
        /// HTTP status sent.
        status: u16,
        /// True when the client had already closed its side of the
        /// connection (EOF or reset seen on the socket) when the answer was
        /// handed over: written, but to nobody. Written only when true, so a
        /// reader of `sent` and `status` alone reads the journal as before.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        client_left: bool,
    },
    /// Connection closed without a byte.
    Dropped,
    /// Connection aborted with a TCP RST.
    Reset,
    /// Held until the client left (`client_left`) or the cap ran out.
    Stalled {
        /// True when the client closed first; false when the cap ended the stall.
        client_left: bool,
    },
    /// An MCP call held without an answer until the client's
    /// `notifications/cancelled` ended it (a rule that honours the cancel, or
    /// one where it races the commit): not a byte of a response went out.
    Cancelled,
    /// Status and headers, then `bytes` body bytes, then close.
    Truncated {
        /// HTTP status sent.
        status: u16,
        /// Body bytes that got through (a `u32`, saturated: a fate is 8
        /// bytes, not 16, in every journal entry).
        bytes: u32,
    },
    /// Status and headers, then silence until the client left or the cap ran out.
    Idle {
        /// HTTP status sent.
        status: u16,
        /// True when the client closed first.
        client_left: bool,
    },
}

/// The fault a request met. Serialized as
/// `{"rule":0,"at":"after_commit","response":"drop"}`; see [`fault_response_json`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppliedFault {
    /// Index of the rule in the plan's fault list (0-based).
    pub rule: usize,
    /// Where it struck.
    pub at: Position,
    /// What it did.
    pub response: FaultResponse,
}

impl Serialize for AppliedFault {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("AppliedFault", 3)?;
        out.serialize_field("rule", &self.rule)?;
        out.serialize_field("at", self.at.name())?;
        out.serialize_field("response", &fault_response_json(&self.response))?;
        out.end()
    }
}

/// A fault response as scenarios write it: `"drop"`, `"reset"`, `"idle"`, `"ok"`,
/// `{"stall":{"then":"commit"}}`, `{"delay_ms":300}`, `{"status":500}`, `{"partial":12}`.
pub fn fault_response_json(response: &FaultResponse) -> serde_json::Value {
    use serde_json::json;
    match response {
        FaultResponse::Ok => json!("ok"),
        FaultResponse::Drop => json!("drop"),
        FaultResponse::Reset => json!("reset"),
        FaultResponse::Idle => json!("idle"),
        FaultResponse::Stall { then, until } => {
            let then = match then {
                crate::plan::StallThen::Abandon => "abandon",
                crate::plan::StallThen::Commit => "commit",
            };
            match until {
                crate::plan::Release::ClientGone => json!({"stall": {"then": then}}),
                crate::plan::Release::StepEnd(step) => {
                    json!({"stall": {"then": then, "until": {"end_of_step": step}}})
                }
            }
        }
        FaultResponse::Gather { requests, at_most } => json!({"gather": {
            "requests": requests,
            "at_most_ms": u64::try_from(at_most.as_millis()).unwrap_or(u64::MAX),
        }}),
        FaultResponse::Delay { delay } => {
            json!({"delay_ms": u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)})
        }
        FaultResponse::Status {
            code,
            retry_after_s: None,
        } => json!({"status": code}),
        FaultResponse::Status {
            code,
            retry_after_s: Some(seconds),
        } => json!({"status": code, "retry_after_s": seconds}),
        FaultResponse::Partial { bytes } => json!({"partial": bytes}),
    }
}

fn kind_name<S: serde::Serializer>(
    kind: &Option<RequestKind>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match kind {
        Some(kind) => serializer.serialize_some(kind.name()),
        None => serializer.serialize_none(),
    }
}

/// One request as the provider saw it.
///
/// Its text is shared ([`SharedStr`]) and its rare parts boxed: a run's
/// observation holds one per request, a million in the largest scenarios, and
/// taking it from the journal's compact form is a reference count per field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JournalEntry {
    /// Position in the journal, from 1.
    pub seq: u64,
    /// Arrival time, simulator clock, ms since the Unix epoch.
    pub at_ms: i64,
    /// Real time since the simulator started, when the request arrived (ms).
    pub real_start_ms: u64,
    /// Real time since the simulator started, when the response ended (ms); `None` in progress.
    /// (`NonMaxU64`: 8 bytes as an `Option`, where `Option<u64>` took 16.)
    pub real_end_ms: Option<NonMaxU64>,
    /// The tenant, when the credential was valid.
    pub tenant: Option<SharedStr>,
    /// HTTP method.
    pub method: SharedStr,
    /// Path without the query.
    pub path: SharedStr,
    /// Raw query string, if any.
    pub query: Option<SharedStr>,
    /// What the request asked for, when it addressed a collection.
    #[serde(serialize_with = "kind_name")]
    pub kind: Option<RequestKind>,
    /// Collection name, when the path named one.
    pub resource: Option<SharedStr>,
    /// Raw `Idempotency-Key` header, if any.
    pub idempotency_key: Option<SharedStr>,
    /// Canonical JSON of the body, for creates whose body was read and parsed.
    pub fingerprint: Option<SharedStr>,
    /// The fault that struck, if a rule matched.
    pub fault: Option<Box<AppliedFault>>,
    /// The id of the effect this request committed, if it committed one.
    pub effect: Option<SharedStr>,
    /// True when the key check found this request's saved answer (a replay
    /// attempt); whether that answer left is [`JournalEntry::replay_sent`].
    pub replayed: bool,
    /// The harness step running when the request arrived (`None` outside steps).
    pub step: Option<NonMaxU32>,
    /// The JSON-RPC side of a request to the MCP endpoint (`/mcp`); absent
    /// (and not serialized) for every other request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc: Option<Box<RpcCall>>,
    /// How the response ended (serialized flat: `"fate":"sent","status":201`).
    #[serde(flatten)]
    pub fate: ResponseFate,
}

impl JournalEntry {
    /// True when the saved answer of a replay reached the wire: the key
    /// check found a saved answer (`replayed`) and no fault answered in its
    /// place or kept it from leaving (a status, a drop, a reset, a stall).
    /// A fault's 429 to a replay attempt is that 429, not a replay.
    pub fn replay_sent(&self) -> bool {
        self.replayed
            && !self
                .fault
                .as_deref()
                .is_some_and(AppliedFault::replaces_answer)
    }
}

impl AppliedFault {
    /// Whether this fault sends something else than the provider's answer,
    /// or nothing: where it strikes after the request was read, the answer
    /// it had (a replay's, say) never leaves as it was.
    pub fn replaces_answer(&self) -> bool {
        match self.response {
            FaultResponse::Status { .. }
            | FaultResponse::Drop
            | FaultResponse::Reset
            | FaultResponse::Stall { .. } => self.at != Position::BeforeRead,
            FaultResponse::Ok
            | FaultResponse::Delay { .. }
            | FaultResponse::Gather { .. }
            | FaultResponse::Partial { .. }
            | FaultResponse::Idle => false,
        }
    }
}

/// `value` as the records keep an optional count or time
/// (`Option<NonMaxU64>`: 8 bytes): saturated one below `u64::MAX`, which is
/// never a time in ms, a sequence number or a count here.
pub fn nonmax_u64(value: u64) -> NonMaxU64 {
    NonMaxU64::new(value).unwrap_or(NonMaxU64::MAX)
}

/// `value` as the journal keeps a step number (saturated one below
/// `u32::MAX`; steps count from 1, a scenario's far below).
pub fn nonmax_u32(value: u32) -> NonMaxU32 {
    NonMaxU32::new(value).unwrap_or(NonMaxU32::MAX)
}

/// One JSON-RPC message posted to the MCP endpoint, as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcCall {
    /// The JSON-RPC method (`tools/call`, `initialize`, `notifications/cancelled`);
    /// empty for a client's response or an unparsable body.
    pub method: String,
    /// The tool a `tools/call` named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The JSON-RPC id of a request; `None` for notifications and responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// The MCP fault rule that decided this call's fate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<McpFaultSeen>,
    /// The background task this call became (2025-11-25 tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// A `notifications/cancelled` for this call arrived while the server still
    /// had it: whether a real client sends its courtesy cancel, and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<CancelArrival>,
}

/// The MCP fault rule a `tools/call` met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpFaultSeen {
    /// Index of the rule in `McpPlan::faults` (0-based).
    pub rule: usize,
    /// The fault's name (`stall`, `drop`, `is_error`, ...).
    pub name: String,
}

/// When a `notifications/cancelled` for a held call arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CancelArrival {
    /// Simulator clock, ms since the Unix epoch.
    pub at_ms: i64,
    /// Real time since the simulator started (ms).
    pub real_ms: u64,
    /// The journal entry of the notification's own POST.
    pub request_seq: u64,
}

/// The kind of a webhook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `{resource}.created`, on commit.
    Created,
    /// `{resource}.succeeded`, when asynchronous work settles as a success.
    Succeeded,
    /// `{resource}.failed`, when asynchronous work settles as a failure.
    Failed,
}

impl EventKind {
    /// The suffix used in event types and scenarios.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Created => "created",
            EventKind::Succeeded => "succeeded",
            EventKind::Failed => "failed",
        }
    }
}

/// An event the provider produced. It is never sent by the simulator; the harness
/// delivers it (signed afresh by [`crate::Simulator::sign`]) when a scenario says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// `evt_…`, the same on every delivery.
    pub id: String,
    /// What happened.
    pub kind: EventKind,
    /// `{resource}.{kind}`.
    pub event_type: String,
    /// The object's id.
    pub object_id: String,
    /// The owning tenant.
    pub tenant: String,
    /// When it was produced, simulator clock.
    pub created_at_ms: i64,
    /// The JSON payload, fixed when the event was produced.
    pub body: String,
}

/// One signed delivery of an event: the headers and the raw body to hand the adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// `webhook-id`, `webhook-timestamp`, `webhook-signature`, `content-type`.
    pub headers: std::collections::BTreeMap<String, String>,
    /// The raw body.
    pub body: String,
}

//! The adapter protocol v1 (docs/adapter-protocol.md) as Rust types: what the
//! harness sends to an adapter and what it reads back. These are the wire types
//! of the process protocol and the arguments of the in-process [`crate::adapter::Adapter`] trait.

use std::collections::BTreeMap;

/// The shared string of the replies' text (re-exported: adapters written in Rust build replies with it).
pub use lostreply_reports::model::SharedStr;
use serde::{Deserialize, Serialize};

pub use lostreply_reports::model::OutcomeKind;

/// The protocol version this harness speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// Fields common to every call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Common {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// The simulator clock, RFC 3339. Adapters use it, not the wall clock, for
    /// every retention, deadline or age decision.
    pub now: String,
    /// Where the provider is and what it supports.
    pub provider: ProviderInfo,
    /// The per-request timeout the adapter should give its HTTP client.
    pub client_timeout_ms: u64,
}

/// The provider as the adapter sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The adapter's bearer credential.
    pub credential: String,
    /// What the provider documents about itself.
    pub contract: Contract,
}

/// The provider's documented capabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    /// The wire the provider speaks: `generic` (docs/provider-api.md), a
    /// built-in profile (`stripe`, `openai`, `anthropic`) or a profile
    /// file's name. An addition to v1: read as `generic` where absent.
    #[serde(default = "generic_profile")]
    pub profile: String,
    /// Idempotency support.
    pub idempotency: ContractIdempotency,
    /// Which lookups exist.
    pub lookup: ContractLookup,
    /// True when created objects start `processing`.
    pub asynchronous: bool,
    /// Webhook signing secret, when the provider sends events.
    pub webhooks: Option<ContractWebhooks>,
    /// Present when the provider is (also) an MCP server: where it is, what
    /// it offers and which client windows the adapter must apply. An addition
    /// to v1: absent (not `null`) for plain HTTP scenarios, so adapters that
    /// do not know MCP never see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<ContractMcp>,
}

/// The provider as an MCP server (docs/mcp.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractMcp {
    /// The Streamable HTTP endpoint: `http://127.0.0.1:PORT/mcp`. The bearer
    /// credential is [`ProviderInfo::credential`], sent as `Authorization`.
    pub url: String,
    /// The protocol revision to ask for in `initialize` (`2025-11-25`).
    pub revision: String,
    /// The paid tools.
    pub tools: Vec<ContractTool>,
    /// The read-only retrieval tools; `None` when the server has none.
    pub retrieval: Option<ContractRetrieval>,
    /// Whether `tools/call` may be turned into a background task (`params.task`).
    pub tasks: bool,
    /// The client windows the adapter must give its MCP client.
    pub client: ClientWindows,
}

/// A paid tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractTool {
    /// Tool name (`create_ticket`).
    pub name: String,
    /// The collection its effects go to.
    pub resource: String,
    /// The argument that carries an idempotency key, when the tool takes one.
    pub key_argument: Option<String>,
    /// How long the server remembers a key (simulator clock), when the tool takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_retention_s: Option<u64>,
}

/// The retrieval tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractRetrieval {
    /// `get_operation`: `{id}` → status and the original payload.
    pub get: String,
    /// `list_recent_operations`: `{}` → this credential's recent ids, newest first.
    pub list_recent: String,
    /// How long ids retrieve (simulator clock).
    pub retention_s: u64,
}

/// A client's time limits, scaled for the scenario (real time, ms). `None`:
/// the client has no such limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientWindows {
    /// The named profile they come from (`claude-code-http`, `typescript-sdk`…, or `custom`).
    pub profile: String,
    /// The factor applied to the profile's real figures (`0.001`: a minute is 60 ms).
    pub scale: f64,
    /// Wall-clock limit per call, from the request.
    pub wall_clock_ms: Option<u64>,
    /// Idle limit: silence on the stream; restarts as `idle_resets_on` says.
    pub idle_ms: Option<u64>,
    /// What restarts the idle window: `bytes` (any byte) or `progress` (progress notifications only).
    pub idle_resets_on: String,
    /// First-byte limit: stops at the first response byte.
    pub first_byte_ms: Option<u64>,
    /// Calls running past this are moved to the background (the client stops waiting and reports later).
    pub background_after_ms: Option<u64>,
}

/// Idempotency as documented. Known-bad servers document the mode they claim to be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractIdempotency {
    /// `none`, `stripe` or `ietf`.
    pub mode: String,
    /// Header name: `Idempotency-Key`.
    pub header: String,
    /// How long the provider remembers a key.
    pub retention_s: u64,
}

/// Lookups as documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractLookup {
    /// `GET /v1/{resource}/{id}`.
    pub retrieve: bool,
    /// Search by `client_reference`.
    pub client_reference: bool,
    /// List recent objects.
    pub list_recent: bool,
}

fn generic_profile() -> String {
    "generic".to_owned()
}

/// Webhooks as documented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractWebhooks {
    /// `whsec_…`.
    pub secret: String,
    /// How deliveries are signed. An addition to v1: read as
    /// `standard_webhooks` where absent.
    #[serde(default)]
    pub scheme: WebhookScheme,
}

/// How a provider signs its webhook deliveries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebhookScheme {
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp` and
    /// `webhook-signature: v1,<base64 HMAC-SHA256>` keyed by the decoded `whsec_` secret.
    #[default]
    StandardWebhooks,
    /// Stripe: `stripe-signature: t=<unix>,v1=<hex HMAC-SHA256>` keyed by
    /// the secret's own bytes.
    Stripe,
}

/// One logical side-effecting action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    /// Stable across every call about it: `op-1`.
    pub id: String,
    /// `create` (an HTTP create) or `call_tool` (a paid MCP tool call, see
    /// [`Operation::tool`]).
    pub action: String,
    /// Collection to create in (for `call_tool`: the tool's collection).
    pub resource: String,
    /// `call_tool` only: the paid tool to call with `args` as its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The create body, before reserved fields.
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// `execute`: perform the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecuteRequest {
    /// The operation.
    pub operation: Operation,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// `reconcile` and `status`: about one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationRequest {
    /// The operation's id.
    pub operation_id: String,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// `webhook`: a delivered provider event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookRequest {
    /// Headers as delivered (lower-case names).
    pub headers: BTreeMap<String, String>,
    /// The raw body as received.
    pub body: String,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// `resolve`: an operator's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolveRequest {
    /// The operation's id.
    pub operation_id: String,
    /// The decision.
    pub resolution: Resolution,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// An operator's decision about an operation in review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolution {
    /// `succeeded` or `failed`.
    pub outcome: OutcomeKind,
    /// The provider object the operator found, if any.
    pub provider_ref: Option<String>,
    /// What the operator based it on.
    pub evidence: String,
    /// Always `operator` in protocol v1.
    pub by: String,
}

/// The reply to `execute`, `reconcile`, `resolve` and `status` (defined
/// with the report's model, whose records keep a reply that was exactly it
/// as it: `lostreply_reports::call_reply`).
pub use lostreply_reports::model::OutcomeReply;

/// The reply to `webhook`. Fields beyond these are ignored, as for [`OutcomeReply`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookReply {
    /// False for a rejected event (bad signature, unknown, duplicate is still `true`).
    pub accepted: bool,
    /// The operation the event was correlated with.
    #[serde(default)]
    pub operation_id: Option<String>,
}

/// The fields of a reply to `name` that the protocol does not define, in the
/// order the adapter wrote them (ignored, and shown in the report).
pub fn unknown_reply_fields(name: CallName, reply: &serde_json::Value) -> Vec<String> {
    let known: &[&str] = match name {
        CallName::Webhook => &["accepted", "operation_id"],
        CallName::Execute | CallName::Reconcile | CallName::Resolve | CallName::Status => &[
            "operation_id",
            "outcome",
            "provider_ref",
            "needs_review",
            "evidence",
        ],
    };
    reply
        .as_object()
        .map(|fields| {
            fields
                .keys()
                .filter(|k| !known.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The five calls, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallName {
    /// `execute`.
    Execute,
    /// `reconcile`.
    Reconcile,
    /// `webhook`.
    Webhook,
    /// `resolve`.
    Resolve,
    /// `status`.
    Status,
}

impl CallName {
    /// The name on the command line of a process adapter.
    pub fn as_str(self) -> &'static str {
        match self {
            CallName::Execute => "execute",
            CallName::Reconcile => "reconcile",
            CallName::Webhook => "webhook",
            CallName::Resolve => "resolve",
            CallName::Status => "status",
        }
    }

    /// Every call.
    pub const ALL: [CallName; 5] = [
        CallName::Execute,
        CallName::Reconcile,
        CallName::Webhook,
        CallName::Resolve,
        CallName::Status,
    ];

    /// Parses a call name.
    pub fn parse(name: &str) -> Option<CallName> {
        CallName::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// A name that is not one of the five calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown call `{0}`")]
pub struct UnknownCallName(pub String);

impl std::str::FromStr for CallName {
    type Err = UnknownCallName;

    fn from_str(name: &str) -> Result<CallName, UnknownCallName> {
        CallName::parse(name).ok_or_else(|| UnknownCallName(name.to_owned()))
    }
}

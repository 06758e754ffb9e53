//! The scenario file exactly as written: serde types at the boundary, every
//! value with its position, nothing checked beyond shape. `validate` turns
//! them into the model. The doc comments become the JSON Schema's descriptions.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::span::{present, OneOrMany, Sp, SpMap};

/// Arguments of a create: any mapping (reserved fields excluded).
pub(crate) type Args = serde_json::Map<String, serde_json::Value>;

/// A lostreply scenario (format v1): the provider's shape, the faults it
/// injects, the steps the harness drives and what must hold at the end.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "lostreply scenario (format v1)")]
#[schemars(rename = "Scenario")]
pub(crate) struct RawScenario {
    /// Format version. Always 1.
    #[schemars(range(min = 1, max = 1))]
    pub version: Sp<u32>,
    /// Unique name of the scenario in a suite: letters, digits, `.`, `_`, `-` (at most 80).
    pub id: Sp<String>,
    /// One line saying what happens.
    pub title: Sp<String>,
    /// Which of the ten lost-response cases this scenario covers (1..=10), if one.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub case: Option<Sp<u8>>,
    /// Free labels for selecting scenarios.
    #[serde(default)]
    pub tags: Vec<Sp<String>>,
    /// The per-request timeout adapters are told to give their HTTP client (real time).
    /// Default 250ms.
    #[serde(default)]
    pub client_timeout: Option<Sp<DurationText>>,
    /// How long one adapter call may take before the harness kills it (real time).
    /// Default 30s.
    #[serde(default)]
    pub call_deadline: Option<Sp<DurationText>>,
    /// The simulated provider. Every key has a default.
    #[serde(default)]
    pub provider: Option<Sp<RawProvider>>,
    /// The logical operations the adapter performs (at least one).
    pub operations: Sp<Vec<Sp<RawOperation>>>,
    /// Fault rules: the first rule that matches a request decides its fate;
    /// unmatched requests are served normally.
    #[serde(default)]
    pub faults: Vec<Sp<RawFault>>,
    /// What the harness does, in order (at least one step; numbered from 1).
    pub steps: Sp<Vec<Sp<RawStep>>>,
    /// What must hold at the end, beyond the invariants that always apply.
    #[serde(default)]
    pub expect: Option<Sp<RawExpect>>,
    /// The provider is also an MCP server (Streamable HTTP at `/mcp`): its
    /// tools, its retrieval path, the client windows the adapter applies.
    /// Absent: HTTP only (no `tool:` operations, no `call:` faults).
    #[serde(default)]
    pub mcp: Option<Sp<RawMcp>>,
}

/// The MCP face of the provider (docs/mcp.md).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Mcp")]
pub(crate) struct RawMcp {
    /// The protocol revision the adapter is told to ask for in `initialize`.
    /// One of `revisions`. Default 2025-11-25.
    #[serde(default)]
    pub revision: Option<Sp<RevisionName>>,
    /// The revisions the server accepts, in preference order. Default
    /// [2025-11-25, 2025-06-18].
    #[serde(default)]
    pub revisions: Option<Sp<Vec<Sp<RevisionName>>>>,
    /// How a `tools/call` is answered when the client accepts both. Default sse.
    #[serde(default)]
    pub answer: Option<Sp<RawAnswer>>,
    /// The MCP client's time limits: a named profile with real figures, the
    /// factor that scales them, and overrides (real figures too).
    pub client: Sp<RawClient>,
    /// The paid tools. Default: `create_ticket` (no key, in `tickets`) and
    /// `create_charge` (key argument `idempotency_key`, in `charges`).
    #[serde(default)]
    pub tools: Option<Sp<Vec<Sp<RawTool>>>>,
    /// `get_operation` and `list_recent_operations`. Default: enabled, 7 days, 20.
    #[serde(default)]
    pub retrieval: Option<Sp<RawRetrieval>>,
    /// Background tasks (revision 2025-11-25). Default: enabled, ttl 1h, work 5s.
    #[serde(default)]
    pub tasks: Option<Sp<RawTasks>>,
    /// Known-bad behaviours of the server (for certification). Default none.
    #[serde(default)]
    pub defects: Vec<Sp<DefectName>>,
    /// Bounds on the MCP face.
    #[serde(default)]
    pub limits: Option<Sp<RawMcpLimits>>,
}

/// A protocol revision (`2025-11-25`), checked against the simulator's list.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RevisionName(pub String);

/// A server defect's name, checked against the simulator's list.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct DefectName(pub String);

/// A client profile's name, checked against the harness's list.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct ProfileName(pub String);

/// A client window: a duration in real figures, or `none` (no such limit).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct WindowText(pub String);

/// How answers to `tools/call` travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Answer")]
pub(crate) enum RawAnswer {
    /// `application/json`, one response (faults that need a stream still use SSE).
    Json,
    /// `text/event-stream`: notifications first, the response last.
    Sse,
}

/// The MCP client's windows.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Client")]
pub(crate) struct RawClient {
    /// A named profile with real clients' figures: claude-code-http,
    /// claude-code-stdio, cline, python-mcp, typescript-sdk,
    /// typescript-sdk-reset-on-progress, custom.
    pub profile: Sp<ProfileName>,
    /// Multiplies every window and every real-time duration of the MCP faults
    /// (0 < scale ≤ 1; 0.001 makes a minute 60 ms). Default 1.
    #[serde(default)]
    pub scale: Option<Sp<f64>>,
    /// Overrides the wall-clock limit (real figure, or `none`).
    #[serde(default)]
    pub wall_clock: Option<Sp<WindowText>>,
    /// Overrides the idle limit (real figure, or `none`).
    #[serde(default)]
    pub idle: Option<Sp<WindowText>>,
    /// Overrides the first-byte limit (real figure, or `none`).
    #[serde(default)]
    pub first_byte: Option<Sp<WindowText>>,
    /// Overrides when a call is moved to the background (real figure, or `none`).
    #[serde(default)]
    pub background_after: Option<Sp<WindowText>>,
    /// Overrides what restarts the idle window.
    #[serde(default)]
    pub idle_resets_on: Option<Sp<RawIdleReset>>,
}

/// What restarts an idle window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "IdleResetsOn")]
pub(crate) enum RawIdleReset {
    /// Any byte on the stream.
    Bytes,
    /// Progress notifications only.
    Progress,
}

/// A paid tool: each call commits one effect (or replays, for a keyed tool).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Tool")]
pub(crate) struct RawTool {
    /// Tool name: a letter, then letters, digits, `_`, `-` (at most 64).
    pub name: Sp<String>,
    /// The collection its effects go to.
    pub resource: Sp<String>,
    /// The argument that carries an idempotency key. Absent: every call is new work.
    #[serde(default)]
    pub key_argument: Option<Sp<String>>,
    /// The expected duration its description states. Default "budget 1-3 s";
    /// `none`: the description states none (a design-rule defect).
    #[serde(default)]
    pub duration_hint: Option<Sp<String>>,
}

/// The retrieval tools.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Retrieval")]
pub(crate) struct RawRetrieval {
    /// false: neither retrieval tool is listed. Default true.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Ids retrieve for this long after creation (simulator clock). Default 7d.
    #[serde(default)]
    pub retention: Option<Sp<DurationText>>,
    /// Most ids `list_recent_operations` returns (1..=1000). Default 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub list_limit: Option<Sp<u64>>,
}

/// Background tasks.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Tasks")]
pub(crate) struct RawTasks {
    /// Whether `tools/call` accepts `params.task`. Default true.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// How long a finished task's result is kept (simulator clock). Default 1h.
    #[serde(default)]
    pub ttl: Option<Sp<DurationText>>,
    /// How long a task works before it completes (simulator clock). Default 5s.
    #[serde(default)]
    pub work: Option<Sp<DurationText>>,
}

/// Bounds on the MCP face.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "McpLimits")]
pub(crate) struct RawMcpLimits {
    /// Live sessions at most (1..=65536). Default 1024.
    #[serde(default)]
    #[schemars(range(min = 1, max = 65_536))]
    pub max_sessions: Option<Sp<u64>>,
    /// Tasks kept at most per tenant (1..=1000000). Default 10000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub max_tasks: Option<Sp<u64>>,
    /// Largest JSON-RPC body accepted (1..=16777216). Default 262144.
    #[serde(default)]
    #[schemars(range(min = 1, max = 16_777_216))]
    pub max_body_bytes: Option<Sp<u64>>,
}

/// The simulated provider.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Provider")]
pub(crate) struct RawProvider {
    /// The wire the provider speaks: a built-in profile (generic, stripe,
    /// openai, anthropic) or a profile file, relative to the scenario's
    /// directory (a path: it contains `/` or ends .yaml or .yml). Default generic.
    #[serde(default)]
    pub profile: Option<Sp<ProviderProfileName>>,
    /// How the provider treats `Idempotency-Key`. Default: the profile's
    /// (mode none for generic).
    #[serde(default)]
    pub idempotency: Option<Sp<RawIdempotency>>,
    /// Which lookups the provider answers. Default: all of them.
    #[serde(default)]
    pub lookup: Option<Sp<RawLookup>>,
    /// Objects start `processing` and settle later (simulator clock). Absent: synchronous.
    #[serde(default)]
    pub asynchronous: Option<Sp<RawAsynchronous>>,
    /// Signed webhook events. Absent: no events (and no `webhook` steps).
    #[serde(default)]
    pub webhooks: Option<Sp<RawWebhooks>>,
    /// Objects that exist before the run (other actors' work).
    #[serde(default)]
    pub seed_objects: Vec<Sp<RawSeedObject>>,
    /// Bearer credentials the provider accepts, one per tenant; the first is the
    /// adapter's. Default [sk_test_a, sk_test_b].
    #[serde(default)]
    pub tenants: Option<Sp<Vec<Sp<String>>>>,
    /// The collections that exist. Absent: any valid name.
    #[serde(default)]
    pub resources: Option<Sp<Vec<Sp<String>>>>,
    /// Bounds on what a request or a fault may cost.
    #[serde(default)]
    pub limits: Option<Sp<RawLimits>>,
}

/// A provider profile: a built-in name or a profile file's path (checked by validation).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct ProviderProfileName(pub String);

/// The idempotency contract.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Idempotency")]
pub(crate) struct RawIdempotency {
    /// none, stripe, ietf, or a known-bad mode.
    pub mode: Sp<ModeName>,
    /// Keys are forgotten this long after first use (simulator clock).
    /// Default: the profile's (24h for the built-in ones).
    #[serde(default)]
    pub retention: Option<Sp<DurationText>>,
    /// ietf only: a create without a key is rejected with 400. Default false.
    #[serde(default)]
    pub required: Option<Sp<bool>>,
}

/// The name of an idempotency mode (checked against the simulator's list).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct ModeName(pub String);

/// Which lookups the provider answers; each defaults to true.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Lookup")]
pub(crate) struct RawLookup {
    /// `GET /v1/{resource}/{id}`.
    #[serde(default)]
    pub retrieve: Option<bool>,
    /// `GET /v1/{resource}?client_reference=X`.
    #[serde(default)]
    pub client_reference: Option<bool>,
    /// `GET /v1/{resource}?created_gte=T&limit=N`.
    #[serde(default)]
    pub list_recent: Option<bool>,
}

/// Asynchronous work.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Asynchronous")]
pub(crate) struct RawAsynchronous {
    /// How long after creation an object settles (simulator clock, more than 0).
    pub settle_after: Sp<DurationText>,
    /// What it settles to. Default succeeded.
    #[serde(default)]
    pub result: Option<RawSettle>,
}

/// The final status of an asynchronous object.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Settle")]
pub(crate) enum RawSettle {
    /// Settles `succeeded`.
    Succeeded,
    /// Settles `failed`: a confirmed failure, not an effect.
    Failed,
}

/// Signed webhook events (Standard Webhooks, or the profile's scheme).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Webhooks")]
pub(crate) struct RawWebhooks {
    /// `whsec_` followed by the base64 of the signing key.
    pub secret: Sp<String>,
}

/// An object that exists before the run.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SeedObject")]
pub(crate) struct RawSeedObject {
    /// Credential of the owning tenant (one of `provider.tenants`).
    pub tenant: Sp<String>,
    /// Collection name.
    pub resource: Sp<String>,
    /// The object's arguments. Default {}.
    #[serde(default)]
    pub args: Option<Sp<Args>>,
    /// The object's `client_reference` (at most 255 bytes). Default none.
    #[serde(default)]
    pub client_reference: Option<Sp<String>>,
    /// How long before the clock's start it was created. Default 0s.
    #[serde(default)]
    pub age: Option<Sp<DurationText>>,
}

/// Bounds on what a request or a fault may cost.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Limits")]
pub(crate) struct RawLimits {
    /// Longest a stall, idle or delay fault holds a connection (real time, at most 60s).
    /// Default 3s.
    #[serde(default)]
    pub stall_cap: Option<Sp<DurationText>>,
    /// Largest request body accepted (1..=16777216). Default 65536.
    #[serde(default)]
    #[schemars(range(min = 1, max = 16_777_216))]
    pub max_body_bytes: Option<Sp<u64>>,
}

/// A logical operation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Operation")]
pub(crate) struct RawOperation {
    /// Unique operation id (`op-1`): letters, digits, `.`, `_`, `-` (at most 64).
    pub id: Sp<String>,
    /// Collection it creates in (an HTTP create). Exactly one of `resource` and `tool`.
    #[serde(default)]
    pub resource: Option<Sp<String>>,
    /// The paid MCP tool it calls (needs `mcp:`); its collection is the tool's.
    #[serde(default)]
    pub tool: Option<Sp<String>>,
    /// Its arguments (the create body without `client_reference` and `metadata`;
    /// for a tool, never its idempotency key argument: the adapter adds that). Default {}.
    #[serde(default)]
    pub args: Option<Sp<Args>>,
}

/// One fault rule.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Fault")]
pub(crate) struct RawFault {
    /// Which requests the rule applies to. Absent or {}: every request.
    #[serde(default)]
    pub when: Option<Sp<RawMatch>>,
    /// Where in the request's life the fault strikes. Default after_commit, except
    /// `{stall: {then: ...}}`, which defaults to before_commit. HTTP rules only.
    #[serde(default)]
    pub at: Option<Sp<RawPosition>>,
    /// What the client observes (an HTTP rule, for `/v1` requests). Exactly
    /// one of `response` and `call`.
    #[serde(default)]
    pub response: Option<Sp<RawResponse>>,
    /// What a matching MCP `tools/call` meets (an MCP rule; needs `mcp:`).
    #[serde(default)]
    pub call: Option<Sp<RawCall>>,
    /// What a `notifications/cancelled` does to a call the server holds (MCP
    /// rules only): honour, ignore or race. Default ignore.
    #[serde(default)]
    pub cancel: Option<Sp<RawCancel>>,
}

/// A request matcher: every key given must hold.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Match")]
pub(crate) struct RawMatch {
    /// HTTP method.
    #[serde(default)]
    pub method: Option<Sp<RawMethod>>,
    /// Collection name.
    #[serde(default)]
    pub resource: Option<Sp<String>>,
    /// Kind of request.
    #[serde(default)]
    pub kind: Option<Sp<RawKind>>,
    /// Credential of the calling tenant (one of `provider.tenants`).
    #[serde(default)]
    pub tenant: Option<Sp<String>>,
    /// A query parameter that must be present.
    #[serde(default)]
    pub query: Option<Sp<RawQuery>>,
    /// Only the nth request that matches the other keys (from 1). Absent: every one.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub nth: Option<Sp<u32>>,
    /// Only the first N requests that match the other keys. Excludes `nth`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub times: Option<Sp<u32>>,
    /// Only requests that arrive while this step (or one of these steps) runs,
    /// numbered from 1: a situation, whatever number of requests an adapter
    /// sends inside it.
    #[serde(default)]
    pub step: Option<Sp<OneOrMany<u32>>>,
    /// MCP rules only: the tool called (a paid tool or a retrieval tool).
    #[serde(default)]
    pub tool: Option<Sp<String>>,
}

/// The methods the provider serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[schemars(rename = "Method")]
pub(crate) enum RawMethod {
    /// Creates.
    #[serde(rename = "POST")]
    Post,
    /// Lookups.
    #[serde(rename = "GET")]
    Get,
}

/// Kinds of request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Kind")]
pub(crate) enum RawKind {
    /// `POST /v1/{resource}`.
    Create,
    /// `GET /v1/{resource}/{id}`.
    Retrieve,
    /// `GET /v1/{resource}?client_reference=X` (under a profile, its own
    /// search: Stripe's `GET /v1/{resource}/search?query=...`).
    Search,
    /// `GET /v1/{resource}?created_gte=T&limit=N`.
    List,
}

/// Query parameters the generic API understands (not a profile's: match
/// a profile's lookups by `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Query")]
pub(crate) enum RawQuery {
    /// Search by correlation.
    ClientReference,
    /// List recent: lower time bound.
    CreatedGte,
    /// List recent: page size.
    Limit,
}

/// Where a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Position")]
pub(crate) enum RawPosition {
    /// Before the provider reads the request: it never arrives. No effect.
    BeforeRead,
    /// After the request is read and validated, before the effect commits.
    BeforeCommit,
    /// After the effect commits (for a lookup: after the answer is computed).
    AfterCommit,
}

/// What the client observes: a plain name (`drop`, `reset`, `stall`, `idle`, `ok`)
/// or a one-key mapping (`{stall: {then: commit}}`, `{delay: 2s}`, `{status: 500}`,
/// `{partial: 12}`).
#[derive(Debug)]
pub(crate) enum RawResponse {
    /// Served normally.
    Ok,
    /// Close without a byte.
    Drop,
    /// TCP RST.
    Reset,
    /// Headers, then silence.
    Idle,
    /// Hold the response until the client gives up.
    Stall {
        /// What a before_commit stall does once the client left.
        then: Option<Sp<RawThen>>,
        /// When the hold ends (default: when the client leaves).
        until: Option<Sp<RawUntil>>,
    },
    /// Hold matching requests until enough of them meet.
    Gather(Sp<RawGather>),
    /// Wait, then serve normally.
    Delay(Sp<DurationText>),
    /// Answer with this status instead (and, written as a mapping, this `Retry-After`).
    Status(Sp<RawStatus>),
    /// Send this many body bytes, then close.
    Partial(Sp<u64>),
    /// A plain name that is no response (reported by validation, at its place).
    Unknown(String),
}

/// The plain-name responses, as written.
pub(crate) const PLAIN_RESPONSES: [&str; 5] = ["ok", "drop", "reset", "stall", "idle"];
/// The mapping responses, by key.
pub(crate) const MAPPING_RESPONSES: [&str; 5] = ["stall", "delay", "status", "partial", "gather"];

impl<'de> Deserialize<'de> for RawResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ResponseVisitor;

        impl<'de> Visitor<'de> for ResponseVisitor {
            type Value = RawResponse;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a fault response: drop, reset, stall, idle, ok, {stall: {then: commit|abandon}}, \
                     {delay: 2s}, {status: 500}, {partial: 12} or {gather: {requests: 2, at_most: 1s}}",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "ok" => Ok(RawResponse::Ok),
                    "drop" => Ok(RawResponse::Drop),
                    "reset" => Ok(RawResponse::Reset),
                    "idle" => Ok(RawResponse::Idle),
                    "stall" => Ok(RawResponse::Stall {
                        then: None,
                        until: None,
                    }),
                    // Kept rather than failed here, so that validation reports it at the
                    // value's own position along with every other problem.
                    other => Ok(RawResponse::Unknown(other.to_owned())),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let Some(key) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "an empty mapping is not a fault response (try `drop` or {status: 500})",
                    ));
                };
                let response = match key.as_str() {
                    "stall" => {
                        let options = map.next_value::<RawStallOptions>()?;
                        RawResponse::Stall {
                            then: options.then,
                            until: options.until,
                        }
                    }
                    "gather" => RawResponse::Gather(map.next_value()?),
                    "delay" => RawResponse::Delay(map.next_value()?),
                    "status" => RawResponse::Status(map.next_value()?),
                    "partial" => RawResponse::Partial(map.next_value()?),
                    other => return Err(de::Error::unknown_field(other, &MAPPING_RESPONSES)),
                };
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "a fault response has exactly one key; `{extra}` is one too many"
                    )));
                }
                Ok(response)
            }
        }

        deserializer.deserialize_any(ResponseVisitor)
    }
}

/// A status fault's value: the code alone (`{status: 429}`), or the code
/// with the `Retry-After` the answer carries (`{status: {code: 429, retry_after: 30s}}`).
#[derive(Debug)]
pub(crate) enum RawStatus {
    /// `429`: the provider's own `Retry-After` (1 second on a 429, none otherwise).
    Code(u64),
    /// `{code: 429, retry_after: 30s}`.
    Full(RawStatusFull),
}

/// `{code: 429, retry_after: 30s}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "StatusWithRetryAfter")]
pub(crate) struct RawStatusFull {
    /// HTTP error status (400..=599).
    #[schemars(range(min = 400, max = 599))]
    pub code: Sp<u64>,
    /// The `Retry-After` the answer carries: whole seconds, 0s to 24h (429 and 503 only).
    /// Default: 1s on a 429, none on any other status.
    #[serde(default)]
    pub retry_after: Option<Sp<DurationText>>,
}

impl<'de> Deserialize<'de> for RawStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StatusVisitor;

        impl<'de> Visitor<'de> for StatusVisitor {
            type Value = RawStatus;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an HTTP status (500), or {code: 429, retry_after: 30s}")
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(RawStatus::Code(v))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                // Negative: kept out of range, so validation names the value.
                Ok(RawStatus::Code(u64::try_from(v).unwrap_or(0)))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawStatusFull::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawStatus::Full)
            }
        }

        deserializer.deserialize_any(StatusVisitor)
    }
}

/// `{stall: {then: ...}}`'s options.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "StallOptions")]
pub(crate) struct RawStallOptions {
    /// What the provider does once the client left (before_commit only). Default abandon.
    #[serde(default)]
    pub then: Option<Sp<RawThen>>,
    /// When the hold ends. Default: when the client leaves (at most stall_cap).
    #[serde(default)]
    pub until: Option<Sp<RawUntil>>,
}

/// `until: {end_of_step: N}`: the provider keeps the request (and its
/// idempotency key in flight) until step N has ended, whether the client is
/// still there or not, so every retry inside steps up to N meets it running.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Until")]
pub(crate) struct RawUntil {
    /// The step (from 1) whose end releases the hold.
    #[schemars(range(min = 1))]
    pub end_of_step: Sp<u32>,
}

/// `{gather: {requests: 2, at_most: 1s}}`: hold each matching request until
/// `requests` of them wait together, or no other adapter call of the step is
/// left to send one, or `at_most` passes; then serve them all normally.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Gather")]
pub(crate) struct RawGather {
    /// How many requests must meet (at least 2).
    #[schemars(range(min = 2))]
    pub requests: Sp<u32>,
    /// The longest one request waits: more than 0, at most stall_cap, shorter
    /// than client_timeout (a held request must be answered before its client gives up).
    pub at_most: Sp<DurationText>,
}

/// What a before_commit stall does once the client has left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Then")]
pub(crate) enum RawThen {
    /// The provider abandons the work: no effect.
    Abandon,
    /// The provider kept working: the effect commits after the client left.
    Commit,
}

/// A duration written the humantime way: `300ms`, `60s`, `2m`, `25h`, `1h 30m`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct DurationText(pub String);

/// One step, as written. Exactly one action key (`execute`, `reconcile`, `status`,
/// `advance`, `parallel`, `webhook`, `resolve`); the other keys modify it.
/// A single struct rather than an enum so that a misplaced key gets a precise message.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    #[serde(default)]
    pub execute: Option<Sp<String>>,
    #[serde(default)]
    pub reconcile: Option<Sp<String>>,
    #[serde(default)]
    pub status: Option<Sp<String>>,
    #[serde(default)]
    pub advance: Option<Sp<DurationText>>,
    #[serde(default)]
    pub parallel: Option<Sp<Vec<Sp<RawStep>>>>,
    #[serde(default)]
    pub webhook: Option<Sp<String>>,
    #[serde(default)]
    pub resolve: Option<Sp<String>>,
    #[serde(default)]
    pub crash: Option<Sp<RawCrash>>,
    #[serde(default)]
    pub event: Option<Sp<RawEvent>>,
    #[serde(default)]
    pub duplicate: Option<Sp<u32>>,
    #[serde(default)]
    pub forged: Option<Sp<bool>>,
    #[serde(default)]
    pub outcome: Option<Sp<RawResolveOutcome>>,
    #[serde(default, deserialize_with = "present")]
    pub provider_ref: Option<Sp<Option<String>>>,
    #[serde(default)]
    pub evidence: Option<Sp<String>>,
    #[serde(default)]
    pub during: Option<Sp<RawDuring>>,
}

/// `during: {kind: search}` on a call of a `parallel` step: the call starts
/// once the provider holds the step's first request that matches (a lookup
/// read, a create committed), and that request's answer waits until the
/// call has returned. Every key given must hold.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "During")]
pub(crate) struct RawDuring {
    /// HTTP method.
    #[serde(default)]
    pub method: Option<Sp<RawMethod>>,
    /// Collection name.
    #[serde(default)]
    pub resource: Option<Sp<String>>,
    /// Kind of request.
    #[serde(default)]
    pub kind: Option<Sp<RawKind>>,
    /// A query parameter that must be present (the generic API's).
    #[serde(default)]
    pub query: Option<Sp<RawQuery>>,
}

/// Where a client-side crash strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Crash")]
pub(crate) enum RawCrash {
    /// When the simulator commits the operation's effect, before the response leaves.
    AfterCommit,
}

/// A webhook event kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Event")]
pub(crate) enum RawEvent {
    /// `{resource}.created`, on commit.
    Created,
    /// `{resource}.succeeded`, when asynchronous work settles as a success.
    Succeeded,
    /// `{resource}.failed`, when asynchronous work settles as a failure.
    Failed,
}

/// What an operator may decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "ResolveOutcome")]
pub(crate) enum RawResolveOutcome {
    /// The effect happened.
    Succeeded,
    /// It did not.
    Failed,
}

/// An outcome of the adapter protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Outcome")]
pub(crate) enum RawOutcome {
    /// Confirmed by evidence.
    Succeeded,
    /// Confirmed by evidence.
    Failed,
    /// The provider has it and is still working.
    Pending,
    /// No evidence either way yet.
    Unknown,
}

/// Allowed outcomes: one name or a list.
pub(crate) type RawOutcomes = Sp<OneOrMany<RawOutcome>>;

/// What must hold at the end, beyond the invariants.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Expect")]
pub(crate) struct RawExpect {
    /// Allowed final outcomes per operation (the harness asks `status` after the last step).
    #[serde(default, rename = "final")]
    pub final_outcomes: Option<SpMap<String, RawOutcomes>>,
    /// Allowed outcomes reported by step N (numbered from 1) per operation.
    #[serde(default)]
    pub after_step: Option<SpMap<u64, SpMap<String, RawOutcomes>>>,
    /// Exact number of effects per operation (0 or 1: at most once always applies).
    #[serde(default)]
    pub effects: Option<SpMap<String, Sp<u32>>>,
    /// The final `needs_review` flag per operation.
    #[serde(default)]
    pub needs_review: Option<SpMap<String, Sp<bool>>>,
    /// The step (from 1) by which an operation must be in review: the replies
    /// about it from that step on, while it is not terminal, carry
    /// `needs_review: true`.
    #[serde(default)]
    pub needs_review_from_step: Option<SpMap<String, Sp<u64>>>,
}

/// What a `notifications/cancelled` does to a held MCP call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Cancel")]
pub(crate) enum RawCancel {
    /// The server stops: a call not committed yet never commits.
    Honour,
    /// The server goes on as if nothing came.
    Ignore,
    /// The cancel arrives just after the commit: the effect commits at that moment.
    Race,
}

/// Before or after the commit of a paid tool's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "CommitPoint")]
pub(crate) enum RawCommitPoint {
    /// Before the effect commits: none does.
    BeforeCommit,
    /// After the effect committed.
    AfterCommit,
}

/// What a held or slow call's stream carries meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Stream")]
pub(crate) enum RawStream {
    /// Nothing at all, not even headers.
    Nothing,
    /// SSE headers at once, then silence.
    Headers,
    /// SSE headers, then a comment line every `every` (keep-alive bytes).
    KeepAlive,
    /// SSE headers, then `notifications/progress` every `every`.
    Progress,
}

/// How a background task ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "TaskEnd")]
pub(crate) enum RawTaskEnd {
    /// Commits and completes with the tool's result.
    Complete,
    /// Fails without an effect.
    Fail,
    /// Never finishes; forgotten after the task ttl.
    Expire,
}

/// `{slow: {...}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SlowCall")]
pub(crate) struct RawSlow {
    /// How long the work takes before the commit and the answer (real figure, scaled).
    pub work: Sp<DurationText>,
    /// What the stream carries meanwhile. Default nothing.
    #[serde(default)]
    pub stream: Option<Sp<RawStream>>,
    /// The interval of keep_alive or progress (real figure, scaled).
    #[serde(default)]
    pub every: Option<Sp<DurationText>>,
}

/// `{stall: {...}}` of an MCP call.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "StallCall")]
pub(crate) struct RawCallStall {
    /// What the server does once the hold ends. Default abandon.
    #[serde(default)]
    pub then: Option<Sp<RawThen>>,
    /// When the hold ends. Default: when the client leaves (at most stall_cap).
    #[serde(default)]
    pub until: Option<Sp<RawUntil>>,
    /// What the stream carries meanwhile. Default nothing.
    #[serde(default)]
    pub stream: Option<Sp<RawStream>>,
    /// The interval of keep_alive or progress (real figure, scaled).
    #[serde(default)]
    pub every: Option<Sp<DurationText>>,
}

/// `{is_error: {...}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "IsErrorCall")]
pub(crate) struct RawIsError {
    /// The HTTP-like status the error content carries (400..=599).
    #[schemars(range(min = 400, max = 599))]
    pub status: Sp<u64>,
    /// Before the commit (no effect) or after it. Default after_commit.
    #[serde(default)]
    pub at: Option<Sp<RawCommitPoint>>,
    /// The error text. Default "error <status>".
    #[serde(default)]
    pub message: Option<Sp<String>>,
}

/// `{rpc_error: {...}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "RpcErrorCall")]
pub(crate) struct RawRpcError {
    /// The JSON-RPC error code (an integer, e.g. -32603).
    pub code: Sp<i64>,
    /// Its message. Default "Internal error".
    #[serde(default)]
    pub message: Option<Sp<String>>,
}

/// `{http: {...}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HttpCall")]
pub(crate) struct RawHttpCall {
    /// The HTTP status instead of a JSON-RPC answer (400..=599).
    #[schemars(range(min = 400, max = 599))]
    pub status: Sp<u64>,
    /// Before or after the commit. Default after_commit.
    #[serde(default)]
    pub at: Option<Sp<RawCommitPoint>>,
}

/// `{task: {...}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TaskCall")]
pub(crate) struct RawTaskCall {
    /// How the task ends.
    pub then: Sp<RawTaskEnd>,
    /// When (simulator clock, from the call; not scaled). Default mcp.tasks.work.
    #[serde(default)]
    pub after: Option<Sp<DurationText>>,
}

/// `{prime_then_close: {...}}`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PrimeThenCloseCall")]
pub(crate) struct RawPrime {
    /// Whether the server goes on and commits the effect. Default abandon.
    #[serde(default)]
    pub then: Option<Sp<RawThen>>,
}

/// What a matching MCP `tools/call` meets: a plain name (`ok`, `never`,
/// `stall`, `drop`, `reset`, `prime_then_close`) or a one-key mapping.
#[derive(Debug)]
pub(crate) enum RawCall {
    /// Served normally.
    Ok,
    /// Commit, then never answer.
    Never,
    /// Work, then commit and answer, the stream carrying something meanwhile.
    Slow(Sp<RawSlow>),
    /// Hold the call, then commit or abandon.
    Stall(RawCallStall),
    /// Commit, then answer late.
    Late(Sp<DurationText>),
    /// A tool error result.
    IsError(Sp<RawIsError>),
    /// A JSON-RPC error after the commit.
    RpcError(Sp<RawRpcError>),
    /// An HTTP status instead of an answer.
    Http(Sp<RawHttpCall>),
    /// Close the connection (FIN).
    Drop(Option<Sp<RawCommitPoint>>),
    /// Abort the connection (RST).
    Reset(Option<Sp<RawCommitPoint>>),
    /// Turn the call into a background task.
    Task(Sp<RawTaskCall>),
    /// A priming event, then the stream closes.
    PrimeThenClose(RawPrime),
    /// A plain name that is no MCP fault (reported by validation, at its place).
    Unknown(String),
}

/// The plain-name MCP faults, as written.
pub(crate) const PLAIN_CALLS: [&str; 6] =
    ["ok", "never", "stall", "drop", "reset", "prime_then_close"];
/// The mapping MCP faults, by key.
pub(crate) const MAPPING_CALLS: [&str; 10] = [
    "slow",
    "stall",
    "late",
    "is_error",
    "rpc_error",
    "http",
    "drop",
    "reset",
    "task",
    "prime_then_close",
];

impl<'de> Deserialize<'de> for RawCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallVisitor;

        impl<'de> Visitor<'de> for CallVisitor {
            type Value = RawCall;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "an MCP fault: ok, never, stall, drop, reset, prime_then_close, or one of \
                     {slow: {work: 6m}}, {stall: {then: commit}}, {late: 400ms}, \
                     {is_error: {status: 504}}, {rpc_error: {code: -32603}}, {http: {status: 500}}, \
                     {drop: after_commit}, {reset: after_commit}, {task: {then: complete}}, \
                     {prime_then_close: {then: commit}}",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(match v {
                    "ok" => RawCall::Ok,
                    "never" => RawCall::Never,
                    "stall" => RawCall::Stall(RawCallStall::default()),
                    "drop" => RawCall::Drop(None),
                    "reset" => RawCall::Reset(None),
                    "prime_then_close" => RawCall::PrimeThenClose(RawPrime::default()),
                    // Kept, so that validation reports it at the value's own position.
                    other => RawCall::Unknown(other.to_owned()),
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let Some(key) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "an empty mapping is not an MCP fault (try `never` or {late: 400ms})",
                    ));
                };
                let call = match key.as_str() {
                    "slow" => RawCall::Slow(map.next_value()?),
                    "stall" => RawCall::Stall(map.next_value()?),
                    "late" => RawCall::Late(map.next_value()?),
                    "is_error" => RawCall::IsError(map.next_value()?),
                    "rpc_error" => RawCall::RpcError(map.next_value()?),
                    "http" => RawCall::Http(map.next_value()?),
                    "drop" => RawCall::Drop(Some(map.next_value()?)),
                    "reset" => RawCall::Reset(Some(map.next_value()?)),
                    "task" => RawCall::Task(map.next_value()?),
                    "prime_then_close" => RawCall::PrimeThenClose(map.next_value()?),
                    other => return Err(de::Error::unknown_field(other, &MAPPING_CALLS)),
                };
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "an MCP fault has exactly one key; `{extra}` is one too many"
                    )));
                }
                Ok(call)
            }
        }

        deserializer.deserialize_any(CallVisitor)
    }
}

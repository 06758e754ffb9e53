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
}

/// The simulated provider.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Provider")]
pub(crate) struct RawProvider {
    /// How the provider treats `Idempotency-Key`. Default: mode none.
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

/// The idempotency contract.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Idempotency")]
pub(crate) struct RawIdempotency {
    /// none, stripe, ietf, or a known-bad mode.
    pub mode: Sp<ModeName>,
    /// Keys are forgotten this long after first use (simulator clock). Default 24h.
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

/// Signed webhook events (Standard Webhooks).
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
    /// Collection it creates in.
    pub resource: Sp<String>,
    /// Its arguments (the create body without `client_reference` and `metadata`). Default {}.
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
    /// `{stall: {then: ...}}`, which defaults to before_commit.
    #[serde(default)]
    pub at: Option<Sp<RawPosition>>,
    /// What the client observes.
    pub response: Sp<RawResponse>,
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
    /// `GET /v1/{resource}?client_reference=X`.
    Search,
    /// `GET /v1/{resource}?created_gte=T&limit=N`.
    List,
}

/// Query parameters the provider understands.
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
    /// Answer with this status instead.
    Status(Sp<u64>),
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

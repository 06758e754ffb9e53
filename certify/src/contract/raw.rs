//! The contract file as written: serde types with positions, and the JSON
//! Schema an editor uses. Nothing here is checked beyond its shape; `validate`
//! turns it into a [`super::Contract`].

use schemars::JsonSchema;
use serde::Deserialize;

pub(crate) use super::model::{ContentType, Fingerprint, KeyScope, KeyValidation};

/// The create's method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub(crate) enum CreateMethod {
    /// `POST`.
    #[serde(rename = "POST")]
    Post,
    /// `PUT`.
    #[serde(rename = "PUT")]
    Put,
}

impl CreateMethod {
    /// The method as sent.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CreateMethod::Post => "POST",
            CreateMethod::Put => "PUT",
        }
    }
}

/// How the key travels, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RawSyntax {
    /// A header with the bare token.
    Token,
    /// A header with a structured-field string (`"…"`).
    SfString,
    /// A top-level body field (`key.field`).
    BodyField,
}

pub(crate) use lostreply_harness::scenario::span::{Pos, Sp};

/// A secret or a setting that may come from the environment, so that it never
/// sits in the file: `sk_test_a`, or `{env: VENDOR_KEY}` (optionally with a `default`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawValue {
    /// Written in the file.
    Literal(String),
    /// Read from an environment variable when the contract is loaded.
    Env(RawEnv),
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEnv {
    /// The variable's name.
    pub env: String,
    /// Used when the variable is unset (never for credentials you care about).
    #[serde(default)]
    pub default: Option<String>,
}

/// The contract file, version 1.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawContract {
    /// Always 1.
    pub version: Sp<u32>,
    /// `http` (the default); `mcp` files have a format of their own.
    #[serde(default)]
    pub kind: Option<Sp<String>>,
    /// A one-line name for reports.
    pub name: Sp<String>,
    /// Where the endpoint is and where the probes may go.
    pub target: RawTarget,
    /// How requests authenticate.
    pub auth: RawAuth,
    /// The create request under test.
    pub create: RawCreate,
    /// How the idempotency key is sent.
    pub key: RawKey,
    /// How effects are counted from the outside.
    pub readback: Sp<RawReadback>,
    /// What the vendor declares; probes judge against it.
    pub declares: RawDeclares,
    /// Bounds every run honours.
    #[serde(default)]
    pub limits: RawLimits,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTarget {
    /// `http://host:port` or `https://host:port` (no path).
    pub base_url: Sp<RawValue>,
    /// Hosts the base URL may name; any other is refused before a byte is sent.
    pub allowed_hosts: Sp<Vec<String>>,
    /// Per-request timeout (default 10s, at most 120s).
    #[serde(default)]
    pub timeout: Option<Sp<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuth {
    /// The header that carries the credential (default `Authorization`).
    #[serde(default)]
    pub header: Option<Sp<String>>,
    /// Written before the credential (default `"Bearer "`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// The tenant under test.
    pub primary: Sp<RawValue>,
    /// Another tenant: enables the cross-tenant probe.
    #[serde(default)]
    pub second_tenant: Option<Sp<RawValue>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCreate {
    /// `POST` (default) or `PUT`.
    #[serde(default)]
    pub method: Option<Sp<CreateMethod>>,
    /// The create path, starting with `/`.
    pub path: Sp<String>,
    /// `json` (default) or `form`.
    #[serde(default)]
    pub content_type: Option<Sp<ContentType>>,
    /// The body: a mapping; every `{marker}` in a string becomes the probe's unique marker.
    pub body: Sp<serde_json::Value>,
    /// A top-level field the mismatch probes change (numbers +1, strings get `-other`).
    pub vary: Sp<String>,
    /// Statuses that mean "created" (default [200, 201, 202]).
    #[serde(default)]
    pub success: Option<Sp<Vec<u16>>>,
    /// JSON pointer to the new object's id in the answer (default `/id`).
    #[serde(default)]
    pub id_at: Option<Sp<String>>,
    /// Another endpoint with the same body, for the same-key-on-another-endpoint probe.
    #[serde(default)]
    pub other_path: Option<Sp<String>>,
    /// A create path whose requests take long enough to be met in flight.
    #[serde(default)]
    pub slow_path: Option<Sp<String>>,
    /// How long after the first request the in-flight probes send the second (default 100ms).
    #[serde(default)]
    pub in_flight_after: Option<Sp<String>>,
    /// A request the vendor rejects, for the no-poisoned-key probe.
    #[serde(default)]
    pub rejected: Option<RawRejected>,
    /// A request the sandbox commits and then answers with a server error,
    /// for the error-after-commit probe.
    #[serde(default)]
    pub error_after_commit: Option<Sp<RawErrorAfterCommit>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawErrorAfterCommit {
    /// Path (and query) of the request (default: the create path).
    #[serde(default)]
    pub path: Option<Sp<String>>,
    /// Its body (default: the create body).
    #[serde(default)]
    pub body: Option<Sp<serde_json::Value>>,
    /// Headers that make the sandbox fail after its commit.
    #[serde(default)]
    pub headers: Option<Sp<std::collections::BTreeMap<String, String>>>,
    /// Statuses the failure answers with (default [500, 502, 503, 504]).
    #[serde(default)]
    pub status: Option<Sp<Vec<u16>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRejected {
    /// Path of the rejected request (default: `create.path`). Every retry goes to the same path.
    #[serde(default)]
    pub path: Option<Sp<String>>,
    /// Body of the rejected request (default: the create body).
    #[serde(default)]
    pub body: Option<Sp<serde_json::Value>>,
    /// Statuses the rejection answers with.
    pub status: Sp<Vec<u16>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawKey {
    /// The header name (default `Idempotency-Key`); ignored for `body_field`.
    #[serde(default)]
    pub header: Option<Sp<String>>,
    /// `token` (bare), `sf_string` (structured-field string, quoted) or `body_field`.
    pub syntax: Sp<RawSyntax>,
    /// The body field that carries the key, for `body_field`.
    #[serde(default)]
    pub field: Option<Sp<String>>,
    /// Longest key the vendor accepts (default 255).
    #[serde(default)]
    pub max_bytes: Option<Sp<u32>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReadback {
    /// An endpoint listing every effect (the simulator's `/_lostreply/ledger`).
    #[serde(default)]
    pub ground_truth: Option<RawCollection>,
    /// Retrieve by id: a path with `{id}`.
    #[serde(default)]
    pub retrieve: Option<RawPath>,
    /// Search by marker: a path with `{marker}`.
    #[serde(default)]
    pub search: Option<RawCollection>,
    /// List recent objects.
    #[serde(default)]
    pub list: Option<RawCollection>,
    /// An endpoint that moves the provider's clock (`POST {"advance_ms":N}`; simulator only).
    #[serde(default)]
    pub clock: Option<RawPath>,
    /// An endpoint POSTed once before the probes that restores the provider's
    /// deliberate faults (the simulator's `/_lostreply/faults/reset`), so a
    /// long-running provider can be certified again.
    #[serde(default)]
    pub reset: Option<RawPath>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPath {
    /// The path (and query), starting with `/`.
    pub path: Sp<String>,
    /// Whether the tenant's credential is sent (default true).
    #[serde(default)]
    pub auth: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCollection {
    /// The path (and query), starting with `/`.
    pub path: Sp<String>,
    /// JSON pointer to the array of items in the answer (default `/data`; `""`: the answer is the array).
    #[serde(default)]
    pub items_at: Option<Sp<String>>,
    /// JSON pointer to the marker inside an item (a list of items).
    #[serde(default)]
    pub marker_at: Option<Sp<String>>,
    /// JSON pointer to the number of effects carrying the marker (a count;
    /// the path holds `{marker}`). Exclusive with `items_at` and `marker_at`.
    #[serde(default)]
    pub count_at: Option<Sp<String>>,
    /// Whether the tenant's credential is sent (default true).
    #[serde(default)]
    pub auth: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDeclares {
    /// How long keys are kept (e.g. `24h`).
    pub retention: Sp<String>,
    /// How a replay is marked: `{header: Idempotent-Replayed, value: "true"}`; absent: unmarked.
    #[serde(default)]
    pub replay_marker: Option<RawMarker>,
    /// What body differences count as other arguments (default `canonical_json`).
    #[serde(default)]
    pub fingerprint: Option<Sp<Fingerprint>>,
    /// Whom and where a key belongs to (default `per_path`).
    #[serde(default)]
    pub key_scope: Option<Sp<KeyScope>>,
    /// Statuses for a reused key with other arguments (default [422], the IETF draft's).
    #[serde(default)]
    pub mismatch_status: Option<Sp<Vec<u16>>>,
    /// A key whose first request is still running: `{status: [409]}` (the
    /// default, the IETF draft's), `waits`, or `{waits: 15s, then: [409]}`.
    #[serde(default)]
    pub in_flight: Option<Sp<RawInFlight>>,
    /// Which error answers are saved and replayed for their key: `false`
    /// (none, the default), `true` (every one) or a list of statuses.
    #[serde(default)]
    pub errors_replayed: Option<Sp<RawErrorsReplayed>>,
    /// `processed`, or the statuses of a create without a key (default `{status: [400]}`, the IETF draft's).
    #[serde(default)]
    pub missing_key: Option<Sp<RawStatusOr>>,
    /// `refuses` (the default: malformed and over-long keys get their
    /// statuses) or `accepts_any` (no key validation is documented).
    #[serde(default)]
    pub key_validation: Option<Sp<KeyValidation>>,
    /// Statuses for a malformed key (default [400]).
    #[serde(default)]
    pub malformed_key_status: Option<Sp<Vec<u16>>>,
    /// Statuses for a key longer than `key.max_bytes` (default [400]).
    #[serde(default)]
    pub oversized_key_status: Option<Sp<Vec<u16>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawErrorsReplayed {
    /// `true`: every error answer; `false`: none.
    All(bool),
    /// These statuses only.
    Statuses(Vec<u16>),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMarker {
    /// The header's name.
    pub header: String,
    /// Its value on a replay.
    pub value: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawInFlight {
    /// `waits`: the second request waits for the first and replays it.
    Word(String),
    /// `{status: [409]}`.
    Status(RawStatuses),
    /// `{waits: 15s, then: [409]}`: it waits up to that long, then gets one of the statuses.
    WaitsThen(RawWaitsThen),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWaitsThen {
    /// The longest wait (e.g. `15s`). Plain values: inside an untagged
    /// enum the reader keeps no positions, so problems point at `in_flight`.
    pub waits: String,
    /// The statuses after it.
    pub then: Vec<u16>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawStatusOr {
    /// `processed`.
    Word(String),
    /// `{status: [400]}`.
    Status(RawStatuses),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStatuses {
    /// The statuses.
    pub status: Vec<u16>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimits {
    /// Most requests one run sends (default 500, at most 100000).
    #[serde(default)]
    pub budget: Option<Sp<u32>>,
    /// Most requests started per second (default 20, at most 10000).
    #[serde(default)]
    pub rate_per_s: Option<Sp<u32>>,
    /// Identical requests released together by the concurrency probe (8 to 32, default 16).
    #[serde(default)]
    pub concurrency: Option<Sp<u32>>,
    /// Waits before the lost-response retries (default [0s, 1s, 10s]).
    #[serde(default)]
    pub lost_response_waits: Option<Sp<Vec<Sp<String>>>>,
    /// Largest answer read (default 1 MiB, at most 16 MiB).
    #[serde(default)]
    pub max_response_bytes: Option<Sp<u64>>,
    /// How long the retention probe waits before replaying (default 1s).
    #[serde(default)]
    pub retention_sample: Option<Sp<String>>,
    /// Wait the declared retention out in real time (default false).
    #[serde(default)]
    pub wait_out_retention: Option<bool>,
}

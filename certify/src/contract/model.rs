//! The validated HTTP contract: what the endpoint under test is, how to read
//! back what it created, and what its vendor declares. Built only by
//! validation, so every value here has been checked.

use std::collections::BTreeSet;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

/// How the request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContentType {
    /// `application/json`.
    Json,
    /// `application/x-www-form-urlencoded` (flat bodies only).
    Form,
}

/// How the idempotency key travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySyntax {
    /// A header with the bare token.
    Token {
        /// Header name.
        header: String,
    },
    /// A header with a structured-field string (`"…"`, RFC 8941).
    SfString {
        /// Header name.
        header: String,
    },
    /// A top-level body field.
    BodyField {
        /// Field name.
        field: String,
    },
}

/// What the second request meets while the first is in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InFlight {
    /// It waits for the first and replays its result.
    Waits,
    /// It is refused with one of these statuses.
    Status(Vec<u16>),
    /// It waits up to a time for the first and replays its result; past that
    /// time it is refused with one of these statuses.
    WaitsThen(Written, Vec<u16>),
}

impl InFlight {
    /// Whether `status` is a declared in-flight refusal.
    pub fn refuses_with(&self, status: u16) -> bool {
        match self {
            InFlight::Waits => false,
            InFlight::Status(codes) | InFlight::WaitsThen(_, codes) => codes.contains(&status),
        }
    }

    /// Whether a duplicate in flight may wait and get the first result.
    pub fn may_wait(&self) -> bool {
        matches!(self, InFlight::Waits | InFlight::WaitsThen(..))
    }
}

/// Which error answers are saved and replayed for their key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorsReplayed {
    /// None: a failed request leaves its key free.
    Never,
    /// Every error answer.
    Every,
    /// Answers with these statuses.
    Statuses(Vec<u16>),
}

impl ErrorsReplayed {
    /// Whether an answer with `status` is saved and replayed.
    pub fn replays(&self, status: u16) -> bool {
        match self {
            ErrorsReplayed::Never => false,
            ErrorsReplayed::Every => true,
            ErrorsReplayed::Statuses(codes) => codes.contains(&status),
        }
    }
}

/// A duration with the text it was written as, so reports print `24h` as `24h`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The parsed value.
    pub value: Duration,
    /// The text in the contract (or of the default).
    pub text: String,
}

impl Written {
    /// A default, written the way a contract would write it.
    pub fn default_of(text: &str, value: Duration) -> Self {
        Written {
            value,
            text: text.to_owned(),
        }
    }
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// How malformed and over-long keys are answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyChecks {
    /// Refused with these statuses.
    Refused {
        /// For a malformed key.
        malformed: Vec<u16>,
        /// For a key over `key.max_bytes`.
        oversized: Vec<u16>,
    },
    /// Taken as keys (no validation is documented).
    AcceptsAny,
}

/// How a read-back tells the effects carrying a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tally {
    /// An array of items, each with a marker.
    Items {
        /// JSON pointer to the array (`""`: the whole answer).
        items_at: String,
        /// JSON pointer to the marker in an item.
        marker_at: String,
    },
    /// A number: how many effects carry the marker in the path.
    Count {
        /// JSON pointer to the number.
        count_at: String,
    },
}

/// The request that commits and then answers a server error.
#[derive(Debug, Clone)]
pub struct ErrorAfterCommit {
    /// Path and query.
    pub path: String,
    /// Body template.
    pub body: serde_json::Map<String, serde_json::Value>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Statuses of the failure.
    pub status: Vec<u16>,
}

/// What a create without a key gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingKey {
    /// Processed like any create.
    Processed,
    /// Refused with one of these statuses.
    Status(Vec<u16>),
}

/// What body differences count as other arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fingerprint {
    /// The parsed body: field order and spacing do not matter.
    CanonicalJson,
    /// The body's bytes: a reordered body is other arguments.
    RawBytes,
    /// No fingerprint: any body under a used key gets the first result.
    None,
}

/// Whom and where an idempotency key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyScope {
    /// One tenant and one endpoint: the same key elsewhere is separate work.
    PerPath,
    /// One tenant, every endpoint: the same key on another endpoint is the same key.
    PerTenant,
    /// One store for everyone: the same key from another tenant is the same
    /// key (refused, never answered with the other tenant's result).
    Global,
}

/// Whether malformed and over-long keys are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyValidation {
    /// Refused with `malformed_key_status` and `oversized_key_status`.
    Refuses,
    /// Any key is taken as a key; odd keys must still cause no duplicate.
    AcceptsAny,
}

/// A collection read back: where the items are and where the marker sits in one.
#[derive(Debug, Clone)]
pub struct Collection {
    /// Path and query (may hold `{marker}`).
    pub path: String,
    /// What the answer holds: items with markers, or a count.
    pub tally: Tally,
    /// Whether the credential is sent.
    pub auth: bool,
}

/// A plain path (`{id}` for retrieve).
#[derive(Debug, Clone)]
pub struct PathSpec {
    /// Path and query.
    pub path: String,
    /// Whether the credential is sent.
    pub auth: bool,
}

/// A validated contract.
#[derive(Debug, Clone)]
pub struct Contract {
    /// Where it was read from.
    pub source: String,
    /// A one-line name.
    pub name: String,
    /// `http://host:port` or `https://host:port`, without a trailing slash.
    pub base_url: String,
    /// Hosts the base URL may name.
    pub allowed_hosts: BTreeSet<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Credential header.
    pub auth_header: String,
    /// Written before the credential.
    pub auth_prefix: String,
    /// The tenant under test.
    pub primary: String,
    /// Another tenant, when given.
    pub second_tenant: Option<String>,
    /// `POST` or `PUT`.
    pub method: String,
    /// Create path.
    pub path: String,
    /// Body encoding.
    pub content_type: ContentType,
    /// Body template (an object).
    pub body: serde_json::Map<String, serde_json::Value>,
    /// Field changed by the mismatch probes.
    pub vary: String,
    /// Statuses meaning "created".
    pub success: Vec<u16>,
    /// JSON pointer to the id.
    pub id_at: String,
    /// Another endpoint for the scope probe.
    pub other_path: Option<String>,
    /// A slow create path for the in-flight probes.
    pub slow_path: Option<String>,
    /// When the in-flight probes send their second request.
    pub in_flight_after: Written,
    /// The rejected request: path, body, statuses.
    pub rejected: Option<(String, serde_json::Map<String, serde_json::Value>, Vec<u16>)>,
    /// The request that commits, then answers a server error.
    pub error_after_commit: Option<ErrorAfterCommit>,
    /// The key.
    pub key: KeySyntax,
    /// Longest key accepted.
    pub key_max_bytes: usize,
    /// Ground truth.
    pub ground_truth: Option<Collection>,
    /// Retrieve by id.
    pub retrieve: Option<PathSpec>,
    /// Search by marker.
    pub search: Option<Collection>,
    /// List recent.
    pub list: Option<Collection>,
    /// Clock control (simulator).
    pub clock: Option<PathSpec>,
    /// POSTed once before the probes: restores the provider's deliberate faults (simulator).
    pub reset: Option<PathSpec>,
    /// Declared retention.
    pub retention: Written,
    /// Replay marker header and value.
    pub replay_marker: Option<(String, String)>,
    /// What body differences count as other arguments.
    pub fingerprint: Fingerprint,
    /// Whom and where a key belongs to.
    pub key_scope: KeyScope,
    /// Declared mismatch statuses.
    pub mismatch_status: Vec<u16>,
    /// Declared in-flight behaviour.
    pub in_flight: InFlight,
    /// Which error answers are replayed.
    pub errors_replayed: ErrorsReplayed,
    /// Declared missing-key behaviour.
    pub missing_key: MissingKey,
    /// How malformed and over-long keys are answered.
    pub key_checks: KeyChecks,
    /// Request budget.
    pub budget: u32,
    /// Requests per second.
    pub rate_per_s: u32,
    /// Concurrent duplicates.
    pub concurrency: u32,
    /// Lost-response waits.
    pub lost_response_waits: Vec<Written>,
    /// Largest answer read.
    pub max_response_bytes: usize,
    /// Retention probe's wait.
    pub retention_sample: Written,
    /// Wait the retention out.
    pub wait_out_retention: bool,
}

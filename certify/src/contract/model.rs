//! The validated HTTP contract: what the endpoint under test is, how to read
//! back what it created, and what its vendor declares. Built only by
//! validation, so every value here has been checked.

use std::collections::BTreeSet;
use std::time::Duration;

/// How the request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// What a create without a key gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingKey {
    /// Processed like any create.
    Processed,
    /// Refused with one of these statuses.
    Status(Vec<u16>),
}

/// A collection read back: where the items are and where the marker sits in one.
#[derive(Debug, Clone)]
pub struct Collection {
    /// Path and query (may hold `{marker}`).
    pub path: String,
    /// JSON pointer to the array (`""`: the whole answer).
    pub items_at: String,
    /// JSON pointer to the marker in an item.
    pub marker_at: String,
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
    /// `http://host:port`, without a trailing slash.
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
    pub in_flight_after: Duration,
    /// The rejected request: path, body, statuses.
    pub rejected: Option<(String, serde_json::Map<String, serde_json::Value>, Vec<u16>)>,
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
    pub retention: Duration,
    /// Replay marker header and value.
    pub replay_marker: Option<(String, String)>,
    /// Declared mismatch statuses.
    pub mismatch_status: Vec<u16>,
    /// Declared in-flight behaviour.
    pub in_flight: InFlight,
    /// Whether errors are replayed.
    pub errors_replayed: bool,
    /// Declared missing-key behaviour.
    pub missing_key: MissingKey,
    /// Declared malformed-key statuses.
    pub malformed_key_status: Vec<u16>,
    /// Declared oversized-key statuses.
    pub oversized_key_status: Vec<u16>,
    /// Request budget.
    pub budget: u32,
    /// Requests per second.
    pub rate_per_s: u32,
    /// Concurrent duplicates.
    pub concurrency: u32,
    /// Lost-response waits.
    pub lost_response_waits: Vec<Duration>,
    /// Largest answer read.
    pub max_response_bytes: usize,
    /// Retention probe's wait.
    pub retention_sample: Duration,
    /// Wait the retention out.
    pub wait_out_retention: bool,
}

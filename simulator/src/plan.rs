//! The simulator's typed input. The harness converts a scenario into a [`Plan`];
//! `lostreply serve` builds one from its flags. Nothing here knows YAML.

pub mod mcp;
mod stall;

pub use stall::{Release, StallThen};

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::profile::Profile;

/// Everything a simulator run needs: tenants, the provider's shape and its faults.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// Bearer credentials the provider accepts, one per tenant. The first is the adapter's.
    pub tenants: Vec<String>,
    /// Collections that exist. `None`: any name matching `[a-z][a-z0-9_]{0,39}`.
    pub resources: Option<BTreeSet<String>>,
    /// How the provider treats `Idempotency-Key`.
    pub idempotency: Idempotency,
    /// Which lookups the provider offers.
    pub lookup: Lookup,
    /// `Some`: created objects start `processing` and settle later (by the simulator clock).
    pub asynchronous: Option<Asynchronous>,
    /// `Some`: the provider emits signed events on commit and on settle.
    pub webhooks: Option<Webhooks>,
    /// Objects that exist before the run (other actors' work).
    pub seed_objects: Vec<SeedObject>,
    /// Ordered fault rules: the first rule that matches a request decides its fate.
    pub faults: Vec<FaultRule>,
    /// The simulator clock at start, in milliseconds since the Unix epoch.
    pub clock_start_ms: i64,
    /// Feeds every random choice the simulator makes (object and event ids).
    pub seed: u64,
    /// Bounds on what a request or a fault may cost.
    pub limits: Limits,
    /// `Some`: the MCP endpoint `/mcp` is served on the same listener, its paid
    /// tools committing into the same ledger. `None`: `/mcp` answers 404.
    pub mcp: Option<mcp::McpPlan>,
    /// The wire the provider speaks (docs/profiles.md): the generic API by
    /// default. Shared, as every request reads it.
    pub profile: Arc<Profile>,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            tenants: vec!["sk_test_a".to_owned(), "sk_test_b".to_owned()],
            resources: None,
            idempotency: Idempotency::default(),
            lookup: Lookup::default(),
            asynchronous: None,
            webhooks: None,
            seed_objects: Vec::new(),
            faults: Vec::new(),
            // 2026-01-01T00:00:00Z: a fixed start keeps runs reproducible.
            clock_start_ms: 1_767_225_600_000,
            seed: 0,
            limits: Limits::default(),
            mcp: None,
            profile: Arc::new(Profile::generic()),
        }
    }
}

/// The idempotency contract the provider implements.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Idempotency {
    /// Which behaviour the provider has.
    pub mode: IdempotencyMode,
    /// Keys are forgotten this long after first use (simulator clock).
    pub retention: Duration,
    /// `ietf` only: a create without a key is rejected with 400.
    pub required: bool,
}

impl Default for Idempotency {
    fn default() -> Self {
        Idempotency {
            mode: IdempotencyMode::None,
            retention: Duration::from_secs(24 * 3600),
            required: false,
        }
    }
}

/// The idempotency behaviours, defined with the profile that has one by
/// default; a plan may choose another.
pub use crate::profile::IdempotencyMode;

/// Which lookups the provider answers. A disabled one answers 400 `unsupported_query`
/// (search, list) or 404 (retrieve).
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lookup {
    /// `GET /v1/{resource}/{id}`.
    pub retrieve: bool,
    /// `GET /v1/{resource}?client_reference=X`.
    pub client_reference: bool,
    /// `GET /v1/{resource}?created_gte=T&limit=N`.
    pub list_recent: bool,
}

impl Lookup {
    /// No lookup at all: every read is refused.
    pub const NONE: Lookup = Lookup {
        retrieve: false,
        client_reference: false,
        list_recent: false,
    };
}

impl Default for Lookup {
    fn default() -> Self {
        Lookup {
            retrieve: true,
            client_reference: true,
            list_recent: true,
        }
    }
}

/// Asynchronous work: objects start `processing` and settle after a delay.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Asynchronous {
    /// How long after creation (simulator clock) an object settles.
    pub settle_after: Duration,
    /// What it settles to.
    pub result: SettleResult,
}

/// The final status of an asynchronous object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettleResult {
    /// Settles `succeeded`.
    Succeeded,
    /// Settles `failed`: a confirmed failure, not an effect (invariant 3).
    Failed,
}

/// Signed webhook events.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Webhooks {
    /// `whsec_<base64 key>`, as Standard Webhooks define it.
    pub secret: String,
}

/// An object that exists before the run.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SeedObject {
    /// Credential of the owning tenant.
    pub tenant: String,
    /// Collection name.
    pub resource: String,
    /// The object's arguments.
    pub args: serde_json::Map<String, serde_json::Value>,
    /// Optional `client_reference`.
    pub client_reference: Option<String>,
    /// How long before the clock's start it was created.
    pub age: Duration,
}

/// One fault rule: which requests it matches, where it strikes, what the client sees.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FaultRule {
    /// Which requests this rule applies to.
    pub when: Match,
    /// Where in the request's life the fault strikes.
    pub at: Position,
    /// What happens to the response (or the connection).
    pub response: FaultResponse,
}

/// A request matcher. Every `Some` field must hold; `nth` and `times` count the
/// requests that match the other fields (1-based), so `nth: 2` is the second
/// such request and `times: 2` the first two.
///
/// `steps` scopes a rule to a situation rather than to a request count: the
/// harness tells the simulator which step runs ([`crate::Simulator::begin_step`]),
/// and a rule with `steps` only sees requests that arrive during those steps,
/// however many requests an adapter's design sends inside them.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Match {
    /// HTTP method, upper case (`POST`, `GET`).
    pub method: Option<String>,
    /// Collection name.
    pub resource: Option<String>,
    /// Kind of request.
    pub kind: Option<RequestKind>,
    /// Credential of the calling tenant.
    pub tenant: Option<String>,
    /// A query parameter that must be present (e.g. `client_reference`).
    pub query: Option<String>,
    /// Only the nth matching request (1-based). `None`: every matching request.
    pub nth: Option<u32>,
    /// Only the first `times` matching requests. Exclusive with `nth`.
    pub times: Option<u32>,
    /// Only requests that arrive while one of these harness steps runs (1-based).
    /// `None`: any time, steps or not.
    pub steps: Option<BTreeSet<u32>>,
}

/// What a request asks the provider to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestKind {
    /// `POST /v1/{resource}`.
    Create,
    /// `GET /v1/{resource}/{id}`.
    Retrieve,
    /// `GET /v1/{resource}?client_reference=X`.
    Search,
    /// `GET /v1/{resource}?created_gte=...`.
    List,
}

impl RequestKind {
    /// The name used in scenarios and the journal.
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Create => "create",
            RequestKind::Retrieve => "retrieve",
            RequestKind::Search => "search",
            RequestKind::List => "list",
        }
    }
}

/// Where a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Position {
    /// Before the provider reads the request body: the request never arrives. No effect.
    BeforeRead,
    /// After the request is read and validated, before the effect commits.
    BeforeCommit,
    /// After the effect commits, on the way out.
    AfterCommit,
}

impl Position {
    /// The name used in scenarios and the journal.
    pub fn name(self) -> &'static str {
        match self {
            Position::BeforeRead => "before_read",
            Position::BeforeCommit => "before_commit",
            Position::AfterCommit => "after_commit",
        }
    }
}

/// What the client observes. A closed set: every new fault forces every match to decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultResponse {
    /// Served normally (a rule that only exists to shadow later rules).
    Ok,
    /// Close the connection without sending a byte (FIN).
    Drop,
    /// Abort the connection with a TCP RST (SO_LINGER 0).
    Reset,
    /// Hold the response until the client gives up, at most `Limits::stall_cap`.
    Stall {
        /// At `before_commit`: what the provider does once the hold ends.
        then: StallThen,
        /// When the hold ends.
        until: Release,
    },
    /// Hold each matching request until `requests` of them are held together,
    /// or no other adapter call of the step is left that could send one, or
    /// `at_most` passes; then serve them all normally. Makes a race happen on
    /// every run instead of hoping two processes start close enough.
    Gather {
        /// How many requests meet before any goes on (2 or more).
        requests: u32,
        /// The longest one request waits (real time), at most `Limits::stall_cap`.
        at_most: Duration,
    },
    /// Wait this long (real time), then serve normally.
    Delay {
        /// How long to wait.
        delay: Duration,
    },
    /// Answer with this error status instead (at `after_commit`, after the effect committed).
    Status {
        /// HTTP status code, 400..=599.
        code: u16,
        /// The `Retry-After` it carries, in whole seconds (at most
        /// [`MAX_RETRY_AFTER_S`]). `None`: the provider's own habit, 1 second
        /// on a 429 and no header on any other status.
        retry_after_s: Option<u32>,
    },
    /// Send status, headers and the first `bytes` bytes of the body, then close.
    Partial {
        /// How many body bytes get through.
        bytes: usize,
    },
    /// Send status and headers, then silence until the client leaves (bounded by the cap).
    Idle,
}

/// Longest `Retry-After` a status fault may carry: one day, in seconds.
pub const MAX_RETRY_AFTER_S: u32 = 86_400;

/// The default [`Limits::read_timeout`].
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest [`Limits::read_timeout`] a plan may set.
pub const MAX_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// Bounds on what any request may cost (TigerBeetle style: everything has a limit).
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest request body accepted; larger answers 413, no effect.
    pub max_body_bytes: usize,
    /// Longest a stall or idle fault holds a connection (real time).
    pub stall_cap: Duration,
    /// Most objects the store holds, all tenants together (bounded memory);
    /// past it the oldest are summarised out (counted, no longer retrievable:
    /// they answer as objects past their retention do), and creates go on.
    pub max_objects: usize,
    /// Most objects one tenant may hold; beyond it creates answer 507. `None`
    /// (the default): no such cap, `max_objects` alone bounds the store.
    pub hard_cap_objects: Option<usize>,
    /// Longest a stall released at a step's end holds a request (real time): a
    /// bound in case the harness never ends that step.
    pub hold_cap: Duration,
    /// Longest a client may take to send a request's head, and then its body
    /// (each bounded on its own, real time). A head late past it closes the
    /// connection (an idle keep-alive connection too); a body late past it
    /// answers 408. Short, so that slow clients cannot hold connections,
    /// tasks and buffers that others need.
    #[builder(default = DEFAULT_READ_TIMEOUT)]
    pub read_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 64 * 1024,
            stall_cap: Duration::from_secs(30),
            max_objects: 1_000_000,
            hard_cap_objects: None,
            hold_cap: Duration::from_secs(120),
            read_timeout: DEFAULT_READ_TIMEOUT,
        }
    }
}

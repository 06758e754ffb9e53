//! The typed input of the fake MCP server: its tools, its retrieval path, the
//! defects it may be told to have, and its faults in MCP terms.
//!
//! Everything here is data, part of the [`crate::plan::Plan`]: the MCP face
//! (`crate::mcp`) reads it; the harness builds it from a scenario's `mcp:`
//! section; `lostreply serve --mcp` builds it from flags. Real time (`Duration`) is the client's world (stalls,
//! late answers, progress intervals); the simulator clock is the provider's
//! (retention, task expiry), as for the HTTP provider.

use std::collections::BTreeSet;
use std::time::Duration;

use super::stall::{Release, StallThen};

/// The retrieval tool that reads one operation: `get_operation {id}`. A paid
/// tool may not take its name (or [`LIST_RECENT`]'s).
pub(crate) const GET_OPERATION: &str = "get_operation";
/// The retrieval tool that lists recent operations: `list_recent_operations {}`.
pub(crate) const LIST_RECENT: &str = "list_recent_operations";

/// The MCP face of the provider. Its paid tools commit effects into the same
/// ledger and journal as `/v1/...`, on the same clock and tenants, so every
/// check applies unchanged.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpPlan {
    /// Protocol revisions the server accepts, in preference order (the first is
    /// offered when a client asks for one the server does not speak).
    pub revisions: Vec<Revision>,
    /// Paid tools: each call commits one effect (or replays, for a keyed tool).
    pub tools: Vec<PaidTool>,
    /// `get_operation` and `list_recent_operations`.
    pub retrieval: Retrieval,
    /// How a `tools/call` is answered when the client accepts both.
    pub answer: AnswerStyle,
    /// Tasks (2025-11-25): `params.task` on `tools/call`.
    pub tasks: TaskSupport,
    /// Known-bad behaviours, for certification's badly-behaved configurations.
    pub defects: BTreeSet<Defect>,
    /// How an unknown tool and a not-found id are answered: as the MCP
    /// specification shows, or as servers built on the official SDKs do.
    pub errors: ErrorStyle,
    /// Ordered fault rules: the first rule that matches a `tools/call` decides.
    pub faults: Vec<McpRule>,
    /// Bounds (sessions, tasks, body size).
    pub limits: McpLimits,
}

impl Default for McpPlan {
    fn default() -> Self {
        McpPlan {
            revisions: vec![Revision::V2025_11_25, Revision::V2025_06_18],
            tools: vec![PaidTool::ticket(), PaidTool::charge()],
            retrieval: Retrieval::default(),
            answer: AnswerStyle::Sse,
            tasks: TaskSupport::default(),
            defects: BTreeSet::new(),
            errors: ErrorStyle::Spec,
            faults: Vec::new(),
            limits: McpLimits::default(),
        }
    }
}

/// A protocol revision (the `MCP-Protocol-Version` value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// 2025-06-18: no tasks.
    V2025_06_18,
    /// 2025-11-25: tasks bound to the caller's credential.
    V2025_11_25,
}

impl Revision {
    /// Every revision, oldest first.
    pub const ALL: [Revision; 2] = [Revision::V2025_06_18, Revision::V2025_11_25];

    /// The string on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a string produced by [`Revision::name`].
    pub fn from_name(name: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// A paid, side-effecting tool.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PaidTool {
    /// Tool name (`create_ticket`).
    pub name: String,
    /// The ledger collection its effects go to (`tickets`); effects are
    /// attributed to operations by this and their arguments, as for `/v1`.
    pub resource: String,
    /// `Some(arg)`: the tool takes an idempotency key in argument `arg`
    /// (Stripe-like: same key and arguments replay the first result, other
    /// arguments answer `isError` 400-like, a key in flight 409-like; keys
    /// are kept for `Retrieval::retention`). `None`: every call is new work.
    pub key_argument: Option<String>,
    /// The expected duration written in the description ("budget 1-3 s"),
    /// `None` when the description states none (a design-rule defect).
    pub duration_hint: Option<String>,
}

impl PaidTool {
    /// `create_ticket`: no idempotency key, effects in `tickets`.
    pub fn ticket() -> PaidTool {
        PaidTool {
            name: "create_ticket".to_owned(),
            resource: "tickets".to_owned(),
            key_argument: None,
            duration_hint: Some("budget 1-3 s".to_owned()),
        }
    }

    /// `create_charge`: takes `idempotency_key`, effects in `charges`.
    pub fn charge() -> PaidTool {
        PaidTool {
            name: "create_charge".to_owned(),
            resource: "charges".to_owned(),
            key_argument: Some("idempotency_key".to_owned()),
            duration_hint: Some("budget 1-3 s".to_owned()),
        }
    }
}

/// The recovery path: read-only retrieval tools.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retrieval {
    /// `false`: neither retrieval tool is listed (a design-rule defect).
    pub enabled: bool,
    /// Ids retrieve for this long after creation (simulator clock); an expired
    /// id answers exactly like an unknown one. Declared in the descriptions and
    /// in the results' `retention_s` field.
    pub retention: Duration,
    /// Most ids `list_recent_operations` returns, newest first.
    pub list_limit: usize,
}

impl Default for Retrieval {
    fn default() -> Self {
        Retrieval {
            enabled: true,
            retention: Duration::from_secs(7 * 24 * 3600),
            list_limit: 20,
        }
    }
}

/// How answers to `tools/call` travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerStyle {
    /// `application/json`, one response (faults that need a stream still use SSE).
    Json,
    /// `text/event-stream`: progress and notifications first, the response last.
    Sse,
}

/// Background tasks (revision 2025-11-25).
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskSupport {
    /// Whether `tools/call` accepts `params.task` and `tasks/*` exist.
    pub enabled: bool,
    /// How long a finished task's result is kept (simulator clock).
    pub ttl: Duration,
    /// How long a task works before it completes (simulator clock), unless a
    /// fault says otherwise.
    pub work: Duration,
}

impl Default for TaskSupport {
    fn default() -> Self {
        TaskSupport {
            enabled: true,
            ttl: Duration::from_secs(3600),
            work: Duration::from_secs(5),
        }
    }
}

/// How errors that are not faults are answered. Both are correct; they differ
/// in shape, and a certifier must judge the recovery path the same in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorStyle {
    /// As the MCP specification shows: an unknown tool is a JSON-RPC error
    /// (-32602); an id the caller cannot read is a normal result
    /// `{found: false, retention_s, message}`.
    Spec,
    /// As a server on the official Python or TypeScript SDK answers when its
    /// tool raises: an unknown tool is a tool error result (`isError: true`,
    /// text `Unknown tool: NAME`, no status), and so is an id the caller
    /// cannot read (`operation ID not found`, echoing the id asked for).
    Sdk,
}

/// A known-bad behaviour, each a finding `lostreply certify --mcp` must make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Defect {
    /// Paid tools' successful results carry no operation id.
    ResultWithoutId,
    /// Descriptions do not say the timeout is a client setting (and offer a
    /// `timeout` parameter instead).
    TimeoutAsParameter,
    /// Retrieval tools are not annotated read-only / idempotent.
    RetrievalNotReadOnly,
    /// "Not yours" answers differently from "does not exist" (a leak).
    NotYoursDistinct,
    /// An empty recent list is answered as an error.
    EmptyListIsError,
    /// Retrieval wants the API key as a tool argument, not the transport's credential.
    KeyInArguments,
    /// `get_operation` answers a payload that differs from the original result.
    PayloadMismatch,
    /// `list_recent_operations` lists every credential's operations, not only
    /// the caller's (a leak across tenants).
    ListShowsOtherTenants,
    /// An id the caller cannot read is answered as [`ErrorStyle::Sdk`] does,
    /// echoing the id; for another credential's id the message also names
    /// that operation's tool and arguments (a leak across tenants).
    NotYoursEchoLeaks,
}

impl Defect {
    /// Every defect, in a stable order.
    pub const ALL: [Defect; 9] = [
        Defect::ResultWithoutId,
        Defect::TimeoutAsParameter,
        Defect::RetrievalNotReadOnly,
        Defect::NotYoursDistinct,
        Defect::EmptyListIsError,
        Defect::KeyInArguments,
        Defect::PayloadMismatch,
        Defect::ListShowsOtherTenants,
        Defect::NotYoursEchoLeaks,
    ];

    /// The name used in flags and scenarios.
    pub fn name(self) -> &'static str {
        match self {
            Defect::ResultWithoutId => "result_without_id",
            Defect::TimeoutAsParameter => "timeout_as_parameter",
            Defect::RetrievalNotReadOnly => "retrieval_not_read_only",
            Defect::NotYoursDistinct => "not_yours_distinct",
            Defect::EmptyListIsError => "empty_list_is_error",
            Defect::KeyInArguments => "key_in_arguments",
            Defect::PayloadMismatch => "payload_mismatch",
            Defect::ListShowsOtherTenants => "list_shows_other_tenants",
            Defect::NotYoursEchoLeaks => "not_yours_echo_leaks",
        }
    }

    /// Parses a name produced by [`Defect::name`].
    pub fn from_name(name: &str) -> Option<Defect> {
        Defect::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// One MCP fault rule.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpRule {
    /// Which `tools/call` requests it applies to.
    pub when: McpMatch,
    /// What happens to them.
    pub fault: McpFault,
    /// What a `notifications/cancelled` for the call does while it is held.
    pub cancel: CancelPolicy,
}

/// A `tools/call` matcher; every `Some` must hold. `nth` / `times` count the
/// calls that match the other fields, inside `steps` when given.
#[derive(bon::Builder, Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct McpMatch {
    /// Tool name (paid or retrieval).
    pub tool: Option<String>,
    /// Only the nth matching call (1-based).
    pub nth: Option<u32>,
    /// Only the first `times` matching calls. Exclusive with `nth`.
    pub times: Option<u32>,
    /// Only calls that arrive while one of these harness steps runs.
    pub steps: Option<BTreeSet<u32>>,
}

/// Relative to the commit of a paid tool's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CommitPoint {
    /// Before the effect commits: none does.
    BeforeCommit,
    /// After the effect committed.
    AfterCommit,
}

/// What a matched `tools/call` meets. Closed: a new fault forces every match to decide.
#[derive(Debug, Clone, PartialEq)]
pub enum McpFault {
    /// Served normally (shadows later rules).
    Ok,
    /// The server works for `work` (real time) before it commits and answers;
    /// the stream carries what `stream` says meanwhile. Past the client's
    /// wall-clock limit this is shape 1; with silence past its idle window, shape 4.
    Slow {
        /// How long the work takes (real time, bounded by the hold cap).
        work: Duration,
        /// What the stream carries while the work runs.
        stream: Stream,
    },
    /// Hold the call (no answer) until `until`; then commit or abandon. The
    /// client's own limit decides what it sees.
    Stall {
        /// What the server does once the hold ends.
        then: StallThen,
        /// When the hold ends.
        until: Release,
        /// What the stream carries meanwhile.
        stream: Stream,
    },
    /// Commit, then answer after `after` (real time), whether or not the client still waits.
    Late {
        /// How late.
        after: Duration,
    },
    /// Commit, then never answer (the connection is held until the client leaves, bounded).
    Never,
    /// A tool error result (`isError: true`) whose content carries an HTTP-like status.
    IsError {
        /// 400..=599.
        status: u16,
        /// Before the commit (no effect) or after it (an effect, and an error).
        at: CommitPoint,
        /// The error text (may say "timeout", to catch callers that read words).
        message: String,
    },
    /// A JSON-RPC error after the commit.
    RpcError {
        /// JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// An HTTP status instead of a JSON-RPC answer.
    Http {
        /// 400..=599.
        status: u16,
        /// Before or after the commit.
        at: CommitPoint,
    },
    /// Close the connection without an answer (FIN).
    Drop {
        /// Before or after the commit.
        at: CommitPoint,
    },
    /// Abort the connection (RST).
    Reset {
        /// Before or after the commit.
        at: CommitPoint,
    },
    /// The call becomes a background task (only when the client asked with
    /// `params.task`, on 2025-11-25; otherwise served normally), which ends
    /// as `then` says `after` on the simulator clock.
    Task {
        /// How the task ends.
        then: TaskEnd,
        /// When (simulator clock, from the call).
        after: Duration,
    },
    /// An SSE answer that sends one priming event (an event id, no data) and
    /// then closes the stream without the response. The work goes on.
    PrimeThenClose {
        /// Whether the effect commits (the server finished the work).
        then: StallThen,
    },
}

/// What a stream carries while a call is held or slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Nothing at all: not even headers until the answer (a JSON answer's wait).
    Nothing,
    /// SSE headers at once, then silence.
    HeadersThenSilence,
    /// SSE headers, then a comment line every `every` (keep-alive bytes: an
    /// idle window restarts on them).
    KeepAlive {
        /// Interval (real time).
        every: Duration,
    },
    /// SSE headers, then `notifications/progress` every `every`, when the call
    /// carried a `progressToken` (otherwise keep-alive comments).
    Progress {
        /// Interval (real time).
        every: Duration,
    },
}

/// How a background task ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEnd {
    /// Commits and completes with the tool's result.
    Complete,
    /// Fails without an effect.
    Fail,
    /// Never finishes; forgotten after the task ttl (`tasks/get` then answers unknown).
    Expire,
}

/// What `notifications/cancelled` does to a held call, and what its client
/// leaving before the commit point (connection closed or reset, session
/// deleted) does, whichever of the two comes first (docs/mcp.md, "When the
/// client leaves before its cancel").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CancelPolicy {
    /// The server stops: a call not committed yet never commits, whether its
    /// cancel or its client's leaving came first, or the cancel never came.
    Honour,
    /// The server goes on as if nothing came (the usual case: work is not
    /// interruptible); a client that leaves ends only a hold that waits for it.
    #[default]
    Ignore,
    /// The cancel arrives just after the commit: the effect commits at that
    /// moment, or when the client leaves, if that comes first.
    Race,
}

/// The default [`McpLimits::session_idle`]: ten minutes.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(600);

/// Bounds on the MCP face.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpLimits {
    /// Live sessions at most. At the cap, `initialize` first ends the least
    /// recently used idle session; only when every session is in use (a
    /// request on it has not finished, an SSE stream included) does it
    /// answer HTTP 503.
    pub max_sessions: usize,
    /// A session with no request for this long (real time) ends, and a
    /// request on it answers as for an unknown session (HTTP 404). Real time,
    /// not the simulator clock: clients come and go (and forget to send
    /// `DELETE`) in real time, while a harness moving the clock by hours must
    /// not end the sessions of the adapter it drives.
    #[builder(default = DEFAULT_SESSION_IDLE)]
    pub session_idle: Duration,
    /// Tasks kept at most per tenant.
    pub max_tasks: usize,
    /// Largest JSON-RPC body accepted (HTTP 413 beyond).
    pub max_body_bytes: usize,
}

impl Default for McpLimits {
    fn default() -> Self {
        McpLimits {
            max_sessions: 1024,
            session_idle: DEFAULT_SESSION_IDLE,
            max_tasks: 10_000,
            max_body_bytes: 256 * 1024,
        }
    }
}

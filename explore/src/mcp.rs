//! Situations of paid tools called over the simulator's MCP server
//! (`--mcp`): the server's side (its client's windows, retrieval, tasks),
//! each operation's tool, and the call fault rules, in the terms of the
//! scenario format's `mcp:` section.
//!
//! Fair by construction, as the HTTP grammar is: an answer that says "not
//! done" (an `isError` 4xx other than 408, 409 and 425) is only sent before
//! the commit; every answer after it is lost, cut, held or ambiguous (a 5xx,
//! a JSON-RPC error), which says nothing about the commit; a call held in
//! flight is held past no clock move (which may outrun its key) and no
//! crash; a task's end is the server's word about the task. A correct
//! caller never calls an unkeyed tool twice and replays a key only inside
//! its retention, so every one of these leaves it a truthful answer, if not
//! always a finished one.

use std::fmt::Write as _;
use std::time::Duration;

use crate::tag::Tag;

/// How long the server keeps a keyed tool's key (its retrieval retention,
/// the scenario format's default).
pub const KEY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// The MCP client whose windows the adapter applies, scaled so that a run
/// takes milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    /// The TypeScript SDK: a 60 s wall clock (300 ms at scale 0.005).
    TypescriptSdk,
    /// Claude Code over HTTP: a 60 s first-byte timer and a 5 min idle
    /// window (60 ms and 300 ms at scale 0.001), no move to the background.
    ClaudeCodeHttp,
}

impl Client {
    fn yaml(self) -> &'static str {
        match self {
            Client::TypescriptSdk => "{profile: typescript-sdk, scale: 0.005}",
            Client::ClaudeCodeHttp => {
                "{profile: claude-code-http, scale: 0.001, background_after: none}"
            }
        }
    }
}

/// A paid tool of the server's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `create_ticket`: no key; every call is new work.
    Ticket,
    /// `create_charge`: keyed by `idempotency_key`, kept for the retention.
    Charge,
}

impl Tool {
    /// Its name on the server.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Ticket => "create_ticket",
            Tool::Charge => "create_charge",
        }
    }

    /// An operation's `args` in flow YAML; equal amounts are identical
    /// arguments.
    pub fn args_yaml(self, amount: u32) -> String {
        match self {
            Tool::Ticket => format!("{{title: Generated ticket, amount: {amount}}}"),
            Tool::Charge => format!("{{amount: {amount}, currency: eur}}"),
        }
    }
}

/// What a retrieval tool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retrieval {
    /// `get_operation`.
    GetOperation,
    /// `list_recent_operations`.
    ListRecent,
}

/// The tool a rule strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Struck {
    /// The operations' paid tools (the rule names the first operation's).
    Paid(Tool),
    /// A retrieval tool.
    Retrieval(Retrieval),
}

impl Struck {
    /// The tool's name on the server.
    pub fn name(self) -> &'static str {
        match self {
            Struck::Paid(tool) => tool.name(),
            Struck::Retrieval(Retrieval::GetOperation) => "get_operation",
            Struck::Retrieval(Retrieval::ListRecent) => "list_recent_operations",
        }
    }
}

/// What a held call does on the client's cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cancel {
    /// A call not committed never commits.
    Honour,
    /// The work goes on.
    Ignore,
    /// The cancel arrives just after the commit.
    Race,
}

impl Cancel {
    fn name(self) -> &'static str {
        match self {
            Cancel::Honour => "honour",
            Cancel::Ignore => "ignore",
            Cancel::Race => "race",
        }
    }
}

/// How a task ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskEnd {
    /// It completes: the effect commits then.
    Complete,
    /// It fails: no effect.
    Fail,
    /// It is forgotten after its time to live.
    Expire,
}

impl TaskEnd {
    fn name(self) -> &'static str {
        match self {
            TaskEnd::Complete => "complete",
            TaskEnd::Fail => "fail",
            TaskEnd::Expire => "expire",
        }
    }
}

/// What a fault does to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    /// FIN without an answer, after the commit or before it.
    Drop {
        /// After the commit.
        committed: bool,
    },
    /// RST without an answer.
    Reset {
        /// After the commit.
        committed: bool,
    },
    /// A tool result with `isError: true` carrying `status`.
    IsError {
        /// The status (ambiguous ones only after a commit).
        status: u16,
        /// After the commit.
        committed: bool,
        /// Its message says "upstream timeout".
        says_timeout: bool,
    },
    /// An HTTP 5xx instead of a JSON-RPC answer.
    Http {
        /// The status.
        status: u16,
        /// After the commit.
        committed: bool,
    },
    /// A JSON-RPC error after the commit.
    RpcError,
    /// Held until the client leaves; then committed or abandoned.
    Stall {
        /// Committed once the client has left.
        commit: bool,
        /// SSE headers at once, then silence (else nothing at all).
        headers: bool,
        /// What the client's cancel does.
        cancel: Cancel,
    },
    /// Held until step `until_step` ends, whether or not its client is still
    /// there; then committed.
    Hold {
        /// The step whose end releases it (from 1); until `normalized`, how
        /// many steps past its own.
        until_step: u32,
    },
    /// Committed, then never answered.
    Never,
    /// One priming event, then the stream ends; committed or abandoned.
    PrimeThenClose {
        /// The work goes on and commits.
        commit: bool,
    },
    /// The call becomes a task that ends so.
    Task(TaskEnd),
}

impl Call {
    fn yaml(self) -> String {
        let at = |committed: bool| {
            if committed {
                "after_commit"
            } else {
                "before_commit"
            }
        };
        let then = |commit: bool| if commit { "commit" } else { "abandon" };
        match self {
            Call::Drop { committed } => format!("{{drop: {}}}", at(committed)),
            Call::Reset { committed } => format!("{{reset: {}}}", at(committed)),
            Call::IsError {
                status,
                committed,
                says_timeout,
            } => {
                let message = if says_timeout {
                    ", message: upstream timeout"
                } else {
                    ""
                };
                format!(
                    "{{is_error: {{status: {status}, at: {}{message}}}}}",
                    at(committed)
                )
            }
            Call::Http { status, committed } => {
                format!("{{http: {{status: {status}, at: {}}}}}", at(committed))
            }
            Call::RpcError => "{rpc_error: {code: -32603, message: internal}}".to_owned(),
            Call::Stall {
                commit, headers, ..
            } => {
                let stream = if headers { ", stream: headers" } else { "" };
                format!("{{stall: {{then: {}{stream}}}}}", then(commit))
            }
            Call::Hold { until_step } => {
                format!("{{stall: {{then: commit, until: {{end_of_step: {until_step}}}}}}}")
            }
            Call::Never => "never".to_owned(),
            Call::PrimeThenClose { commit } => {
                format!("{{prime_then_close: {{then: {}}}}}", then(commit))
            }
            Call::Task(end) => format!("{{task: {{then: {}, after: 5s}}}}", end.name()),
        }
    }

    /// Whether a paid tool's effect may commit under it (a rule that may
    /// commit must name a paid tool).
    pub fn may_commit(self) -> bool {
        match self {
            Call::Drop { committed }
            | Call::Reset { committed }
            | Call::IsError { committed, .. }
            | Call::Http { committed, .. } => committed,
            Call::Stall { commit, .. } | Call::PrimeThenClose { commit } => commit,
            Call::RpcError | Call::Hold { .. } | Call::Never | Call::Task(_) => true,
        }
    }

    /// What the client's cancel does, for a call the server holds.
    fn cancel(self) -> Option<Cancel> {
        match self {
            Call::Stall { cancel, .. } => Some(cancel),
            _ => None,
        }
    }

    /// A short name for summaries.
    pub fn kind_name(self) -> &'static str {
        match self {
            Call::Drop { .. } => "drop",
            Call::Reset { .. } => "reset",
            Call::IsError { .. } => "isError",
            Call::Http { .. } => "http status",
            Call::RpcError => "rpc error",
            Call::Stall { .. } => "stall",
            Call::Hold { .. } => "hold in flight",
            Call::Never => "never",
            Call::PrimeThenClose { .. } => "prime then close",
            Call::Task(_) => "task",
        }
    }

    fn tags(self) -> Vec<Tag> {
        let mut tags = vec![if self.may_commit() {
            Tag::AfterCommit
        } else {
            Tag::BeforeCommit
        }];
        tags.push(match self {
            Call::Drop { .. } | Call::PrimeThenClose { .. } => Tag::Drop,
            Call::Reset { .. } => Tag::Reset,
            Call::IsError { status: 429, .. } => Tag::RateLimited,
            Call::IsError { status, .. } if status < 500 => Tag::Rejection,
            Call::IsError { .. } | Call::Http { .. } | Call::RpcError => Tag::ServerError,
            Call::Stall { .. } | Call::Never => Tag::Timeout,
            Call::Hold { .. } => Tag::InFlight,
            Call::Task(_) => Tag::Task,
        });
        if self.cancel().is_some_and(|c| c != Cancel::Ignore) {
            tags.push(Tag::Cancel);
        }
        tags
    }
}

/// One call fault rule: in step `step`, the `nth` call of `tool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct McpFault {
    /// The step (from 1).
    pub step: u32,
    /// The tool struck.
    pub tool: Struck,
    /// Which of the step's calls of it (from 1).
    pub nth: u32,
    /// What it does.
    pub call: Call,
}

/// The MCP side of a situation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSide {
    /// The client's windows.
    pub client: Client,
    /// `get_operation` and `list_recent_operations` are offered.
    pub retrieval: bool,
    /// Calls may become tasks.
    pub tasks: bool,
    /// Each operation's paid tool.
    pub tools: Vec<Tool>,
    /// Call fault rules, in order.
    pub faults: Vec<McpFault>,
}

impl McpSide {
    /// Whether a call is held in flight somewhere.
    pub fn holds(&self) -> bool {
        self.faults
            .iter()
            .any(|f| matches!(f.call, Call::Hold { .. }))
    }

    /// What it holds, in the library's words.
    pub fn tags(&self) -> Vec<Tag> {
        let mut tags = vec![Tag::Mcp];
        if self.tools.contains(&Tool::Charge) {
            tags.push(Tag::KeyedTool);
        }
        if self.retrieval {
            tags.push(Tag::Retrieval);
        }
        for f in &self.faults {
            tags.extend(f.call.tags());
            if matches!(f.tool, Struck::Retrieval(_)) {
                tags.push(Tag::LookupFailure);
            }
        }
        tags
    }

    /// The `mcp:` section.
    pub(crate) fn write_section(&self, out: &mut String) {
        let _ = writeln!(out, "mcp:\n  client: {}", self.client.yaml());
        if !self.retrieval {
            let _ = writeln!(out, "  retrieval: {{enabled: false}}");
        }
        if self.tasks {
            let _ = writeln!(out, "  tasks: {{enabled: true, work: 5s}}");
        }
    }

    /// The call fault rules, under an already written `faults:`.
    pub(crate) fn write_faults(&self, out: &mut String) {
        for f in &self.faults {
            let _ = writeln!(
                out,
                "  - when: {{tool: {}, step: {}, nth: {}}}\n    call: {}",
                f.tool.name(),
                f.step,
                f.nth,
                f.call.yaml()
            );
            if let Some(cancel) = f.call.cancel() {
                let _ = writeln!(out, "    cancel: {}", cancel.name());
            }
        }
    }
}

//! What the MCP face remembers, inside the simulator's one state lock (so that
//! "check the key, then commit" and "commit, then record the operation" are as
//! atomic as they are for `/v1`): sessions, operations, keyed tools' keys,
//! tasks, rule counters and the calls a `notifications/cancelled` may reach.
//!
//! Plain data, held by the core's [`super::State`]; the MCP face (`crate::mcp`)
//! reads and changes it, and adds the behaviour (rule selection, task
//! settling) in its own modules, so that the core never imports the face.

use std::collections::{BTreeMap, HashMap};

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;
use tokio::sync::watch;

use crate::idempotency::{KeyTable, Scope};
use crate::names::random_id;
use crate::plan::mcp::{Revision, TaskEnd};
use crate::plan::Plan;
use crate::store::NewObject;

// Child streams of the plan's seed, apart from the store's (1, 2): adding a
// session never shifts an object id.
const SESSION_ID_STREAM: u64 = 3;
const TASK_ID_STREAM: u64 = 4;

/// What a paid call commits, now (a call) or when its task completes.
#[derive(Debug, Clone)]
pub(crate) struct PendingCommit {
    pub tool: String,
    pub new: NewObject,
    /// The key claimed in flight, for a keyed tool's call with a key.
    pub ticket: Option<Scope>,
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskStatus {
    Working,
    Completed,
    Failed,
    Cancelled,
}

/// One task.
#[derive(Debug, Clone)]
pub(crate) struct TaskRecord {
    pub id: String,
    pub tenant: String,
    pub status: TaskStatus,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub ttl_ms: u64,
    pub ends_at_ms: i64,
    pub end: TaskEnd,
    /// The commit still to make (taken at the task's end).
    pub pending: Option<PendingCommit>,
    /// What `tasks/result` answers once the task is terminal.
    pub result: Option<Value>,
    /// The journal entry of the call that made the task.
    pub seq: u64,
}

/// Per-rule counts of the `tools/call` requests that matched each rule's
/// fields (selection is `crate::mcp::faults`').
#[derive(Debug)]
pub(crate) struct McpCounters {
    pub(crate) seen: Vec<u64>,
}

impl McpCounters {
    /// No call counted yet, for `rules` rules.
    pub(crate) fn new(rules: usize) -> McpCounters {
        McpCounters {
            seen: vec![0; rules],
        }
    }
}

/// One live session: bound to the credential that opened it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Session {
    pub tenant: String,
    pub revision: Revision,
}

/// An operation a paid tool created: what retrieval answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Operation {
    pub id: String,
    pub tenant: String,
    pub tool: String,
    pub resource: String,
    pub created_at_ms: i64,
    /// The `structuredContent` the original call answered, kept verbatim.
    pub payload: Value,
}

/// A `tools/call` the server still holds, which a cancel may reach.
#[derive(Debug)]
pub(crate) struct HeldCall {
    pub seq: u64,
    pub cancel: watch::Sender<bool>,
}

/// The MCP face's state.
#[derive(Debug)]
pub(crate) struct McpState {
    pub sessions: BTreeMap<String, Session>,
    /// Operations in creation order.
    pub operations: Vec<Operation>,
    /// Index into `operations` by id.
    pub operation_index: HashMap<String, usize>,
    /// Keyed tools' keys (Stripe-like), scoped per tenant and tool.
    pub keys: KeyTable,
    pub tasks: BTreeMap<String, TaskRecord>,
    pub counters: McpCounters,
    /// Held calls by (session id, canonical JSON-RPC id).
    pub held: HashMap<(String, String), HeldCall>,
    session_ids: ChaCha20Rng,
    task_ids: ChaCha20Rng,
}

impl McpState {
    pub(crate) fn new(plan: &Plan) -> McpState {
        let stream = |n| {
            let mut rng = ChaCha20Rng::seed_from_u64(plan.seed);
            rng.set_stream(n);
            rng
        };
        McpState {
            sessions: BTreeMap::new(),
            operations: Vec::new(),
            operation_index: HashMap::new(),
            keys: KeyTable::default(),
            tasks: BTreeMap::new(),
            counters: McpCounters::new(plan.mcp.as_ref().map_or(0, |m| m.faults.len())),
            held: HashMap::new(),
            session_ids: stream(SESSION_ID_STREAM),
            task_ids: stream(TASK_ID_STREAM),
        }
    }

    /// Opens a session for `tenant`; `None` when `max` sessions are live.
    pub(crate) fn open_session(
        &mut self,
        tenant: &str,
        revision: Revision,
        max: usize,
    ) -> Option<String> {
        if self.sessions.len() >= max {
            return None;
        }
        let id = loop {
            let candidate = random_id("mcp", &mut self.session_ids);
            if !self.sessions.contains_key(&candidate) {
                break candidate;
            }
        };
        self.sessions.insert(
            id.clone(),
            Session {
                tenant: tenant.to_owned(),
                revision,
            },
        );
        Some(id)
    }

    pub(crate) fn new_task_id(&mut self) -> String {
        loop {
            let candidate = random_id("task", &mut self.task_ids);
            if !self.tasks.contains_key(&candidate) {
                return candidate;
            }
        }
    }

    pub(crate) fn record_operation(&mut self, operation: Operation) {
        self.operation_index
            .insert(operation.id.clone(), self.operations.len());
        self.operations.push(operation);
    }

    pub(crate) fn operation(&self, id: &str) -> Option<&Operation> {
        self.operations.get(*self.operation_index.get(id)?)
    }
}

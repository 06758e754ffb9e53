//! What the MCP face remembers, inside the simulator's one state lock (so that
//! "check the key, then commit" and "commit, then record the operation" are as
//! atomic as they are for `/v1`): sessions, operations, keyed tools' keys,
//! tasks, rule counters and the calls a `notifications/cancelled` may reach.
//!
//! Plain data, held by the core's [`super::State`]; the MCP face (`crate::mcp`)
//! reads and changes it, and adds the behaviour (rule selection, task
//! settling) in its own modules, so that the core never imports the face.

use std::collections::{BTreeMap, HashMap, VecDeque};

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
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
    /// When it was last used (real ms since the simulator started): its
    /// last request's arrival, or the last time a check found a request on
    /// it still running. Idle time counts from here.
    pub last_used_ms: u64,
    /// Journal `seq`s of its requests whose responses may still be running
    /// (pruned on every check, so it holds no more than the requests in flight).
    pub requests: Vec<u64>,
}

impl Session {
    /// True while a request on the session has not finished (`open` says
    /// whether a journal `seq`'s response is still running); a session in
    /// use counts as used now.
    fn busy(&mut self, now_ms: u64, open: &impl Fn(u64) -> bool) -> bool {
        self.requests.retain(|&seq| open(seq));
        let busy = !self.requests.is_empty();
        if busy {
            self.last_used_ms = self.last_used_ms.max(now_ms);
        }
        busy
    }

    fn idle_past(&mut self, now_ms: u64, idle_ms: u64, open: &impl Fn(u64) -> bool) -> bool {
        !self.busy(now_ms, open) && now_ms.saturating_sub(self.last_used_ms) >= idle_ms
    }
}

/// When a session is looked at: the real time, the idle bound, and which
/// journal `seq`s are still running.
pub(crate) struct SessionClock<F: Fn(u64) -> bool> {
    pub now_ms: u64,
    pub idle_ms: u64,
    pub open: F,
}

/// How sessions ended and how many `initialize` calls were refused, since
/// the start: what `/_lostreply/mcp` reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SessionCounts {
    /// Sessions `initialize` opened.
    pub opened: u64,
    /// Sessions a client ended with `DELETE`.
    pub deleted: u64,
    /// Sessions ended after `McpLimits::session_idle` without a request.
    pub expired: u64,
    /// Idle sessions ended (least recently used first) to make room at
    /// `McpLimits::max_sessions`.
    pub evicted: u64,
    /// `initialize` calls refused (503) because every session at the cap was in use.
    pub refused: u64,
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

/// What reached a held call from outside its own connection; the first
/// that came is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum HeldSignal {
    /// Nothing yet.
    #[default]
    Nothing,
    /// Its `notifications/cancelled` arrived.
    Cancelled,
    /// Its session was ended (`DELETE`): its client has left it.
    SessionEnded,
}

/// A `tools/call` the server still holds, which a cancel or the end of its
/// session may reach.
#[derive(Debug)]
pub(crate) struct HeldCall {
    pub seq: u64,
    pub signal: watch::Sender<HeldSignal>,
}

impl HeldCall {
    /// Tells the call `signal`, unless something reached it first.
    pub(crate) fn tell(&self, signal: HeldSignal) {
        self.signal.send_if_modified(|now| {
            let first = *now == HeldSignal::Nothing;
            if first {
                *now = signal;
            }
            first
        });
    }
}

/// The MCP face's state.
#[derive(Debug)]
pub(crate) struct McpState {
    pub sessions: BTreeMap<String, Session>,
    pub session_counts: SessionCounts,
    /// Operations in creation order, which is their objects' commit order:
    /// the store summarises its oldest objects out first, so the operations
    /// whose objects are gone are always at the front, where they are dropped.
    pub operations: VecDeque<Operation>,
    /// Position (from 0, since the start: dropped operations included) by id.
    operation_index: HashMap<String, u64>,
    /// Operations dropped because their objects were summarised out.
    pub operations_dropped: u64,
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
            session_counts: SessionCounts::default(),
            operations: VecDeque::new(),
            operation_index: HashMap::new(),
            operations_dropped: 0,
            keys: KeyTable::default(),
            tasks: BTreeMap::new(),
            counters: McpCounters::new(plan.mcp.as_ref().map_or(0, |m| m.faults.len())),
            held: HashMap::new(),
            session_ids: stream(SESSION_ID_STREAM),
            task_ids: stream(TASK_ID_STREAM),
        }
    }

    /// Opens a session for `tenant`. At `max` live sessions, the expired ones
    /// end, then the least recently used idle one; `None` (nothing opened)
    /// when every session is in use.
    pub(crate) fn open_session<F: Fn(u64) -> bool>(
        &mut self,
        tenant: &str,
        revision: Revision,
        max: usize,
        clock: &SessionClock<F>,
    ) -> Option<String> {
        if self.sessions.len() >= max && !self.make_room(max, clock) {
            self.session_counts.refused += 1;
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
                last_used_ms: clock.now_ms,
                requests: Vec::new(),
            },
        );
        self.session_counts.opened += 1;
        Some(id)
    }

    /// Ends expired sessions, then idle ones least recently used first, until
    /// fewer than `max` are live; false when only sessions in use are left.
    /// A scan of every session: it runs only at the cap, once per
    /// `initialize` there, and the cap is small (1,024 by default).
    fn make_room<F: Fn(u64) -> bool>(&mut self, max: usize, clock: &SessionClock<F>) -> bool {
        let before = self.sessions.len();
        self.sessions
            .retain(|_, s| !s.idle_past(clock.now_ms, clock.idle_ms, &clock.open));
        self.session_counts.expired += (before - self.sessions.len()) as u64;
        while self.sessions.len() >= max {
            let oldest = self
                .sessions
                .iter_mut()
                .filter_map(|(id, s)| {
                    (!s.busy(clock.now_ms, &clock.open)).then_some((s.last_used_ms, id))
                })
                .min()
                .map(|(_, id)| id.clone());
            let Some(oldest) = oldest else {
                return false;
            };
            self.sessions.remove(&oldest);
            self.session_counts.evicted += 1;
        }
        true
    }

    /// The session `id` for a request `seq` of `tenant`, now in use by it;
    /// `None` when it is unknown, another credential's, or idle past the
    /// bound (it ends then, counted as expired).
    pub(crate) fn use_session<F: Fn(u64) -> bool>(
        &mut self,
        id: &str,
        tenant: &str,
        seq: u64,
        clock: &SessionClock<F>,
    ) -> Option<Revision> {
        let session = self.sessions.get_mut(id).filter(|s| s.tenant == tenant)?;
        if session.idle_past(clock.now_ms, clock.idle_ms, &clock.open) {
            self.sessions.remove(id);
            self.session_counts.expired += 1;
            return None;
        }
        session.last_used_ms = clock.now_ms;
        session.requests.push(seq);
        Some(session.revision)
    }

    /// Ends the session `id` of `tenant` (`DELETE`); false when there is none.
    pub(crate) fn end_session(&mut self, id: &str, tenant: &str) -> bool {
        let owned = self.sessions.get(id).is_some_and(|s| s.tenant == tenant);
        if owned {
            self.sessions.remove(id);
            self.session_counts.deleted += 1;
            // Its held calls lose their client as surely as by a closed
            // connection: the policy of each decides what that means.
            for ((session, _), held) in &self.held {
                if session == id {
                    held.tell(HeldSignal::SessionEnded);
                }
            }
        }
        owned
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
        let position = self.operations_dropped + self.operations.len() as u64;
        self.operation_index.insert(operation.id.clone(), position);
        self.operations.push_back(operation);
    }

    /// The operation `id`, while it is held.
    pub(crate) fn operation(&self, id: &str) -> Option<&Operation> {
        let position = self.operation_index.get(id)?;
        let index = usize::try_from(position.checked_sub(self.operations_dropped)?).ok()?;
        self.operations.get(index)
    }

    /// Drops the oldest operations while `held` says their object is no
    /// longer in the store, so the operations held never outnumber the
    /// objects held (`Limits::max_objects`). Looks at the front only: the
    /// cost per call is the number dropped, plus one.
    pub(crate) fn drop_summarised(&mut self, held: impl Fn(&str) -> bool) {
        while let Some(oldest) = self.operations.front() {
            if held(&oldest.id) {
                return;
            }
            self.operation_index.remove(&oldest.id);
            self.operations.pop_front();
            self.operations_dropped += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(now_ms: u64, open: impl Fn(u64) -> bool) -> SessionClock<impl Fn(u64) -> bool> {
        SessionClock {
            now_ms,
            idle_ms: u64::MAX,
            open,
        }
    }

    #[test]
    fn a_long_lived_session_holds_only_its_requests_still_running() {
        let mut state = McpState::new(&Plan::default());
        let id = state
            .open_session("sk_test", Revision::V2025_11_25, 4, &clock(0, |_| false))
            .expect("room");
        // Every tenth request is still running; the others have finished.
        let running = |seq: u64| seq.is_multiple_of(10);
        for seq in 1..=10_001 {
            let used = state.use_session(&id, "sk_test", seq, &clock(seq, running));
            assert!(used.is_some());
        }
        let requests = &state.sessions[&id].requests;
        assert_eq!(requests.len(), 1_000 + 1, "the running ones and the last");
        assert!(requests.iter().all(|&seq| running(seq) || seq == 10_001));
    }

    #[test]
    fn operations_whose_objects_are_gone_are_dropped_from_the_front() {
        let mut state = McpState::new(&Plan::default());
        for n in 0..5 {
            state.record_operation(Operation {
                id: format!("tkt_{n}"),
                tenant: "sk_test".to_owned(),
                tool: "create_ticket".to_owned(),
                resource: "tickets".to_owned(),
                created_at_ms: n,
                payload: Value::Null,
            });
        }
        state.drop_summarised(|id| id >= "tkt_3");
        assert_eq!(state.operations.len(), 2);
        assert_eq!(state.operations_dropped, 3);
        assert!(state.operation("tkt_2").is_none());
        assert_eq!(state.operation("tkt_4").map(|op| op.created_at_ms), Some(4));
        state.drop_summarised(|_| false);
        assert!(state.operations.is_empty());
        assert!(state.operation("tkt_4").is_none());
    }
}

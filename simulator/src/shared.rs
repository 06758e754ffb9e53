//! The state every task of one simulator shares.

use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use http::header::GetAll;
use http::{HeaderMap, HeaderName, HeaderValue};
use lostreply_text::SharedStr;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::faults::FaultCounters;
use crate::idempotency::KeyTable;
use crate::journal::Journal;
use crate::plan::Plan;
use crate::record::CommitHook;
use crate::record::ResponseFate;
use crate::store::Store;
use crate::sync::{lock, read};
use crate::time::max_clock_ms;
use attempts::Attempts;
use mcp_state::McpState;

pub(crate) mod attempts;
pub(crate) mod mcp_state;

/// Everything that changes, behind one lock: requests are few and short, and one
/// lock makes "check the key, then commit" orderings easy to reason about.
#[derive(Debug)]
pub(crate) struct State {
    /// The simulator clock, ms since the Unix epoch.
    pub now_ms: i64,
    pub store: Store,
    pub keys: KeyTable,
    pub journal: Journal,
    pub faults: FaultCounters,
    /// Create requests per (tenant, resource, fingerprint): `Effect::attempt`.
    pub attempts: Attempts,
    /// The MCP face's sessions, operations, keys and tasks (empty without `Plan::mcp`).
    pub mcp: McpState,
}

/// What a face beside `/v1` does when the clock moves, under the state lock
/// (the MCP face settles its background tasks). The crate root hands it to
/// [`Shared::new`], so that the core never names the face.
pub(crate) type OnAdvance = fn(&mut State, &Plan);

impl State {
    /// Moves time: settles asynchronous work and forgets expired keys (the
    /// MCP face's keyed tools' too, kept for the retrieval retention: a key
    /// never used again is otherwise never looked at, so never forgotten).
    pub(crate) fn advance_to(&mut self, plan: &Plan, now_ms: i64, on_advance: OnAdvance) {
        self.now_ms = self.now_ms.max(now_ms.min(max_clock_ms()));
        self.store.settle_due(plan, self.now_ms);
        self.keys.expire(retention_ms(plan), self.now_ms);
        if let Some(mcp) = &plan.mcp {
            let mcp_retention_ms =
                i64::try_from(mcp.retrieval.retention.as_millis()).unwrap_or(i64::MAX);
            self.mcp.keys.expire(mcp_retention_ms, self.now_ms);
        }
        on_advance(self, plan);
    }
}

/// The plan's key retention in ms.
pub(crate) fn retention_ms(plan: &Plan) -> i64 {
    i64::try_from(plan.idempotency.retention.as_millis()).unwrap_or(i64::MAX)
}

/// Tracks every task so that shutdown can wait for them and drop can abort them.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    set: Mutex<TaskSet>,
}

#[derive(Debug, Default)]
struct TaskSet {
    tasks: JoinSet<()>,
    /// Set by [`Tasks::abort_all`]: work handed over afterwards is dropped, as
    /// it would have been aborted had it been a task already.
    aborted: bool,
}

impl Tasks {
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut set = lock(&self.set);
        // Reap finished tasks so the set stays as small as the live work.
        while set.tasks.try_join_next().is_some() {}
        set.tasks.spawn(task);
    }

    /// Runs `task` to its end in a task of its own, from a `Drop`: nothing when
    /// the simulator was dropped (its tasks are aborted) or no runtime is left.
    pub(crate) fn spawn_detached(&self, task: impl Future<Output = ()> + Send + 'static) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut set = lock(&self.set);
        if set.aborted {
            return;
        }
        while set.tasks.try_join_next().is_some() {}
        set.tasks.spawn_on(task, &runtime);
    }

    /// Waits for every task, including tasks spawned while waiting.
    pub(crate) async fn wait_all(&self) {
        loop {
            let mut tasks = std::mem::take(&mut lock(&self.set).tasks);
            if tasks.is_empty() {
                return;
            }
            while tasks.join_next().await.is_some() {}
        }
    }

    pub(crate) fn abort_all(&self) {
        let mut set = lock(&self.set);
        set.aborted = true;
        set.tasks.abort_all();
    }
}

/// One simulator's shared state.
pub(crate) struct Shared {
    pub plan: Plan,
    pub state: Mutex<State>,
    pub hook: RwLock<Option<CommitHook>>,
    pub started: Instant,
    pub shutdown: watch::Receiver<bool>,
    pub control_token: Option<String>,
    pub webhook_key: Option<Vec<u8>>,
    /// The MCP face's work when the clock moves (see [`OnAdvance`]).
    pub on_advance: OnAdvance,
    pub tasks: Tasks,
    /// Bumped whenever a response ends, so the harness can wait for one
    /// request's end without polling.
    pub finished: watch::Sender<u64>,
    /// The harness's steps, for step-scoped faults, gathers and parked holds.
    pub stage: crate::stage::Stage,
    /// Bumped after every commit and every clock move (which may settle
    /// objects): whatever may have produced an event, so that the harness can
    /// wait for the event a webhook step delivers without polling.
    pub committed: watch::Sender<u64>,
    /// Bumped whenever the clock moves, so that an MCP `tasks/result` waiting
    /// for a task's end wakes up without polling.
    pub clock_moved: watch::Sender<u64>,
    /// `State::now_ms`, mirrored so that a response's `Date` header does not
    /// take the state lock a further time per request (at 64 connections the
    /// lock is contended). Written only under the lock, right after the clock
    /// moves, so whoever took the lock after a move reads the moved clock.
    pub clock_ms: AtomicI64,
    /// The plan's tenants as shared text, so that naming a request's tenant
    /// is a reference count rather than a copy of its credential.
    pub tenants: Box<[SharedStr]>,
    /// The profile's idempotency-key header name, parsed once: a lookup by
    /// a `&str` name parses and lower-cases the name again each time, and
    /// every request looks the key up (`None` only for a name no header may
    /// have, which a checked profile never gives; it is then looked up as
    /// text).
    key_header: Option<HeaderName>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl Shared {
    /// A simulator's state at its start: the clock at the plan's start, the
    /// store holding the seed objects, nothing journaled.
    pub(crate) fn new(
        plan: Plan,
        store: Store,
        shutdown: watch::Receiver<bool>,
        control_token: Option<String>,
        webhook_key: Option<Vec<u8>>,
        on_advance: OnAdvance,
    ) -> Shared {
        let clock_ms = AtomicI64::new(plan.clock_start_ms);
        let state = State {
            now_ms: plan.clock_start_ms,
            store,
            keys: KeyTable::default(),
            journal: Journal::default(),
            faults: FaultCounters::new(plan.faults.len()),
            attempts: Attempts::new(plan.limits.max_objects),
            mcp: McpState::new(&plan),
        };
        let tenants = plan
            .tenants
            .iter()
            .map(|t| SharedStr::from(t.as_str()))
            .collect();
        let key_header = HeaderName::from_bytes(plan.profile.keys.header.as_bytes()).ok();
        Shared {
            tenants,
            key_header,
            plan,
            state: Mutex::new(state),
            hook: RwLock::new(None),
            started: Instant::now(),
            shutdown,
            control_token,
            webhook_key,
            on_advance,
            tasks: Tasks::default(),
            finished: watch::channel(0).0,
            committed: watch::channel(0).0,
            stage: crate::stage::Stage::default(),
            clock_moved: watch::channel(0).0,
            clock_ms,
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The values `headers` holds for the profile's idempotency-key header,
    /// in the order sent.
    pub(crate) fn key_values<'h>(&self, headers: &'h HeaderMap) -> GetAll<'h, HeaderValue> {
        match &self.key_header {
            Some(name) => headers.get_all(name),
            None => headers.get_all(self.plan.profile.keys.header.as_str()),
        }
    }

    /// The simulator clock without taking the state lock (see `clock_ms`).
    pub(crate) fn now_ms(&self) -> i64 {
        self.clock_ms.load(Ordering::Acquire)
    }

    /// Real ms since the simulator started (journal timings).
    pub(crate) fn real_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Records how request `seq`'s response ended.
    pub(crate) fn finish(&self, seq: u64, fate: ResponseFate) {
        let real_end_ms = self.real_ms();
        let mut state = self.state();
        state.journal.finish(seq, fate, real_end_ms);
        // Waking the watchers costs a lock per slot of tokio's watch channel,
        // on every response, for waits that happen only between harness steps.
        // Nobody subscribed means nobody to wake: a waiter subscribes before it
        // reads the journal under this lock, so either it reads this end or it
        // was counted before the lock was taken here.
        let watched = self.finished.receiver_count() > 0;
        drop(state);
        if watched {
            self.finished.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Wakes whoever waits for an effect or an event (see `committed`); free
    /// when nobody waits, as on every run without a parallel webhook step.
    pub(crate) fn announce_commit(&self) {
        if self.committed.receiver_count() > 0 {
            self.committed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// True once request `seq` has ended (or does not exist).
    pub(crate) fn is_done(&self, seq: u64) -> bool {
        !self.state().journal.is_open(seq)
    }

    pub(crate) fn advance(&self, by: Duration) -> i64 {
        let by_ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        let mut state = self.state();
        let target = state.now_ms.saturating_add(by_ms);
        state.advance_to(&self.plan, target, self.on_advance);
        let now_ms = state.now_ms;
        self.clock_ms.store(now_ms, Ordering::Release);
        drop(state);
        self.clock_moved.send_modify(|n| *n = n.wrapping_add(1));
        self.announce_commit();
        now_ms
    }

    pub(crate) fn hook(&self) -> Option<CommitHook> {
        read(&self.hook).clone()
    }
}

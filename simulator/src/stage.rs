//! The harness's steps as the simulator sees them: which step runs, how many
//! adapter calls of it are still alive, which steps have ended, and the
//! requests that wait for one another (`gather`) or for a step's end.
//!
//! A `during` hold ties a call of a `parallel` step to another call's request:
//! the harness arms it with a matcher; the first request of the step that
//! matches and reaches its answer (a lookup read, a create committed) is
//! held there, the harness starts its call, and the answer goes once that
//! call has returned. The order is made, not hoped for.
//!
//! Faults that count requests describe one adapter's design; faults scoped to
//! a step describe a situation that arises for every design. This is what lets
//! a rule say "every create during step 1" or "hold this key in flight until
//! step 2 is over" or "let the two reconcilers' searches meet".

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;

use crate::faults::{fields_match, RequestFacts};
use crate::plan::Match;
use crate::sync::lock;

/// Shared by every request task and the harness.
#[derive(Debug)]
pub(crate) struct Stage {
    state: Mutex<StageState>,
    /// `StageState::step` mirrored (`NO_STEP` for `None`), written under the
    /// lock: every request reads the step, and a lock per request for a value
    /// that changes only between harness steps would be needless contention.
    step_now: AtomicU64,
    /// Bumped on every change that a waiting request may be waiting for.
    changed: watch::Sender<u64>,
    /// How many `during` holds wait for their request: every request reads
    /// it, and only when one does is the lock taken to match them.
    armed: AtomicUsize,
}

#[derive(Debug, Default)]
struct StageState {
    /// The step that runs now; `None` between steps and outside a harness.
    step: Option<u32>,
    /// Every step up to this one has ended.
    ended_through: u32,
    /// Adapter calls of the running step that have not returned yet; `None`
    /// when nobody said (then a gather waits for its count or its bound).
    live_calls: Option<usize>,
    /// Per gather rule: how many requests wait now, and how many groups left.
    gathers: HashMap<usize, Gathering>,
    /// Requests held until a step ends: journal seq → that step.
    parked: BTreeMap<u64, u32>,
    /// The running step's `during` holds, by the id `arm_during` gave.
    during: Vec<During>,
}

/// Most `during` holds in one step (a `parallel` step has at most 16 calls):
/// a request's candidates are a bit set of this width.
pub(crate) const MAX_DURING: usize = 16;

/// One `during` hold: which request it waits for, and where it is.
#[derive(Debug)]
struct During {
    when: Match,
    state: DuringState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DuringState {
    /// No request held yet.
    Armed,
    /// Request `seq` is held with its answer until the hold is released.
    Held(u64),
    /// The harness's call returned (or it gave up waiting): nothing is held.
    Released,
}

#[derive(Debug, Default, Clone, Copy)]
struct Gathering {
    waiting: u32,
    /// Incremented when a group is let go; a waiter goes once it changes.
    generation: u64,
}

/// How a gathered request's wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GatherEnd {
    /// Enough requests met, or nobody else could come.
    Met,
    /// The bound passed first.
    TimedOut,
}

impl Default for Stage {
    fn default() -> Self {
        Stage {
            state: Mutex::new(StageState::default()),
            step_now: AtomicU64::new(NO_STEP),
            changed: watch::channel(0).0,
            armed: AtomicUsize::new(0),
        }
    }
}

/// `Stage::step_now` when no step runs.
const NO_STEP: u64 = u64::MAX;

impl Stage {
    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The step that runs now.
    pub(crate) fn step(&self) -> Option<u32> {
        u32::try_from(self.step_now.load(Ordering::Acquire)).ok()
    }

    /// Sets the running step, in the state and in its mirror (under the lock).
    fn set_step(&self, state: &mut StageState, step: Option<u32>) {
        state.step = step;
        self.step_now
            .store(step.map_or(NO_STEP, u64::from), Ordering::Release);
    }

    /// Step `number` starts; `calls` adapter calls of it are alive.
    pub(crate) fn begin_step(&self, number: u32, calls: Option<usize>) {
        {
            let mut state = lock(&self.state);
            self.set_step(&mut state, Some(number));
            state.live_calls = calls;
            state.gathers.clear();
            Self::release_all(&self.armed, &mut state);
            state.during.clear();
        }
        self.bump();
    }

    /// One of the running step's calls has returned.
    pub(crate) fn call_ended(&self) {
        {
            let mut state = lock(&self.state);
            if let Some(live) = state.live_calls.as_mut() {
                *live = live.saturating_sub(1);
            }
            let live = state.live_calls;
            for gathering in state.gathers.values_mut() {
                if live
                    .is_some_and(|live| gathering.waiting > 0 && gathering.waiting as usize >= live)
                {
                    gathering.waiting = 0;
                    gathering.generation = gathering.generation.wrapping_add(1);
                }
            }
        }
        self.bump();
    }

    /// Step `number` has ended: requests parked until then go on.
    pub(crate) fn end_step(&self, number: u32) {
        {
            let mut state = lock(&self.state);
            state.ended_through = state.ended_through.max(number);
            if state.step == Some(number) {
                self.set_step(&mut state, None);
                state.live_calls = None;
            }
            // A held answer never outlives its step.
            Self::release_all(&self.armed, &mut state);
        }
        self.bump();
    }

    fn release_all(armed: &AtomicUsize, state: &mut StageState) {
        for during in &mut state.during {
            if during.state == DuringState::Armed {
                armed.fetch_sub(1, Ordering::AcqRel);
            }
            during.state = DuringState::Released;
        }
    }

    /// Arms a `during` hold for the running step: the first request of the
    /// step matching `when` that reaches its answer is held there. Returns
    /// its id, or `None` past [`MAX_DURING`] holds in one step.
    pub(crate) fn arm_during(&self, when: Match) -> Option<usize> {
        let id = {
            let mut state = lock(&self.state);
            if state.during.len() >= MAX_DURING {
                return None;
            }
            state.during.push(During {
                when,
                state: DuringState::Armed,
            });
            self.armed.fetch_add(1, Ordering::AcqRel);
            state.during.len() - 1
        };
        self.bump();
        Some(id)
    }

    /// The armed holds a request with these facts may be held for, as a bit
    /// set (0, without taking the lock, when none is armed).
    pub(crate) fn during_candidates(&self, facts: &RequestFacts<'_>) -> u16 {
        if self.armed.load(Ordering::Acquire) == 0 {
            return 0;
        }
        let state = lock(&self.state);
        state
            .during
            .iter()
            .enumerate()
            .filter(|(_, d)| d.state == DuringState::Armed && fields_match(&d.when, facts))
            .fold(0, |mask, (id, _)| mask | (1 << id))
    }

    /// Request `seq`, whose answer is ready, takes the first hold of `mask`
    /// still armed; its id, if one was.
    pub(crate) fn claim_during(&self, mask: u16, seq: u64) -> Option<usize> {
        let id = {
            let mut state = lock(&self.state);
            let (id, during) = state
                .during
                .iter_mut()
                .enumerate()
                .find(|(id, d)| mask & (1 << id) != 0 && d.state == DuringState::Armed)?;
            during.state = DuringState::Held(seq);
            self.armed.fetch_sub(1, Ordering::AcqRel);
            id
        };
        self.bump();
        Some(id)
    }

    /// Waits until hold `id` holds a request (its seq) or was released first (`None`).
    pub(crate) async fn wait_during_held(&self, id: usize) -> Option<u64> {
        let mut changed = self.changed.subscribe();
        loop {
            match lock(&self.state).during.get(id).map(|d| d.state) {
                Some(DuringState::Held(seq)) => return Some(seq),
                Some(DuringState::Released) | None => return None,
                Some(DuringState::Armed) => {}
            }
            if changed.changed().await.is_err() {
                return None;
            }
        }
    }

    /// Ends hold `id`: its held answer goes, or, not taken yet, it takes none.
    pub(crate) fn release_during(&self, id: usize) {
        {
            let mut state = lock(&self.state);
            if let Some(during) = state.during.get_mut(id) {
                if during.state == DuringState::Armed {
                    self.armed.fetch_sub(1, Ordering::AcqRel);
                }
                during.state = DuringState::Released;
            }
        }
        self.bump();
    }

    /// Holds the answer of the request that took hold `id` until the hold is
    /// released, or `cap` passes, or `shutdown`.
    pub(crate) async fn hold_during(
        &self,
        id: usize,
        cap: Duration,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let mut changed = self.changed.subscribe();
        let wait = async {
            loop {
                let held = lock(&self.state)
                    .during
                    .get(id)
                    .is_some_and(|d| matches!(d.state, DuringState::Held(_)));
                if !held || changed.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            () = wait => {}
            () = tokio::time::sleep(cap) => {}
            _ = shutdown.wait_for(|down| *down) => {}
        }
    }

    /// Requests parked until a step that has not ended yet.
    pub(crate) fn parked_beyond_now(&self) -> Vec<u64> {
        let state = lock(&self.state);
        state
            .parked
            .iter()
            .filter(|(_, step)| **step > state.ended_through)
            .map(|(seq, _)| *seq)
            .collect()
    }

    /// Holds request `seq` until step `step` has ended, or `cap` passes, or
    /// `shutdown`. Returns true when the step ended.
    pub(crate) async fn park_until_step_end(
        &self,
        seq: u64,
        step: u32,
        cap: Duration,
        mut shutdown: watch::Receiver<bool>,
    ) -> bool {
        lock(&self.state).parked.insert(seq, step);
        let mut changed = self.changed.subscribe();
        let wait = async {
            loop {
                if lock(&self.state).ended_through >= step {
                    return;
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        };
        let ended = tokio::select! {
            () = wait => true,
            () = tokio::time::sleep(cap) => false,
            _ = shutdown.wait_for(|down| *down) => false,
        };
        lock(&self.state).parked.remove(&seq);
        ended && lock(&self.state).ended_through >= step
    }

    /// Holds a request matched by gather rule `rule` until `requests` wait
    /// together, or every live call of the step is waiting here (nobody else
    /// can come), or `at_most` passes.
    pub(crate) async fn gather(
        &self,
        rule: usize,
        requests: u32,
        at_most: Duration,
        mut shutdown: watch::Receiver<bool>,
    ) -> GatherEnd {
        let mine = {
            let mut state = lock(&self.state);
            let live = state.live_calls;
            let gathering = state.gathers.entry(rule).or_default();
            gathering.waiting = gathering.waiting.saturating_add(1);
            let generation = gathering.generation;
            let met = gathering.waiting >= requests
                || live.is_some_and(|live| gathering.waiting as usize >= live);
            if met {
                gathering.waiting = 0;
                gathering.generation = gathering.generation.wrapping_add(1);
            }
            (generation, met)
        };
        if mine.1 {
            self.bump();
            return GatherEnd::Met;
        }
        let mut changed = self.changed.subscribe();
        let released = |state: &StageState| {
            state
                .gathers
                .get(&rule)
                .is_none_or(|g| g.generation != mine.0)
        };
        let wait = async {
            loop {
                if released(&lock(&self.state)) {
                    return;
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        };
        let met = tokio::select! {
            () = wait => true,
            () = tokio::time::sleep(at_most) => false,
            _ = shutdown.wait_for(|down| *down) => false,
        };
        if met {
            return GatherEnd::Met;
        }
        let mut state = lock(&self.state);
        if released(&state) {
            return GatherEnd::Met;
        }
        if let Some(gathering) = state.gathers.get_mut(&rule) {
            gathering.waiting = gathering.waiting.saturating_sub(1);
        }
        GatherEnd::TimedOut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tokio_test::{assert_pending, assert_ready_eq, task};

    /// A shutdown signal that never fires: the sender lives as long as the
    /// process (a dropped sender reads as "shut down").
    fn no_shutdown() -> watch::Receiver<bool> {
        static SENDER: std::sync::OnceLock<watch::Sender<bool>> = std::sync::OnceLock::new();
        SENDER.get_or_init(|| watch::channel(false).0).subscribe()
    }

    #[tokio::test]
    async fn two_requests_meet_and_go_together() {
        let stage = Arc::new(Stage::default());
        stage.begin_step(1, Some(2));
        let first = {
            let stage = stage.clone();
            tokio::spawn(async move {
                stage
                    .gather(0, 2, Duration::from_secs(30), no_shutdown())
                    .await
            })
        };
        tokio::task::yield_now().await;
        let second = stage
            .gather(0, 2, Duration::from_secs(30), no_shutdown())
            .await;
        assert_eq!(second, GatherEnd::Met);
        assert_eq!(first.await.ok(), Some(GatherEnd::Met));
    }

    #[tokio::test]
    async fn a_lone_request_goes_once_no_other_call_is_alive() {
        let stage = Arc::new(Stage::default());
        stage.begin_step(1, Some(2));
        let waiter = {
            let stage = stage.clone();
            tokio::spawn(async move {
                stage
                    .gather(0, 2, Duration::from_secs(30), no_shutdown())
                    .await
            })
        };
        // Let the waiter register, then the other call returns without a request.
        while lock(&stage.state)
            .gathers
            .get(&0)
            .is_none_or(|g| g.waiting == 0)
        {
            tokio::task::yield_now().await;
        }
        stage.call_ended();
        assert_eq!(waiter.await.ok(), Some(GatherEnd::Met));
    }

    #[tokio::test]
    async fn without_step_facts_a_lone_request_waits_for_its_bound() {
        let stage = Stage::default();
        let end = stage
            .gather(0, 2, Duration::from_millis(20), no_shutdown())
            .await;
        assert_eq!(end, GatherEnd::TimedOut);
    }

    #[tokio::test]
    async fn a_parked_request_goes_when_its_step_ends() {
        let stage = Arc::new(Stage::default());
        stage.begin_step(1, None);
        let parked = {
            let stage = stage.clone();
            tokio::spawn(async move {
                stage
                    .park_until_step_end(7, 2, Duration::from_secs(30), no_shutdown())
                    .await
            })
        };
        while stage.parked_beyond_now().is_empty() {
            tokio::task::yield_now().await;
        }
        stage.end_step(1);
        assert_eq!(stage.parked_beyond_now(), vec![7]);
        stage.begin_step(2, None);
        stage.end_step(2);
        assert_eq!(parked.await.ok(), Some(true));
        assert!(stage.parked_beyond_now().is_empty());
    }

    // The tests below poll by hand (tokio-test), so they say exactly when a
    // held request must still wait and which event lets it go. They run inside
    // a runtime only because the holds' bounds are tokio timers.

    #[tokio::test]
    async fn a_parked_request_stays_pending_until_its_own_step_ends() {
        let stage = Stage::default();
        stage.begin_step(1, None);
        let mut park =
            task::spawn(stage.park_until_step_end(7, 2, Duration::from_secs(30), no_shutdown()));
        assert_pending!(park.poll());
        assert_eq!(stage.parked_beyond_now(), vec![7]);

        // An earlier step ending, or the awaited one starting, lets nothing go.
        stage.end_step(1);
        assert_pending!(park.poll());
        stage.begin_step(2, None);
        assert_pending!(park.poll());

        stage.end_step(2);
        assert!(park.is_woken());
        assert_ready_eq!(park.poll(), true);
        assert!(stage.parked_beyond_now().is_empty());
    }

    #[tokio::test]
    async fn a_parked_request_gives_up_at_shutdown() {
        let stage = Stage::default();
        let (shutdown, shutdown_rx) = watch::channel(false);
        let mut park =
            task::spawn(stage.park_until_step_end(7, 1, Duration::from_secs(30), shutdown_rx));
        assert_pending!(park.poll());
        let _ = shutdown.send(true);
        assert!(park.is_woken());
        assert_ready_eq!(park.poll(), false);
        assert!(stage.parked_beyond_now().is_empty());
    }

    #[tokio::test]
    async fn a_gather_stays_pending_until_the_second_request_arrives() {
        let stage = Stage::default();
        // Three calls alive: the first request cannot be the last one able to come.
        stage.begin_step(1, Some(3));
        let mut first = task::spawn(stage.gather(0, 2, Duration::from_secs(30), no_shutdown()));
        assert_pending!(first.poll());
        // Another rule's request is not this gather's partner.
        let mut other = task::spawn(stage.gather(1, 2, Duration::from_secs(30), no_shutdown()));
        assert_pending!(other.poll());
        assert_pending!(first.poll());

        let mut second = task::spawn(stage.gather(0, 2, Duration::from_secs(30), no_shutdown()));
        assert_ready_eq!(second.poll(), GatherEnd::Met);
        assert!(first.is_woken());
        assert_ready_eq!(first.poll(), GatherEnd::Met);
        assert_pending!(other.poll());
    }

    #[tokio::test]
    async fn a_gather_stays_pending_until_no_other_call_can_come() {
        let stage = Stage::default();
        stage.begin_step(1, Some(3));
        let mut waiter = task::spawn(stage.gather(0, 2, Duration::from_secs(30), no_shutdown()));
        assert_pending!(waiter.poll());

        // Two calls are still alive, so a partner may still come.
        stage.call_ended();
        assert_pending!(waiter.poll());

        // Only the waiter's own call is left.
        stage.call_ended();
        assert!(waiter.is_woken());
        assert_ready_eq!(waiter.poll(), GatherEnd::Met);
    }
}

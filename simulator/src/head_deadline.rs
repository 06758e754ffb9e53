//! The deadline for each request's head, kept on the connection and armed
//! lazily.
//!
//! hyper bounds the wait for a request's head (the plan's read deadline)
//! with a timer it asks for at every head: a boxed sleep made, registered in
//! the runtime's timer wheel while the head is awaited, and taken out of the
//! wheel again when the head arrives, under the wheel's lock both times.
//! That is two wheel operations and an allocation for every request on a
//! kept-alive connection, whose next head nearly always arrives long before
//! its deadline. Here hyper's timer ([`HeadTimer`]) only writes the deadline
//! down on the connection ([`HeadDeadline`]), and one timer per connection
//! ([`HeadWatch`]) stays armed at the earliest deadline it has seen: when it
//! comes due, a head still awaited past its deadline is late (hyper's sleep
//! ends and hyper closes the connection, as with its own timer), and a later
//! deadline only moves the timer on. The wheel sees about one operation per
//! read deadline per connection instead of two per request.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::time::{Instant, Sleep};

/// When the head a connection awaits is late, if it awaits one. It lives
/// on the connection's shared state (`Conn`), which the timer, its sleeps
/// and the watch each hold through an `Arc`, so that it costs the
/// connection no allocation of its own.
#[derive(Debug)]
pub(crate) struct HeadDeadline {
    /// Where `due` counts from.
    base: Instant,
    /// When the awaited head is late, in nanoseconds after `base` (at least
    /// 1); 0 while no head is awaited.
    due: AtomicU64,
    /// The `due` that came while its head was still awaited; 0 if none.
    expired: AtomicU64,
}

impl HeadDeadline {
    pub(crate) fn new() -> HeadDeadline {
        HeadDeadline {
            base: Instant::now(),
            due: AtomicU64::new(0),
            expired: AtomicU64::new(0),
        }
    }

    /// A head is awaited until `deadline`; returns the mark that stands for it.
    fn await_head_until(&self, deadline: Instant) -> u64 {
        let since_base = deadline.saturating_duration_since(self.base).as_nanos();
        let due = u64::try_from(since_base).unwrap_or(u64::MAX).max(1);
        self.due.store(due, Ordering::Release);
        due
    }

    /// The head awaited under `due` arrived (or hyper stopped waiting for
    /// it); a newer wait is left as it is.
    fn stop_awaiting(&self, due: u64) {
        let _ = self
            .due
            .compare_exchange(due, 0, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// The mark of the awaited head's deadline; 0 while none is awaited.
    fn due(&self) -> u64 {
        self.due.load(Ordering::Acquire)
    }

    /// The instant a mark stands for.
    fn instant(&self, due: u64) -> Instant {
        self.base + std::time::Duration::from_nanos(due)
    }

    fn expire(&self, due: u64) {
        self.expired.store(due, Ordering::Release);
    }

    fn has_expired(&self, due: u64) -> bool {
        self.expired.load(Ordering::Acquire) == due
    }
}

/// hyper's timer for one connection, whose state `C` holds the deadline:
/// its sleeps end when the connection's [`HeadWatch`] finds their deadline
/// passed. hyper uses a server's timer for the head's deadline alone.
pub(crate) struct HeadTimer<C>(pub(crate) Arc<C>);

impl<C: AsRef<HeadDeadline> + Send + Sync + 'static> hyper::rt::Timer for HeadTimer<C> {
    fn sleep(&self, duration: std::time::Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until((Instant::now() + duration).into_std())
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        let due = (*self.0).as_ref().await_head_until(deadline.into());
        Box::pin(HeadSleep {
            conn: self.0.clone(),
            due,
        })
    }

    /// tokio's clock, as the watch's timer keeps it (paused in tests).
    fn now(&self) -> std::time::Instant {
        Instant::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, deadline: std::time::Instant) {
        match sleep.as_mut().downcast_mut_pin::<HeadSleep<C>>() {
            Some(mut head) => head.due = (*self.0).as_ref().await_head_until(deadline.into()),
            None => *sleep = self.sleep_until(deadline),
        }
    }
}

/// One head's wait as hyper holds it: over once the watch expired it.
/// Dropped (the head arrived), it stops the wait it stands for.
struct HeadSleep<C: AsRef<HeadDeadline>> {
    conn: Arc<C>,
    due: u64,
}

impl<C: AsRef<HeadDeadline>> Future for HeadSleep<C> {
    type Output = ();

    /// The watch wakes the task when it expires the wait, so nothing is
    /// registered here.
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if (*self.conn).as_ref().has_expired(self.due) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl<C: AsRef<HeadDeadline> + Send + Sync + 'static> hyper::rt::Sleep for HeadSleep<C> {}

impl<C: AsRef<HeadDeadline>> Drop for HeadSleep<C> {
    fn drop(&mut self) {
        (*self.conn).as_ref().stop_awaiting(self.due);
    }
}

/// The connection's one timer for its heads' deadlines; never ends. Polled
/// beside hyper at every wake of the connection's task, after hyper, so
/// that a wait hyper has just begun is armed in the same poll.
pub(crate) struct HeadWatch<C> {
    conn: Arc<C>,
    /// Made on the first wait. Once polled it stays registered with the
    /// task's waker until it fires, so between fires it is only looked at.
    timer: Option<Pin<Box<Sleep>>>,
    /// The mark of the deadline the timer is set at; 0 while it is not armed.
    armed_for: u64,
}

impl<C: AsRef<HeadDeadline>> HeadWatch<C> {
    pub(crate) fn new(conn: Arc<C>) -> HeadWatch<C> {
        HeadWatch {
            conn,
            timer: None,
            armed_for: 0,
        }
    }

    fn deadline(&self) -> &HeadDeadline {
        (*self.conn).as_ref()
    }

    /// Sets the timer at the deadline `due` marks (made now if this is its
    /// first use) and registers it; true if that deadline has already come.
    fn arm(&mut self, due: u64, cx: &mut Context<'_>) -> bool {
        let at = self.deadline().instant(due);
        let timer = match &mut self.timer {
            Some(timer) => {
                timer.as_mut().reset(at);
                timer
            }
            None => self.timer.insert(Box::pin(tokio::time::sleep_until(at))),
        };
        self.armed_for = due;
        // Outside tokio's cooperative budget: a task that spent it would see
        // this poll return pending before the timer registered its waker,
        // and the timer would then come due without waking anyone.
        let mut registering = tokio::task::unconstrained(timer.as_mut());
        Pin::new(&mut registering).poll(cx).is_ready()
    }

    /// The timer came due: expires the awaited head if its deadline has
    /// passed (true), or leaves the timer unarmed for the loop to move on.
    fn came_due(&mut self, cx: &mut Context<'_>) -> bool {
        self.armed_for = 0;
        let due = self.deadline().due();
        if due != 0 && self.deadline().instant(due) <= Instant::now() {
            self.deadline().expire(due);
            // hyper, polled before this in the same poll, finds its sleep
            // over when polled again.
            cx.waker().wake_by_ref();
            return true;
        }
        false
    }
}

impl<C: AsRef<HeadDeadline>> Future for HeadWatch<C> {
    type Output = Infallible;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Infallible> {
        let this = self.get_mut();
        loop {
            // The common case (armed no later than the awaited deadline, not
            // yet due) is a load, a comparison and a look at the timer.
            let due = this.deadline().due();
            let fired = match this.armed_for {
                0 if due == 0 => return Poll::Pending,
                // Deadlines only move later; one moved earlier is armed anew.
                armed if armed == 0 || (due != 0 && due < armed) => this.arm(due, cx),
                _ => this.timer.as_ref().is_some_and(|timer| timer.is_elapsed()),
            };
            // A later deadline than the one that came: the loop arms it.
            if !fired || this.came_due(cx) {
                return Poll::Pending;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use futures::task::{waker, ArcWake};
    use hyper::rt::Timer;

    use super::*;

    struct CountWakes(AtomicUsize);

    impl ArcWake for CountWakes {
        fn wake_by_ref(arc_self: &Arc<Self>) {
            arc_self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl AsRef<HeadDeadline> for HeadDeadline {
        fn as_ref(&self) -> &HeadDeadline {
            self
        }
    }

    type Watch = HeadWatch<HeadDeadline>;

    /// A watch, hyper's timer on the same deadline, and a waker that counts.
    fn watch() -> (Watch, HeadTimer<HeadDeadline>, Arc<CountWakes>) {
        let deadline = Arc::new(HeadDeadline::new());
        (
            HeadWatch::new(deadline.clone()),
            HeadTimer(deadline),
            Arc::new(CountWakes(AtomicUsize::new(0))),
        )
    }

    fn poll_watch(watch: &mut Watch, wakes: &Arc<CountWakes>) {
        let waker = waker(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(watch).poll(&mut cx).is_pending());
    }

    /// Polls the watch as its task would be polled: only if something woke
    /// the task since `seen` wakes.
    fn poll_if_woken(watch: &mut Watch, wakes: &Arc<CountWakes>, seen: &mut usize) {
        let now = wakes.0.load(Ordering::SeqCst);
        if now > *seen {
            *seen = now;
            poll_watch(watch, wakes);
        }
    }

    fn is_over(sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>) -> bool {
        let waker = futures::task::noop_waker();
        sleep
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
    }

    const LIMIT: Duration = Duration::from_secs(5);

    #[tokio::test(start_paused = true)]
    async fn a_head_still_awaited_at_its_deadline_ends_hyper_s_sleep_then_and_not_before() {
        let (mut watch, timer, wakes) = watch();
        let mut seen = 0;
        let mut sleep = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        tokio::time::advance(LIMIT - Duration::from_millis(1)).await;
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0, "woken early");
        assert!(!is_over(&mut sleep), "over a millisecond early");
        tokio::time::advance(Duration::from_millis(1)).await;
        // The timer's wake reaches the task, whose poll polls the watch.
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(is_over(&mut sleep), "not over at the deadline");
        // The watch woke the task again, for hyper to find its sleep over.
        assert!(wakes.0.load(Ordering::SeqCst) > seen);
    }

    #[tokio::test(start_paused = true)]
    async fn heads_that_keep_arriving_in_time_never_end_a_sleep() {
        let (mut watch, timer, wakes) = watch();
        let mut seen = 0;
        // A head every second for twenty seconds, four times the deadline:
        // each wait is over in time, though the watch's timer, set at the
        // first deadline, comes due in the middle of later waits. Each wait
        // begins in a poll of the task (hyper's), which polls the watch too;
        // between them, the task is polled only when the watch woke it.
        for _ in 0..20 {
            let mut sleep = timer.sleep(LIMIT);
            poll_watch(&mut watch, &wakes);
            tokio::time::advance(Duration::from_secs(1)).await;
            poll_if_woken(&mut watch, &wakes, &mut seen);
            assert!(!is_over(&mut sleep));
            drop(sleep);
        }
        // Then the connection idles: the last wait ends at its own deadline,
        // though the timer last came due before it.
        let mut sleep = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        tokio::time::advance(LIMIT - Duration::from_millis(1)).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(!is_over(&mut sleep));
        tokio::time::advance(Duration::from_millis(1)).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(is_over(&mut sleep));
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_that_comes_due_before_the_awaited_deadline_moves_on_to_it() {
        let (mut watch, timer, wakes) = watch();
        let mut seen = 0;
        let first = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        tokio::time::advance(Duration::from_secs(1)).await;
        // The next head's wait begins a second later; the timer stays where it is.
        drop(first);
        let mut second = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        tokio::time::advance(LIMIT - Duration::from_secs(1)).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(!is_over(&mut second), "over at the first wait's deadline");
        tokio::time::advance(Duration::from_secs(1)).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(is_over(&mut second), "not over at its own deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_that_arrived_is_not_late_when_the_timer_comes_due() {
        let (mut watch, timer, wakes) = watch();
        let mut seen = 0;
        let sleep = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        drop(sleep);
        tokio::time::advance(LIMIT * 2).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        // The timer's own wake, and nothing after it: nothing expired, and
        // no wake asked hyper to look.
        assert_eq!(seen, 1);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert_eq!(timer.0.expired.load(Ordering::SeqCst), 0);
        // The next wait arms the timer again and ends at its own deadline.
        let mut sleep = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        tokio::time::advance(LIMIT).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(is_over(&mut sleep));
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_armed_after_the_task_spent_its_budget_still_wakes_it() {
        let (mut watch, timer, wakes) = watch();
        let mut seen = 0;
        let mut sleep = timer.sleep(LIMIT);
        // Within one poll of the task: spend tokio's budget, then arm.
        std::future::poll_fn(|cx| {
            loop {
                let mut spend = std::pin::pin!(tokio::task::consume_budget());
                if spend.as_mut().poll(cx).is_pending() {
                    break;
                }
            }
            poll_watch(&mut watch, &wakes);
            Poll::Ready(())
        })
        .await;
        tokio::time::advance(LIMIT).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(is_over(&mut sleep), "the deadline passed unseen");
    }

    #[tokio::test(start_paused = true)]
    async fn a_reset_to_an_earlier_deadline_is_armed_there() {
        let (mut watch, timer, wakes) = watch();
        let mut seen = 0;
        let mut sleep = timer.sleep(LIMIT);
        poll_watch(&mut watch, &wakes);
        timer.reset(
            &mut sleep,
            (Instant::now() + Duration::from_secs(1)).into_std(),
        );
        poll_watch(&mut watch, &wakes);
        tokio::time::advance(Duration::from_secs(1)).await;
        poll_if_woken(&mut watch, &wakes, &mut seen);
        assert!(is_over(&mut sleep));
    }
}

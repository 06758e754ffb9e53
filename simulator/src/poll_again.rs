//! A future that, when it wakes itself while it is being polled, is polled
//! again at once instead of being handed back to the runtime.
//!
//! hyper wakes its own connection task from inside the task's poll: when the
//! provider takes a request's body, hyper's body channel wakes the sender's
//! side, which is the same task. The runtime then treats the task as woken
//! while it ran: once the poll returns, it puts the task back in its queue,
//! polls it once more for nothing, and on a multi-threaded runtime wakes a
//! parked worker to come and help (an eventfd write or a futex wake, and a
//! thread woken on another core). A connection whose task lives on past
//! hyper (the hold after a lost answer's FIN) would pay all of that for
//! every request. [`PollAgain`] polls its future with a waker of its own: a wake
//! from inside that poll, on the polling thread, only asks for one more
//! round of the loop; any other wake goes to the task.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

/// Most polls in a row within one poll of the task. A future that keeps
/// waking itself (hyper yields this way after a long run of pipelined
/// requests, so that other tasks get a turn) is handed back to the runtime
/// after these, as it asked.
const MOST_POLLS_IN_A_ROW: usize = 4;

/// `future`, polled again at once when it woke itself during its poll.
pub(crate) struct PollAgain<F> {
    future: F,
    wakes: Arc<Wakes>,
    /// The waker handed to `future`, made once: it points at `wakes`.
    waker: Waker,
}

/// Where the wakes of the wrapped future go.
struct Wakes {
    /// Set by a wake from inside the wrapped future's poll, on its thread.
    again: AtomicBool,
    /// The task to wake for any other wake.
    task: AtomicWaker,
}

thread_local! {
    /// The [`Wakes`] whose future this thread is polling, if any.
    static POLLING: Cell<*const Wakes> = const { Cell::new(std::ptr::null()) };
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if POLLING.get() == Arc::as_ptr(self) {
            // Only the polling thread reads it, after the poll that set it.
            self.again.store(true, Ordering::Relaxed);
        } else {
            self.task.wake();
        }
    }
}

/// Marks this thread as polling the future of `wakes` until dropped (a
/// panic included); the mark it replaced comes back, so marks nest.
struct Polling {
    previous: *const Wakes,
}

impl Polling {
    fn enter(wakes: &Arc<Wakes>) -> Polling {
        Polling {
            previous: POLLING.replace(Arc::as_ptr(wakes)),
        }
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        POLLING.set(self.previous);
    }
}

impl<F: Future + Unpin> PollAgain<F> {
    pub(crate) fn new(future: F) -> PollAgain<F> {
        let wakes = Arc::new(Wakes {
            again: AtomicBool::new(false),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(wakes.clone());
        PollAgain {
            future,
            wakes,
            waker,
        }
    }
}

impl<F: Future + Unpin> Future for PollAgain<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        // Stored before the future is polled: a wake from another thread
        // during the poll finds it. Storing the same waker again is a
        // comparison; a wake takes it out, so it is stored on every poll.
        this.wakes.task.register(cx.waker());
        let mut inner = Context::from_waker(&this.waker);
        for _ in 0..MOST_POLLS_IN_A_ROW {
            let polled = {
                let _polling = Polling::enter(&this.wakes);
                Pin::new(&mut this.future).poll(&mut inner)
            };
            if polled.is_ready() {
                return polled;
            }
            if !this.wakes.again.swap(false, Ordering::Relaxed) {
                return Poll::Pending;
            }
        }
        // Still asking for more: the runtime gives the other tasks a turn first.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// Wakes itself on each of its first `self_wakes` polls, then waits for
    /// a wake from outside; ready once `let_go` is set.
    struct Restless {
        polls: Arc<AtomicUsize>,
        self_wakes: usize,
        outside: Arc<std::sync::Mutex<Option<Waker>>>,
        let_go: Arc<AtomicBool>,
    }

    impl Future for Restless {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let polls = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
            if self.let_go.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            if polls <= self.self_wakes {
                cx.waker().wake_by_ref();
            } else {
                *crate::sync::lock(&self.outside) = Some(cx.waker().clone());
            }
            Poll::Pending
        }
    }

    fn restless(self_wakes: usize) -> Restless {
        Restless {
            polls: Arc::new(AtomicUsize::new(0)),
            self_wakes,
            outside: Arc::new(std::sync::Mutex::new(None)),
            let_go: Arc::new(AtomicBool::new(false)),
        }
    }

    #[test]
    fn a_wake_from_inside_the_poll_polls_again_without_waking_the_task() {
        let future = restless(2);
        let (polls, outside, let_go) = (
            future.polls.clone(),
            future.outside.clone(),
            future.let_go.clone(),
        );
        let mut task = tokio_test::task::spawn(PollAgain::new(future));
        tokio_test::assert_pending!(task.poll());
        assert!(!task.is_woken(), "the self-wakes stayed inside the poll");
        assert_eq!(polls.load(Ordering::SeqCst), 3);

        // A wake from outside the poll reaches the task.
        let_go.store(true, Ordering::SeqCst);
        crate::sync::lock(&outside)
            .take()
            .expect("the future left its waker")
            .wake();
        assert!(task.is_woken());
        tokio_test::assert_ready!(task.poll());
        assert_eq!(polls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn a_future_that_keeps_waking_itself_is_handed_back_to_the_runtime() {
        let future = restless(usize::MAX);
        let polls = future.polls.clone();
        let mut task = tokio_test::task::spawn(PollAgain::new(future));
        tokio_test::assert_pending!(task.poll());
        assert!(task.is_woken(), "the task is woken to be polled later");
        assert_eq!(polls.load(Ordering::SeqCst), MOST_POLLS_IN_A_ROW);
    }

    #[test]
    fn a_wake_from_another_thread_during_the_poll_wakes_the_task() {
        /// Wakes itself from another thread, joined before its poll ends.
        struct WokenFromAfar {
            polls: Arc<AtomicUsize>,
        }
        impl Future for WokenFromAfar {
            type Output = ();
            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
                if self.polls.fetch_add(1, Ordering::SeqCst) > 0 {
                    return Poll::Ready(());
                }
                let waker = cx.waker().clone();
                std::thread::spawn(move || waker.wake())
                    .join()
                    .expect("the waking thread ran");
                Poll::Pending
            }
        }
        let polls = Arc::new(AtomicUsize::new(0));
        let mut task = tokio_test::task::spawn(PollAgain::new(WokenFromAfar {
            polls: polls.clone(),
        }));
        tokio_test::assert_pending!(task.poll());
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        assert!(task.is_woken(), "a wake from elsewhere is the task's");
        tokio_test::assert_ready!(task.poll());
    }
}

//! A future that is polled only when its own waker has fired.
//!
//! A connection's task waits on hyper's connection and, beside it, on
//! signals that almost never come: the simulator shutting down, a fault
//! ending the connection. `select!` polls every branch each time the task
//! wakes, and a wait on a `watch` or `Notify` takes the waiters' lock on
//! every poll; hyper's socket wakes the task once or twice per request, so
//! polling the signals each time would cost hundreds of instructions per
//! request. [`WhenWoken`] gives the inner future a waker of its own, so a
//! wake that belongs to another branch costs it a pointer comparison and a
//! plain load.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::sync::lock;

/// `future`, polled on its first poll and then only after it woke itself.
/// Polled again after it finished, it polls `future` again only if that
/// woke it: like most futures, it is not meant to be polled past its end.
pub(crate) struct WhenWoken<F> {
    future: F,
    signal: Arc<Signal>,
    /// The waker handed to `future`, made once: it points at `signal`.
    waker: Waker,
    /// The task's waker as last stored in `signal`: a task polls with the
    /// same waker every time, and comparing it is two pointers where storing
    /// it again takes a lock.
    task: Option<Waker>,
}

/// Whether the inner future woke since it was last polled, and the task to
/// wake when it does.
struct Signal {
    woken: AtomicBool,
    /// Woken by reference, never taken out: [`WhenWoken`] stores it only when
    /// the task's waker changes, so it must still be there for a second wake.
    task: Mutex<Option<Waker>>,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        // Woken outside the lock: a waker may do anything, polling included.
        let task = lock(&self.task).clone();
        if let Some(task) = task {
            task.wake();
        }
    }
}

impl<F: Future + Unpin> WhenWoken<F> {
    pub(crate) fn new(future: F) -> WhenWoken<F> {
        let signal = Arc::new(Signal {
            woken: AtomicBool::new(true),
            task: Mutex::new(None),
        });
        let waker = Waker::from(signal.clone());
        WhenWoken {
            future,
            signal,
            waker,
            task: None,
        }
    }
}

impl<F: Future + Unpin> Future for WhenWoken<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        // The task's waker is stored before the flag is read: a wake that
        // lands between the two finds it and wakes the task again.
        if !this
            .task
            .as_ref()
            .is_some_and(|task| task.will_wake(cx.waker()))
        {
            *lock(&this.signal.task) = Some(cx.waker().clone());
            this.task = Some(cx.waker().clone());
        }
        // A plain load first: on the common path nothing woke the future,
        // and the swap's locked instruction is left for when something did.
        if !this.signal.woken.load(Ordering::Acquire)
            || !this.signal.woken.swap(false, Ordering::AcqRel)
        {
            return Poll::Pending;
        }
        let mut inner = Context::from_waker(&this.waker);
        Pin::new(&mut this.future).poll(&mut inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use futures::FutureExt;

    use super::*;

    /// Counts its polls; ready once `open` is set, waking through the waker
    /// it was last polled with.
    struct Gate {
        polls: Arc<AtomicUsize>,
        open: Arc<AtomicBool>,
        waker: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl Future for Gate {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            if self.open.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            *crate::sync::lock(&self.waker) = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    fn the_inner_future_is_polled_first_and_then_only_after_its_own_wake() {
        let polls = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicBool::new(false));
        let waker = Arc::new(std::sync::Mutex::new(None::<Waker>));
        let mut gate = WhenWoken::new(Gate {
            polls: polls.clone(),
            open: open.clone(),
            waker: waker.clone(),
        });
        assert!(gate
            .poll_unpin(&mut Context::from_waker(Waker::noop()))
            .is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        // Wakes meant for other branches of the task: the gate is not polled.
        for _ in 0..5 {
            assert!(gate
                .poll_unpin(&mut Context::from_waker(Waker::noop()))
                .is_pending());
        }
        assert_eq!(polls.load(Ordering::SeqCst), 1);

        open.store(true, Ordering::SeqCst);
        let gate_waker = crate::sync::lock(&waker)
            .take()
            .expect("the gate left a waker");
        gate_waker.wake();
        assert!(gate
            .poll_unpin(&mut Context::from_waker(Waker::noop()))
            .is_ready());
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_wake_of_the_inner_future_wakes_the_task_that_awaits_it() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let mut waiting = tokio_test::task::spawn(WhenWoken::new(rx));
        tokio_test::assert_pending!(waiting.poll());
        // Polled for another branch's sake: still pending, and nothing woke.
        tokio_test::assert_pending!(waiting.poll());
        assert!(!waiting.is_woken());

        tx.send(7).expect("the receiver waits");
        assert!(waiting.is_woken(), "the sender's wake reached the task");
        tokio_test::assert_ready_eq!(waiting.poll(), Ok(7));
    }

    #[test]
    fn every_wake_of_the_inner_future_wakes_the_task_not_only_the_first() {
        let notify = Arc::new(tokio::sync::Notify::new());
        let inner = {
            let notify = notify.clone();
            Box::pin(async move {
                notify.notified().await;
                notify.notified().await;
            })
        };
        let mut waiting = tokio_test::task::spawn(WhenWoken::new(inner));
        tokio_test::assert_pending!(waiting.poll());
        notify.notify_one();
        assert!(waiting.is_woken(), "the first wake reached the task");
        tokio_test::assert_pending!(waiting.poll());

        notify.notify_one();
        assert!(waiting.is_woken(), "the second wake reached the task");
        tokio_test::assert_ready!(waiting.poll());
    }
}

//! The work of a request that outlives hyper's handler.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use super::ctx::Outcome;
use crate::shared::Shared;

/// A request's work, run inside hyper's handler but never cut in half: hyper
/// drops the handler when the client goes away or the connection ends, and
/// what committed must stay committed, with the journal saying how the
/// response ended. Dropped before it finished, it hands the rest of the work
/// to a task of its own, which runs it to the end and drops the outcome (as
/// nobody is left to send it to).
///
/// Running the work inline instead of always in a task of its own spares every
/// request a task spawn, a channel and a wake-up of the connection task from
/// another worker; the spawn happens only in the rare case that needs it.
pub(crate) struct Detached {
    shared: Arc<Shared>,
    /// `None` once the work has finished.
    work: Option<Pin<Box<dyn Future<Output = Outcome> + Send>>>,
}

impl Detached {
    /// Boxes `work`: the one copy of its state that the request makes. Inlined
    /// so that the state can be built where the box is rather than moved there.
    #[inline(always)]
    pub(crate) fn new(
        shared: Arc<Shared>,
        work: impl Future<Output = Outcome> + Send + 'static,
    ) -> Detached {
        Detached {
            shared,
            work: Some(Box::pin(work)),
        }
    }
}

impl Future for Detached {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let Some(work) = self.work.as_mut() else {
            // Polled again after it finished: `provider_entry` never does.
            return Poll::Pending;
        };
        let outcome = ready!(work.as_mut().poll(cx));
        self.work = None;
        Poll::Ready(outcome)
    }
}

impl Drop for Detached {
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            self.shared.tasks.spawn_detached(async move {
                drop(work.await);
            });
        }
    }
}

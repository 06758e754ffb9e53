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
        #[cfg(test)]
        tests::note_size(
            std::any::type_name_of_val(&work),
            std::mem::size_of_val(&work),
        );
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
            // Polled again after it finished: a request whose outcome ends the
            // connection waits here until the connection task drops it.
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use crate::sync::lock;
    use crate::{Plan, ServeOptions, Simulator};

    /// The largest work boxed so far in this test binary, by its type.
    static SIZES: Mutex<BTreeMap<&'static str, usize>> = Mutex::new(BTreeMap::new());

    pub(super) fn note_size(type_name: &'static str, bytes: usize) {
        let mut sizes = lock(&SIZES);
        let largest = sizes.entry(type_name).or_insert(0);
        *largest = (*largest).max(bytes);
    }

    /// The bound that matters: glibc's per-thread cache serves requests of
    /// up to about 1 KiB, and past it every request's allocation first
    /// consolidates the allocator's fast bins (docs/benchmarks.md,
    /// "allocations per request"). 1 000 leaves room for the chunk header.
    const ALLOCATOR_CACHE_BYTES: usize = 1000;

    /// What hyper holds for a provider request, and moves several times per
    /// request, is a pointer and two handles: an `async fn` in its place would
    /// keep a whole response in its state, hundreds of bytes copied at each
    /// move.
    #[test]
    fn the_future_hyper_holds_for_a_provider_request_is_a_few_words() {
        let bytes = std::mem::size_of::<crate::provider::RunRequest>();
        assert!(bytes <= 32, "RunRequest is {bytes} bytes");
    }

    #[tokio::test]
    async fn a_provider_requests_boxed_work_fits_the_allocators_small_size_cache() {
        let sim = Simulator::start(Plan::default(), ServeOptions::default())
            .await
            .unwrap();
        let http = reqwest::Client::new();
        let base = sim.base_url();
        let created: serde_json::Value = http
            .post(format!("{base}/v1/tickets"))
            .bearer_auth("sk_test_a")
            .json(&serde_json::json!({"title": "size"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = created["id"].as_str().unwrap();
        let found = http
            .get(format!("{base}/v1/tickets/{id}"))
            .bearer_auth("sk_test_a")
            .send()
            .await
            .unwrap();
        assert_eq!(found.status(), 200);
        let sizes = lock(&SIZES).clone();
        let provider: Vec<_> = sizes
            .iter()
            .filter(|(name, _)| name.contains("provider::respond"))
            .collect();
        assert!(!provider.is_empty(), "no /v1 work was boxed: {sizes:?}");
        for (name, bytes) in provider {
            assert!(
                *bytes <= ALLOCATOR_CACHE_BYTES,
                "{name} is {bytes} bytes, over {ALLOCATOR_CACHE_BYTES}: box what only some requests need apart"
            );
        }
        sim.shutdown().await;
    }
}

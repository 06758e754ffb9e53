//! The probes: each a named, documented check with its own verdict and
//! evidence. One module per family; [`ALL`] is the order they run and report in.
//!
//! Every probe uses its own markers and keys, derived from the run's seed and
//! the probe's name, so probes never see each other's effects and a run can be
//! reproduced with `--seed`.

mod after_commit;
mod basic;
mod concurrency;
mod ctx;
mod keys;
mod lost;
mod retention;
mod scope;
mod trail;

use std::time::Instant;

use futures::future::BoxFuture;

use crate::report::ProbeResult;

pub use ctx::{exchange, wait, Ctx, KeyUse};
pub use trail::{Stop, Trail};

/// A probe: name, one-line title, and the check.
#[derive(Clone, Copy)]
pub struct Probe {
    /// Stable name (used by `--only` and in reports).
    pub name: &'static str,
    /// What it checks.
    pub title: &'static str,
    run: for<'a> fn(&'a Ctx, &'a mut Trail) -> BoxFuture<'a, Result<(), Stop>>,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe").field("name", &self.name).finish()
    }
}

/// Every probe, in run order. `retention` runs last: it may move the provider's clock.
pub const ALL: [Probe; 14] = [
    Probe { name: "baseline", title: "a keyed create succeeds and the read-back sees exactly one effect", run: |c, t| Box::pin(basic::baseline(c, t)) },
    Probe { name: "sequential_replay", title: "the same key and body again returns the saved result, no second effect", run: |c, t| Box::pin(basic::sequential_replay(c, t)) },
    Probe { name: "replay_fidelity", title: "a replay has the first answer's status and body, and the declared replay marker", run: |c, t| Box::pin(basic::replay_fidelity(c, t)) },
    Probe { name: "lost_response", title: "the answer is lost (connection closed after sending); retries with the same key after each wait leave one effect", run: |c, t| Box::pin(lost::lost_response(c, t)) },
    Probe { name: "concurrent_duplicates", title: "identical keyed requests released together by a barrier leave one effect", run: |c, t| Box::pin(concurrency::concurrent_duplicates(c, t)) },
    Probe { name: "key_reuse_other_args", title: "the same key with other arguments is refused with the declared status, no new effect", run: |c, t| Box::pin(basic::other_args(c, t)) },
    Probe { name: "key_reuse_reordered_args", title: "the same arguments in another key order are a replay, not a mismatch", run: |c, t| Box::pin(basic::reordered_args(c, t)) },
    Probe { name: "in_flight", title: "while the first request runs, the same key (same or other arguments) gets the declared in-flight answer, no second effect", run: |c, t| Box::pin(concurrency::in_flight(c, t)) },
    Probe { name: "other_endpoint", title: "the same key on another endpoint is separate work", run: |c, t| Box::pin(scope::other_endpoint(c, t)) },
    Probe { name: "cross_tenant", title: "the same key from another tenant is separate work and leaks nothing of the first tenant's", run: |c, t| Box::pin(scope::cross_tenant(c, t)) },
    Probe { name: "rejected_not_poisoned", title: "a rejected request does not leave its key unusable", run: |c, t| Box::pin(keys::rejected_not_poisoned(c, t)) },
    Probe { name: "error_after_commit", title: "a request answered with a server error after its commit, retried with the same key, leaves one effect", run: |c, t| Box::pin(after_commit::error_after_commit(c, t)) },
    Probe { name: "key_validation", title: "missing, malformed and over-long keys get the declared answers", run: |c, t| Box::pin(keys::key_validation(c, t)) },
    Probe { name: "retention", title: "a key still replays within the declared retention (sampled, or by the provider's clock)", run: |c, t| Box::pin(retention::retention(c, t)) },
];

/// The names of every probe, in order.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|p| p.name).collect()
}

/// Runs one probe to its result.
pub async fn run_probe(ctx: &Ctx, probe: &Probe) -> ProbeResult {
    let started = Instant::now();
    let mut trail = Trail::default();
    let outcome = (probe.run)(ctx, &mut trail).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    trail.finish(probe.name, probe.title, outcome, duration_ms)
}

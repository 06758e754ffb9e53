//! The fake provider: a ledger of effects behind an HTTP API whose responses
//! get lost exactly where a [`Plan`] says.
//!
//! Map of the crate:
//! - [`plan`]: the typed input (tenants, idempotency mode, lookups, faults, limits).
//! - [`record`]: what it remembers (ledger, journal, events).
//! - `server` accepts connections and serves each with hyper over `conn`'s
//!   socket wrapper, which lets a fault end the connection with a FIN or an RST,
//!   or watch it for the client leaving while a response is held. The wrapper
//!   takes any `SharedSocket`, so unit tests run it and `body` over
//!   tokio-test's scripted stream (`test_support`) instead of a real socket.
//! - `provider/` is one request's life (`/v1/...`): `mod.rs` journals it, picks
//!   its fault (`faults`) and dispatches it; `route` (path, method, tenant),
//!   `ctx` (the fault's waits and how the response leaves: `body`'s full,
//!   partial or idle), `request_body`, `create` then `commit` (idempotency
//!   through `idempotency`, effects through `store`), `idempotency_replies`,
//!   `lookup`, and `detached` (work that outlives hyper's handler).
//! - [`mcp`] is the MCP face (`/mcp`, when [`Plan::mcp`] is set): a fake MCP
//!   server whose paid tools commit into the same ledger and journal, served
//!   by the same accept loop, connection wrapper and response bodies; its map
//!   is in its module doc.
//! - `control` is the harness's API under `/_lostreply/`.
//! - [`webhook`] signs events in the profile's scheme: Stripe's, or Standard
//!   Webhooks through [`standard_webhooks`], which adapters also verify with.
//!
//! The harness owns the clock: it moves only through [`Simulator::advance`] or the
//! control API, never with tokio's paused time (real sockets, real client timeouts).
//!
//! Architecture invariant: every request outside `/_lostreply/` is journaled
//! before anything else happens to it, and its journal fate is written by
//! the code that acted on the socket (the response body, or the connection task).
#![deny(missing_docs)]

mod body;
mod canonical;
mod conn;
mod control;
mod faults;
pub mod fixed_map;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod head_deadline;
mod idempotency;
mod journal;
mod json_text;
pub mod mcp;
pub mod names;
pub mod plan;
mod poll_again;
pub mod profile;
mod provider;
mod query;
pub mod record;
mod responses;
mod scratch;
mod server;
mod shared;
mod stage;
pub mod standard_webhooks;
mod store;
pub mod sync;
#[cfg(test)]
mod test_support;
mod time;
mod validate;
mod when_woken;

pub use validate::{McpFaultError, McpPlanError, PlanError};
pub mod webhook;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lostreply_text::SharedStr;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use canonical::{canonical_json, write_canonical_text};
pub use control::{MAX_CONTROL_BODY_BYTES, MAX_EVENTS_PAGE};
pub use idempotency::MAX_KEY_BYTES;
pub use journal::{DroppedSummary, MAX_JOURNAL_ENTRIES};
pub use json_text::JsonText;
pub use plan::*;
pub use profile::Profile;
pub use provider::{
    DEFAULT_LIST_LIMIT, DRAIN_LIMIT_BYTES, MAX_CLIENT_REFERENCE_BYTES, MAX_PAGE_OBJECTS,
};
pub use record::*;
pub use server::MAX_CONNECTIONS;
pub use shared::mcp_state::SessionCounts as McpSessionCounts;
pub use store::{SummarisedEvents, SummarisedObjects};
pub use time::rfc3339;

use crate::shared::Shared;
use crate::store::{NewObject, Store};
use crate::sync::{lock, write};

/// A `during` hold armed by [`Simulator::arm_during`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DuringId(usize);

/// Where and how the simulator listens.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Listen address. Loopback and port 0 (any free port) by default.
    pub bind: SocketAddr,
    /// Required when `bind` is not loopback: the control API then wants
    /// `Authorization: Bearer <token>`. When given on loopback, it is required too.
    pub control_token: Option<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            control_token: None,
        }
    }
}

/// Why a simulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The plan is inconsistent (e.g. a bad webhook secret, an empty tenant list).
    #[error("invalid plan: {0}")]
    InvalidPlan(#[from] PlanError),
    /// A non-loopback address without a control token.
    #[error("refusing to bind {0} without a control token: the control API would be open")]
    ControlUnguarded(SocketAddr),
    /// A control token that is empty or not visible ASCII.
    #[error("the control token must be non-empty visible ASCII without spaces")]
    BadControlToken,
    /// The socket could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A running simulator. Dropping it without [`Simulator::shutdown`] aborts its tasks.
pub struct Simulator {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    accept: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// Binds, seeds the objects and starts serving.
    pub async fn start(plan: Plan, options: ServeOptions) -> Result<Simulator, StartError> {
        let webhook_key = validate::check_plan(&plan)?;
        if let Some(token) = &options.control_token {
            if token.is_empty() || !token.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
                return Err(StartError::BadControlToken);
            }
        }
        if !options.bind.ip().is_loopback() && options.control_token.is_none() {
            return Err(StartError::ControlUnguarded(options.bind));
        }
        let mut store = Store::new(plan.seed);
        for seed in &plan.seed_objects {
            let mut body = seed.args.clone();
            if let Some(reference) = &seed.client_reference {
                body.insert(
                    "client_reference".to_owned(),
                    serde_json::Value::String(reference.clone()),
                );
            }
            let new = NewObject {
                tenant: store.strings.intern(&seed.tenant),
                resource: store.strings.intern(&seed.resource),
                args: JsonText::of(&seed.args),
                client_reference: seed.client_reference.as_deref().map(SharedStr::from),
                metadata: None,
                idempotency_key: None,
                fingerprint: canonical::canonical_shared(&serde_json::Value::Object(body)),
                attempt: 0,
                request_seq: None,
            };
            let age_ms = i64::try_from(seed.age.as_millis()).unwrap_or(i64::MAX);
            let created_at_ms = plan
                .clock_start_ms
                .saturating_sub(age_ms)
                .max(time::min_clock_ms());
            store.seed(&plan, new, created_at_ms).map_err(|full| {
                StartError::InvalidPlan(PlanError::Field {
                    field: "seed_objects".to_owned(),
                    problem: format!("more than limits.hard_cap_objects ({})", full.max_objects),
                })
            })?;
        }
        let listener =
            TcpListener::bind(options.bind)
                .await
                .map_err(|source| StartError::Bind {
                    addr: options.bind,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| StartError::Bind {
            addr: options.bind,
            source,
        })?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared::new(
            plan,
            store,
            shutdown_rx,
            options.control_token,
            webhook_key,
            mcp::tasks::settle,
        ));
        let accept = tokio::spawn(server::accept_loop(shared.clone(), listener));
        Ok(Simulator {
            shared,
            addr,
            shutdown,
            accept: Mutex::new(Some(accept)),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: what adapters call.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/mcp`: the MCP endpoint, when the plan has one.
    pub fn mcp_url(&self) -> Option<String> {
        self.shared
            .plan
            .mcp
            .as_ref()
            .map(|_| format!("http://{}/mcp", self.addr))
    }

    /// `http://127.0.0.1:PORT/_lostreply`: the control API.
    pub fn control_url(&self) -> String {
        format!("http://{}/_lostreply", self.addr)
    }

    /// The simulator clock, ms since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.shared.state().now_ms
    }

    /// Moves the clock forward; settles asynchronous objects whose time has come
    /// (producing their events) and forgets expired idempotency keys. The clock
    /// stops at the end of year 9999.
    pub fn advance(&self, by: Duration) {
        self.shared.advance(by);
    }

    /// The ledger's own copy of the object id `id`, if an effect has it
    /// (any tenant, any collection). The harness keeps an adapter's
    /// `provider_ref` as this copy rather than its own: a million-operation
    /// run held a million such ids twice, once here and once in the replies.
    pub fn effect_id(&self, id: &str) -> Option<SharedStr> {
        self.shared.state().store.id_copy(id)
    }

    /// Every effect held, in commit order (seed objects first): all of them
    /// in any scenario run; past `Limits::max_objects` the oldest are
    /// summarised instead (see [`Simulator::ledger_summarised`]) and the first
    /// effect's `seq` says where the held part starts.
    pub fn ledger(&self) -> Vec<Effect> {
        self.shared.state().store.effects()
    }

    /// Every request, in arrival order: all of them in any scenario run; past
    /// [`MAX_JOURNAL_ENTRIES`] the oldest are summarised instead (see
    /// [`Simulator::journal_dropped`]) and the first entry's `seq` says where
    /// the retained part starts.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.shared.state().journal.entries()
    }

    /// What was dropped from the front of the journal to keep it bounded.
    pub fn journal_dropped(&self) -> DroppedSummary {
        self.shared.state().journal.dropped().clone()
    }

    /// How many MCP sessions are live, and how sessions have ended since the
    /// start (also `GET /_lostreply/mcp`).
    pub fn mcp_sessions(&self) -> (usize, McpSessionCounts) {
        let state = self.shared.state();
        (state.mcp.sessions.len(), state.mcp.session_counts)
    }

    /// What was summarised out of the ledger to keep it within
    /// `Limits::max_objects` (also `GET /_lostreply/ledger`'s `summarised`).
    pub fn ledger_summarised(&self) -> SummarisedObjects {
        self.shared.state().store.summarised().clone()
    }

    /// How many effects the ledger holds, without copying it.
    pub fn ledger_len(&self) -> usize {
        self.shared.state().store.len()
    }

    /// How many requests were journaled (the last `seq`), without copying the
    /// journal; dropped entries included.
    pub fn journal_len(&self) -> usize {
        usize::try_from(self.shared.state().journal.total()).unwrap_or(usize::MAX)
    }

    /// Every event held, in the order produced: all of them in any scenario
    /// run; past `Limits::max_objects` the events of the objects summarised
    /// out go with them (see [`Simulator::events_summarised`]).
    pub fn events(&self) -> Vec<Event> {
        self.shared.state().store.events().cloned().collect()
    }

    /// What was summarised out of the events with their objects (also
    /// `GET /_lostreply/events`'s `summarised`).
    pub fn events_summarised(&self) -> SummarisedEvents {
        self.shared.state().store.summarised_events().clone()
    }

    /// Signs a delivery of `event` at the current clock; `None` without webhooks.
    pub fn sign(&self, event: &Event) -> Option<Delivery> {
        let key = self.shared.webhook_key.as_ref()?;
        let scheme = self.shared.plan.profile.webhooks.scheme;
        Some(webhook::delivery(scheme, key, event, self.now_ms()))
    }

    /// A forged delivery of `event`: signed at the current clock in the
    /// profile's scheme, but with `wrong_secret` instead of the provider's
    /// (`None` without webhooks, or when `wrong_secret` cannot key the scheme).
    pub fn forge(&self, event: &Event, wrong_secret: &str) -> Option<Delivery> {
        self.shared.webhook_key.as_ref()?;
        let scheme = self.shared.plan.profile.webhooks.scheme;
        let key = webhook::signing_key(scheme, wrong_secret).ok()?;
        Some(webhook::delivery(scheme, &key, event, self.now_ms()))
    }

    /// The wire the provider speaks.
    pub fn profile(&self) -> &Profile {
        &self.shared.plan.profile
    }

    /// Waits until request `seq` (a journal position) has ended: its response was
    /// sent or lost and the provider has finished with it (an idempotency key's
    /// result is saved before that). The harness waits here after a crash, so the
    /// next step meets the provider as it would be moments later in production.
    pub async fn wait_request_done(&self, seq: u64) {
        let mut finished = self.shared.finished.subscribe();
        while !self.shared.is_done(seq) {
            if finished.changed().await.is_err() {
                return;
            }
        }
    }

    /// Harness step `number` (1-based) starts, with `calls` adapter calls alive
    /// (`None`: not counted). Fault rules scoped to steps see only the requests
    /// that arrive while their step runs.
    pub fn begin_step(&self, number: u32, calls: Option<usize>) {
        self.shared.stage.begin_step(number, calls);
    }

    /// One adapter call of the running step has returned: a `gather` that waits
    /// for requests nobody is left to send goes on.
    pub fn call_ended(&self) {
        self.shared.stage.call_ended();
    }

    /// Harness step `number` has ended: requests held until its end go on.
    pub fn end_step(&self, number: u32) {
        self.shared.stage.end_step(number);
    }

    /// Waits until the provider has finished every request but those held
    /// until a step that has not ended yet, at most `bound`. Returns the
    /// requests still in progress (empty when it went quiet). The harness
    /// waits here between steps, so a commit made after the client left lands
    /// before the next step, on every run.
    pub async fn wait_quiet(&self, bound: Duration) -> Vec<u64> {
        let mut finished = self.shared.finished.subscribe();
        let busy = || {
            let parked = self.shared.stage.parked_beyond_now();
            self.shared
                .state()
                .journal
                .in_progress()
                .filter(|seq| !parked.contains(seq))
                .collect::<Vec<u64>>()
        };
        let wait = async {
            loop {
                if busy().is_empty() {
                    return;
                }
                // Every response's end goes through `Shared::finish`, which bumps this.
                if finished.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(bound, wait).await;
        busy()
    }

    /// Waits until `found` holds of the ledger and the events so far (checked at
    /// once, then after every commit and clock move), or `give_up` resolves
    /// first. Returns what `found` returned last. The harness waits here for
    /// the event a webhook delivers inside a `parallel` step, whose create
    /// commits while the step runs.
    pub async fn wait_for_event<T>(
        &self,
        mut found: impl FnMut(&[Effect], &[Event]) -> Option<T>,
        give_up: impl std::future::Future<Output = ()>,
    ) -> Option<T> {
        let mut committed = self.shared.committed.subscribe();
        tokio::pin!(give_up);
        loop {
            // Subscribed before reading: a commit after this read bumps the
            // channel, so it is never missed.
            if let Some(hit) = found(&self.ledger(), &self.events()) {
                return Some(hit);
            }
            tokio::select! {
                changed = committed.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = &mut give_up => return found(&self.ledger(), &self.events()),
            }
        }
    }

    /// Arms a `during` hold for the running step: the first `/v1` request
    /// of the step matching `when`'s fields (its counts and steps aside) that
    /// reaches its answer (a lookup read, a create committed or refused) is
    /// held there until [`Simulator::release_during`]. `None` past 16 holds
    /// in one step. Every hold ends with its step.
    pub fn arm_during(&self, when: Match) -> Option<DuringId> {
        self.shared.stage.arm_during(when).map(DuringId)
    }

    /// Waits until hold `id` holds a request; its journal position, or
    /// `None` once the hold was released without one.
    pub async fn wait_during_held(&self, id: DuringId) -> Option<u64> {
        self.shared.stage.wait_during_held(id.0).await
    }

    /// Ends hold `id`: its request's answer goes on; a hold not taken yet takes none.
    pub fn release_during(&self, id: DuringId) {
        self.shared.stage.release_during(id.0);
    }

    /// Installs (or removes) the hook run between commit and response.
    pub fn set_commit_hook(&self, hook: Option<CommitHook>) {
        *write(&self.shared.hook) = hook;
    }

    /// Stops accepting, closes connections (held ones included), waits for the tasks to end.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let accept = lock(&self.accept).take();
        if let Some(accept) = accept {
            let _ = accept.await;
        }
        self.shared.tasks.wait_all().await;
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(accept) = lock(&self.accept).take() {
            accept.abort();
        }
        self.shared.tasks.abort_all();
    }
}

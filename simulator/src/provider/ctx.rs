//! One journaled request's context: the fault that decides its fate, the
//! waits that fault asks for (delay, gather, hold), and how the response
//! leaves (whole, cut, idle, or not at all: the `Outcome` every request's
//! life ends in).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use lostreply_text::SharedStr;

use crate::body::{FateSink, FaultBody, Served};
use crate::conn::{hold_until_client_leaves, Conn, Ending, HoldEnd};
use crate::plan::{FaultResponse, FaultRule, Position, Release};
use crate::record::ResponseFate;
use crate::responses::{self, Prepared};
use crate::shared::Shared;
use crate::time::http_date;

/// How a request ends on the provider side.
pub(crate) enum Outcome {
    /// hyper sends this response.
    Respond(Served),
    /// The connection ends without a (further) byte.
    End(Ending),
}

/// One request's context once it is journaled.
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) conn: Arc<Conn>,
    pub(crate) seq: u64,
    pub(crate) tenant: Option<SharedStr>,
    /// The index in the plan of the rule that decides this request's fate
    /// (the plan holds the rule: a copy would be part of every request's
    /// future). A `u32` beside `during` in the one word an `Option<usize>`
    /// took alone: every request's future stays under the allocator's
    /// small-size cache (`detached.rs`).
    pub(crate) fault: Option<u32>,
    /// The harness's `during` holds this request may be held for (a bit set,
    /// `Stage::during_candidates`): its answer waits at the way out until
    /// the call that waited for it has returned.
    pub(crate) during: u16,
}

impl Ctx {
    /// The rule that decides this request's fate.
    fn rule(&self) -> Option<&FaultRule> {
        self.fault
            .and_then(|index| self.shared.plan.faults.get(index as usize))
    }

    pub(crate) fn rule_at(&self, position: Position) -> Option<&FaultRule> {
        self.rule().filter(|rule| rule.at == position)
    }

    /// The fault that acts on the way out of a request that commits nothing.
    pub(crate) fn rule_on_the_way_out(&self) -> Option<&FaultRule> {
        self.rule().filter(|rule| rule.at != Position::BeforeRead)
    }

    fn stall_cap(&self) -> Duration {
        self.shared.plan.limits.stall_cap
    }

    // The fault waits below (`delay`, `gather`, `hold`) are boxed: they are
    // rare, and unboxed their state (timers, the shutdown channel, a watch on
    // the socket) would be part of every request's future, which every
    // request allocates and moves, faulted or not.

    pub(crate) async fn delay(&self, delay: Duration) {
        Box::pin(self.delay_inner(delay)).await;
    }

    async fn delay_inner(&self, delay: Duration) {
        let mut shutdown = self.shared.shutdown.clone();
        tokio::select! {
            () = tokio::time::sleep(delay.min(self.stall_cap())) => {}
            _ = shutdown.wait_for(|down| *down) => {}
        }
    }

    /// Waits for the other requests of this rule's gather (bounded).
    pub(crate) async fn gather(&self, requests: u32, at_most: Duration) {
        Box::pin(self.gather_inner(requests, at_most)).await;
    }

    async fn gather_inner(&self, requests: u32, at_most: Duration) {
        let rule = self.fault.map_or(usize::MAX, |index| index as usize);
        self.shared
            .stage
            .gather(
                rule,
                requests,
                at_most.min(self.stall_cap()),
                self.shared.shutdown.clone(),
            )
            .await;
    }

    /// Holds the request until `until` says (bounded); returns whether the
    /// client left meanwhile. The journal fate is written by the caller, once
    /// the provider is done with the request (a stall that commits commits first).
    pub(crate) async fn hold(&self, until: Release) -> bool {
        Box::pin(self.hold_inner(until)).await
    }

    async fn hold_inner(&self, until: Release) -> bool {
        let shutdown = self.shared.shutdown.clone();
        match until {
            Release::ClientGone => matches!(
                hold_until_client_leaves(&self.conn, self.stall_cap(), shutdown).await,
                HoldEnd::ClientLeft
            ),
            Release::StepEnd(step) => {
                let cap = self.shared.plan.limits.hold_cap;
                let park =
                    self.shared
                        .stage
                        .park_until_step_end(self.seq, step, cap, shutdown.clone());
                let watch = hold_until_client_leaves(&self.conn, cap, shutdown);
                tokio::pin!(park, watch);
                // The key stays in flight whether or not the client is still
                // there: only the step's end (or the bound) lets it go.
                tokio::select! {
                    _ = &mut park => false,
                    end = &mut watch => {
                        park.await;
                        matches!(end, HoldEnd::ClientLeft)
                    }
                }
            }
        }
    }

    pub(crate) fn finish_stalled(&self, client_left: bool) {
        self.shared
            .finish(self.seq, ResponseFate::Stalled { client_left });
    }

    /// A held call that the client's cancel ended (MCP).
    pub(crate) fn finish_cancelled(&self) {
        self.shared.finish(self.seq, ResponseFate::Cancelled);
    }

    pub(crate) fn respond(&self, prepared: Prepared, shape: Shape) -> Outcome {
        let sink = FateSink {
            shared: self.shared.clone(),
            seq: self.seq,
            status: prepared.status,
        };
        let full_len = prepared.body.len();
        let body = match shape {
            Shape::Full => FaultBody::full(prepared.body, self.conn.clone(), sink),
            Shape::Partial(bytes) => {
                FaultBody::partial(prepared.body, bytes, self.conn.clone(), sink)
            }
            Shape::Idle => FaultBody::idle(prepared.body, self.conn.clone(), sink),
        };
        let mut response = Served::new(http_body_util::Either::Left(body));
        *response.status_mut() = http::StatusCode::from_u16(prepared.status)
            .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(prepared.content_type),
        );
        // A full body's length is its exact size hint, which hyper writes as
        // `Content-Length` itself (into its own buffer, where a header value
        // here would be an allocation per response); a cut body declares the
        // whole length it will not finish.
        if !matches!(shape, Shape::Full) {
            headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(full_len));
        }
        let now_ms = self.shared.now_ms();
        if let Some(date) = date_header(now_ms) {
            headers.insert(http::header::DATE, date);
        }
        for (name, value) in prepared.headers {
            headers.insert(name, value);
        }
        Outcome::Respond(response)
    }

    /// Sends `prepared` through the fault of the way out (if any). Without a
    /// wait the outcome is ready at once; only the faults that wait (stall,
    /// delay, gather) make a future, boxed, so that the answer being sent is
    /// not held in every request's future.
    pub(crate) fn deliver<'a>(
        &'a self,
        prepared: Prepared,
        rule: Option<&'a FaultRule>,
    ) -> Delivery<'a> {
        if self.during != 0 {
            if let Some(id) = self.shared.stage.claim_during(self.during, self.seq) {
                return Delivery::Wait(Box::pin(async move {
                    let cap = self.shared.plan.limits.hold_cap;
                    let shutdown = self.shared.shutdown.clone();
                    let held = self.shared.stage.hold_during(id, cap, shutdown.clone());
                    // A client that gives up ends the hold too: an adapter
                    // that serialises calls about one operation makes the
                    // waiting call wait for this one, and only this client's
                    // timeout ends that cycle.
                    let gone = hold_until_client_leaves(&self.conn, cap, shutdown);
                    tokio::select! {
                        () = held => {}
                        _ = gone => {}
                    }
                    match self.deliver_now(prepared, rule) {
                        Delivery::Now(outcome) => outcome,
                        Delivery::Wait(wait) => wait.await,
                    }
                }));
            }
        }
        self.deliver_now(prepared, rule)
    }

    /// [`Ctx::deliver`] once no `during` hold keeps the answer.
    fn deliver_now<'a>(&'a self, prepared: Prepared, rule: Option<&FaultRule>) -> Delivery<'a> {
        let Some(rule) = rule else {
            return Delivery::Now(self.respond(prepared, Shape::Full));
        };
        match rule.response {
            FaultResponse::Ok => Delivery::Now(self.respond(prepared, Shape::Full)),
            FaultResponse::Drop => Delivery::Now(Outcome::End(Ending::Drop { seq: self.seq })),
            FaultResponse::Reset => Delivery::Now(Outcome::End(Ending::Reset { seq: self.seq })),
            // `then` only matters before commit; here nothing is left to do.
            FaultResponse::Stall { until, .. } => Delivery::Wait(Box::pin(async move {
                let client_left = self.hold(until).await;
                self.finish_stalled(client_left);
                Outcome::End(Ending::Close)
            })),
            FaultResponse::Delay { delay } => Delivery::Wait(Box::pin(async move {
                self.delay(delay).await;
                self.respond(prepared, Shape::Full)
            })),
            FaultResponse::Gather { requests, at_most } => Delivery::Wait(Box::pin(async move {
                self.gather(requests, at_most).await;
                self.respond(prepared, Shape::Full)
            })),
            FaultResponse::Status {
                code,
                retry_after_s,
            } => Delivery::Now(self.respond(
                responses::fault_status(&self.shared.plan.profile, code, retry_after_s),
                Shape::Full,
            )),
            FaultResponse::Partial { bytes } => {
                Delivery::Now(self.respond(prepared, Shape::Partial(bytes)))
            }
            FaultResponse::Idle => Delivery::Now(self.respond(prepared, Shape::Idle)),
        }
    }
}

/// What [`Ctx::deliver`] returns: the outcome at once, or the wait a fault
/// asks for (boxed) before it. Not a future: awaited inline, it would keep a
/// whole `Outcome` (a response) in the state of every future that delivers,
/// so a caller returns `Now` as it is and awaits only `Wait`, outside the
/// `match` that took it apart (a `match` keeps its value through the awaits
/// in its arms).
pub(crate) enum Delivery<'a> {
    Now(Outcome),
    Wait(Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>),
}

/// The `Date` header for simulator time `now_ms`. It changes once a second, so
/// each worker thread keeps the last one it formatted: formatting it per
/// response would be about 6% of a request's handling.
fn date_header(now_ms: i64) -> Option<HeaderValue> {
    thread_local! {
        static LAST: RefCell<Option<(i64, HeaderValue)>> = const { RefCell::new(None) };
    }
    let second = now_ms.div_euclid(1000);
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((at, value)) = last.as_ref() {
            if *at == second {
                return Some(value.clone());
            }
        }
        let value = HeaderValue::from_str(&http_date(now_ms)).ok()?;
        *last = Some((second, value.clone()));
        Some(value)
    })
}

/// How a response body leaves.
pub(crate) enum Shape {
    Full,
    Partial(usize),
    Idle,
}

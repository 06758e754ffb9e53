//! The provider API (`/v1/...`): one request's life from arrival to how its
//! response leaves, with the fault engine acting at `before_read`,
//! `before_commit` and `after_commit`.
//!
//! Hyper dropping the service future (the client went away) never cuts the
//! provider's work in half: what committed stays committed, and the journal
//! says how the response ended (see `detached`).
//!
//! The request's life, in order, and where each part lives:
//! - here: [`provider_entry`] and `handle`: journal the request, pick its
//!   fault, act at `before_read`, dispatch by route and kind.
//! - `route`: which resource and kind the path and method name, and which
//!   tenant the credential names.
//! - `ctx`: the journaled request's context: the fault's waits (delay,
//!   gather, hold) and how the response leaves (full, partial, idle, or the
//!   connection ends: the `Outcome`).
//! - `request_body`: reading a create's body, and draining bodies nobody reads.
//! - `create`: a create's validation up to its idempotency key's decision.
//! - `commit`: from the `before_commit` fault to the response: the effect, the
//!   commit hook, the key's saved result.
//! - `idempotency_replies`: what the provider answers for key errors, reused
//!   keys, keys in flight and replays.
//! - `lookup`: retrieve, search and list.
//! - `detached`: the work that outlives hyper's handler.

pub(crate) mod commit;
mod create;
#[cfg(feature = "fuzzing")]
pub(crate) use create::flat_reading_agrees;
pub(crate) mod ctx;
pub(crate) mod detached;
mod flat_body;
mod idempotency_replies;
mod lookup;
pub(crate) mod request_body;
pub(crate) mod route;
mod shaped_lookup;

use std::sync::Arc;

use hyper::body::Incoming;
use lostreply_text::SharedStr;

use crate::body::Served;
use crate::conn::{Conn, Ending};
use crate::faults::RequestFacts;
use crate::journal::Arrival;
use crate::plan::{FaultResponse, FaultRule, Position, RequestKind};
use crate::profile::Pages;
use crate::query;
use crate::record::AppliedFault;
use crate::responses::{self, Prepared};
use crate::shared::Shared;

pub use create::MAX_CLIENT_REFERENCE_BYTES;
pub use lookup::{DEFAULT_LIST_LIMIT, MAX_PAGE_OBJECTS};
pub use request_body::DRAIN_LIMIT_BYTES;

use crate::profile::wire;
use create::{create, CreateAt};
use ctx::{Ctx, Delivery, Outcome, Shape};
use detached::Detached;
use request_body::drain;
use route::{authenticate, resource_exists, Route};

/// How the face served beside `/v1` on the same listener (the MCP face, at
/// `/mcp`) turns a request into its detached work. The accept loop passes it
/// in, so that the provider never names that face: the face builds on the
/// provider (its journal, contexts and bodies), not the other way round.
pub(crate) type FaceEntry = fn(Arc<Shared>, Arc<Conn>, http::Request<Incoming>) -> Detached;

/// Every request outside the control API, straight from hyper's service.
///
/// The request's work is boxed here, where it is made (see `Detached`), and
/// what hyper holds is [`RunRequest`]: a pointer and two handles. hyper moves
/// the future it is given several times per request, so its size is copied
/// (and, in memory the caches no longer hold, written afresh) each time.
pub(crate) fn provider_entry(
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    request: http::Request<Incoming>,
    mcp_entry: FaceEntry,
) -> RunRequest {
    // The MCP endpoint shares the listener, the journal and the way a
    // request's work runs; without an MCP plan `/mcp` is an unknown path.
    let work = if request.uri().path() == "/mcp" && shared.plan.mcp.is_some() {
        mcp_entry(shared, conn.clone(), request)
    } else {
        Detached::new(shared.clone(), handle(shared, conn.clone(), request))
    };
    RunRequest { conn, work }
}

/// Retrieve, search and list: read-only, answered from the store, in a
/// declared profile's shape (`shaped_lookup`) or the generic API's (`lookup`).
fn lookup(
    ctx: &Ctx,
    tenant: &str,
    kind: RequestKind,
    route: &Route<'_>,
    path: &str,
    raw_query: Option<&str>,
) -> Prepared {
    let profile = &ctx.shared.plan.profile;
    let (resource, id) = match route {
        Route::Collection(resource) => (*resource, None),
        Route::Item(resource, id) => (*resource, Some(*id)),
        Route::Unknown(_) => return responses::not_found(profile),
    };
    if let Pages::Shaped(shape) = &profile.pages {
        let read = shaped_lookup::Read {
            tenant,
            kind,
            resource,
            id,
            path,
            raw_query,
        };
        return shaped_lookup::shaped_lookup(ctx, shape, read);
    }
    lookup::generic_lookup(ctx, profile, tenant, kind, (resource, id), raw_query)
}

/// Runs one request's work to its outcome, never cut in half (see `detached`),
/// and turns the outcome into hyper's response or the connection's end.
/// Shared by `/v1` and the MCP endpoint.
///
/// A future written by hand rather than an `async fn`: an `async fn` keeps
/// its arguments twice (the argument and the local moved into the await), and
/// an `Outcome` matched after an await stays in its state through every later
/// await, which would make the future hyper holds hundreds of bytes.
pub(crate) struct RunRequest {
    conn: Arc<Conn>,
    work: Detached,
}

impl std::future::Future for RunRequest {
    type Output = Result<Served, std::convert::Infallible>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        // After an outcome that ends the connection, the finished work stays
        // pending (see `Detached`) until the connection task drops this.
        match std::task::ready!(std::pin::Pin::new(&mut this.work).poll(cx)) {
            Outcome::Respond(response) => std::task::Poll::Ready(Ok(response)),
            Outcome::End(ending) => {
                this.conn.request_end(ending);
                std::task::Poll::Pending
            }
        }
    }
}

/// A `/v1` request's life. What needs no waiting (reading the route, the
/// credential and the key, journaling, picking the fault) runs when the
/// handler is made; the future holds only what the waits need. An `async fn`
/// would keep the whole request in its state beside the parts taken from it.
fn handle(
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    request: http::Request<Incoming>,
) -> impl std::future::Future<Output = Outcome> + Send + 'static {
    let (parts, body) = request.into_parts();
    // Path and query are read from the request's `Uri`, which the future
    // keeps whole: copying them out would be an allocation on every request
    // (two with a query), and the `Uri` is already the request's own.
    let uri = parts.uri;
    let path = uri.path();
    let raw_query = uri.query();
    let query_names = query::names(raw_query);
    let (route, kind) = wire::route(
        &shared.plan.profile,
        &parts.method,
        path,
        raw_query,
        &query_names,
    );
    let resource = route.resource();
    let tenant = authenticate(&shared, &parts.headers);
    let step = shared.stage.step();
    // The request is journaled from borrowed parts (no owned copies), in a
    // block so that none of them stays in the request's future. The real
    // clock is read before the lock is taken, so that it does not lengthen
    // the one lock every request goes through (contended at 64 connections);
    // the simulator time and the fault need the lock.
    let (seq, fault, during) = {
        // The key as sent (lossy only for bytes that are not UTF-8); the
        // first of several, as the provider reads it.
        let raw_key = shared
            .key_values(&parts.headers)
            .iter()
            .next()
            .map(|v| String::from_utf8_lossy(v.as_bytes()));
        let mut arrival = Arrival {
            at_ms: 0,
            real_start_ms: shared.real_ms(),
            tenant: tenant.as_ref(),
            method: parts.method.as_str(),
            path,
            query: raw_query,
            kind,
            resource,
            idempotency_key: raw_key.as_deref(),
            fault: None,
            step,
        };
        let mut state = shared.state();
        let now_ms = state.now_ms;
        state.store.settle_due(&shared.plan, now_ms);
        let facts = RequestFacts {
            method: parts.method.as_str(),
            resource,
            kind,
            tenant: tenant.as_deref(),
            query_names: &query_names,
            step,
        };
        let fault = state.faults.select(&shared.plan.faults, &facts);
        let during = shared.stage.during_candidates(&facts);
        arrival.at_ms = now_ms;
        arrival.fault = fault.and_then(|index| {
            let rule = shared.plan.faults.get(index)?;
            Some(AppliedFault {
                rule: index,
                at: rule.at,
                response: rule.response,
            })
        });
        (state.journal.push_arrival(&arrival), fault, during)
    };
    let ctx = Ctx {
        shared,
        conn,
        seq,
        tenant,
        // A plan holds far fewer than 2^32 rules (it is read from a file).
        fault: fault.and_then(|index| u32::try_from(index).ok()),
        during,
    };
    let headers = parts.headers;
    respond(ctx, kind, parts.method, headers, body, uri)
}

/// The rest of [`handle`]: the waits, the dispatch by route and kind, and how
/// the response leaves.
///
/// Not an `async fn`: an `async fn` keeps its by-value arguments twice in its
/// future (the argument and the local it is moved into), and this future is
/// allocated for every request.
#[allow(clippy::manual_async_fn)]
fn respond(
    ctx: Ctx,
    kind: Option<RequestKind>,
    method: http::Method,
    headers: http::HeaderMap,
    mut body: Incoming,
    uri: http::Uri,
) -> impl std::future::Future<Output = Outcome> + Send {
    async move {
        // A gathered lookup is read when it arrives and waits with its answer
        // made (see `before_read`). Each wait below is one await of its own,
        // so that what lives across it is not kept beside the others' state.
        let gather_with_answer = match ctx.rule_at(Position::BeforeRead) {
            None => None,
            Some(rule) => match Box::pin(before_read(&ctx, rule, kind, &mut body)).await {
                BeforeRead::Read { gather_with_answer } => gather_with_answer,
                BeforeRead::Done(outcome) => return outcome,
            },
        };
        // Read again from the path the future keeps (see `Route`), in a
        // block: nothing of the route is kept through the waits after it.
        let reply = {
            let (path, raw_query) = (uri.path(), uri.query());
            let route = wire::route_only(&ctx.shared.plan.profile, &method, path, raw_query);
            match reply_or_create(&ctx, kind, &route, path, raw_query) {
                Ok(reply) => reply,
                // Boxed apart: a create's own state (its body being read, its
                // commit) inline would make every request's future larger
                // than the allocator's per-thread cache serves (about 1 KiB),
                // and each request's allocation would first consolidate
                // glibc's fast bins. Two small allocations for a create, one
                // for every other request, are cheaper than that.
                Err((tenant, resource)) => {
                    let at = CreateAt {
                        ctx: &ctx,
                        tenant,
                        resource,
                        path,
                        raw_query,
                        headers: &headers,
                    };
                    return Box::pin(create(at, body)).await;
                }
            }
        };
        // Requests that never read their body still drain it, so that the
        // client reads the answer rather than a reset caused by unread data.
        // Boxed: a lookup seldom sends a body or gathers.
        if gather_with_answer.is_some() || !hyper::body::Body::is_end_stream(&body) {
            Box::pin(gather_then_drain(&ctx, gather_with_answer, body)).await;
        }
        let wait = match ctx.deliver(reply, ctx.rule_on_the_way_out()) {
            Delivery::Now(outcome) => return outcome,
            Delivery::Wait(wait) => wait,
        };
        wait.await
    }
}

/// What the fault before reading left to do.
enum BeforeRead {
    /// Read the request; a lookup that gathers waits, after reading, for
    /// this many requests at most this long.
    Read {
        gather_with_answer: Option<(u32, std::time::Duration)>,
    },
    /// The request ended here.
    Done(Outcome),
}

/// The fault before reading: it ends the request, waits, or lets it be read.
/// A gathered lookup is read when it arrives and waits with its answer made:
/// requests that meet then answer what each saw on arrival, so two searches
/// both see "nothing yet" however the machine schedules them after the
/// meeting (read after it, one could be read only after the other's client
/// had already created). A create is held unread, so it commits only after
/// the meeting.
async fn before_read(
    ctx: &Ctx,
    rule: &FaultRule,
    kind: Option<RequestKind>,
    body: &mut Incoming,
) -> BeforeRead {
    let seq = ctx.seq;
    let read = BeforeRead::Read {
        gather_with_answer: None,
    };
    match rule.response {
        FaultResponse::Ok => read,
        FaultResponse::Drop => BeforeRead::Done(Outcome::End(Ending::Drop { seq })),
        FaultResponse::Reset => BeforeRead::Done(Outcome::End(Ending::Reset { seq })),
        // Nothing was read, so nothing can commit, whatever `then` says.
        FaultResponse::Stall { until, .. } => {
            let client_left = ctx.hold(until).await;
            ctx.finish_stalled(client_left);
            BeforeRead::Done(Outcome::End(Ending::Close))
        }
        FaultResponse::Delay { delay } => {
            ctx.delay(delay).await;
            read
        }
        FaultResponse::Gather { requests, at_most } if kind != Some(RequestKind::Create) => {
            BeforeRead::Read {
                gather_with_answer: Some((requests, at_most)),
            }
        }
        FaultResponse::Gather { requests, at_most } => {
            ctx.gather(requests, at_most).await;
            read
        }
        FaultResponse::Status {
            code,
            retry_after_s,
        } => {
            drain(body, ctx.shared.plan.limits.read_timeout).await;
            let profile = &ctx.shared.plan.profile;
            BeforeRead::Done(ctx.respond(
                responses::fault_status(profile, code, retry_after_s),
                Shape::Full,
            ))
        }
        // Rejected by plan validation: there is no response to cut before reading.
        FaultResponse::Partial { .. } | FaultResponse::Idle => read,
    }
}

/// A gathered lookup's meeting, then the unread body drained: one await in
/// the request's future for both.
async fn gather_then_drain(ctx: &Ctx, gather: Option<(u32, std::time::Duration)>, body: Incoming) {
    if let Some((requests, at_most)) = gather {
        ctx.gather(requests, at_most).await;
    }
    drain(body, ctx.shared.plan.limits.read_timeout).await;
}

/// Every reply made at once from the route, the credential and the store
/// (refusals and lookups); `Err` names the tenant and the collection of a
/// create, whose body is still to be read.
fn reply_or_create<'c, 'r>(
    ctx: &'c Ctx,
    kind: Option<RequestKind>,
    route: &Route<'r>,
    path: &str,
    raw_query: Option<&str>,
) -> Result<Prepared, (&'c SharedStr, &'r str)> {
    let profile = &ctx.shared.plan.profile;
    let reply = match (&ctx.tenant, kind, *route) {
        (None, _, _) => responses::unauthorized(profile),
        (Some(_), _, Route::Unknown(_)) => responses::not_found(profile),
        (Some(_), _, Route::Collection(r) | Route::Item(r, _))
            if !resource_exists(&ctx.shared, r) =>
        {
            responses::not_found(profile)
        }
        (Some(_), None, Route::Collection(_)) => {
            responses::method_not_allowed(profile, "GET, POST")
        }
        (Some(_), None, Route::Item(..)) => responses::method_not_allowed(profile, "GET"),
        (Some(tenant), Some(RequestKind::Create), Route::Collection(resource)) => {
            return Err((tenant, resource))
        }
        (Some(tenant), Some(kind), route) => lookup(ctx, tenant, kind, &route, path, raw_query),
    };
    Ok(reply)
}

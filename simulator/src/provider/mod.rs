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

use crate::body::Served;
use crate::conn::{Conn, Ending};
use crate::faults::RequestFacts;
use crate::journal::Arrival;
use crate::plan::{FaultResponse, Position, RequestKind};
use crate::profile::Pages;
use crate::query;
use crate::record::AppliedFault;
use crate::responses::{self, Prepared};
use crate::shared::Shared;

pub use create::MAX_CLIENT_REFERENCE_BYTES;
pub use lookup::{DEFAULT_LIST_LIMIT, MAX_PAGE_OBJECTS};
pub use request_body::DRAIN_LIMIT_BYTES;

use crate::profile::wire;
use create::create;
use ctx::{Ctx, Outcome, Shape};
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
/// Not an `async fn`: the request's work is boxed here, where it is made (see
/// `Detached`), so that the future hyper holds and moves is a pointer and a
/// few handles. An `async fn` would carry the handler's whole state (kilobytes)
/// inline until its first poll, and hyper and the service wrapper move it
/// several times per request.
pub(crate) fn provider_entry(
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    request: http::Request<Incoming>,
    mcp_entry: FaceEntry,
) -> impl std::future::Future<Output = Result<Served, std::convert::Infallible>> + Send {
    // The MCP endpoint shares the listener, the journal and the way a
    // request's work runs; without an MCP plan `/mcp` is an unknown path.
    let work = if request.uri().path() == "/mcp" && shared.plan.mcp.is_some() {
        mcp_entry(shared, conn.clone(), request)
    } else {
        Detached::new(shared.clone(), handle(shared, conn.clone(), request))
    };
    async move { Ok(run_request(conn, work).await) }
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
async fn run_request(conn: Arc<Conn>, work: Detached) -> Served {
    match work.await {
        Outcome::Respond(response) => response,
        Outcome::End(ending) => {
            conn.request_end(ending);
            // The connection task drops this future when it ends the connection.
            std::future::pending().await
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
    body: Incoming,
    uri: http::Uri,
) -> impl std::future::Future<Output = Outcome> + Send {
    async move {
        let seq = ctx.seq;
        // Read again from the path the future keeps (see `Route`).
        let (path, raw_query) = (uri.path(), uri.query());
        let profile = &ctx.shared.plan.profile;
        let route = wire::route_only(profile, &method, path, raw_query);
        // A gathered lookup is read when it arrives and waits with its answer
        // made: requests that meet then answer what each saw on arrival, so
        // two searches both see "nothing yet" however the machine schedules
        // them after the meeting (read after it, one could be read only after
        // the other's client had already created). A create is held unread,
        // so it commits only after the meeting.
        let mut gather_with_answer = None;
        if let Some(rule) = ctx.rule_at(Position::BeforeRead) {
            match rule.response {
                FaultResponse::Ok => {}
                FaultResponse::Drop => return Outcome::End(Ending::Drop { seq }),
                FaultResponse::Reset => return Outcome::End(Ending::Reset { seq }),
                // Nothing was read, so nothing can commit, whatever `then` says.
                FaultResponse::Stall { until, .. } => {
                    let client_left = ctx.hold(until).await;
                    ctx.finish_stalled(client_left);
                    return Outcome::End(Ending::Close);
                }
                FaultResponse::Delay { delay } => ctx.delay(delay).await,
                FaultResponse::Gather { requests, at_most }
                    if kind != Some(RequestKind::Create) =>
                {
                    gather_with_answer = Some((requests, at_most));
                }
                FaultResponse::Gather { requests, at_most } => ctx.gather(requests, at_most).await,
                FaultResponse::Status {
                    code,
                    retry_after_s,
                } => {
                    drain(body, ctx.shared.plan.limits.read_timeout).await;
                    return ctx.respond(
                        responses::fault_status(profile, code, retry_after_s),
                        Shape::Full,
                    );
                }
                // Rejected by plan validation: there is no response to cut before reading.
                FaultResponse::Partial { .. } | FaultResponse::Idle => {}
            }
        }

        let reply = match (&ctx.tenant, kind, route) {
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
            // Boxed apart: a create's own state (its body being read under a
            // bounded wait, about 600 bytes) inline made every request's
            // future larger than the allocator's per-thread cache serves
            // (about 1 KiB), so that each request's allocation first
            // consolidated glibc's fast bins. Two small allocations for a
            // create, one for every other request, are cheaper than that.
            (Some(tenant), Some(RequestKind::Create), Route::Collection(resource)) => {
                match Box::pin(create(
                    &ctx, tenant, resource, path, raw_query, &headers, body,
                ))
                .await
                {
                    Ok(outcome) => return outcome,
                    Err(reply) => return ctx.deliver(reply, ctx.rule_on_the_way_out()).await,
                }
            }
            (Some(tenant), Some(kind), route) => {
                lookup(&ctx, tenant, kind, &route, path, raw_query)
            }
        };
        if let Some((requests, at_most)) = gather_with_answer {
            ctx.gather(requests, at_most).await;
        }
        // Requests that never read their body still drain it, so that the client
        // reads the answer rather than a reset caused by unread data.
        drain(body, ctx.shared.plan.limits.read_timeout).await;
        ctx.deliver(reply, ctx.rule_on_the_way_out()).await
    }
}

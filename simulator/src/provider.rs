//! The provider API (`/v1/...`): one request's life from arrival to how its
//! response leaves, with the fault engine acting at `before_read`,
//! `before_commit` and `after_commit`.
//!
//! Hyper dropping the service future (the client went away) never cuts the
//! provider's work in half: what committed stays committed, and the journal
//! says how the response ended (see [`Detached`]).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Method};
use http_body_util::BodyExt;
use serde_json::Value;

use crate::body::{FateSink, FaultBody};
use crate::canonical::canonical_json;
use crate::conn::{hold_until_client_leaves, Conn, Ending, HoldEnd};
use crate::faults::RequestFacts;
use crate::idempotency::{parse_key, Decision, Failure, KeyError, Saved, Scope};
use crate::names::is_valid_resource_name;
use crate::plan::{
    FaultResponse, FaultRule, IdempotencyMode, Position, Release, RequestKind, StallThen,
};
use crate::query;
use crate::record::{AppliedFault, Effect, JournalEntry, ResponseFate};
use crate::responses::{self, Prepared};
use crate::shared::{retention_ms, Shared};
use crate::store::{object_body, object_json, NewObject, StoreFull};
use crate::time::{http_date, parse_rfc3339};

/// Longest `client_reference`, in bytes.
pub const MAX_CLIENT_REFERENCE_BYTES: usize = 255;
/// Most objects one search or list answer carries.
pub const MAX_PAGE_OBJECTS: usize = 100;
/// Default `limit` of list recent.
pub const DEFAULT_LIST_LIMIT: usize = 10;
/// Longest the provider waits for a request body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of an unread or oversized body the provider drains so that the
/// client reads the answer instead of a reset.
pub const DRAIN_LIMIT_BYTES: usize = 1024 * 1024;

/// How a request ends on the provider side.
pub(crate) enum Outcome {
    /// hyper sends this response.
    Respond(Response),
    /// The connection ends without a (further) byte.
    End(Ending),
}

/// The fallback handler: every request outside the control API.
pub(crate) async fn provider_entry(
    State(shared): State<Arc<Shared>>,
    Extension(conn): Extension<Arc<Conn>>,
    request: Request,
) -> Response {
    let work = Detached::new(shared.clone(), handle(shared, conn.clone(), request));
    match work.await {
        Outcome::Respond(response) => response,
        Outcome::End(ending) => {
            conn.request_end(ending);
            // The connection task drops this future when it ends the connection.
            std::future::pending().await
        }
    }
}

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
struct Detached {
    shared: Arc<Shared>,
    /// `None` once the work has finished.
    work: Option<Pin<Box<dyn Future<Output = Outcome> + Send>>>,
}

impl Detached {
    fn new(shared: Arc<Shared>, work: impl Future<Output = Outcome> + Send + 'static) -> Detached {
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

/// Where the path points.
enum Route {
    Collection(String),
    Item(String, String),
    /// Not a provider path; the resource is named when the path had a valid one.
    Unknown(Option<String>),
}

fn parse_route(path: &str) -> Route {
    let Some(rest) = path.strip_prefix("/v1/") else {
        return Route::Unknown(None);
    };
    let segments: Vec<&str> = rest.split('/').collect();
    let resource = segments
        .first()
        .filter(|r| is_valid_resource_name(r))
        .map(|r| (*r).to_owned());
    match (resource, segments.as_slice()) {
        (Some(resource), [_]) => Route::Collection(resource),
        (Some(resource), [_, id]) if !id.is_empty() => Route::Item(resource, (*id).to_owned()),
        (resource, _) => Route::Unknown(resource),
    }
}

fn request_kind(method: &Method, route: &Route, query_names: &[String]) -> Option<RequestKind> {
    match route {
        Route::Collection(_) if method == Method::POST => Some(RequestKind::Create),
        Route::Collection(_) if method == Method::GET => {
            if query_names.iter().any(|n| n == "client_reference") {
                Some(RequestKind::Search)
            } else {
                Some(RequestKind::List)
            }
        }
        Route::Item(..) if method == Method::GET => Some(RequestKind::Retrieve),
        Route::Collection(_) | Route::Item(..) | Route::Unknown(_) => None,
    }
}

/// The tenant whose credential is in `Authorization: Bearer <credential>`.
fn authenticate(shared: &Shared, headers: &HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, credential) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let credential = credential.trim();
    shared
        .plan
        .tenants
        .iter()
        .find(|t| t.as_str() == credential)
        .cloned()
}

/// One request's context once it is journaled.
struct Ctx {
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    seq: u64,
    tenant: Option<String>,
    /// The rule that decides this request's fate, with its index in the plan.
    fault: Option<(usize, FaultRule)>,
}

impl Ctx {
    fn rule_at(&self, position: Position) -> Option<&FaultRule> {
        self.fault
            .as_ref()
            .map(|(_, rule)| rule)
            .filter(|rule| rule.at == position)
    }

    /// The fault that acts on the way out of a request that commits nothing.
    fn rule_on_the_way_out(&self) -> Option<&FaultRule> {
        self.fault
            .as_ref()
            .map(|(_, rule)| rule)
            .filter(|rule| rule.at != Position::BeforeRead)
    }

    fn stall_cap(&self) -> Duration {
        self.shared.plan.limits.stall_cap
    }

    async fn delay(&self, delay: Duration) {
        let mut shutdown = self.shared.shutdown.clone();
        tokio::select! {
            () = tokio::time::sleep(delay.min(self.stall_cap())) => {}
            _ = shutdown.wait_for(|down| *down) => {}
        }
    }

    /// Waits for the other requests of this rule's gather (bounded).
    async fn gather(&self, requests: u32, at_most: Duration) {
        let rule = self.fault.as_ref().map_or(usize::MAX, |(index, _)| *index);
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
    async fn hold(&self, until: Release) -> bool {
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

    fn finish_stalled(&self, client_left: bool) {
        self.shared
            .finish(self.seq, ResponseFate::Stalled { client_left });
    }

    fn respond(&self, prepared: Prepared, shape: Shape) -> Outcome {
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
        let mut response = Response::new(Body::new(body));
        *response.status_mut() = http::StatusCode::from_u16(prepared.status)
            .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(prepared.content_type),
        );
        headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(full_len));
        let now_ms = self.shared.state().now_ms;
        if let Some(date) = date_header(now_ms) {
            headers.insert(http::header::DATE, date);
        }
        for (name, value) in prepared.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
        Outcome::Respond(response)
    }

    /// Sends `prepared` through the fault of the way out (if any).
    async fn deliver(&self, prepared: Prepared, rule: Option<&FaultRule>) -> Outcome {
        let Some(rule) = rule else {
            return self.respond(prepared, Shape::Full);
        };
        match rule.response {
            FaultResponse::Ok => self.respond(prepared, Shape::Full),
            FaultResponse::Drop => Outcome::End(Ending::Drop { seq: self.seq }),
            FaultResponse::Reset => Outcome::End(Ending::Reset { seq: self.seq }),
            // `then` only matters before commit; here nothing is left to do.
            FaultResponse::Stall { until, .. } => {
                let client_left = self.hold(until).await;
                self.finish_stalled(client_left);
                Outcome::End(Ending::Close)
            }
            FaultResponse::Delay { delay } => {
                self.delay(delay).await;
                self.respond(prepared, Shape::Full)
            }
            FaultResponse::Gather { requests, at_most } => {
                self.gather(requests, at_most).await;
                self.respond(prepared, Shape::Full)
            }
            FaultResponse::Status { code } => {
                self.respond(responses::fault_status(code), Shape::Full)
            }
            FaultResponse::Partial { bytes } => self.respond(prepared, Shape::Partial(bytes)),
            FaultResponse::Idle => self.respond(prepared, Shape::Idle),
        }
    }
}

/// The `Date` header for simulator time `now_ms`. It changes once a second, so
/// each worker thread keeps the last one it formatted: formatting it per
/// response was about 6% of a request's handling.
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
enum Shape {
    Full,
    Partial(usize),
    Idle,
}

async fn handle(shared: Arc<Shared>, conn: Arc<Conn>, request: Request) -> Outcome {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let raw_query = parts.uri.query().map(str::to_owned);
    let query_names = query::names(raw_query.as_deref());
    let route = parse_route(&path);
    let kind = request_kind(&parts.method, &route, &query_names);
    let resource = match &route {
        Route::Collection(r) | Route::Item(r, _) => Some(r.clone()),
        Route::Unknown(r) => r.clone(),
    };
    let tenant = authenticate(&shared, &parts.headers);
    let key_headers: Vec<&HeaderValue> = parts.headers.get_all("idempotency-key").iter().collect();
    let raw_key = key_headers
        .first()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());

    let step = shared.stage.step();
    let (seq, fault) = {
        let mut state = shared.state();
        if state.journal.is_full() {
            drop(state);
            return Outcome::Respond(
                (
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "journal full: restart the simulator",
                )
                    .into_response(),
            );
        }
        let now_ms = state.now_ms;
        state.store.settle_due(&shared.plan, now_ms);
        let facts = RequestFacts {
            method: parts.method.as_str(),
            resource: resource.as_deref(),
            kind,
            tenant: tenant.as_deref(),
            query_names: &query_names,
            step,
        };
        let fault = state.faults.select(&shared.plan.faults, &facts);
        let entry = JournalEntry {
            seq: 0,
            at_ms: now_ms,
            real_start_ms: shared.real_ms(),
            real_end_ms: None,
            tenant: tenant.clone(),
            method: parts.method.to_string(),
            path: path.clone(),
            query: raw_query.clone(),
            kind,
            resource: resource.clone(),
            idempotency_key: raw_key,
            fingerprint: None,
            fault: fault.as_ref().map(|(rule, f)| AppliedFault {
                rule: *rule,
                at: f.at,
                response: f.response,
            }),
            effect: None,
            replayed: false,
            step,
            fate: ResponseFate::InProgress,
        };
        (state.journal.push(entry), fault)
    };
    let ctx = Ctx {
        shared,
        conn,
        seq,
        tenant,
        fault,
    };

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
            FaultResponse::Gather { requests, at_most } => ctx.gather(requests, at_most).await,
            FaultResponse::Status { code } => {
                drain(body).await;
                return ctx.respond(responses::fault_status(code), Shape::Full);
            }
            // Rejected by plan validation: there is no response to cut before reading.
            FaultResponse::Partial { .. } | FaultResponse::Idle => {}
        }
    }

    let reply = match (&ctx.tenant, kind, route) {
        (None, _, _) => responses::unauthorized(),
        (Some(_), _, Route::Unknown(_)) => responses::not_found(),
        (Some(_), _, Route::Collection(r) | Route::Item(r, _))
            if !resource_exists(&ctx.shared, &r) =>
        {
            responses::not_found()
        }
        (Some(_), None, Route::Collection(_)) => method_not_allowed("GET, POST"),
        (Some(_), None, Route::Item(..)) => method_not_allowed("GET"),
        (Some(tenant), Some(RequestKind::Create), Route::Collection(resource)) => {
            let tenant = tenant.clone();
            match create(
                &ctx,
                &tenant,
                &resource,
                &path,
                raw_query.as_deref(),
                &parts.headers,
                body,
            )
            .await
            {
                Ok(outcome) => return outcome,
                Err(reply) => return ctx.deliver(reply, ctx.rule_on_the_way_out()).await,
            }
        }
        (Some(tenant), Some(kind), route) => {
            lookup(&ctx, tenant, kind, &route, raw_query.as_deref())
        }
    };
    // Requests that never read their body still drain it, so that the client
    // reads the answer rather than a reset caused by unread data.
    drain(body).await;
    ctx.deliver(reply, ctx.rule_on_the_way_out()).await
}

fn resource_exists(shared: &Shared, resource: &str) -> bool {
    shared
        .plan
        .resources
        .as_ref()
        .is_none_or(|set| set.contains(resource))
}

fn method_not_allowed(allow: &str) -> Prepared {
    responses::bare_error(405, "method_not_allowed").with_header("allow", allow)
}

/// Why a body could not be read.
enum BodyError {
    TooLarge,
    Unreadable(String),
}

/// Reads at most `max` bytes; a longer body is drained (up to [`DRAIN_LIMIT_BYTES`]) and refused.
async fn read_body(mut body: Body, headers: &HeaderMap, max: usize) -> Result<Bytes, BodyError> {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        drain(body).await;
        return Err(BodyError::TooLarge);
    }
    let read = async {
        let mut buffer = BytesMut::new();
        let mut too_large = false;
        let mut seen = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| BodyError::Unreadable(e.to_string()))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            seen = seen.saturating_add(data.len());
            if seen > max {
                too_large = true;
                if seen > DRAIN_LIMIT_BYTES {
                    break;
                }
                continue;
            }
            buffer.extend_from_slice(&data);
        }
        if too_large {
            Err(BodyError::TooLarge)
        } else {
            Ok(buffer.freeze())
        }
    };
    tokio::time::timeout(BODY_READ_TIMEOUT, read)
        .await
        .unwrap_or_else(|_| {
            Err(BodyError::Unreadable(
                "timed out reading the request body".to_owned(),
            ))
        })
}

/// Reads and discards what is left of a body, within bounds.
async fn drain(mut body: Body) {
    let discard = async {
        let mut seen = 0usize;
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                seen = seen.saturating_add(data.len());
                if seen > DRAIN_LIMIT_BYTES {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(BODY_READ_TIMEOUT, discard).await;
}

/// `ietf` answers with problem details; every other keyed mode answers like Stripe.
fn is_ietf(mode: IdempotencyMode) -> bool {
    mode == IdempotencyMode::Ietf
}

fn key_error(mode: IdempotencyMode, error: &KeyError) -> Prepared {
    match (error, is_ietf(mode)) {
        (KeyError::Missing, _) => responses::problem(
            400,
            "idempotency-key-missing",
            "Idempotency-Key is missing",
            "this endpoint requires an Idempotency-Key header",
        ),
        (KeyError::Invalid(why), true) => responses::problem(
            400,
            "idempotency-key-invalid",
            "Idempotency-Key is invalid",
            why,
        ),
        (KeyError::Invalid(why), false) => responses::invalid_request(why),
    }
}

fn mismatch(mode: IdempotencyMode) -> Prepared {
    let detail = "this Idempotency-Key was first used with a different request body";
    if is_ietf(mode) {
        responses::problem(
            422,
            "idempotency-key-reused",
            "Idempotency-Key reused with a different body",
            detail,
        )
    } else {
        responses::error(400, "idempotency_error", detail)
    }
}

fn in_flight(mode: IdempotencyMode) -> Prepared {
    let detail = "a request with this Idempotency-Key is still being processed";
    if is_ietf(mode) {
        responses::problem(
            409,
            "idempotency-key-in-use",
            "Idempotency-Key in use",
            detail,
        )
    } else {
        Prepared::json(
            409,
            &serde_json::json!({"error": {"type": "idempotency_error", "code": "idempotency_key_in_use", "message": detail}}),
        )
    }
}

fn replay(mode: IdempotencyMode, saved: Saved) -> Prepared {
    let mut prepared = Prepared {
        status: saved.status,
        content_type: responses::JSON,
        body: saved.body,
        headers: Vec::new(),
    };
    if let Some(location) = saved.location {
        prepared = prepared.with_header("location", location);
    }
    if !is_ietf(mode) {
        prepared = prepared.with_header("idempotent-replayed", "true");
    }
    prepared
}

fn saved_of(prepared: &Prepared) -> Saved {
    let location = prepared
        .headers
        .iter()
        .find(|(name, _)| *name == "location")
        .map(|(_, v)| v.clone());
    Saved {
        status: prepared.status,
        body: prepared.body.clone(),
        location,
    }
}

/// A validated create, ready to commit.
struct Intake {
    new: NewObject,
    ticket: Option<Scope>,
}

/// `POST /v1/{resource}`. `Err` is a reply that commits nothing (it still meets
/// the fault of the way out); `Ok` is the final outcome of a request that
/// reached the commit point.
async fn create(
    ctx: &Ctx,
    tenant: &str,
    resource: &str,
    path: &str,
    raw_query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Outcome, Prepared> {
    let plan = &ctx.shared.plan;
    let mode = plan.idempotency.mode;
    let bytes = match read_body(body, headers, plan.limits.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            let message = format!("request body exceeds {} bytes", plan.limits.max_body_bytes);
            return Err(responses::error(413, "payload_too_large", &message));
        }
        Err(BodyError::Unreadable(why)) => {
            return Err(responses::invalid_request(&format!(
                "cannot read the request body: {why}"
            )))
        }
    };
    if let Some(name) = query::names(raw_query).first() {
        return Err(responses::invalid_request(&format!(
            "create takes no query parameters; got `{name}`"
        )));
    }
    let mut value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| responses::invalid_request(&format!("request body is not valid JSON: {e}")))?;
    // `null` for a reserved field means absent, as it does for most JSON APIs,
    // so it must not make two attempts' fingerprints differ either.
    if let Value::Object(fields) = &mut value {
        fields
            .retain(|name, v| !(v.is_null() && (name == "client_reference" || name == "metadata")));
    }
    let fingerprint = canonical_json(&value);
    let attempt = {
        let mut state = ctx.shared.state();
        state.journal.update(ctx.seq, |entry| {
            entry.fingerprint = Some(fingerprint.clone())
        });
        let count = state
            .attempts
            .entry((tenant.to_owned(), resource.to_owned(), fingerprint.clone()))
            .or_insert(0);
        *count = count.saturating_add(1);
        *count
    };
    let Value::Object(mut fields) = value else {
        return Err(responses::invalid_request(&format!(
            "request body must be a JSON object, got {}",
            json_kind(&value)
        )));
    };
    let client_reference = match fields.remove("client_reference") {
        None => None,
        Some(Value::String(reference)) if reference.len() <= MAX_CLIENT_REFERENCE_BYTES => {
            Some(reference)
        }
        Some(Value::String(reference)) => {
            return Err(responses::invalid_request(&format!(
                "client_reference is {} bytes; at most {MAX_CLIENT_REFERENCE_BYTES} are accepted",
                reference.len()
            )))
        }
        Some(other) => {
            return Err(responses::invalid_request(&format!(
                "client_reference must be a string, got {}",
                json_kind(&other)
            )))
        }
    };
    let metadata = match fields.remove("metadata") {
        None => None,
        Some(object @ Value::Object(_)) => Some(object),
        Some(other) => {
            return Err(responses::invalid_request(&format!(
                "metadata must be an object, got {}",
                json_kind(&other)
            )))
        }
    };
    let key_headers: Vec<&HeaderValue> = headers.get_all("idempotency-key").iter().collect();
    let key = parse_key(mode, plan.idempotency.required, &key_headers)
        .map_err(|e| key_error(mode, &e))?;
    let decision = {
        let mut state = ctx.shared.state();
        let now_ms = state.now_ms;
        state.keys.check(
            mode,
            retention_ms(plan),
            tenant,
            path,
            key.as_deref(),
            &fingerprint,
            now_ms,
        )
    };
    let ticket = match decision {
        Decision::Untracked => None,
        Decision::Proceed(scope) => Some(scope),
        Decision::Replay(saved) => {
            ctx.shared
                .state()
                .journal
                .update(ctx.seq, |entry| entry.replayed = true);
            return Err(replay(mode, saved));
        }
        Decision::Mismatch => return Err(mismatch(mode)),
        Decision::InFlight => return Err(in_flight(mode)),
    };
    if mode == IdempotencyMode::Racy {
        // Known-bad: the check above and the set after the commit are separate
        // steps; everything in between (this yield, faults, the commit hook) is
        // a window in which duplicates pass the check too.
        tokio::task::yield_now().await;
    }
    let intake = Intake {
        new: NewObject {
            tenant: tenant.to_owned(),
            resource: resource.to_owned(),
            args: fields,
            client_reference,
            metadata,
            idempotency_key: key_headers
                .first()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            fingerprint,
            attempt,
            request_seq: Some(ctx.seq),
        },
        ticket,
    };
    Ok(commit_stage(ctx, intake).await)
}

/// From the `before_commit` fault to the response.
async fn commit_stage(ctx: &Ctx, intake: Intake) -> Outcome {
    if let Some(rule) = ctx.rule_at(Position::BeforeCommit) {
        match rule.response {
            FaultResponse::Ok => {}
            FaultResponse::Delay { delay } => ctx.delay(delay).await,
            FaultResponse::Drop => {
                fail_key(ctx, &intake, Failure::Abandoned);
                return Outcome::End(Ending::Drop { seq: ctx.seq });
            }
            FaultResponse::Reset => {
                fail_key(ctx, &intake, Failure::Abandoned);
                return Outcome::End(Ending::Reset { seq: ctx.seq });
            }
            FaultResponse::Stall { then, until } => {
                let client_left = ctx.hold(until).await;
                match then {
                    StallThen::Abandon => fail_key(ctx, &intake, Failure::Abandoned),
                    // The provider kept working after the client left.
                    StallThen::Commit => {
                        let _ = commit(ctx, intake).await;
                    }
                }
                // Only now is the provider done with it: whoever waits for this
                // request's end (the harness between steps) sees the commit.
                ctx.finish_stalled(client_left);
                return Outcome::End(Ending::Close);
            }
            FaultResponse::Gather { requests, at_most } => ctx.gather(requests, at_most).await,
            FaultResponse::Status { code } => {
                let reply = responses::fault_status(code);
                fail_key(ctx, &intake, Failure::Status(saved_of(&reply)));
                return ctx.respond(reply, Shape::Full);
            }
            // Rejected by plan validation: nothing to cut before the commit.
            FaultResponse::Partial { .. } | FaultResponse::Idle => {}
        }
    }
    let reply = commit(ctx, intake).await;
    ctx.deliver(reply, ctx.rule_at(Position::AfterCommit)).await
}

fn fail_key(ctx: &Ctx, intake: &Intake, failure: Failure) {
    let Some(scope) = intake.ticket.clone() else {
        return;
    };
    let plan = &ctx.shared.plan;
    let mut state = ctx.shared.state();
    let now_ms = state.now_ms;
    state.keys.fail(
        plan.idempotency.mode,
        scope,
        &intake.new.fingerprint,
        failure,
        now_ms,
    );
}

/// Commits the effect, runs the commit hook, saves the response for replays.
async fn commit(ctx: &Ctx, intake: Intake) -> Prepared {
    let plan = &ctx.shared.plan;
    let committed = {
        let mut state = ctx.shared.state();
        let now_ms = state.now_ms;
        let result = state.store.commit(plan, intake.new.clone(), now_ms);
        if let Ok(effect) = &result {
            state
                .journal
                .update(ctx.seq, |entry| entry.effect = Some(effect.id.clone()));
        }
        result
    };
    let effect = match committed {
        Ok(effect) => effect,
        Err(StoreFull { max_objects }) => {
            let message = format!("this tenant already holds {max_objects} objects");
            let reply = responses::error(507, "insufficient_storage", &message);
            fail_key(ctx, &intake, Failure::Status(saved_of(&reply)));
            return reply;
        }
    };
    let reply = created(plan.asynchronous.is_some(), &effect);
    run_commit_hook(ctx, &effect).await;
    if let Some(scope) = intake.ticket {
        let mut state = ctx.shared.state();
        let now_ms = state.now_ms;
        state
            .keys
            .succeed(scope, &intake.new.fingerprint, saved_of(&reply), now_ms);
    }
    reply
}

async fn run_commit_hook(ctx: &Ctx, effect: &Effect) {
    let Some(hook) = ctx.shared.hook() else {
        return;
    };
    let mut shutdown = ctx.shared.shutdown.clone();
    tokio::select! {
        () = hook(effect.clone()) => {}
        _ = shutdown.wait_for(|down| *down) => {}
    }
}

fn created(asynchronous: bool, effect: &Effect) -> Prepared {
    let status = if asynchronous { 202 } else { 201 };
    Prepared::json_body(status, object_body(effect))
        .with_header("location", format!("/v1/{}/{}", effect.resource, effect.id))
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Retrieve, search and list: read-only, answered from the store.
fn lookup(
    ctx: &Ctx,
    tenant: &str,
    kind: RequestKind,
    route: &Route,
    raw_query: Option<&str>,
) -> Prepared {
    let lookups = ctx.shared.plan.lookup;
    let pairs = match query::parse(raw_query) {
        Ok(pairs) => pairs,
        Err(why) => return responses::invalid_request(&why),
    };
    let (resource, id) = match route {
        Route::Collection(resource) => (resource.as_str(), None),
        Route::Item(resource, id) => (resource.as_str(), Some(id.as_str())),
        Route::Unknown(_) => return responses::not_found(),
    };
    let state = ctx.shared.state();
    match (kind, id) {
        (RequestKind::Retrieve, Some(id)) => {
            // Never a 404: that would read as proof that the object is absent.
            if !lookups.retrieve {
                return responses::unsupported_query("this provider offers no retrieve by id");
            }
            if let Some((name, _)) = pairs.first() {
                return responses::invalid_request(&format!(
                    "retrieve takes no query parameters; got `{name}`"
                ));
            }
            match state.store.get(tenant, resource, id) {
                Some(effect) => Prepared::json_body(200, object_body(effect)),
                None => responses::not_found(),
            }
        }
        (RequestKind::Search, None) => {
            if !lookups.client_reference {
                return responses::unsupported_query(
                    "this provider offers no search by client_reference",
                );
            }
            let mut reference = None;
            for (name, value) in &pairs {
                match name.as_str() {
                    "client_reference" => reference = Some(value.clone()),
                    other => {
                        return responses::invalid_request(&format!(
                            "unknown query parameter `{other}`: search takes only client_reference"
                        ))
                    }
                }
            }
            let reference = reference.unwrap_or_default();
            let found = state.store.newest_first(tenant, resource, |e| {
                e.client_reference.as_deref() == Some(reference.as_str())
            });
            page(&found, MAX_PAGE_OBJECTS)
        }
        (RequestKind::List, None) => {
            if !lookups.list_recent {
                return responses::unsupported_query(
                    "this provider offers no list of recent objects",
                );
            }
            let mut since_ms = i64::MIN;
            let mut limit = DEFAULT_LIST_LIMIT;
            for (name, value) in &pairs {
                match name.as_str() {
                    "created_gte" => match parse_rfc3339(value) {
                        Some(ms) => since_ms = ms,
                        None => {
                            return responses::invalid_request(&format!(
                                "created_gte `{value}` is not an RFC 3339 time such as 2026-01-01T00:00:00Z"
                            ))
                        }
                    },
                    "limit" => match value.parse::<usize>() {
                        Ok(n) if (1..=MAX_PAGE_OBJECTS).contains(&n) => limit = n,
                        _ => {
                            return responses::invalid_request(&format!(
                                "limit `{value}` must be an integer from 1 to {MAX_PAGE_OBJECTS}"
                            ))
                        }
                    },
                    other => {
                        return responses::invalid_request(&format!(
                            "unknown query parameter `{other}`: list takes created_gte and limit"
                        ))
                    }
                }
            }
            let found = state
                .store
                .newest_first(tenant, resource, |e| e.created_at_ms >= since_ms);
            page(&found, limit)
        }
        (
            RequestKind::Create | RequestKind::Retrieve | RequestKind::Search | RequestKind::List,
            _,
        ) => responses::not_found(),
    }
}

fn page(found: &[&Effect], limit: usize) -> Prepared {
    let data = found.iter().take(limit).map(|e| object_json(e)).collect();
    responses::list(data, found.len() > limit)
}

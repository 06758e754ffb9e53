//! The control API under `/_lostreply/`: the harness's view of the provider.
//! Never journaled, never matched by faults.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::faults::FaultCounters;
use crate::provider::request_body::{read_body, timed_out_message, BodyError};
use crate::query;
use crate::record::Event;
use crate::shared::Shared;
use crate::store::{EventsPage, PageSize, SummarisedEvents, UnknownEvent};
use crate::time::rfc3339;
use crate::webhook;

/// Largest control request body.
pub const MAX_CONTROL_BODY_BYTES: usize = 64 * 1024;

/// Largest `limit` of a page of `GET /_lostreply/events`: a page is copied
/// out under the state lock, so its size bounds how long that takes.
pub const MAX_EVENTS_PAGE: usize = 10_000;

fn control_error(status: StatusCode, kind: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"type": kind, "message": message}})),
    )
        .into_response()
}

/// Present on every control handler: with a control token configured, the
/// request must carry `Authorization: Bearer <token>`.
struct ControlAuth;

impl FromRequestParts<Arc<Shared>> for ControlAuth {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let Some(token) = &shared.control_token else {
            return Ok(ControlAuth);
        };
        let presented = parts
            .headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, credential)| credential.trim());
        if presented.is_some_and(|p| constant_time_eq(p.as_bytes(), token.as_bytes())) {
            Ok(ControlAuth)
        } else {
            Err(control_error(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "the control API wants Authorization: Bearer <control token>",
            ))
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The control router, to be nested under `/_lostreply`.
pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/health", get(health))
        .route("/ledger", get(ledger))
        .route("/journal", get(journal))
        .route("/events", get(events))
        .route("/events/{id}/delivery", post(sign_event))
        .route("/clock", get(clock).post(advance_clock))
        .route("/mcp", get(mcp))
        .route("/faults/reset", post(reset_faults))
        .fallback(unknown)
        .layer(DefaultBodyLimit::max(MAX_CONTROL_BODY_BYTES))
}

async fn unknown(_auth: ControlAuth) -> Response {
    control_error(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such control endpoint; see docs/provider-api.md",
    )
}

async fn health(_auth: ControlAuth) -> Response {
    Json(json!({"status": "ok"})).into_response()
}

async fn ledger(_auth: ControlAuth, State(shared): State<Arc<Shared>>) -> Response {
    let state = shared.state();
    // `summarised` says how many of the oldest objects were summarised out to
    // keep a long run's store within `limits.max_objects` (0 in any scenario run).
    Json(json!({
        "data": state.store.effects(),
        "summarised": state.store.summarised().summarised,
        "summarised_summary": state.store.summarised(),
    }))
    .into_response()
}

async fn journal(_auth: ControlAuth, State(shared): State<Arc<Shared>>) -> Response {
    let state = shared.state();
    // `dropped` says how many of the oldest entries were summarised to keep
    // a long run's journal bounded (0 in any scenario run).
    Json(json!({
        "data": state.journal.entries(),
        "dropped": state.journal.dropped().dropped,
        "dropped_summary": state.journal.dropped(),
    }))
    .into_response()
}

/// The MCP face's sessions: how many are live, and how sessions ended
/// (deleted, expired, evicted) and how many `initialize` calls were refused;
/// and its operations: how many are held, and how many went with their
/// objects when those were summarised out.
async fn mcp(_auth: ControlAuth, State(shared): State<Arc<Shared>>) -> Response {
    let state = shared.state();
    Json(json!({
        "sessions": {"live": state.mcp.sessions.len(), "counts": state.mcp.session_counts},
        "operations": {"held": state.mcp.operations.len(), "summarised": state.mcp.operations_dropped},
    }))
    .into_response()
}

/// Which events `GET /_lostreply/events` answers: those after `after`
/// (from the first without it), at most `limit` of them (all without it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct EventsQuery {
    after: Option<String>,
    size: PageSize,
}

/// Reads `limit` and `after`; the message says what is wrong otherwise.
fn events_query(raw: Option<&str>) -> Result<EventsQuery, String> {
    let mut query = EventsQuery {
        after: None,
        size: PageSize::Whole,
    };
    for (name, value) in query::parse(raw).map_err(|why| why.to_string())? {
        match name.as_str() {
            "after" => query.after = Some(value),
            "limit" => query.size = PageSize::AtMost(events_limit(&value)?),
            other => {
                return Err(format!(
                    "unknown query parameter `{other}`: events takes limit and after"
                ))
            }
        }
    }
    Ok(query)
}

fn events_limit(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(limit) if (1..=MAX_EVENTS_PAGE).contains(&limit) => Ok(limit),
        _ => Err(format!(
            "limit `{value}` must be an integer from 1 to {MAX_EVENTS_PAGE}"
        )),
    }
}

/// The body of `GET /_lostreply/events`, written after the state lock is
/// released: its events are the page's own copies.
#[derive(Serialize)]
struct EventsListing<'a> {
    data: &'a [Event],
    /// The events of the objects summarised out of the ledger went with them
    /// (0 in any scenario run).
    summarised: u64,
    summarised_summary: &'a SummarisedEvents,
    has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_after: Option<&'a str>,
}

async fn events(
    _auth: ControlAuth,
    State(shared): State<Arc<Shared>>,
    RawQuery(raw): RawQuery,
) -> Response {
    let query = match events_query(raw.as_deref()) {
        Ok(query) => query,
        Err(message) => return control_error(StatusCode::BAD_REQUEST, "invalid_request", &message),
    };
    let (page, summarised) = {
        let state = shared.state();
        let page = state.store.events_page(query.after.as_deref(), query.size);
        (page, state.store.summarised_events().clone())
    };
    match page {
        Ok(page) => events_listing(&page, &summarised),
        Err(UnknownEvent) => {
            let after = query.after.unwrap_or_default();
            control_error(
                StatusCode::NOT_FOUND,
                "not_found",
                &format!(
                    "no event `{after}` is held (never produced, or summarised out with its \
                     object): `after` takes an id from the listing"
                ),
            )
        }
    }
}

fn events_listing(page: &EventsPage, summarised: &SummarisedEvents) -> Response {
    Json(EventsListing {
        data: &page.events,
        summarised: summarised.summarised,
        summarised_summary: summarised,
        has_more: page.has_more(),
        next_after: page.next_after.as_deref(),
    })
    .into_response()
}

async fn sign_event(
    _auth: ControlAuth,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Response {
    let Some(key) = &shared.webhook_key else {
        return control_error(
            StatusCode::CONFLICT,
            "no_webhooks",
            "this plan has no webhooks",
        );
    };
    let state = shared.state();
    match state.store.event(&id) {
        Some(event) => {
            let delivery = webhook::delivery(
                shared.plan.profile.webhooks.scheme,
                key,
                event,
                state.now_ms,
            );
            Json(json!({"headers": delivery.headers, "body": delivery.body})).into_response()
        }
        None => control_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no event `{id}`"),
        ),
    }
}

/// Restarts every fault rule's `nth`/`times` count, so that one long-running
/// provider (`lostreply serve`) can be taken through the same faults again
/// (a second certification meets its `nth: 1` rejection anew). Nothing else
/// changes: ledger, keys, journal and clock stay as they are.
async fn reset_faults(_auth: ControlAuth, State(shared): State<Arc<Shared>>) -> Response {
    let rules = shared.plan.faults.len();
    shared.state().faults = FaultCounters::new(rules);
    Json(json!({"rules": rules})).into_response()
}

/// The body of a control request, read as the provider reads its own: at
/// most [`MAX_CONTROL_BODY_BYTES`], within the plan's read deadline, so that
/// a slow client holds a control connection no longer than a provider one.
async fn read_body_within_deadline(
    shared: &Shared,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, Response> {
    let deadline = shared.plan.limits.read_timeout;
    match read_body(body, headers, MAX_CONTROL_BODY_BYTES, deadline).await {
        Ok(bytes) => Ok(bytes),
        Err(BodyError::TooLarge) => Err(control_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            &format!("the body exceeds {MAX_CONTROL_BODY_BYTES} bytes"),
        )),
        Err(BodyError::TimedOut) => Err(control_error(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            &timed_out_message(deadline),
        )),
        Err(BodyError::Unreadable(why)) => Err(control_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("cannot read the body: {why}"),
        )),
    }
}

fn clock_body(now_ms: i64) -> Response {
    Json(json!({"now_ms": now_ms, "now": rfc3339(now_ms)})).into_response()
}

async fn clock(_auth: ControlAuth, State(shared): State<Arc<Shared>>) -> Response {
    let now_ms = shared.state().now_ms;
    clock_body(now_ms)
}

/// `{"advance_ms": N}` or `{"advance": "25h"}` (humantime syntax), exactly one.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AdvanceRequest {
    advance_ms: Option<u64>,
    advance: Option<String>,
}

async fn advance_clock(
    _auth: ControlAuth,
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match read_body_within_deadline(&shared, &headers, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let request: AdvanceRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => {
            let message =
                format!("body must be {{\"advance_ms\": N}} or {{\"advance\": \"25h\"}}: {e}");
            return control_error(StatusCode::BAD_REQUEST, "invalid_request", &message);
        }
    };
    let by = match (request.advance_ms, request.advance) {
        (Some(ms), None) => Duration::from_millis(ms),
        (None, Some(text)) => match humantime::parse_duration(&text) {
            Ok(by) => by,
            Err(e) => {
                let message =
                    format!("advance `{text}` is not a duration such as 300ms, 2m or 25h: {e}");
                return control_error(StatusCode::BAD_REQUEST, "invalid_request", &message);
            }
        },
        (Some(_), Some(_)) | (None, None) => {
            let message = "give exactly one of advance_ms and advance";
            return control_error(StatusCode::BAD_REQUEST, "invalid_request", message);
        }
    };
    clock_body(shared.advance(by))
}

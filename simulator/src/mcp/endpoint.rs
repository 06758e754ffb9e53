//! The `/mcp` endpoint: one HTTP request's life. Journaled first (as every
//! request outside the control API), then the credential, the body, the
//! JSON-RPC message, the session and protocol version checks, and the method.

use std::sync::Arc;

use axum::extract::Request;
use http::{HeaderMap, Method};
use lostreply_text::SharedStr;
use serde_json::{json, Map, Value};

use super::call::{self, CallSite};
use super::jsonrpc::{self, Message, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND};
use super::plan::{McpPlan, Revision};
use super::tasks::{self, ResultNow};
use super::tools;
use super::wire::{self, Form};
use crate::conn::{hold_until_client_leaves, Conn};
use crate::provider::ctx::{Ctx, Outcome, Shape};
use crate::provider::detached::Detached;
use crate::provider::request_body::{drain, read_body, timed_out_message, BodyError};
use crate::provider::route::authenticate_bearer as authenticate;
use crate::record::{CancelArrival, JournalEntry, ResponseFate, RpcCall};
use crate::responses::{self, Prepared};
use crate::shared::mcp_state::{HeldSignal, SessionClock};
use crate::shared::Shared;

/// The session header.
const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// One request to `/mcp`, journaled and answered as the plan says.
/// The MCP face's entry for the accept loop (a `provider::FaceEntry`): a `/mcp`
/// request's work, detached as `/v1`'s is.
pub(crate) fn entry(
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    request: http::Request<hyper::body::Incoming>,
) -> Detached {
    Detached::new(
        shared.clone(),
        handle(shared, conn, request.map(axum::body::Body::new)),
    )
}

async fn handle(shared: Arc<Shared>, conn: Arc<Conn>, request: Request) -> Outcome {
    let (parts, body) = request.into_parts();
    let tenant = authenticate(&shared, &parts.headers);
    let step = shared.stage.step();
    let seq = {
        let mut state = shared.state();
        tasks::settle(&mut state, &shared.plan);
        let entry = JournalEntry {
            seq: 0,
            at_ms: state.now_ms,
            real_start_ms: shared.real_ms(),
            real_end_ms: None,
            tenant: tenant.clone(),
            method: SharedStr::from(parts.method.as_str()),
            path: SharedStr::from(parts.uri.path()),
            query: parts.uri.query().map(SharedStr::from),
            kind: None,
            resource: None,
            idempotency_key: None,
            fingerprint: None,
            fault: None,
            effect: None,
            replayed: false,
            step: step.map(crate::record::nonmax_u32),
            rpc: None,
            fate: ResponseFate::InProgress,
        };
        state.journal.push(entry)
    };
    let ctx = Ctx {
        shared: shared.clone(),
        conn,
        seq,
        tenant: tenant.clone(),
        fault: None,
        // `during` holds match `/v1` requests only.
        during: 0,
    };
    let deadline = shared.plan.limits.read_timeout;
    let (Some(mcp), Some(tenant)) = (shared.plan.mcp.as_ref(), tenant) else {
        drain(body, deadline).await;
        return ctx.respond(
            responses::unauthorized(crate::profile::Profile::generic_ref()),
            Shape::Full,
        );
    };
    if parts.method == Method::POST {
        let max = mcp.limits.max_body_bytes;
        let bytes = match read_body(body, &parts.headers, max, deadline).await {
            Ok(bytes) => bytes,
            Err(BodyError::TooLarge) => {
                let text = format!("the body exceeds {} bytes", mcp.limits.max_body_bytes);
                return ctx.respond(wire::refusal(413, INVALID_REQUEST, &text), Shape::Full);
            }
            Err(BodyError::TimedOut) => {
                let text = timed_out_message(deadline);
                return ctx.respond(wire::refusal(408, INVALID_REQUEST, &text), Shape::Full);
            }
            Err(BodyError::Unreadable(why)) => {
                let text = format!("cannot read the body: {why}");
                return ctx.respond(wire::refusal(400, INVALID_REQUEST, &text), Shape::Full);
            }
        };
        return post(ctx, mcp, &tenant, &parts.headers, &bytes, step).await;
    }
    drain(body, deadline).await;
    let reply = if parts.method == Method::DELETE {
        end_session(&ctx, &tenant, &parts.headers)
    } else {
        // No server-initiated stream: GET is not offered.
        responses::method_not_allowed(crate::profile::Profile::generic_ref(), "POST, DELETE")
    };
    ctx.respond(reply, Shape::Full)
}

fn end_session(ctx: &Ctx, tenant: &str, headers: &HeaderMap) -> Prepared {
    let Some(id) = header(headers, SESSION_HEADER) else {
        return wire::refusal(400, INVALID_REQUEST, "Mcp-Session-Id header is required");
    };
    if !ctx.shared.state().mcp.end_session(id, tenant) {
        return unknown_session();
    }
    Prepared::json_body(200, bytes::Bytes::new())
}

fn idle_ms(mcp: &McpPlan) -> u64 {
    u64::try_from(mcp.limits.session_idle.as_millis()).unwrap_or(u64::MAX)
}

/// What the MCP specification has a server answer for a session it does not
/// know, ended, expired or evicted alike: the client starts a new one.
fn unknown_session() -> Prepared {
    wire::refusal(404, INVALID_REQUEST, "unknown or ended session")
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn journal_rpc(ctx: &Ctx, message: &Message) {
    let (method, id, tool) = match message {
        Message::Request { id, method, params } => (
            method.clone(),
            Some(id.clone()),
            (method == "tools/call")
                .then(|| {
                    params
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .flatten(),
        ),
        Message::Notification { method, .. } => (method.clone(), None, None),
        Message::Response => (String::new(), None, None),
    };
    ctx.shared.state().journal.update(ctx.seq, |entry| {
        entry.rpc = Some(Box::new(RpcCall {
            method,
            tool,
            id,
            fault: None,
            task: None,
            cancelled: None,
        }));
    });
}

async fn post(
    ctx: Ctx,
    mcp: &McpPlan,
    tenant: &str,
    headers: &HeaderMap,
    bytes: &[u8],
    step: Option<u32>,
) -> Outcome {
    let message = match jsonrpc::parse(bytes) {
        Ok(message) => message,
        Err(bad) => {
            journal_rpc(&ctx, &Message::Response);
            return ctx.respond(wire::refusal(400, bad.code, &bad.message), Shape::Full);
        }
    };
    journal_rpc(&ctx, &message);
    let Some(form) = wire::form(wire::accepts(headers), mcp.answer) else {
        let text = "Accept must allow application/json or text/event-stream";
        return ctx.respond(wire::refusal(406, INVALID_REQUEST, text), Shape::Full);
    };
    if let Message::Request { id, method, params } = &message {
        if method == "initialize" {
            return ctx.respond(initialize(&ctx, mcp, tenant, form, id, params), Shape::Full);
        }
    }
    let Some(session_id) = header(headers, SESSION_HEADER) else {
        let text = "Mcp-Session-Id header is required (send initialize first)";
        return ctx.respond(wire::refusal(400, INVALID_REQUEST, text), Shape::Full);
    };
    let revision = {
        let now_ms = ctx.shared.real_ms();
        let mut guard = ctx.shared.state();
        let state = &mut *guard;
        let journal = &state.journal;
        let clock = SessionClock {
            now_ms,
            idle_ms: idle_ms(mcp),
            open: |seq| journal.is_open(seq),
        };
        state.mcp.use_session(session_id, tenant, ctx.seq, &clock)
    };
    let Some(revision) = revision else {
        return ctx.respond(unknown_session(), Shape::Full);
    };
    // Absent, the session's negotiated revision holds (the spec's fallback
    // for clients that do not send it).
    if let Some(asked) = header(headers, VERSION_HEADER) {
        if Revision::from_name(asked) != Some(revision) {
            let text = format!(
                "unsupported MCP-Protocol-Version {asked:?}: this session speaks {}",
                revision.name()
            );
            return ctx.respond(wire::refusal(400, INVALID_REQUEST, &text), Shape::Full);
        }
    }
    let (id, method, params) = match message {
        Message::Request { id, method, params } => (id, method, params),
        Message::Notification { method, params } => {
            if method == "notifications/cancelled" {
                cancel_arrived(&ctx, session_id, &params);
            }
            return ctx.respond(wire::accepted(), Shape::Full);
        }
        Message::Response => return ctx.respond(wire::accepted(), Shape::Full),
    };
    let tasks_on = mcp.tasks.enabled && revision == Revision::V2025_11_25;
    let reply = match method.as_str() {
        "ping" => Ok(json!({})),
        "tools/list" => Ok(tools::list(mcp, revision)),
        "tools/call" => {
            let site = CallSite {
                id,
                session: session_id.to_owned(),
                revision,
                tenant: tenant.to_owned(),
                form,
                step,
            };
            return call::tools_call(ctx, site, params).await;
        }
        "tasks/get" if tasks_on => tasks::get(&ctx.shared.state(), tenant, &params),
        "tasks/list" if tasks_on => Ok(tasks::list(&ctx.shared.state(), tenant)),
        "tasks/cancel" if tasks_on => tasks::cancel(&mut ctx.shared.state(), tenant, &params),
        "tasks/result" if tasks_on => task_result(&ctx, tenant, &params).await,
        _ => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
    };
    let message = match reply {
        Ok(result) => jsonrpc::result(&id, result),
        Err((code, text)) => jsonrpc::error(&id, code, &text),
    };
    ctx.respond(wire::answer(form, ctx.seq, &message), Shape::Full)
}

fn initialize(
    ctx: &Ctx,
    mcp: &McpPlan,
    tenant: &str,
    form: Form,
    id: &Value,
    params: &Map<String, Value>,
) -> Prepared {
    let fallback = mcp
        .revisions
        .first()
        .copied()
        .unwrap_or(Revision::V2025_06_18);
    let revision = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .and_then(Revision::from_name)
        .filter(|r| mcp.revisions.contains(r))
        .unwrap_or(fallback);
    let now_ms = ctx.shared.real_ms();
    let opened = {
        let mut guard = ctx.shared.state();
        let state = &mut *guard;
        let journal = &state.journal;
        let clock = SessionClock {
            now_ms,
            idle_ms: idle_ms(mcp),
            open: |seq| journal.is_open(seq),
        };
        state
            .mcp
            .open_session(tenant, revision, mcp.limits.max_sessions, &clock)
    };
    let Some(session) = opened else {
        // Every session at the cap is in use: refused as a full server is.
        let text = format!("at most {} sessions", mcp.limits.max_sessions);
        return wire::refusal(503, INTERNAL_ERROR, &text);
    };
    let mut capabilities = json!({"tools": {"listChanged": false}});
    if mcp.tasks.enabled && revision == Revision::V2025_11_25 {
        capabilities["tasks"] =
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    let result = json!({
        "protocolVersion": revision.name(),
        "capabilities": capabilities,
        "serverInfo": {"name": "lostreply", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "Paid tools commit effects; on a timeout do not call again: retrieve by operation id or list recent operations.",
    });
    wire::answer(form, ctx.seq, &jsonrpc::result(id, result)).with_header(SESSION_HEADER, session)
}

/// `notifications/cancelled`: the held call hears it (its policy decides) and
/// its journal entry says when it arrived.
fn cancel_arrived(ctx: &Ctx, session: &str, params: &Map<String, Value>) {
    let Some(request_id) = params.get("requestId") else {
        return;
    };
    let key = (session.to_owned(), request_id.to_string());
    let real_ms = ctx.shared.real_ms();
    let mut state = ctx.shared.state();
    let Some(held) = state.mcp.held.get(&key) else {
        return;
    };
    let target = held.seq;
    held.tell(HeldSignal::Cancelled);
    let arrival = CancelArrival {
        at_ms: state.now_ms,
        real_ms,
        request_seq: ctx.seq,
    };
    state.journal.update(target, |entry| {
        if let Some(rpc) = entry.rpc.as_mut() {
            rpc.cancelled.get_or_insert(arrival);
        }
    });
}

/// `tasks/result`: blocks until the task is terminal (the clock moves only
/// through `advance`), bounded by the stall cap and by the client leaving.
async fn task_result(
    ctx: &Ctx,
    tenant: &str,
    params: &Map<String, Value>,
) -> Result<Value, (i64, String)> {
    let mut moved = ctx.shared.clock_moved.subscribe();
    let wait = async {
        loop {
            let now = tasks::result_now(&ctx.shared.state(), tenant, params);
            match now {
                ResultNow::Ready(answer) => return answer,
                ResultNow::Working => {}
            }
            if moved.changed().await.is_err() {
                return Err((INTERNAL_ERROR, "the server is stopping".to_owned()));
            }
        }
    };
    let cap = ctx.shared.plan.limits.stall_cap;
    tokio::select! {
        answer = wait => answer,
        _ = hold_until_client_leaves(&ctx.conn, cap, ctx.shared.shutdown.clone()) => Err((
            INTERNAL_ERROR,
            "the task is still working; poll tasks/get".to_owned(),
        )),
    }
}

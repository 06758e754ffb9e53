//! One request's life behind the proxy: read it, match the fault rules,
//! forward it (or not), and give the client the upstream's answer or the
//! fault. Each request runs in a task of its own, so that a fault's work (a
//! stall waiting for the client, a commit after the client left) and its
//! journal entry end as planned even when hyper gives up on the connection.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use lostreply_simulator::{FaultResponse, FaultRule, Release, StallThen};
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::conn::{Conn, Io};
use super::journal::{self, Entry, Fate, HeldUntil, Struck};
use super::rules::{self, Facts, Steps};
use super::state::{json, plain, Busy, State};
use crate::client;
use crate::contract::KeySyntax;

/// Largest request body forwarded; a larger one is answered 413, not forwarded.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Headers of one hop only, which a proxy never passes on, and those the
/// upstream's client writes itself (host, length, its user agent). `expect`
/// too: hyper has already answered a `100-continue`, and the upstream's
/// client sends the body at once and reads no interim answer.
const HOP_BY_HOP: [&str; 11] = [
    "expect",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
    "user-agent",
];

/// The answer hyper gets: a response, or the word that a fault owns the
/// connection (hyper then closes it without writing).
type Answer = Result<Response<Full<Bytes>>, Faulted>;

/// A fault took the connection: hyper must write nothing more on it.
#[derive(Debug, thiserror::Error)]
#[error("a fault took the connection")]
pub(crate) struct Faulted;

/// Accepts connections until told to stop.
pub(crate) async fn accept(
    listener: TcpListener,
    state: Arc<State>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(Conn::new(stream), Arc::clone(&state)));
                }
                // Out of descriptors, most likely: give connections a moment to end.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }
}

async fn connection(conn: Arc<Conn>, state: Arc<State>) {
    let io = TokioIo::new(Io(Arc::clone(&conn)));
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let state = Arc::clone(&state);
        let conn = Arc::clone(&conn);
        async move {
            tokio::spawn(handle(state, conn, req))
                .await
                .unwrap_or(Err(Faulted))
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, service)
        .await;
}

async fn handle(state: Arc<State>, conn: Arc<Conn>, req: Request<Incoming>) -> Answer {
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    if let Some(control) = path.strip_prefix("/_lostreply/") {
        return Ok(super::control::control(&state, &parts.method, control).await);
    }
    let _busy = Busy::of(&state);
    let body = match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return Ok(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is too large or cut short",
            ))
        }
    };
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let contract = &state.contract;
    let tenant = header(&headers, &contract.auth_header)
        .map(|v| v.strip_prefix(contract.auth_prefix.as_str()).unwrap_or(v));
    let method = parts.method.as_str();
    let step = state.current_step();
    let facts = Facts::read(method, &path, tenant).during(step);
    let rule = state.rules.select(&facts).map(|(i, r)| (i, r.clone()));
    let is_create = facts.kind == Some(lostreply_simulator::RequestKind::Create);
    let seq = state.journal.arrive(Entry {
        seq: 0,
        method: method.to_owned(),
        path: path.clone(),
        key: key_of(&contract.key, &headers, &body),
        fault: rule.as_ref().map(|(i, r)| Struck {
            rule: i + 1,
            at: r.at,
            response: r.response,
        }),
        upstream_status: None,
        fate: Fate::Pending,
        client_status: None,
        client_left: false,
        held_until: None,
        body: (state.steps == Steps::Driven).then(|| body.clone()),
        step,
        arrived: std::time::Instant::now(),
        ended: None,
    });
    let request = client::Request {
        method: method.to_owned(),
        path,
        headers: headers
            .into_iter()
            .filter(|(n, _)| !HOP_BY_HOP.contains(&n.as_str()))
            .collect(),
        body: body.to_vec(),
    };
    let life = Life {
        state: &state,
        conn: &conn,
        seq,
        request: &request,
        is_create,
    };
    let answer = match rule {
        None => life.pass().await,
        Some((_, rule)) => life.fault(&rule).await,
    };
    if state.log.load(Ordering::SeqCst) {
        if let Some(entry) = state.journal.entry(seq) {
            eprintln!("lostreply proxy: {}", journal::line(&entry));
        }
    }
    answer
}

/// One request on its way: what it acts on.
struct Life<'a> {
    state: &'a State,
    conn: &'a Conn,
    seq: u64,
    request: &'a client::Request,
    is_create: bool,
}

impl Life<'_> {
    /// Records the client's fate as it is handed over, and whether the
    /// client has already left: an answer it can no longer read is lost
    /// even though the proxy answered.
    fn record(&self, fate: Fate, client_status: Option<u16>) {
        let client_left = fate.writes_an_answer() && self.conn.has_left();
        self.state.journal.update(self.seq, |e| {
            e.fate = fate;
            e.client_status = client_status;
            e.client_left = client_left;
            e.ended = Some(std::time::Instant::now());
        });
    }

    /// Sends the request upstream and records the status it answered.
    async fn forward(&self) -> Option<client::Response> {
        let answered = self.state.client.send(self.request).await.ok();
        let status = answered.as_ref().map(|r| r.status);
        self.state
            .journal
            .update(self.seq, |e| e.upstream_status = status);
        answered
    }

    /// Forwards and gives the client the upstream's answer, unless a crash
    /// point takes it.
    async fn pass(&self) -> Answer {
        match self.forward().await {
            Some(upstream) => match self.crash_point(&upstream).await {
                Some(crashed) => crashed,
                None => Ok(self.relay(&upstream)),
            },
            None => Ok(self.unanswered()),
        }
    }

    /// A create the upstream committed, carrying an armed crash point's
    /// marker: the harness is told to kill the caller, and the answer is
    /// held until the caller is gone, then the connection closed.
    async fn crash_point(&self, upstream: &client::Response) -> Option<Answer> {
        if !self.is_create || !(200..300).contains(&upstream.status) {
            return None;
        }
        let point = self.state.crash_for(&self.request.body)?;
        let _ = point.fire.send(());
        self.record(Fate::Stalled, None);
        self.hold().await;
        self.conn.fin();
        Some(Err(Faulted))
    }

    fn relay(&self, upstream: &client::Response) -> Response<Full<Bytes>> {
        self.record(Fate::Answered, Some(upstream.status));
        relayed(upstream)
    }

    fn unanswered(&self) -> Response<Full<Bytes>> {
        self.record(Fate::UpstreamUnanswered, Some(502));
        plain(StatusCode::BAD_GATEWAY, "the upstream did not answer")
    }

    async fn fault(&self, rule: &FaultRule) -> Answer {
        if rules::before_upstream(rule.at) {
            return self.before(rule.response).await;
        }
        let Some(upstream) = self.forward().await else {
            return Ok(self.unanswered());
        };
        if let Some(crashed) = self.crash_point(&upstream).await {
            return crashed;
        }
        self.after(rule.response, &upstream).await
    }

    /// A fault before the upstream sees the request.
    async fn before(&self, response: FaultResponse) -> Answer {
        match response {
            FaultResponse::Ok => self.pass().await,
            FaultResponse::Delay { delay } => {
                tokio::time::sleep(delay).await;
                self.pass().await
            }
            FaultResponse::Stall { then, until } => {
                self.record(Fate::Stalled, None);
                self.hold_until(until).await;
                if then == StallThen::Commit {
                    // The service keeps the request it was handed after the client left.
                    self.forward().await;
                }
                self.conn.fin();
                Err(Faulted)
            }
            other => self.lose(other),
        }
    }

    /// A fault after the upstream answered (it committed).
    async fn after(&self, response: FaultResponse, upstream: &client::Response) -> Answer {
        match response {
            FaultResponse::Ok => Ok(self.relay(upstream)),
            FaultResponse::Delay { delay } => {
                tokio::time::sleep(delay).await;
                Ok(self.relay(upstream))
            }
            FaultResponse::Stall { until, .. } => {
                self.record(Fate::Stalled, None);
                self.hold_until(until).await;
                self.conn.fin();
                Err(Faulted)
            }
            FaultResponse::Partial { bytes } => {
                let cut = bytes.min(upstream.body.len());
                let fate = if cut < upstream.body.len() {
                    Fate::Truncated
                } else {
                    Fate::Answered
                };
                self.record(fate, Some(upstream.status));
                let mut raw = head(upstream);
                raw.extend_from_slice(&upstream.body[..cut]);
                let _ = self.conn.write_raw(&raw).await;
                self.conn.fin();
                Err(Faulted)
            }
            FaultResponse::Idle => {
                self.record(Fate::HeadersOnly, Some(upstream.status));
                let _ = self.conn.write_raw(&head(upstream)).await;
                self.hold().await;
                self.conn.fin();
                Err(Faulted)
            }
            other => self.lose(other),
        }
    }

    /// Drops, resets or answers an error status: the same before and after the upstream.
    fn lose(&self, response: FaultResponse) -> Answer {
        match response {
            FaultResponse::Drop => {
                self.record(Fate::Dropped, None);
                self.conn.fin();
                Err(Faulted)
            }
            FaultResponse::Reset => {
                self.record(Fate::Reset, None);
                self.conn.reset();
                Err(Faulted)
            }
            FaultResponse::Status {
                code,
                retry_after_s,
            } => {
                self.record(Fate::ErrorStatus, Some(code));
                Ok(fault_status(code, retry_after_s))
            }
            // Refused at start (rules::check): never reached; the client is
            // told rather than served something the rule did not ask for.
            _ => {
                self.record(Fate::ErrorStatus, Some(500));
                Ok(plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "lostreply proxy: a fault rule it cannot apply",
                ))
            }
        }
    }

    /// Holds as `until` says: until the client leaves ([`Self::hold`]), or
    /// until harness step N ends whether or not the client is still there
    /// (bounded by the hold cap); records which ended the hold.
    async fn hold_until(&self, until: Release) {
        let Release::StepEnd(step) = until else {
            return self.hold().await;
        };
        let ended = tokio::select! {
            () = self.state.step_ended(step) => HeldUntil::StepEnd,
            () = tokio::time::sleep(self.state.hold_cap) => HeldUntil::HoldCap,
        };
        self.state
            .journal
            .update(self.seq, |e| e.held_until = Some(ended));
    }

    /// Holds until the client leaves or the stall cap passes, and records which.
    async fn hold(&self) {
        let until = tokio::select! {
            () = self.conn.client_gone() => HeldUntil::ClientLeft,
            () = tokio::time::sleep(self.state.stall_cap) => HeldUntil::StallCap,
        };
        self.state
            .journal
            .update(self.seq, |e| e.held_until = Some(until));
    }
}

/// The upstream's answer for hyper to write: its status, its end-to-end
/// headers and its body (hyper writes the length).
fn relayed(upstream: &client::Response) -> Response<Full<Bytes>> {
    let Ok(status) = StatusCode::from_u16(upstream.status) else {
        return plain(
            StatusCode::BAD_GATEWAY,
            "the upstream answered an invalid status",
        );
    };
    let mut response = Response::new(Full::new(Bytes::from(upstream.body.clone())));
    *response.status_mut() = status;
    for (name, value) in &upstream.headers {
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(n, v);
        }
    }
    response
}

/// The status line and headers of the upstream's answer, with its full
/// length, as hyper would have written them.
fn head(upstream: &client::Response) -> Vec<u8> {
    let reason = StatusCode::from_u16(upstream.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut text = format!("HTTP/1.1 {} {reason}\r\n", upstream.status);
    for (name, value) in &upstream.headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    text.push_str(&format!("content-length: {}\r\n\r\n", upstream.body.len()));
    text.into_bytes()
}

/// The error a `status` fault answers: a JSON error, and `Retry-After` as the
/// simulator writes it (the rule's, else 1 second on a 429).
fn fault_status(code: u16, retry_after_s: Option<u32>) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::json!({
        "error": {
            "type": "lostreply_fault",
            "message": format!("lostreply proxy: a fault rule answered {code} instead of the upstream's answer"),
        }
    });
    let mut response = json(status, &body);
    let retry = retry_after_s.or((code == 429).then_some(1));
    if let Some(seconds) = retry {
        response
            .headers_mut()
            .insert(hyper::header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The request's idempotency key where the contract says it travels.
fn key_of(syntax: &KeySyntax, headers: &[(String, String)], body: &[u8]) -> Option<String> {
    match syntax {
        KeySyntax::Token { header: name } => header(headers, name).map(str::to_owned),
        KeySyntax::SfString { header: name } => header(headers, name).map(|v| {
            let v = v.trim();
            v.strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v)
                .to_owned()
        }),
        KeySyntax::BodyField { field } => {
            let json: serde_json::Value = serde_json::from_slice(body).ok()?;
            json.get(field)?.as_str().map(str::to_owned)
        }
    }
}

//! An MCP client over Streamable HTTP that applies a client's windows exactly
//! as the contract gives them: wall clock from the request, idle silence that
//! restarts on every byte (or on progress only), a first-byte timer, and a
//! background cut-off. SDKs do not expose all four, and the reference adapter
//! must behave like the client it stands for, so this is written by hand on
//! reqwest (one JSON-RPC POST per request, JSON or SSE answers).
//!
//! It reports what came back (or how the answer was lost); what that means is
//! [`super::classify`]'s business.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use crate::client::{lost, Lost, MAX_RESPONSE_BYTES};
use lostreply_harness::protocol::{ClientWindows, ContractMcp};

/// How long a courtesy `notifications/cancelled` may take: it is sent after
/// the caller already gave up, so it must not hold the call much longer.
const CANCEL_BUDGET: Duration = Duration::from_millis(200);

/// Longest any request may take when the client has no limit of its own: a
/// bound, so that an adapter call always ends (the harness's call deadline is
/// the real guard).
const NO_LIMIT_BOUND: Duration = Duration::from_secs(25);

/// The windows, as durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// From the request.
    pub wall_clock: Option<Duration>,
    /// Silence on the answer.
    pub idle: Option<Duration>,
    /// True when only progress notifications restart the idle window.
    pub idle_on_progress_only: bool,
    /// Until the first byte of the answer.
    pub first_byte: Option<Duration>,
    /// The client stops waiting and moves the call to the background.
    pub background_after: Option<Duration>,
}

impl Windows {
    /// The windows a contract gives.
    pub fn from_contract(client: &ClientWindows) -> Windows {
        let ms = |v: Option<u64>| v.map(Duration::from_millis);
        Windows {
            wall_clock: ms(client.wall_clock_ms),
            idle: ms(client.idle_ms),
            idle_on_progress_only: client.idle_resets_on == "progress",
            first_byte: ms(client.first_byte_ms),
            background_after: ms(client.background_after_ms),
        }
    }
}

/// Which limit ended the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The wall-clock limit.
    WallClock,
    /// The idle window.
    Idle,
    /// The first-byte timer.
    FirstByte,
    /// The call was moved to the background.
    Background,
    /// No limit of the client's own: the adapter's safety bound.
    Bound,
}

impl Window {
    /// For evidence sentences.
    pub fn name(self) -> &'static str {
        match self {
            Window::WallClock => "the wall-clock limit",
            Window::Idle => "the idle window",
            Window::FirstByte => "the first-byte timer",
            Window::Background => "the background cut-off",
            Window::Bound => "the adapter's own bound",
        }
    }
}

/// What one JSON-RPC request produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Exchange {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error.
    RpcError {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// An HTTP status that is not an answer (4xx/5xx), with the body's start.
    Http {
        /// The status.
        status: u16,
        /// The first bytes of the body, for evidence.
        detail: String,
    },
    /// A window ran out; a courtesy cancel was sent unless it was the background cut-off.
    TimedOut(Window),
    /// An SSE stream that ended without the response.
    StreamEnded,
    /// The transport lost the answer (reset, closed, unreadable).
    Transport(Lost),
}

impl Exchange {
    /// One sentence for evidence.
    pub fn describe(&self) -> String {
        match self {
            Exchange::Result(_) => "a result".to_owned(),
            Exchange::RpcError { code, message } => {
                format!("JSON-RPC error {code}: {message}")
            }
            Exchange::Http { status, detail } => format!("HTTP {status}: {detail}"),
            Exchange::TimedOut(window) => format!("no answer within {}", window.name()),
            Exchange::StreamEnded => "the event stream ended without the answer".to_owned(),
            Exchange::Transport(lost) => lost.describe(0),
        }
    }
}

/// Why a client for the contract's server cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ClientSetupError {
    /// reqwest could not build its client.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    /// The contract's `mcp.url` is not an http(s) URL.
    #[error("mcp.url {0:?} is not an http(s) URL")]
    NotHttpUrl(String),
}

/// An MCP session with one server.
#[derive(Debug)]
pub struct McpClient {
    http: reqwest::Client,
    url: reqwest::Url,
    credential: String,
    windows: Windows,
    revision: String,
    session: Option<String>,
    next_id: u64,
}

impl McpClient {
    /// A client for the server of `contract`, not connected yet.
    pub fn new(contract: &ContractMcp, credential: &str) -> Result<McpClient, ClientSetupError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(ClientSetupError::HttpClient)?;
        let url = reqwest::Url::parse(&contract.url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| ClientSetupError::NotHttpUrl(contract.url.clone()))?;
        Ok(McpClient {
            http,
            url,
            credential: credential.to_owned(),
            windows: Windows::from_contract(&contract.client),
            revision: contract.revision.clone(),
            session: None,
            next_id: 1,
        })
    }

    /// `initialize` then `notifications/initialized`. On failure, what came back.
    pub async fn connect(&mut self) -> Result<(), Exchange> {
        let params = json!({
            "protocolVersion": self.revision,
            "capabilities": {},
            "clientInfo": {"name": "lostreply-reference", "version": env!("CARGO_PKG_VERSION")},
        });
        match self.request("initialize", params).await {
            Exchange::Result(result) => {
                if let Some(version) = result.get("protocolVersion").and_then(Value::as_str) {
                    self.revision = version.to_owned();
                }
            }
            other => return Err(other),
        }
        self.notify("notifications/initialized", json!({})).await;
        Ok(())
    }

    /// One JSON-RPC request under the client's windows.
    pub async fn request(&mut self, method: &str, params: Value) -> Exchange {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(1);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.exchange(id, &message).await
    }

    /// What the SDKs do when their own limit runs out: tell the server,
    /// politely, while the call's connection is still open (so the server
    /// meets the cancel before it sees the client leave). A call moved to the
    /// background is not given up: no cancel.
    async fn give_up(&self, id: u64, window: Window) -> Exchange {
        if window != Window::Background {
            let cancel =
                json!({"requestId": id, "reason": format!("client gave up: {}", window.name())});
            let _ = tokio::time::timeout(
                CANCEL_BUDGET,
                self.notify("notifications/cancelled", cancel),
            )
            .await;
        }
        Exchange::TimedOut(window)
    }

    /// A notification: answered 202 with no body; nothing to learn from it.
    async fn notify(&self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let send = self.post(&message).send();
        let _ = tokio::time::timeout(CANCEL_BUDGET, send).await;
    }

    fn post(&self, message: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(self.url.clone())
            .bearer_auth(&self.credential)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", &self.revision)
            .json(message);
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session);
        }
        request
    }

    async fn exchange(&mut self, id: u64, message: &Value) -> Exchange {
        let mut clock = Clock::start(self.windows);
        // Kept alive until a cancel is sent: dropping it closes the connection.
        let send = self.post(message).send();
        tokio::pin!(send);
        let response = match tokio::time::timeout_at(clock.deadline(), &mut send).await {
            Err(_) => return self.give_up(id, clock.expired()).await,
            Ok(Err(error)) => return Exchange::Transport(lost(&error, None)),
            Ok(Ok(response)) => response,
        };
        clock.first_byte();
        let status = response.status().as_u16();
        if let Some(session) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(session.to_owned());
        }
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut response = response;
        let mut body = Vec::new();
        let mut events = SseEvents::default();
        loop {
            let chunk = match tokio::time::timeout_at(clock.deadline(), response.chunk()).await {
                Err(_) => return self.give_up(id, clock.expired()).await,
                Ok(Err(error)) => return Exchange::Transport(lost(&error, Some(status))),
                Ok(Ok(chunk)) => chunk,
            };
            let Some(chunk) = chunk else { break };
            if !clock.idle_on_progress_only() {
                clock.activity();
            }
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Exchange::Transport(Lost {
                    kind: crate::client::LossKind::TooLarge,
                    status: Some(status),
                    detail: String::new(),
                });
            }
            if sse {
                for data in events.push(&chunk) {
                    let Ok(message) = serde_json::from_str::<Value>(&data) else {
                        continue;
                    };
                    if message.get("method").and_then(Value::as_str)
                        == Some("notifications/progress")
                    {
                        clock.activity();
                        continue;
                    }
                    if message.get("id").and_then(Value::as_u64) == Some(id) {
                        return answer(&message);
                    }
                }
            } else {
                body.extend_from_slice(&chunk);
            }
        }
        if !(200..300).contains(&status) {
            let detail = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            return Exchange::Http { status, detail };
        }
        if sse {
            return Exchange::StreamEnded;
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(message) => answer(&message),
            Err(e) => Exchange::Transport(Lost {
                kind: crate::client::LossKind::Closed,
                status: Some(status),
                detail: format!("unreadable JSON answer: {e}"),
            }),
        }
    }
}

/// A JSON-RPC response as an exchange.
fn answer(message: &Value) -> Exchange {
    if let Some(result) = message.get("result") {
        return Exchange::Result(result.clone());
    }
    let error = message.get("error");
    Exchange::RpcError {
        code: error
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
            .unwrap_or(0),
        message: error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("a response with neither result nor error")
            .to_owned(),
    }
}

/// The windows of one request, as deadlines.
#[derive(Debug)]
struct Clock {
    windows: Windows,
    started: Instant,
    last_activity: Instant,
    got_first_byte: bool,
}

impl Clock {
    fn start(windows: Windows) -> Clock {
        let now = Instant::now();
        Clock {
            windows,
            started: now,
            last_activity: now,
            got_first_byte: false,
        }
    }

    fn idle_on_progress_only(&self) -> bool {
        self.windows.idle_on_progress_only
    }

    fn first_byte(&mut self) {
        self.got_first_byte = true;
        if !self.windows.idle_on_progress_only {
            self.activity();
        }
    }

    fn activity(&mut self) {
        self.last_activity = Instant::now();
    }

    /// Every deadline that applies now, with the window it belongs to.
    fn deadlines(&self) -> Vec<(Instant, Window)> {
        let mut all = Vec::new();
        if let Some(w) = self.windows.wall_clock {
            all.push((self.started + w, Window::WallClock));
        }
        if let Some(w) = self.windows.idle {
            all.push((self.last_activity + w, Window::Idle));
        }
        if let (Some(w), false) = (self.windows.first_byte, self.got_first_byte) {
            all.push((self.started + w, Window::FirstByte));
        }
        if let Some(w) = self.windows.background_after {
            all.push((self.started + w, Window::Background));
        }
        all.push((self.started + NO_LIMIT_BOUND, Window::Bound));
        all
    }

    fn deadline(&self) -> Instant {
        self.deadlines()
            .into_iter()
            .map(|(at, _)| at)
            .min()
            .unwrap_or(self.started + NO_LIMIT_BOUND)
    }

    /// The window whose deadline passed first.
    fn expired(&self) -> Window {
        self.deadlines()
            .into_iter()
            .min_by_key(|(at, _)| *at)
            .map_or(Window::Bound, |(_, window)| window)
    }
}

/// Splits an event stream into the `data` of each event.
#[derive(Debug, Default)]
struct SseEvents {
    pending: Vec<u8>,
}

impl SseEvents {
    /// Adds bytes; returns the data of every event they complete.
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end.1).collect();
            let text = String::from_utf8_lossy(&event[..end.0]);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if !data.is_empty() {
                out.push(data.join("\n"));
            }
        }
        out
    }
}

/// Where the first complete event ends: (end of its text, end of its separator).
fn event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_on_blank_lines_and_join_data_lines() {
        let mut events = SseEvents::default();
        assert!(events.push(b"id: 1\ndata: {\"a\":").is_empty());
        let out =
            events.push(b"1}\n\n: keep-alive\n\nevent: message\r\ndata: x\r\ndata: y\r\n\r\n");
        assert_eq!(out, vec!["{\"a\":1}".to_owned(), "x\ny".to_owned()]);
    }

    #[test]
    fn the_first_window_to_pass_is_the_one_named() {
        let clock = Clock::start(Windows {
            wall_clock: Some(Duration::from_millis(500)),
            idle: Some(Duration::from_millis(100)),
            idle_on_progress_only: false,
            first_byte: Some(Duration::from_millis(300)),
            background_after: None,
        });
        assert_eq!(clock.expired(), Window::Idle);
        let no_limits = Clock::start(Windows {
            wall_clock: None,
            idle: None,
            idle_on_progress_only: false,
            first_byte: None,
            background_after: None,
        });
        assert_eq!(no_limits.expired(), Window::Bound);
    }
}

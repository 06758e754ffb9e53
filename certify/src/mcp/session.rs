//! MCP over Streamable HTTP on the bounded client: `initialize`, requests and
//! notifications with the session and protocol headers, answers read as one
//! JSON body or as an SSE stream, and the one gate every `tools/call` passes.
//!
//! The gate is the crate's promise to a vendor: certification calls the
//! retrieval tools the contract names and, when `paid` allows it, that one
//! paid tool exactly once. Any other `tools/call` is refused before a byte leaves.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Map, Value};

use super::contract::McpContract;
use crate::client::{Client, ClientError, Request, Response};
use crate::verdict::Evidence;

/// Revisions certification speaks, newest first (asked for in that order).
pub const REVISIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

/// The most evidence text kept of one answer.
const EXCERPT_CHARS: usize = 400;

/// Why a tool call was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The contract does not allow this tool.
    #[error(
        "refusing to call {0:?}: the contract allows only its retrieval tools and `paid.tool`"
    )]
    NotAllowed(String),
    /// The paid call was already made this run.
    #[error("refusing to call {0:?} again: the contract allows one paid call per run")]
    PaidSpent(String),
    /// The client could not send it.
    #[error("{0}")]
    Client(#[from] ClientError),
}

/// What certification may send, shared by every session of a run.
#[derive(Debug)]
pub struct Wire {
    client: Client,
    path: String,
    retrieval: [String; 2],
    paid: Option<String>,
    paid_used: AtomicBool,
    secrets: Vec<String>,
}

impl Wire {
    /// The wire for a contract, over `client` (whose origin is the contract's).
    pub fn new(contract: &McpContract, client: Client) -> Wire {
        Wire {
            client,
            path: contract.path.clone(),
            retrieval: [
                contract.retrieval.get.clone(),
                contract.retrieval.list.clone(),
            ],
            paid: contract.paid.as_ref().map(|p| p.tool.clone()),
            paid_used: AtomicBool::new(false),
            secrets: contract
                .primary
                .iter()
                .chain(contract.second_tenant.iter())
                .filter(|s| s.len() >= 4)
                .cloned()
                .collect(),
        }
    }

    /// The client (for the clock control request and the request count).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// `text` with every credential replaced: evidence never carries one.
    pub fn redact(&self, text: &str) -> String {
        self.secrets.iter().fold(text.to_owned(), |t, s| {
            t.replace(s.as_str(), "<credential>")
        })
    }

    /// Takes the permission to call `tool`.
    fn admit(&self, tool: &str) -> Result<(), Refused> {
        if self.retrieval.iter().any(|r| r == tool) {
            return Ok(());
        }
        if self.paid.as_deref() != Some(tool) {
            return Err(Refused::NotAllowed(tool.to_owned()));
        }
        if self.paid_used.swap(true, Ordering::SeqCst) {
            return Err(Refused::PaidSpent(tool.to_owned()));
        }
        Ok(())
    }
}

/// One HTTP answer of the endpoint, with its JSON-RPC message when it has one.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`, lowercased.
    pub content_type: String,
    /// `Mcp-Session-Id`, when given.
    pub session: Option<String>,
    /// The response message as sent: the JSON body, or the `data` of the SSE
    /// event that carries it. What byte-identity is judged on.
    pub message_text: Option<String>,
    /// The same, parsed.
    pub message: Option<Value>,
    /// The raw body (for evidence when there is no message).
    pub body: Vec<u8>,
}

impl Answer {
    /// `result`, when the message is one.
    pub fn result(&self) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get("result"))
    }

    /// `error`, when the message is one.
    pub fn rpc_error(&self) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get("error"))
    }

    /// A tool result's `isError`.
    pub fn is_tool_error(&self) -> bool {
        self.result()
            .and_then(|r| r.get("isError"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// A tool result's `structuredContent`.
    pub fn structured(&self) -> Option<&Value> {
        self.result().and_then(|r| r.get("structuredContent"))
    }

    /// The HTTP-like status a tool error carries (`structuredContent.status`,
    /// or a 4xx/5xx number in its text).
    pub fn tool_status(&self) -> Option<u16> {
        if let Some(s) = self
            .structured()
            .and_then(|s| s.get("status"))
            .and_then(Value::as_u64)
        {
            return u16::try_from(s).ok();
        }
        let text = self
            .result()
            .and_then(|r| r.get("content"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        text.split(|c: char| !c.is_ascii_digit())
            .filter(|w| w.len() == 3)
            .filter_map(|w| w.parse::<u16>().ok())
            .find(|s| (400..600).contains(s))
    }
}

/// A session with one credential.
#[derive(Debug)]
pub struct Session<'w> {
    wire: &'w Wire,
    credential: Option<String>,
    session: Option<String>,
    revision: Option<String>,
    next_id: u64,
}

impl<'w> Session<'w> {
    /// A session that presents `credential` (not yet initialized).
    pub fn new(wire: &'w Wire, credential: Option<String>) -> Session<'w> {
        Session {
            wire,
            credential,
            session: None,
            revision: None,
            next_id: 0,
        }
    }

    /// The revision the server chose.
    pub fn revision(&self) -> Option<&str> {
        self.revision.as_deref()
    }

    fn request(&self, body: &Value) -> Request {
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        if let Some(c) = &self.credential {
            headers.push(("Authorization".to_owned(), format!("Bearer {c}")));
        }
        if let Some(s) = &self.session {
            headers.push(("Mcp-Session-Id".to_owned(), s.clone()));
        }
        if let Some(r) = &self.revision {
            headers.push(("MCP-Protocol-Version".to_owned(), r.clone()));
        }
        Request {
            method: "POST".to_owned(),
            path: self.wire.path.clone(),
            headers,
            body: body.to_string().into_bytes(),
        }
    }

    /// Sends one JSON-RPC message; `id` is the request's id (`None`: a notification).
    async fn exchange(
        &self,
        label: &str,
        body: &Value,
        id: Option<&Value>,
    ) -> (Result<Answer, ClientError>, Evidence) {
        let req = self.request(body);
        let result = self.wire.client.send(&req).await.map(|r| read(r, id));
        let evidence = self.evidence(label, body, &result);
        (result, evidence)
    }

    fn evidence(
        &self,
        label: &str,
        body: &Value,
        result: &Result<Answer, ClientError>,
    ) -> Evidence {
        let method = body.get("method").and_then(Value::as_str).unwrap_or("");
        let params = body.get("params").cloned().unwrap_or(Value::Null);
        let (outcome, text) = match result {
            Ok(a) => {
                let kind = a.content_type.split(';').next().unwrap_or("").trim();
                let kind = if kind.is_empty() { "no body" } else { kind };
                let text = a
                    .message_text
                    .clone()
                    .unwrap_or_else(|| String::from_utf8_lossy(&a.body).into_owned());
                (format!("{} {kind}", a.status), text)
            }
            Err(e) => (format!("no answer: {e}"), String::new()),
        };
        Evidence::Exchange {
            label: label.to_owned(),
            request: self.wire.redact(&clip(
                &format!("POST {} {method} {params}", self.wire.path),
                EXCERPT_CHARS,
            )),
            key: None,
            outcome,
            body: self.wire.redact(&clip(&text, EXCERPT_CHARS)),
        }
    }

    /// A request with a fresh id.
    pub async fn call(
        &mut self,
        label: &str,
        method: &str,
        params: Value,
    ) -> (Result<Answer, ClientError>, Evidence) {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.call_with_id(label, method, params, id).await
    }

    /// A request with the given id: two requests whose answers are compared
    /// byte for byte carry the same id.
    pub async fn call_with_id(
        &mut self,
        label: &str,
        method: &str,
        params: Value,
        id: Value,
    ) -> (Result<Answer, ClientError>, Evidence) {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.exchange(label, &body, Some(&id)).await
    }

    /// A notification.
    pub async fn notify(
        &self,
        label: &str,
        method: &str,
    ) -> (Result<Answer, ClientError>, Evidence) {
        let body = json!({"jsonrpc": "2.0", "method": method});
        self.exchange(label, &body, None).await
    }

    /// `initialize` on the newest revision we speak; keeps the session id and
    /// the revision the server chose, then sends `notifications/initialized`.
    pub async fn initialize(
        &mut self,
        label: &str,
    ) -> (Result<Answer, ClientError>, Vec<Evidence>) {
        let params = json!({
            "protocolVersion": REVISIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "lostreply-certify", "version": env!("CARGO_PKG_VERSION")},
        });
        let (result, evidence) = self.call(label, "initialize", params).await;
        let mut trail = vec![evidence];
        if let Ok(answer) = &result {
            self.session = answer.session.clone();
            self.revision = answer
                .result()
                .and_then(|r| r.get("protocolVersion"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            if answer.status == 200 && self.revision.is_some() {
                let (_, e) = self
                    .notify(
                        &format!("{label}: initialized"),
                        "notifications/initialized",
                    )
                    .await;
                trail.push(e);
            }
        }
        (result, trail)
    }

    /// `tools/call`, through the gate.
    pub async fn tool(
        &mut self,
        label: &str,
        name: &str,
        arguments: &Map<String, Value>,
        id: Option<Value>,
    ) -> (Result<Answer, Refused>, Option<Evidence>) {
        if let Err(refused) = self.wire.admit(name) {
            return (Err(refused), None);
        }
        let params = json!({"name": name, "arguments": arguments});
        let (result, evidence) = match id {
            Some(id) => self.call_with_id(label, "tools/call", params, id).await,
            None => self.call(label, "tools/call", params).await,
        };
        (result.map_err(Refused::Client), Some(evidence))
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Reads an HTTP answer: its JSON body, or the SSE event answering `id`.
fn read(r: Response, id: Option<&Value>) -> Answer {
    let content_type = r.header("content-type").unwrap_or("").to_ascii_lowercase();
    let session = r.header("mcp-session-id").map(str::to_owned);
    let text = String::from_utf8_lossy(&r.body).into_owned();
    let message_text = if content_type.starts_with("text/event-stream") {
        sse_response(&text, id)
    } else if text.trim().is_empty() {
        None
    } else {
        Some(text)
    };
    let message = message_text
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    Answer {
        status: r.status,
        content_type,
        session,
        message_text,
        message,
        body: r.body,
    }
}

/// The `data` of the SSE event carrying the response to `id` (the last
/// message event when no id is known).
pub fn sse_response(stream: &str, id: Option<&Value>) -> Option<String> {
    let mut found = None;
    let mut data: Vec<&str> = Vec::new();
    let mut consider = |data: &mut Vec<&str>| {
        if data.is_empty() {
            return;
        }
        let text = data.join("\n");
        data.clear();
        let Ok(message) = serde_json::from_str::<Value>(&text) else {
            return;
        };
        let is_response = message.get("result").is_some() || message.get("error").is_some();
        let ours = id.is_none_or(|id| message.get("id") == Some(id));
        if is_response && ours {
            found = Some(text);
        }
    };
    for line in stream.lines() {
        if line.is_empty() {
            consider(&mut data);
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    consider(&mut data);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_event_is_found_among_notifications() {
        let stream = "id: 1\ndata: \n\n: keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nid: 3\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n";
        assert_eq!(
            sse_response(stream, Some(&json!(7))).as_deref(),
            Some("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}")
        );
        assert_eq!(sse_response(stream, Some(&json!(8))), None);
    }

    #[test]
    fn tool_error_status_is_read_from_the_structure_or_the_text() {
        let answer = |result: Value| Answer {
            status: 200,
            content_type: "application/json".to_owned(),
            session: None,
            message_text: None,
            message: Some(json!({"result": result})),
            body: Vec::new(),
        };
        let a = answer(json!({"isError": true, "structuredContent": {"status": 401}}));
        assert_eq!(a.tool_status(), Some(401));
        let b = answer(
            json!({"isError": true, "content": [{"type": "text", "text": "HTTP 404: none"}]}),
        );
        assert_eq!(b.tool_status(), Some(404));
        assert!(b.is_tool_error());
    }
}

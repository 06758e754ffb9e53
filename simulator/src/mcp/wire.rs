//! The HTTP side of Streamable HTTP: which form an answer takes (one JSON body
//! or an SSE stream), the SSE event text, and the HTTP-level refusals (a
//! missing session, a bad protocol version, an unacceptable `Accept`).

use bytes::Bytes;
use http::HeaderMap;
use serde_json::Value;

use super::jsonrpc;
use super::plan::AnswerStyle;
use crate::responses::Prepared;

/// `Content-Type` of an SSE answer.
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// How one answer travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `application/json`, one message.
    Json,
    /// `text/event-stream`, the message as an event.
    Sse,
}

/// What the client's `Accept` allows: `(json, sse)`. No `Accept` allows both,
/// as HTTP says.
pub(crate) fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let values: Vec<&str> = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return (true, true);
    }
    let mut json = false;
    let mut sse = false;
    for range in values.iter().flat_map(|v| v.split(',')) {
        let media = range.split(';').next().unwrap_or("").trim();
        match media.to_ascii_lowercase().as_str() {
            "*/*" => {
                json = true;
                sse = true;
            }
            "application/json" | "application/*" => json = true,
            "text/event-stream" | "text/*" => sse = true,
            _ => {}
        }
    }
    (json, sse)
}

/// The form of an answer: the plan's style when the client accepts both.
pub(crate) fn form(accepted: (bool, bool), style: AnswerStyle) -> Option<Form> {
    match (accepted, style) {
        ((true, true), AnswerStyle::Json) | ((true, false), _) => Some(Form::Json),
        ((true, true), AnswerStyle::Sse) | ((false, true), _) => Some(Form::Sse),
        ((false, false), _) => None,
    }
}

/// One SSE event carrying a JSON-RPC message.
pub(crate) fn event(id: &str, message: &Value) -> Bytes {
    Bytes::from(format!("id: {id}\nevent: message\ndata: {message}\n\n"))
}

/// The priming event: an id and empty data, so a client knows where it could resume.
pub(crate) fn priming_event(id: &str) -> Bytes {
    Bytes::from(format!("id: {id}\ndata: \n\n"))
}

/// A comment line: bytes on the wire that carry nothing (keep-alive).
pub(crate) fn keep_alive() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// One JSON-RPC message as a complete answer in `form`; `seq` names its event.
pub(crate) fn answer(form: Form, seq: u64, message: &Value) -> Prepared {
    match form {
        Form::Json => Prepared::json(200, message),
        Form::Sse => Prepared {
            status: 200,
            content_type: EVENT_STREAM,
            body: event(&format!("{seq}-1"), message),
            headers: vec![(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_static("no-cache"),
            )],
        },
    }
}

/// An HTTP refusal carrying a JSON-RPC error without id, as MCP servers answer
/// transport-level problems.
pub(crate) fn refusal(status: u16, code: i64, message: &str) -> Prepared {
    Prepared::json(status, &jsonrpc::error(&Value::Null, code, message))
}

/// 202 without a body: a notification or a response was received.
pub(crate) fn accepted() -> Prepared {
    Prepared::json_body(202, Bytes::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with_accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static("")),
        );
        headers
    }

    #[test]
    fn the_plan_chooses_only_when_the_client_accepts_both() {
        let both = accepts(&with_accept("application/json, text/event-stream"));
        assert_eq!(both, (true, true));
        assert_eq!(form(both, AnswerStyle::Json), Some(Form::Json));
        assert_eq!(form(both, AnswerStyle::Sse), Some(Form::Sse));
        let json_only = accepts(&with_accept("application/json"));
        assert_eq!(form(json_only, AnswerStyle::Sse), Some(Form::Json));
        let sse_only = accepts(&with_accept("text/event-stream;q=1"));
        assert_eq!(form(sse_only, AnswerStyle::Json), Some(Form::Sse));
        assert_eq!(
            form(accepts(&with_accept("text/html")), AnswerStyle::Sse),
            None
        );
        assert_eq!(accepts(&HeaderMap::new()), (true, true));
    }
}

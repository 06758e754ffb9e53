//! JSON-RPC 2.0 as MCP uses it: one message per POST (batches were removed in
//! 2025-06-18), requests with a string or number id, notifications, and the
//! client's responses to server requests (which this server never sends, so
//! they are only acknowledged).

use serde_json::{json, Map, Value};

/// Invalid JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// Valid JSON, not a JSON-RPC message (or a batch).
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// A method the server does not have.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Bad parameters, an unknown tool, an unknown task.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// The server could not answer (a bound ran out).
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// One message from the client.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    /// Wants an answer.
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    /// Wants none.
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// The client answering a server request.
    Response,
}

/// Why a body is not a message: the JSON-RPC error to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    pub code: i64,
    pub message: String,
}

fn malformed(code: i64, message: impl Into<String>) -> Malformed {
    Malformed {
        code,
        message: message.into(),
    }
}

/// Reads one message.
pub(crate) fn parse(bytes: &[u8]) -> Result<Message, Malformed> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| malformed(PARSE_ERROR, format!("parse error: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err(malformed(
            INVALID_REQUEST,
            "one JSON-RPC message per request, as a JSON object (batches are not supported)",
        ));
    };
    if fields.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(malformed(INVALID_REQUEST, "jsonrpc must be \"2.0\""));
    }
    let params = match fields.remove("params") {
        None => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return Err(malformed(INVALID_REQUEST, "params must be an object")),
    };
    let id = fields.remove("id");
    match (fields.remove("method"), id) {
        (Some(Value::String(method)), None) => Ok(Message::Notification { method, params }),
        (Some(Value::String(method)), Some(id @ (Value::String(_) | Value::Number(_)))) => {
            Ok(Message::Request { id, method, params })
        }
        (Some(Value::String(_)), Some(_)) => Err(malformed(
            INVALID_REQUEST,
            "id must be a string or a number",
        )),
        (Some(_), _) => Err(malformed(INVALID_REQUEST, "method must be a string")),
        (None, Some(_)) if fields.contains_key("result") || fields.contains_key("error") => {
            Ok(Message::Response)
        }
        (None, _) => Err(malformed(INVALID_REQUEST, "a message needs a method")),
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`.
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A server notification.
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_requests_notifications_and_responses_apart() {
        let request = parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        assert!(matches!(request, Ok(Message::Request { ref method, .. }) if method == "ping"));
        let note = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(matches!(note, Ok(Message::Notification { .. })));
        let response = parse(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#);
        assert_eq!(response, Ok(Message::Response));
    }

    #[test]
    fn refuses_what_is_not_one_message() {
        let code = |body: &[u8]| parse(body).err().map(|m| m.code);
        assert_eq!(code(b"{nope"), Some(PARSE_ERROR));
        assert_eq!(code(b"[]"), Some(INVALID_REQUEST));
        assert_eq!(code(br#"{"id":1,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#),
            Some(INVALID_REQUEST)
        );
    }
}

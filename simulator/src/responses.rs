//! Response bodies of the provider API: errors, problem details, objects.

use bytes::Bytes;
use http::HeaderValue;
use serde_json::{json, Value};

/// `Content-Type` of ordinary answers.
pub(crate) const JSON: &str = "application/json";
/// `Content-Type` of RFC 9457 problem details (ietf idempotency errors).
pub(crate) const PROBLEM_JSON: &str = "application/problem+json";

/// A response decided but not yet sent: the fault engine still chooses how it leaves.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Bytes,
    /// Extra headers (`Location`, `Retry-After`, `Idempotent-Replayed`, ...),
    /// as they go out (a `Location` made once is shared by its replays).
    pub headers: Vec<(&'static str, HeaderValue)>,
}

impl Prepared {
    pub(crate) fn json(status: u16, value: &Value) -> Prepared {
        Prepared {
            status,
            content_type: JSON,
            body: Bytes::from(value.to_string()),
            headers: Vec::new(),
        }
    }

    /// An answer whose JSON text is already written.
    pub(crate) fn json_body(status: u16, body: Bytes) -> Prepared {
        Prepared {
            status,
            content_type: JSON,
            body,
            headers: Vec::new(),
        }
    }

    /// Adds a header; a value that no header may hold is left out (none of
    /// the provider's values is one: they are its own text and ids).
    pub(crate) fn with_header(self, name: &'static str, value: impl Into<String>) -> Prepared {
        match HeaderValue::try_from(value.into()) {
            Ok(value) => self.with_header_value(name, value),
            Err(_) => self,
        }
    }

    pub(crate) fn with_header_value(mut self, name: &'static str, value: HeaderValue) -> Prepared {
        self.headers.push((name, value));
        self
    }
}

/// `{"error":{"type":…}}`: the exact bodies of 401 and 404, which must not vary.
pub(crate) fn bare_error(status: u16, kind: &str) -> Prepared {
    Prepared::json(status, &json!({"error": {"type": kind}}))
}

/// `{"error":{"type":…,"message":…}}`.
pub(crate) fn error(status: u16, kind: &str, message: &str) -> Prepared {
    Prepared::json(
        status,
        &json!({"error": {"type": kind, "message": message}}),
    )
}

pub(crate) fn unauthorized() -> Prepared {
    bare_error(401, "unauthorized").with_header("www-authenticate", "Bearer")
}

/// The one not-found answer: unknown path, unknown resource, missing id,
/// another tenant's id, disabled retrieve.
pub(crate) fn not_found() -> Prepared {
    bare_error(404, "not_found")
}

pub(crate) fn invalid_request(message: &str) -> Prepared {
    error(400, "invalid_request", message)
}

pub(crate) fn unsupported_query(message: &str) -> Prepared {
    error(400, "unsupported_query", message)
}

/// RFC 9457 problem details, as the IETF idempotency draft answers.
pub(crate) fn problem(status: u16, name: &str, title: &str, detail: &str) -> Prepared {
    let body = json!({
        "type": format!("urn:lostreply:problem:{name}"),
        "title": title,
        "status": status,
        "detail": detail,
    });
    Prepared {
        content_type: PROBLEM_JSON,
        ..Prepared::json(status, &body)
    }
}

/// The answer of a `status` fault: what a real provider would say with that code.
pub(crate) fn fault_status(code: u16) -> Prepared {
    let kind = match code {
        400 => "invalid_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        409 => "conflict",
        413 => "payload_too_large",
        422 => "unprocessable",
        429 => "rate_limited",
        500..=599 => "api_error",
        _ => "invalid_request",
    };
    let prepared = bare_error(code, kind);
    if code == 429 {
        prepared.with_header("retry-after", "1")
    } else {
        prepared
    }
}

/// `{"data":[…],"has_more":…}`.
pub(crate) fn list(data: Vec<Value>, has_more: bool) -> Prepared {
    Prepared::json(200, &json!({"data": data, "has_more": has_more}))
}

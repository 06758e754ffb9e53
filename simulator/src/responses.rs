//! Response bodies of the provider API: errors, problem details, objects.
//!
//! Every error is made here, in the profile's envelope: the generic
//! profile's bodies are written as docs/provider-api.md shows them; a
//! declared profile's come from its template (`profile::render`).

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use serde_json::{json, Value};

use crate::profile::render::fill;
use crate::profile::{ErrorKind, ErrorShape, Errors, Profile};

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
    pub headers: Vec<(HeaderName, HeaderValue)>,
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
        self.headers.push((HeaderName::from_static(name), value));
        self
    }

    /// Adds a header whose name a profile gives (checked when the profile
    /// was read); a name or value no header may hold is left out.
    pub(crate) fn with_header_owned(mut self, name: &str, value: &str) -> Prepared {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            self.headers.push((name, value));
        }
        self
    }
}

/// The profile's error envelope, where it declares one.
fn shaped(profile: &Profile) -> Option<&ErrorShape> {
    match &profile.errors {
        Errors::Generic => None,
        Errors::Shaped(shape) => Some(shape),
    }
}

/// An error with a message, in the profile's envelope; the generic
/// profile's type names the kind.
pub(crate) fn failure(profile: &Profile, status: u16, kind: ErrorKind, message: &str) -> Prepared {
    match shaped(profile) {
        Some(shape) => shaped_error(profile, shape, status, kind, message),
        None => with_retry_hint(profile, error(status, kind.name(), message), kind),
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

pub(crate) fn unauthorized(profile: &Profile) -> Prepared {
    match shaped(profile) {
        Some(shape) => shaped_error(
            profile,
            shape,
            401,
            ErrorKind::Unauthorized,
            "Invalid API key provided.",
        ),
        None => bare_error(401, "unauthorized").with_header("www-authenticate", "Bearer"),
    }
}

/// The one not-found answer: unknown path, unknown resource, missing id,
/// another tenant's id. The same for each of them, in every profile, so
/// that another tenant's id reads as one that does not exist.
pub(crate) fn not_found(profile: &Profile) -> Prepared {
    match shaped(profile) {
        Some(shape) => shaped_error(
            profile,
            shape,
            404,
            ErrorKind::NotFound,
            "No such object or path.",
        ),
        None => bare_error(404, "not_found"),
    }
}

/// 405 with the methods the route does take.
pub(crate) fn method_not_allowed(profile: &Profile, allow: &str) -> Prepared {
    let prepared = match shaped(profile) {
        Some(shape) => shaped_error(
            profile,
            shape,
            405,
            ErrorKind::MethodNotAllowed,
            &format!("This path takes {allow}."),
        ),
        None => bare_error(405, "method_not_allowed"),
    };
    prepared.with_header("allow", allow)
}

pub(crate) fn invalid_request(profile: &Profile, message: &str) -> Prepared {
    failure(profile, 400, ErrorKind::InvalidRequest, message)
}

pub(crate) fn unsupported_query(profile: &Profile, message: &str) -> Prepared {
    failure(profile, 400, ErrorKind::UnsupportedQuery, message)
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
pub(crate) fn fault_status(profile: &Profile, code: u16, retry_after_s: Option<u32>) -> Prepared {
    // A rate limit says when to come back (1 second unless the rule chose);
    // another status carries the header only when the rule gives one.
    let retry_after = retry_after_s.or((code == 429).then_some(1));
    let with_retry_after = |prepared: Prepared| match retry_after {
        Some(seconds) => prepared.with_header("retry-after", seconds.to_string()),
        None => prepared,
    };
    if let Some(shape) = shaped(profile) {
        let kind = ErrorKind::of_status(code);
        let message = format!("The provider answered {code} (a fault the scenario injects).");
        return with_retry_after(shaped_error(profile, shape, code, kind, &message));
    }
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
    with_retry_after(bare_error(code, kind))
}

/// `{"data":[…],"has_more":…}`.
pub(crate) fn list(data: Vec<Value>, has_more: bool) -> Prepared {
    Prepared::json(200, &json!({"data": data, "has_more": has_more}))
}

/// An error in a declared envelope, with the profile's retry hint.
pub(crate) fn shaped_error(
    profile: &Profile,
    shape: &ErrorShape,
    status: u16,
    kind: ErrorKind,
    message: &str,
) -> Prepared {
    let code = shape.kinds.get(&kind).unwrap_or(&shape.fallback);
    let lookup = |name: &str| match name {
        "type" => Some(Value::String(code.kind.clone())),
        "code" => Some(code.code.clone().map_or(Value::Null, Value::String)),
        "message" => Some(Value::String(message.to_owned())),
        "status" => Some(Value::from(status)),
        _ => None,
    };
    let body = fill(&shape.envelope, &lookup);
    with_retry_hint(profile, Prepared::json(status, &body), kind)
}

/// Adds the profile's retry hint for `kind`, if it has one.
pub(crate) fn with_retry_hint(profile: &Profile, prepared: Prepared, kind: ErrorKind) -> Prepared {
    let Some(hints) = &profile.retry_hints else {
        return prepared;
    };
    let value = if hints.retry.contains(&kind) {
        "true"
    } else if hints.no_retry.contains(&kind) {
        "false"
    } else {
        return prepared;
    };
    prepared.with_header_owned(&hints.header, value)
}

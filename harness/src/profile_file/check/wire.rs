//! `auth:`, `body:`, `keys:`, `retry_hints:` and `webhooks:`: the headers and
//! encodings around the provider's objects.

use std::collections::BTreeSet;
use std::time::Duration;

use lostreply_simulator::profile::{
    Auth, BodyFormat, Encoding, ErrorKind, EventEnvelope, Keys, RetryHints, SignatureScheme,
    WebhookFormat,
};
use lostreply_simulator::{IdempotencyMode, Profile};

use super::fields::{
    distinct, duration, field_name, kind, name_list, optional_field, MAX_NAME_BYTES,
};
use super::shapes::shaped;
use crate::profile_file::common::Found;
use crate::profile_file::node::{placeholders_in, to_json, Placeholders};
use crate::profile_file::raw::{
    HeaderValue, KindName, RawAuth, RawBody, RawEncoding, RawKeys, RawProfile, RawRetryHints,
    RawScheme, RawWebhooks,
};
use crate::scenario::span::{Pos, Sp};

/// What an event envelope's leaves may hold.
const EVENT_PLACEHOLDERS: [&str; 5] = ["id", "type", "created", "created_at", "object"];
/// What an event's type may hold.
const EVENT_TYPE_PLACEHOLDERS: [&str; 3] = ["resource", "object", "event"];
/// Longest event type.
const MAX_EVENT_TYPE_BYTES: usize = 128;
/// Longest header value.
const MAX_HEADER_VALUE_BYTES: usize = 256;

/// Headers the connection itself, or the simulator's framing, owns: a
/// profile naming one would break every exchange rather than describe a provider.
const FRAMING_HEADERS: [&str; 10] = [
    "connection",
    "content-length",
    "content-type",
    "date",
    "host",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// A header name (RFC 9110 token), kept in lower case: headers are compared
/// without case, and the simulator looks them up lower-cased.
fn header_name(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
    let name = &raw.value;
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let lower = name.to_ascii_lowercase();
    if name.is_empty() || name.len() > MAX_NAME_BYTES || !name.chars().all(token) {
        found.error(
            raw.pos,
            format!(
                "{what} `{name}` is not an HTTP header name: 1 to {} letters, digits and \
                 !#$%&'*+-.^_`|~",
                MAX_NAME_BYTES
            ),
        );
    } else if FRAMING_HEADERS.contains(&lower.as_str()) {
        found.error(
            raw.pos,
            format!("{what} `{name}` is a header the HTTP exchange itself owns"),
        );
    }
    lower
}

pub(super) fn auth(found: &mut Found, raw: Option<&Sp<RawAuth>>) -> Auth {
    match raw.map(|a| &a.value) {
        None | Some(RawAuth::Bearer) => Auth::Bearer,
        Some(RawAuth::Header(name)) => Auth::Header(header_name(found, name, "auth.header")),
        Some(RawAuth::HeaderOrBearer(name)) => {
            Auth::HeaderOrBearer(header_name(found, name, "auth.header_or_bearer"))
        }
    }
}

pub(super) fn body(found: &mut Found, raw: Option<&Sp<RawBody>>) -> BodyFormat {
    let generic = Profile::generic().body;
    let Some(raw) = raw.map(|b| &b.value) else {
        return generic;
    };
    let encoding = match raw.encoding.as_ref().map(|e| e.value) {
        None | Some(RawEncoding::Json) => Encoding::Json,
        Some(RawEncoding::Form) => Encoding::Form,
    };
    let mut seen: Vec<(String, Pos, String)> = Vec::new();
    let client_reference = optional_field(
        found,
        raw.client_reference.as_ref(),
        generic.client_reference.as_deref(),
        "body.client_reference",
    );
    let metadata = optional_field(
        found,
        raw.metadata.as_ref(),
        generic.metadata.as_deref(),
        "body.metadata",
    );
    // A default has no place in the file: `distinct` names no line for it.
    let pos_of = |field: &Option<Sp<Option<String>>>| {
        field.as_ref().map_or(Pos { line: 0, column: 0 }, |f| f.pos)
    };
    if let Some(name) = &client_reference {
        let pos = pos_of(&raw.client_reference);
        distinct(
            found,
            &mut seen,
            name,
            pos,
            "the reference field".to_owned(),
        );
    }
    if let Some(name) = &metadata {
        let pos = pos_of(&raw.metadata);
        distinct(found, &mut seen, name, pos, "the metadata field".to_owned());
    }
    let ignored = raw.ignored.as_ref().map_or_else(Vec::new, |list| {
        let names = name_list(found, list, "body.ignored", field_name);
        for (name, sp) in names.iter().zip(&list.value) {
            distinct(
                found,
                &mut seen,
                name,
                sp.pos,
                "an ignored field".to_owned(),
            );
        }
        names
    });
    BodyFormat {
        encoding,
        client_reference,
        metadata,
        ignored,
    }
}

pub(super) fn keys(found: &mut Found, raw: Option<&Sp<RawKeys>>) -> Keys {
    let generic = Profile::generic().keys;
    let Some(raw) = raw.map(|k| &k.value) else {
        return generic;
    };
    let header = raw
        .header
        .as_ref()
        .map_or(generic.header, |h| header_name(found, h, "keys.header"));
    let replay_header = match &raw.replay_header {
        None => generic.replay_header,
        Some(Sp { value: None, .. }) => None,
        Some(Sp {
            value: Some(map),
            pos,
        }) => match map.0.as_slice() {
            [(name, value)] => Some((
                header_name(found, name, "keys.replay_header"),
                header_value(found, value),
            )),
            _ => {
                found.error(
                    *pos,
                    "replay_header is one header and its value (`{idempotent-replayed: \"true\"}`), \
                     or null",
                );
                None
            }
        },
    };
    let default_mode = raw.default_mode.as_ref().map_or(generic.default_mode, |m| {
        IdempotencyMode::from_name(&m.value.0).unwrap_or_else(|| {
            let names: Vec<&str> = IdempotencyMode::ALL.iter().map(|m| m.name()).collect();
            found.error(
                m.pos,
                format!(
                    "unknown idempotency mode `{}`: one of {}",
                    m.value.0,
                    names.join(", ")
                ),
            );
            IdempotencyMode::None
        })
    });
    let default_retention = raw
        .default_retention
        .as_ref()
        .map_or(generic.default_retention, |r| {
            duration(found, r, "default_retention").unwrap_or(Duration::from_secs(24 * 3600))
        });
    Keys {
        header,
        replay_header,
        default_mode,
        default_retention,
    }
}

/// Visible ASCII and spaces, as a header value must be.
fn header_value(found: &mut Found, raw: &Sp<HeaderValue>) -> String {
    let text = &raw.value.0;
    let fits = !text.is_empty()
        && text.len() <= MAX_HEADER_VALUE_BYTES
        && text.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    if !fits {
        found.error(
            raw.pos,
            format!(
                "header value `{text}` must be 1 to {MAX_HEADER_VALUE_BYTES} visible ASCII \
                 characters or spaces"
            ),
        );
    }
    text.clone()
}

pub(super) fn retry_hints(
    found: &mut Found,
    raw: Option<&Sp<Option<RawRetryHints>>>,
) -> Option<RetryHints> {
    let raw = raw?.value.as_ref()?;
    let header = header_name(found, &raw.header, "retry_hints.header");
    let retry = kinds(found, &raw.retry, "retry");
    let no_retry = kinds(found, &raw.no_retry, "no_retry");
    for sp in &raw.no_retry {
        let both = ErrorKind::from_name(&sp.value.0).is_some_and(|k| retry.contains(&k));
        if both {
            found.error(
                sp.pos,
                format!(
                    "`{}` is listed under both retry and no_retry: a hint says one or the other",
                    sp.value.0
                ),
            );
        }
    }
    Some(RetryHints {
        header,
        retry,
        no_retry,
    })
}

fn kinds(found: &mut Found, list: &[Sp<KindName>], what: &str) -> BTreeSet<ErrorKind> {
    let mut kinds = BTreeSet::new();
    for sp in list {
        if let Some(k) = kind(found, sp) {
            if !kinds.insert(k) {
                found.error(sp.pos, format!("{what}: `{}` is listed twice", sp.value.0));
            }
        }
    }
    kinds
}

pub(super) fn webhooks(found: &mut Found, raw: Option<&Sp<RawWebhooks>>) -> WebhookFormat {
    let generic = Profile::generic().webhooks;
    let Some(raw) = raw.map(|w| &w.value) else {
        return generic;
    };
    let scheme = match raw.scheme.as_ref().map(|s| s.value) {
        None | Some(RawScheme::StandardWebhooks) => SignatureScheme::StandardWebhooks,
        Some(RawScheme::Stripe) => SignatureScheme::Stripe,
    };
    let placeholders = Placeholders {
        what: "webhooks.envelope",
        known: Some(&EVENT_PLACEHOLDERS),
    };
    let at = raw.envelope.as_ref().map_or(Pos::START, |e| e.pos);
    let envelope = match shaped(found, raw.envelope.as_ref(), "webhooks.envelope") {
        None => EventEnvelope::Generic,
        Some(node) => EventEnvelope::Shaped(to_json(found, node, at, placeholders)),
    };
    let event_type = raw
        .event_type
        .as_ref()
        .map_or(generic.event_type, |t| event_type(found, t));
    WebhookFormat {
        scheme,
        envelope,
        event_type,
    }
}

/// An event type: text whose only braces are `{resource}`, `{object}` and
/// `{event}` (replaced as text, so any other brace would reach the wire as written).
fn event_type(found: &mut Found, raw: &Sp<String>) -> String {
    let text = &raw.value;
    if text.is_empty()
        || text.len() > MAX_EVENT_TYPE_BYTES
        || text.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        found.error(
            raw.pos,
            format!(
                "event_type `{text}` must be 1 to {MAX_EVENT_TYPE_BYTES} characters without spaces"
            ),
        );
    }
    let known: Vec<String> = EVENT_TYPE_PLACEHOLDERS
        .iter()
        .map(|k| format!("{{{k}}}"))
        .collect();
    let unknown = placeholders_in(text).find(|name| !EVENT_TYPE_PLACEHOLDERS.contains(name));
    let mut rest = text.clone();
    for placeholder in &known {
        rest = rest.replace(placeholder.as_str(), "");
    }
    if let Some(name) = unknown {
        found.error(
            raw.pos,
            format!(
                "unknown placeholder `{{{name}}}` in event_type: it knows {}",
                known.join(", ")
            ),
        );
    } else if rest.contains(['{', '}']) {
        found.error(
            raw.pos,
            format!(
                "event_type `{text}` has a brace outside a placeholder: it knows {}",
                known.join(", ")
            ),
        );
    }
    text.clone()
}

/// The request headers a profile reads (credential, key) are different
/// headers, and so are the response headers it writes (replay marker,
/// retry hint): one header cannot carry two things.
pub(super) fn headers_apart(found: &mut Found, raw: &RawProfile, profile: &Profile) {
    let key_header = raw.keys.as_ref().and_then(|k| k.value.header.as_ref());
    let credential: &[&str] = match &profile.auth {
        Auth::Bearer => &["authorization"],
        Auth::Header(name) => &[name.as_str()],
        Auth::HeaderOrBearer(name) => &[name.as_str(), "authorization"],
    };
    if let Some(header) = key_header.filter(|_| credential.contains(&profile.keys.header.as_str()))
    {
        found.error(
            header.pos,
            format!(
                "keys.header `{}` is also where the credential is (auth)",
                profile.keys.header
            ),
        );
    }
    let replay = profile.keys.replay_header.as_ref().map(|(name, _)| name);
    let hint = profile.retry_hints.as_ref().map(|h| &h.header);
    if let (Some(replay), Some(hint)) = (replay, hint) {
        if replay == hint {
            let pos = raw
                .retry_hints
                .as_ref()
                .and_then(|r| r.value.as_ref())
                .map_or(Pos::START, |r| r.header.pos);
            found.error(
                pos,
                format!(
                    "retry_hints.header `{hint}` is also the replay marker (keys.replay_header)"
                ),
            );
        }
    }
}

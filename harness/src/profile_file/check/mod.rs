//! Raw profile -> the simulator's `Profile`: every check that needs more than
//! one value's shape. Each check records its problem and carries on with a
//! stand-in, so one pass reports everything it can; the result is used only
//! when nothing was recorded.

mod resources;
mod shapes;
mod wire;

use std::time::Duration;

use lostreply_simulator::profile::{ErrorKind, Routes};
use lostreply_simulator::Profile;
use serde_json::{Map, Value};

use super::node::{to_json, Node, Placeholders};
use super::raw::{DurationText, KindName, RawProfile, RawRoutes};
use super::Found;
use crate::scenario::span::{Pos, Sp};

/// Longest field, parameter or header name.
const MAX_NAME_BYTES: usize = 64;
/// Longest word the provider writes (a type, a code, a status word).
const MAX_WORD_BYTES: usize = 128;

/// Checks everything and builds the profile (meaningful only if `found` stays empty).
pub(super) fn profile(raw: &RawProfile, found: &mut Found) -> Profile {
    if raw.version.value != 1 {
        found.error(
            raw.version.pos,
            format!(
                "unsupported format version {}: this lostreply reads profile files of `version: 1`",
                raw.version.value
            ),
        );
    }
    let name = profile_name(found, &raw.name);
    let routes = routes(found, raw);
    let profile = Profile {
        name,
        auth: wire::auth(found, raw.auth.as_ref()),
        body: wire::body(found, raw.body.as_ref()),
        objects: shapes::objects(found, raw.objects.as_ref()),
        errors: shapes::errors(found, raw.errors.as_ref()),
        pages: shapes::pages(found, raw.pages.as_ref()),
        keys: wire::keys(found, raw.keys.as_ref()),
        retry_hints: wire::retry_hints(found, raw.retry_hints.as_ref()),
        webhooks: wire::webhooks(found, raw.webhooks.as_ref()),
        routes,
    };
    wire::headers_apart(found, raw, &profile);
    resources::searches_reachable(found, raw, &profile);
    profile
}

/// `[a-z][a-z0-9_-]{0,39}`: a profile's name reaches reports, banners and file names.
fn profile_name(found: &mut Found, raw: &Sp<String>) -> String {
    let name = &raw.value;
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && name.len() <= 40;
    if !valid {
        found.error(
            raw.pos,
            format!(
                "profile name `{name}` is not valid: lower-case letters, digits, `_` and `-`, \
                 starting with a letter, at most 40 characters"
            ),
        );
    }
    name.clone()
}

fn routes(found: &mut Found, raw: &RawProfile) -> Routes {
    match (&raw.routes, &raw.resources) {
        (Some(routes), None) => match routes.value {
            RawRoutes::Generic => Routes::Generic,
        },
        (Some(routes), Some(_)) => {
            found.error(
                routes.pos,
                "`routes: generic` and `resources:` exclude each other: the generic routes \
                 take any collection, declared resources only theirs",
            );
            Routes::Generic
        }
        (None, Some(list)) => Routes::Declared(resources::resources(found, list)),
        (None, None) => {
            found.error(
                raw.name.pos,
                "a profile needs `resources:` (its collections and their paths) or \
                 `routes: generic` (the simulator's own /v1/{resource} paths)",
            );
            Routes::Generic
        }
    }
}

/// Constants: a JSON mapping copied as written (no placeholders), checked
/// where it is written.
fn constants(found: &mut Found, node: &Sp<Node>, what: &'static str) -> Map<String, Value> {
    let placeholders = Placeholders { what, known: None };
    match to_json(found, &node.value, node.pos, placeholders) {
        Value::Object(map) => map,
        _ => {
            found.error(node.pos, format!("{what} are a mapping of field: value"));
            Map::new()
        }
    }
}

/// A field of a JSON object or a form body: 1 to 64 bytes, no spaces or
/// control characters.
fn field_name(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
    let name = &raw.value;
    if name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || name.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        found.error(
            raw.pos,
            format!(
                "{what} `{name}` is not a field name: 1 to {MAX_NAME_BYTES} bytes without spaces \
                 or control characters"
            ),
        );
    }
    name.clone()
}

/// A field written as text, or as `null` on purpose (`None`), or not written
/// (`default`).
fn optional_field(
    found: &mut Found,
    raw: Option<&Sp<Option<String>>>,
    default: Option<&str>,
    what: &str,
) -> Option<String> {
    let Some(raw) = raw else {
        return default.map(str::to_owned);
    };
    let name = raw.value.as_ref()?;
    Some(field_name(
        found,
        &Sp {
            value: name.clone(),
            pos: raw.pos,
        },
        what,
    ))
}

/// A word the provider writes (a type, a code, a status): 1 to 128 bytes,
/// no control characters.
fn word(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
    let text = &raw.value;
    if text.is_empty() || text.len() > MAX_WORD_BYTES || text.chars().any(char::is_control) {
        found.error(
            raw.pos,
            format!(
                "{what} `{text}` must be 1 to {MAX_WORD_BYTES} bytes without control characters"
            ),
        );
    }
    text.clone()
}

/// An error kind by its name; `None` (recorded) for an unknown one.
fn kind(found: &mut Found, raw: &Sp<KindName>) -> Option<ErrorKind> {
    let name = &raw.value.0;
    let kind = ErrorKind::from_name(name);
    if kind.is_none() {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        found.error(
            raw.pos,
            format!("unknown error kind `{name}`: one of {}", names.join(", ")),
        );
    }
    kind
}

/// A list of names, each checked by `check`, none twice, at most
/// [`super::MAX_LIST_ITEMS`].
fn name_list(
    found: &mut Found,
    raw: &Sp<Vec<Sp<String>>>,
    what: &str,
    check: fn(&mut Found, &Sp<String>, &str) -> String,
) -> Vec<String> {
    if raw.value.len() > super::MAX_LIST_ITEMS {
        found.error(
            raw.pos,
            format!(
                "{what} lists {} names; at most {}",
                raw.value.len(),
                super::MAX_LIST_ITEMS
            ),
        );
    }
    let mut names: Vec<String> = Vec::with_capacity(raw.value.len());
    for item in &raw.value {
        let name = check(found, item, what);
        if names.contains(&name) {
            found.error(item.pos, format!("{what}: `{name}` is listed twice"));
        }
        names.push(name);
    }
    names
}

/// Shortest duration that is not zero.
const NONZERO: Duration = Duration::from_millis(1);
/// Longest simulator-clock duration: ten years, as scenarios allow.
const MAX_VIRTUAL: Duration = Duration::from_secs(3650 * 24 * 3600);

/// A simulator-clock duration from 1ms to ten years.
fn duration(found: &mut Found, raw: &Sp<DurationText>, what: &str) -> Option<Duration> {
    let text = raw.value.0.trim();
    match humantime::parse_duration(text) {
        Err(err) => {
            found.error(
                raw.pos,
                format!(
                    "bad duration `{text}` for {what}: {err} (write it like 300ms, 60s, 2m or 24h)"
                ),
            );
            None
        }
        Ok(value) if !(NONZERO..=MAX_VIRTUAL).contains(&value) => {
            found.error(
                raw.pos,
                format!("{what} must be between 1ms and 3650days, not {text}"),
            );
            None
        }
        Ok(value) => Some(value),
    }
}

/// Records `name` at `pos` under `what` unless another entry has it already.
fn distinct(
    found: &mut Found,
    seen: &mut Vec<(String, Pos, String)>,
    name: &str,
    pos: Pos,
    what: String,
) {
    if let Some((_, first, other)) = seen.iter().find(|(known, _, _)| known == name) {
        let at = match first.line {
            0 => "by default".to_owned(),
            line => format!("line {line}"),
        };
        found.error(
            pos,
            format!("{what} `{name}` is also {other} ({at}): each must differ"),
        );
        return;
    }
    seen.push((name.to_owned(), pos, what));
}

//! The field-level checks every part of the profile check shares: names,
//! words, error kinds, lists, durations, constants and distinctness. It
//! imports no other part of the check, so every part can import it.

use std::time::Duration;

use lostreply_simulator::profile::ErrorKind;
use serde_json::{Map, Value};

use crate::profile_file::common::{Found, MAX_LIST_ITEMS};
use crate::profile_file::node::{to_json, Node, Placeholders};
use crate::profile_file::raw::{DurationText, KindName};
use crate::scenario::span::{Pos, Sp};

/// Longest field, parameter or header name.
pub(super) const MAX_NAME_BYTES: usize = 64;
/// Longest word the provider writes (a type, a code, a status word).
const MAX_WORD_BYTES: usize = 128;

/// Constants: a JSON mapping copied as written (no placeholders), checked
/// where it is written.
pub(super) fn constants(
    found: &mut Found,
    node: &Sp<Node>,
    what: &'static str,
) -> Map<String, Value> {
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
pub(super) fn field_name(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
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
pub(super) fn optional_field(
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
pub(super) fn word(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
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
pub(super) fn kind(found: &mut Found, raw: &Sp<KindName>) -> Option<ErrorKind> {
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
/// [`MAX_LIST_ITEMS`].
pub(super) fn name_list(
    found: &mut Found,
    raw: &Sp<Vec<Sp<String>>>,
    what: &str,
    check: fn(&mut Found, &Sp<String>, &str) -> String,
) -> Vec<String> {
    if raw.value.len() > MAX_LIST_ITEMS {
        found.error(
            raw.pos,
            format!(
                "{what} lists {} names; at most {}",
                raw.value.len(),
                MAX_LIST_ITEMS
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
pub(super) const NONZERO: Duration = Duration::from_millis(1);
/// Longest simulator-clock duration: ten years, as scenarios allow.
pub(super) const MAX_VIRTUAL: Duration = Duration::from_secs(3650 * 24 * 3600);

/// A simulator-clock duration from 1ms to ten years.
pub(super) fn duration(found: &mut Found, raw: &Sp<DurationText>, what: &str) -> Option<Duration> {
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
pub(super) fn distinct(
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

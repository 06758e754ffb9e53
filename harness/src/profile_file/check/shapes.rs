//! `objects:`, `errors:` and `pages:`: what the provider's answers look like.

use std::collections::BTreeMap;

use lostreply_simulator::profile::{
    ArgsPlacement, ErrorCode, ErrorShape, Errors, ObjectShape, Objects, PageShape, Pages,
    SearchSyntax, TimeField, TimeFormat,
};
use lostreply_simulator::{DEFAULT_LIST_LIMIT, MAX_PAGE_OBJECTS};
use serde_json::{json, Value};

use super::fields::{
    constants, distinct, field_name, kind, name_list, optional_field, word, MAX_NAME_BYTES,
};
use crate::profile_file::common::Found;
use crate::profile_file::node::{to_json, Node, Placeholders};
use crate::profile_file::raw::{
    OrGeneric, RawArgs, RawErrorCode, RawErrors, RawObjects, RawPages, RawSearch, RawTimeFormat,
};
use crate::scenario::span::{Pos, Sp};

/// What an error envelope's leaves may hold.
const ERROR_PLACEHOLDERS: [&str; 4] = ["type", "code", "message", "status"];
/// What a page envelope's leaves may hold.
const PAGE_PLACEHOLDERS: [&str; 6] = [
    "data",
    "has_more",
    "url",
    "first_id",
    "last_id",
    "next_page",
];

/// The shaped form of a section, `None` for `generic` or absent; another
/// word is recorded.
pub(super) fn shaped<'r, T>(
    found: &mut Found,
    raw: Option<&'r Sp<OrGeneric<T>>>,
    what: &str,
) -> Option<&'r T> {
    let raw = raw?;
    match &raw.value {
        OrGeneric::Generic => None,
        OrGeneric::Shaped(shape) => Some(shape),
        OrGeneric::Other(word) => {
            found.error(
                raw.pos,
                format!("{what}: expected `generic` or a mapping, not `{word}`"),
            );
            None
        }
    }
}

pub(super) fn time_format(raw: RawTimeFormat) -> TimeFormat {
    match raw {
        RawTimeFormat::Rfc3339 => TimeFormat::Rfc3339,
        RawTimeFormat::UnixSeconds => TimeFormat::UnixSeconds,
    }
}

/// `objects:`: where an object's id, type, creation time, metadata,
/// reference and arguments go (no two in one field), and its constants and
/// statuses.
pub(super) fn objects(found: &mut Found, raw: Option<&Sp<OrGeneric<RawObjects>>>) -> Objects {
    let Some(raw) = shaped(found, raw, "objects") else {
        return Objects::Generic;
    };
    let id_field = raw
        .id_field
        .as_ref()
        .map_or_else(|| "id".to_owned(), |f| field_name(found, f, "id_field"));
    let type_field = optional_field(found, raw.type_field.as_ref(), None, "type_field");
    let raw_created = raw.created.as_ref().and_then(|c| c.value.as_ref());
    let created = raw_created.map(|c| TimeField {
        field: field_name(found, &c.field, "created.field"),
        format: time_format(c.format.value),
    });
    let metadata = optional_field(found, raw.metadata.as_ref(), None, "metadata");
    let client_reference = optional_field(
        found,
        raw.client_reference.as_ref(),
        None,
        "client_reference",
    );
    let args = raw
        .args
        .as_ref()
        .map_or(ArgsPlacement::Flatten, |a| args(found, a));
    let nested = match (&args, &raw.args) {
        (ArgsPlacement::Nested(field), Some(raw_args)) => Some((field, raw_args.pos)),
        _ => None,
    };
    fn pos_of<T>(field: &Option<Sp<T>>) -> Option<Pos> {
        field.as_ref().map(|f| f.pos)
    }
    distinct_fields(
        found,
        [
            (Some(&id_field), pos_of(&raw.id_field), "id"),
            (type_field.as_ref(), pos_of(&raw.type_field), "type"),
            (
                created.as_ref().map(|c| &c.field),
                raw_created.map(|c| c.field.pos),
                "created",
            ),
            (metadata.as_ref(), pos_of(&raw.metadata), "metadata"),
            (
                client_reference.as_ref(),
                pos_of(&raw.client_reference),
                "client_reference",
            ),
            (
                nested.map(|(field, _)| field),
                nested.map(|(_, pos)| pos),
                "nested arguments'",
            ),
        ],
    );
    Objects::Shaped(Box::new(ObjectShape {
        id_field,
        type_field,
        created,
        args,
        metadata,
        client_reference,
        constants: raw.constants.as_ref().map_or_else(Default::default, |c| {
            constants(found, c, "objects.constants")
        }),
        created_status: success_status(found, raw.created_status.as_ref(), 201, "created_status"),
        accepted_status: success_status(
            found,
            raw.accepted_status.as_ref(),
            202,
            "accepted_status",
        ),
        location: raw.location.as_ref().is_none_or(|l| l.value),
        typed_values: raw.typed_values.as_ref().is_some_and(|t| t.value),
    }))
}

/// No two parts of an object's shape write the same field: each field
/// written (with where it is written and what it holds) is claimed once.
fn distinct_fields(found: &mut Found, claims: [(Option<&String>, Option<Pos>, &str); 6]) {
    let mut fields: Vec<(String, Pos, String)> = Vec::new();
    for (name, pos, what) in claims {
        if let (Some(name), Some(pos)) = (name, pos) {
            distinct(found, &mut fields, name, pos, format!("the {what} field"));
        }
    }
}

fn args(found: &mut Found, raw: &Sp<RawArgs>) -> ArgsPlacement {
    match &raw.value {
        RawArgs::Flatten => ArgsPlacement::Flatten,
        RawArgs::Omit => ArgsPlacement::Omit,
        RawArgs::Nested(field) => ArgsPlacement::Nested(field_name(found, field, "args.nested")),
        RawArgs::Pick(list) => {
            if list.value.is_empty() {
                found.error(
                    list.pos,
                    "`pick: []` shows no argument: write `args: omit` for that",
                );
            }
            ArgsPlacement::Pick(name_list(found, list, "args.pick", field_name))
        }
    }
}

/// A create's status: a success, or the SDKs would raise on it.
fn success_status(found: &mut Found, raw: Option<&Sp<u16>>, default: u16, what: &str) -> u16 {
    let Some(raw) = raw else {
        return default;
    };
    if !(200..=299).contains(&raw.value) {
        found.error(
            raw.pos,
            format!("{what} must be a success, 200 to 299, not {}", raw.value),
        );
    }
    raw.value
}

pub(super) fn errors(found: &mut Found, raw: Option<&Sp<OrGeneric<RawErrors>>>) -> Errors {
    let Some(raw) = shaped(found, raw, "errors") else {
        return Errors::Generic;
    };
    let placeholders = Placeholders {
        what: "errors.envelope",
        known: Some(&ERROR_PLACEHOLDERS),
    };
    let envelope = envelope(found, &raw.envelope, placeholders);
    let mut kinds = BTreeMap::new();
    for (name, code) in raw.kinds.iter().flat_map(|k| k.value.0.iter()) {
        let code = error_code(found, code);
        if let Some(kind) = kind(found, name) {
            kinds.insert(kind, code);
        }
    }
    Errors::Shaped(ErrorShape {
        envelope,
        kinds,
        fallback: error_code(found, &raw.fallback),
    })
}

fn error_code(found: &mut Found, raw: &Sp<RawErrorCode>) -> ErrorCode {
    ErrorCode {
        kind: word(found, &raw.value.kind, "an error's type"),
        code: raw
            .value
            .code
            .as_ref()
            .map(|c| word(found, c, "an error's code")),
    }
}

/// A template that must be a mapping (an SDK reads an object).
fn envelope(found: &mut Found, raw: &Sp<Node>, placeholders: Placeholders) -> Value {
    let value = to_json(found, &raw.value, raw.pos, placeholders);
    if !value.is_object() {
        found.error(
            raw.pos,
            format!("{} is a mapping (a JSON object)", placeholders.what),
        );
    }
    value
}

pub(super) fn pages(found: &mut Found, raw: Option<&Sp<OrGeneric<RawPages>>>) -> Pages {
    let Some(raw) = shaped(found, raw, "pages") else {
        return Pages::Generic;
    };
    let list_envelope = page_envelope(found, raw.list_envelope.as_ref(), "pages.list_envelope");
    let search_envelope = match &raw.search_envelope {
        None => list_envelope.clone(),
        Some(_) => page_envelope(found, raw.search_envelope.as_ref(), "pages.search_envelope"),
    };
    let search = match raw.search.as_ref().map(|s| s.value) {
        None | Some(RawSearch::MetadataParams) => SearchSyntax::MetadataParams,
        Some(RawSearch::StripeQuery) => SearchSyntax::StripeQuery,
    };
    let params = params(found, raw, search);
    Pages::Shaped(Box::new(PageShape {
        list_envelope,
        search_envelope,
        created_gte: params.created_gte,
        limit: params.limit,
        starting_after: params.starting_after,
        default_limit: default_limit(found, raw.default_limit.as_ref()),
        search,
        ignored: params.ignored,
    }))
}

/// A page's envelope (default `{data, has_more}`), which must carry the objects.
fn page_envelope(found: &mut Found, raw: Option<&Sp<Node>>, what: &'static str) -> Value {
    let Some(raw) = raw else {
        return json!({"data": "{data}", "has_more": "{has_more}"});
    };
    let placeholders = Placeholders {
        what,
        known: Some(&PAGE_PLACEHOLDERS),
    };
    let value = envelope(found, raw, placeholders);
    if value.is_object() && !holds_leaf(&value, "{data}") {
        found.error(
            raw.pos,
            format!("{what} has no `\"{{data}}\"` leaf: its pages would carry no objects"),
        );
    }
    value
}

fn holds_leaf(value: &Value, leaf: &str) -> bool {
    match value {
        Value::String(text) => text == leaf,
        Value::Array(items) => items.iter().any(|v| holds_leaf(v, leaf)),
        Value::Object(map) => map.values().any(|v| holds_leaf(v, leaf)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

fn default_limit(found: &mut Found, raw: Option<&Sp<u64>>) -> usize {
    let Some(raw) = raw else {
        return DEFAULT_LIST_LIMIT;
    };
    match usize::try_from(raw.value) {
        Ok(n) if (1..=MAX_PAGE_OBJECTS).contains(&n) => n,
        _ => {
            found.error(
                raw.pos,
                format!(
                    "default_limit must be from 1 to {MAX_PAGE_OBJECTS} (the largest page), not {}",
                    raw.value
                ),
            );
            DEFAULT_LIST_LIMIT
        }
    }
}

/// A page's parameters, once checked.
struct Params {
    created_gte: Option<(String, TimeFormat)>,
    limit: String,
    starting_after: Option<String>,
    ignored: Vec<String>,
}

/// The parameters, each a valid name, none the same as another or as the
/// search syntax's own (`query`, `metadata[…]`).
fn params(found: &mut Found, raw: &RawPages, search: SearchSyntax) -> Params {
    let mut seen: Vec<(String, Pos, String)> = Vec::new();
    let reserved = match search {
        SearchSyntax::StripeQuery => "the search's `query`",
        SearchSyntax::MetadataParams => "the search's `metadata[…]`",
    };
    let mut claim = |found: &mut Found, name: &str, pos: Pos, what: &str| {
        let taken = match search {
            SearchSyntax::StripeQuery => name == "query",
            SearchSyntax::MetadataParams => name == "metadata" || name.starts_with("metadata["),
        };
        if taken {
            found.error(pos, format!("{what} `{name}` is {reserved} parameter"));
        }
        distinct(found, &mut seen, name, pos, what.to_owned());
    };
    let limit = match &raw.limit {
        None => "limit".to_owned(),
        Some(sp) => {
            let name = param_name(found, sp, "limit");
            claim(found, &name, sp.pos, "the limit parameter");
            name
        }
    };
    let created_gte = raw
        .created_gte
        .as_ref()
        .and_then(|c| c.value.as_ref())
        .map(|c| {
            let name = param_name(found, &c.param, "created_gte.param");
            claim(found, &name, c.param.pos, "the created_gte parameter");
            (name, time_format(c.format.value))
        });
    let starting_after = match &raw.starting_after {
        Some(Sp {
            value: Some(name),
            pos,
        }) => {
            let sp = Sp {
                value: name.clone(),
                pos: *pos,
            };
            let name = param_name(found, &sp, "starting_after");
            claim(found, &name, *pos, "the starting_after parameter");
            Some(name)
        }
        Some(Sp { value: None, .. }) | None => None,
    };
    let ignored = raw.ignored.as_ref().map_or_else(Vec::new, |list| {
        let names = name_list(found, list, "pages.ignored", param_name);
        for (name, sp) in names.iter().zip(&list.value) {
            claim(found, name, sp.pos, "an ignored parameter");
        }
        names
    });
    Params {
        created_gte,
        limit,
        starting_after,
        ignored,
    }
}

/// A query parameter's name: 1 to 64 visible ASCII characters, none of
/// which ends or encodes a parameter (`&`, `=`, `#`, `%`, `+`).
fn param_name(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
    let name = &raw.value;
    let fits = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"&=#%+?".contains(&b));
    if !fits {
        found.error(
            raw.pos,
            format!(
                "{what} `{name}` is not a query parameter name: 1 to {} visible ASCII \
                 characters without & = # % + ?",
                MAX_NAME_BYTES
            ),
        );
    }
    name.clone()
}

//! Any `Profile` written as the profile file that reads back to it: every
//! key written out (no default left implicit), so that a user who copies a
//! built-in profile sees all there is to change.
//!
//! The profile is first made into an ordered JSON document, then written as
//! YAML by a small writer: block style for the sections and the resources,
//! flow style (`{a: 1, b: [x]}`) for what fits on its line, and a string
//! left unquoted only where the reader reads it back as that same string.

use std::time::Duration;

use lostreply_simulator::profile::Encoding;
use lostreply_simulator::profile::{
    ArgsPlacement, Auth, ErrorShape, Errors, EventEnvelope, ObjectShape, Objects, PageShape, Pages,
    Resource, Routes, SearchSyntax, SignatureScheme, TimeFormat,
};
use lostreply_simulator::Profile;
use serde_json::{json, Map, Value};

/// Longest line the writer puts a flow collection on.
const LINE_WIDTH: usize = 100;

/// The profile file of `profile`: `parse_profile(&write_profile(p)) == p`.
pub fn write_profile(profile: &Profile) -> String {
    let mut out = String::new();
    for (index, (key, value)) in document(profile).iter().enumerate() {
        // Sections after the first two lines (version, name) stand apart.
        if index >= 2 {
            out.push('\n');
        }
        entry(&mut out, 0, key, value, 0);
    }
    out
}

/// The file's content as ordered JSON.
fn document(p: &Profile) -> Vec<(&'static str, Value)> {
    let mut doc = vec![("version", json!(1)), ("name", json!(p.name))];
    match &p.routes {
        Routes::Generic => doc.push(("routes", json!("generic"))),
        Routes::Declared(resources) => doc.push((
            "resources",
            Value::Array(resources.iter().map(resource).collect()),
        )),
    }
    let auth = match &p.auth {
        Auth::Bearer => json!("bearer"),
        Auth::Header(name) => json!({"header": name}),
        Auth::HeaderOrBearer(name) => json!({"header_or_bearer": name}),
    };
    let encoding = match p.body.encoding {
        Encoding::Json => "json",
        Encoding::Form => "form",
    };
    doc.extend([
        ("auth", auth),
        (
            "body",
            json!({
                "encoding": encoding,
                "client_reference": p.body.client_reference,
                "metadata": p.body.metadata,
                "ignored": p.body.ignored,
            }),
        ),
        ("objects", objects(&p.objects)),
        ("errors", errors(&p.errors)),
        ("pages", pages(&p.pages)),
        (
            "keys",
            json!({
                "header": p.keys.header,
                "replay_header": p.keys.replay_header.as_ref().map(|(name, value)| json!({name: value})),
                "default_mode": p.keys.default_mode.name(),
                "default_retention": duration(p.keys.default_retention),
            }),
        ),
        (
            "retry_hints",
            p.retry_hints.as_ref().map_or(Value::Null, |hints| {
                json!({
                    "header": hints.header,
                    "retry": hints.retry.iter().map(|k| k.name()).collect::<Vec<_>>(),
                    "no_retry": hints.no_retry.iter().map(|k| k.name()).collect::<Vec<_>>(),
                })
            }),
        ),
        ("webhooks", webhooks(p)),
    ]);
    doc
}

fn resource(r: &Resource) -> Value {
    json!({
        "name": r.name,
        "path": r.path,
        "search_path": r.search_path,
        "offers": {"retrieve": r.offers.retrieve, "list": r.offers.list, "search": r.offers.search},
        "id_prefix": r.id_prefix,
        "object": r.object,
        "status": r.status.as_ref().map(|s| json!({
            "field": s.field,
            "processing": s.processing,
            "succeeded": s.succeeded,
            "failed": s.failed,
        })),
        "constants": r.constants,
    })
}

fn time_format(format: TimeFormat) -> &'static str {
    match format {
        TimeFormat::Rfc3339 => "rfc3339",
        TimeFormat::UnixSeconds => "unix_seconds",
    }
}

fn objects(objects: &Objects) -> Value {
    let shape: &ObjectShape = match objects {
        Objects::Generic => return json!("generic"),
        Objects::Shaped(shape) => shape,
    };
    let args = match &shape.args {
        ArgsPlacement::Flatten => json!("flatten"),
        ArgsPlacement::Omit => json!("omit"),
        ArgsPlacement::Nested(field) => json!({"nested": field}),
        ArgsPlacement::Pick(names) => json!({"pick": names}),
    };
    json!({
        "id_field": shape.id_field,
        "type_field": shape.type_field,
        "created": shape.created.as_ref().map(|c| json!({"field": c.field, "format": time_format(c.format)})),
        "args": args,
        "metadata": shape.metadata,
        "client_reference": shape.client_reference,
        "constants": shape.constants,
        "created_status": shape.created_status,
        "accepted_status": shape.accepted_status,
        "location": shape.location,
        "typed_values": shape.typed_values,
    })
}

fn errors(errors: &Errors) -> Value {
    let shape: &ErrorShape = match errors {
        Errors::Generic => return json!("generic"),
        Errors::Shaped(shape) => shape,
    };
    let code =
        |c: &lostreply_simulator::profile::ErrorCode| json!({"type": c.kind, "code": c.code});
    let kinds: Map<String, Value> = shape
        .kinds
        .iter()
        .map(|(kind, c)| (kind.name().to_owned(), code(c)))
        .collect();
    json!({
        "envelope": shape.envelope,
        "kinds": kinds,
        "fallback": code(&shape.fallback),
    })
}

fn pages(pages: &Pages) -> Value {
    let shape: &PageShape = match pages {
        Pages::Generic => return json!("generic"),
        Pages::Shaped(shape) => shape,
    };
    let search = match shape.search {
        SearchSyntax::StripeQuery => "stripe_query",
        SearchSyntax::MetadataParams => "metadata_params",
    };
    json!({
        "list_envelope": shape.list_envelope,
        "search_envelope": shape.search_envelope,
        "created_gte": shape.created_gte.as_ref().map(|(param, format)| json!({"param": param, "format": time_format(*format)})),
        "limit": shape.limit,
        "starting_after": shape.starting_after,
        "default_limit": shape.default_limit,
        "search": search,
        "ignored": shape.ignored,
    })
}

fn webhooks(p: &Profile) -> Value {
    let scheme = match p.webhooks.scheme {
        SignatureScheme::StandardWebhooks => "standard_webhooks",
        SignatureScheme::Stripe => "stripe",
    };
    let envelope = match &p.webhooks.envelope {
        EventEnvelope::Generic => json!("generic"),
        EventEnvelope::Shaped(template) => template.clone(),
    };
    json!({"scheme": scheme, "envelope": envelope, "event_type": p.webhooks.event_type})
}

/// A duration in the largest unit that writes it exactly (`24h`, `90s`,
/// `1500ms`), humantime's full form otherwise.
fn duration(d: Duration) -> String {
    let (secs, nanos) = (d.as_secs(), d.subsec_nanos());
    if nanos == 0 && secs > 0 {
        for (unit, size) in [("h", 3600), ("m", 60), ("s", 1)] {
            if secs % size == 0 {
                return format!("{}{unit}", secs / size);
            }
        }
    }
    if nanos % 1_000_000 == 0 && !d.is_zero() {
        return format!("{}ms", d.as_millis());
    }
    humantime::format_duration(d).to_string()
}

/// `key: value` at `indent`, the value in block style when `depth` (the
/// nesting of mappings above it) is the sections' or the resources', or
/// when it does not fit on the line.
fn entry(out: &mut String, indent: usize, key: &str, value: &Value, depth: usize) {
    let head = format!("{}{}:", " ".repeat(indent), scalar_key(key));
    let flow = flow(value);
    let block =
        is_nonempty_collection(value) && (depth == 0 || head.len() + 1 + flow.len() > LINE_WIDTH);
    if !block {
        out.push_str(&format!("{head} {flow}\n"));
        return;
    }
    out.push_str(&head);
    out.push('\n');
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                entry(out, indent + 2, k, v, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                list_item(out, indent + 2, item, depth + 1);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// `- value` at `indent`; a mapping's first entry on the dash's line.
fn list_item(out: &mut String, indent: usize, value: &Value, depth: usize) {
    let dash = format!("{}- ", " ".repeat(indent));
    let flow = flow(value);
    let fits = dash.len() + flow.len() <= LINE_WIDTH;
    match value {
        // The resources (a list in a section) are mappings worth reading as blocks.
        Value::Object(map) if !map.is_empty() && (depth <= 1 || !fits) => {
            let mut inner = String::new();
            for (k, v) in map {
                entry(&mut inner, indent + 2, k, v, depth + 1);
            }
            out.push_str(&dash);
            out.push_str(&inner[indent + 2..]);
        }
        Value::Array(items) if !items.is_empty() && !fits => {
            out.push_str(dash.trim_end());
            out.push('\n');
            for item in items {
                list_item(out, indent + 2, item, depth + 1);
            }
        }
        _ => out.push_str(&format!("{dash}{flow}\n")),
    }
}

fn is_nonempty_collection(value: &Value) -> bool {
    match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => false,
    }
}

/// A value on one line: `{a: 1, b: [x, "{y}"]}`.
fn flow(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(text) => scalar_key(text),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar_key(k), flow(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// Words YAML 1.1 readers take for booleans or null: quoted even where
/// this reader would not, so that other tools read the file the same way.
const AMBIGUOUS: [&str; 12] = [
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan", "inf",
];

/// A string as YAML: plain when it is made of the quiet characters and the
/// reader takes it back as the same string, double-quoted otherwise.
fn scalar_key(text: &str) -> String {
    let quiet = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !text.starts_with(['-', '.'])
        && !AMBIGUOUS.contains(&text.to_ascii_lowercase().as_str())
        && reads_back_as_text(text);
    if quiet {
        text.to_owned()
    } else {
        quoted(text)
    }
}

fn reads_back_as_text(text: &str) -> bool {
    matches!(
        serde_saphyr::from_str::<Value>(text),
        Ok(Value::String(back)) if back == text
    )
}

/// A double-quoted YAML string: escapes for the quote, the backslash and
/// every character YAML does not print as it is.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_printable(c) => out.push(c),
            c if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// YAML's `c-printable`, less the byte-order mark.
fn is_printable(c: char) -> bool {
    matches!(u32::from(c), 0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
        && c != '\u{FEFF}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_stay_plain_only_where_they_read_back() {
        for (text, written) in [
            ("id", "id"),
            ("/v1/customers", "/v1/customers"),
            ("chatcmpl-", "chatcmpl-"),
            ("{type}", "\"{type}\""),
            ("true", "\"true\""),
            ("No", "\"No\""),
            ("1", "\"1\""),
            ("1e3", "\"1e3\""),
            ("24h", "24h"),
            ("created[gte]", "\"created[gte]\""),
            ("a b", "\"a b\""),
            ("", "\"\""),
            ("-x", "\"-x\""),
            ("tab\there \u{7f}", "\"tab\\there \\u007F\""),
        ] {
            assert_eq!(scalar_key(text), written, "{text:?}");
        }
    }

    #[test]
    fn durations_take_their_largest_exact_unit() {
        assert_eq!(duration(Duration::from_secs(24 * 3600)), "24h");
        assert_eq!(duration(Duration::from_secs(90)), "90s");
        assert_eq!(duration(Duration::from_secs(120)), "2m");
        assert_eq!(duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(duration(Duration::from_nanos(1_000_001)), "1ms 1ns");
    }
}

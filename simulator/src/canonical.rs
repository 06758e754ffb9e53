//! Canonical JSON: the request fingerprint. Object keys are sorted at every
//! depth so that two bodies that differ only in key order are the same action
//! (serde_json keeps insertion order in this workspace, so sorting is explicit).

use std::collections::BTreeMap;

use lostreply_text::{JsonStr, SharedStr};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The canonical JSON text of `value`: no whitespace, object keys sorted bytewise.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

/// [`canonical_json`] as shared text, in one allocation: the fingerprint
/// every create keeps (see `scratch`).
pub(crate) fn canonical_shared(value: &Value) -> SharedStr {
    crate::scratch::shared_str(|out| write_canonical(value, out))
}

/// Appends the canonical JSON text of an object to `out`: the bytes of
/// [`canonical_json`] of `Value::Object(map)`, without cloning the map into a
/// `Value` first.
fn write_canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (index, (key, item)) in entries.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_plain(key, out);
        out.push(b':');
        write_canonical(item, out);
    }
    out.push(b'}');
}

/// Appends the canonical JSON text of the value the JSON text `json` holds:
/// the bytes of [`canonical_json`] of it parsed, read borrowed instead (each
/// object's members split into name and text, no tree built: the checks key a
/// million operations by their arguments, kept as text). Returns false, and
/// leaves `out` as it was, when `json` is not JSON.
pub fn write_canonical_text(json: &str, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let written = serde_json::from_str::<&RawValue>(json).and_then(|raw| write_raw(raw, out));
    if written.is_err() {
        out.truncate(start);
    }
    written.is_ok()
}

// Recursion depth is bounded by serde_json's parser (128 levels): every text
// recursed into was first read whole.
fn write_raw(raw: &RawValue, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'{') => {
            // Sorted by name, bytewise as `String`'s order; a repeated name keeps
            // its last value, as parsing into a `Map` does.
            let members: BTreeMap<JsonStr<'_>, &RawValue> = serde_json::from_str(text)?;
            out.push(b'{');
            for (index, (name, item)) in members.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_plain(&name.0, out);
                out.push(b':');
                write_raw(item, out)?;
            }
            out.push(b'}');
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text)?;
            out.push(b'[');
            for (index, item) in items.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_raw(item, out)?;
            }
            out.push(b']');
        }
        // A scalar is written as serde_json writes it parsed (the same text
        // when serde_json wrote it; escapes and number forms made plain if not).
        _ => write_plain(&serde_json::from_str::<Value>(text)?, out),
    }
    Ok(())
}

/// Strings and scalars as serde_json writes them, straight into `out`
/// (a `to_string` per key and per scalar would be an allocation each, on every
/// create and on every request the checks attribute).
fn write_plain(value: &impl serde::Serialize, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail, nor can serialising a string or a scalar.
    let _ = serde_json::to_writer(&mut *out, value);
}

// Recursion depth is bounded by serde_json's parser (128 levels).
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => write_canonical_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            write_plain(value, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"c":"é"}}"#)
            .unwrap_or_default();
        let b: Value = serde_json::from_str(r#"{ "a": {"c":"é", "z":[{"x":2,"y":1}]}, "b": 1 }"#)
            .unwrap_or_default();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"c":"é","z":[{"x":2,"y":1}]},"b":1}"#
        );
        assert_eq!(canonical_json(&a), canonical_json(&b));
        let mut out = b"x ".to_vec();
        write_canonical_object(a.as_object().unwrap_or(&Map::new()), &mut out);
        assert_eq!(out, [b"x ", canonical_json(&a).as_bytes()].concat());
    }

    #[test]
    fn text_gives_the_canonical_json_of_its_value() {
        let texts = [
            r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"c":"é"}}"#,
            r#"{ "a": {"c":"é", "z":[{"x":2,"y":1}]}, "b": 1 }"#,
            r#"{"\u0062":"\u00e9\n","a\"":[1.5,-0,1e3,true,null,{}],"":[]}"#,
            r#"{"dup":1,"x":0,"dup":2}"#,
            r#"[{"b":[],"a":{}},"s",12345678901234567890,0.1]"#,
            r#""only a string""#,
            "7",
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).unwrap_or_default();
            let mut out = b"x ".to_vec();
            assert!(write_canonical_text(text, &mut out), "{text}");
            assert_eq!(
                String::from_utf8_lossy(&out),
                format!("x {}", canonical_json(&value)),
                "{text}"
            );
        }
    }

    #[test]
    fn text_that_is_not_json_writes_nothing() {
        for text in ["", "{", r#"{"a":}"#, "[1,]", "nope"] {
            let mut out = b"x ".to_vec();
            assert!(!write_canonical_text(text, &mut out), "{text}");
            assert_eq!(out, b"x ");
        }
    }
}

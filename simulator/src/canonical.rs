//! Canonical JSON: the request fingerprint. Object keys are sorted at every
//! depth so that two bodies that differ only in key order are the same action
//! (serde_json keeps insertion order in this workspace, so sorting is explicit).

use serde_json::{Map, Value};

/// The canonical JSON text of `value`: no whitespace, object keys sorted bytewise.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends the canonical JSON text of an object to `out`: the bytes of
/// [`canonical_json`] of `Value::Object(map)`, without cloning the map into a
/// `Value` first (the checks key a million operations by their arguments).
pub fn write_canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
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

/// Strings and scalars as serde_json writes them, straight into `out`
/// (a `to_string` per key and per scalar was an allocation each, on every
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
}

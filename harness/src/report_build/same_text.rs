//! Whether two JSON values are written as the same text, without writing them.
//!
//! `Value`'s own `==` is not enough: it holds `0.0` and `-0.0` equal, and
//! objects equal in any member order, where their text differs.

use serde_json::{Map, Number, Value};

/// True when `a` and `b` have the same members in the same order, each
/// written as the same text.
pub(super) fn same_members(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same_value(va, vb))
}

// Recursion depth is that of the values, which serializing them recurses through too.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => same_number(a, b),
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(a), Value::Object(b)) => same_members(a, b),
        _ => false,
    }
}

/// Floats by their bits (`-0.0` is written apart from `0.0`); integers by
/// kind and value (a float is never the same text as an integer).
fn same_number(a: &Number, b: &Number) -> bool {
    if a.is_f64() || b.is_f64() {
        a.is_f64() && b.is_f64() && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
    } else {
        a.is_u64() == b.is_u64() && a.as_u64() == b.as_u64() && a.as_i64() == b.as_i64()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn same_text_exactly_when_written_the_same() {
        let cases = [
            json!({"a": 1, "b": [1, -2, 2.5, "x", null, true, {"c": {}}]}),
            json!({"b": 1, "a": 1}),
            json!({"a": 1, "b": 1}),
            json!({"a": 0.0}),
            json!({"a": -0.0}),
            json!({"a": 1.0}),
            json!({"a": 1}),
            json!({"a": -1}),
            json!({"a": u64::MAX}),
            json!({"a": i64::MIN}),
            json!({"a": "1"}),
            json!({"a": [1]}),
            json!({"a": [1, 1]}),
            json!({"a": {"x": 1, "y": 2}}),
            json!({"a": {"y": 2, "x": 1}}),
            json!({}),
        ];
        for a in &cases {
            for b in &cases {
                let (a, b) = (object(a.clone()), object(b.clone()));
                let written_same = serde_json::to_string(&a).ok() == serde_json::to_string(&b).ok();
                assert_eq!(same_members(&a, &b), written_same, "{a:?} {b:?}");
            }
        }
    }
}

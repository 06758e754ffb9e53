//! Form bodies as Stripe's SDKs write them: `application/x-www-form-urlencoded`
//! pairs whose names use bracket notation for nesting (`metadata[order_id]=X`),
//! indexed lists (`items[0][price]=p`, what stripe-python and stripe-node
//! send) and appended lists (`expand[]=a`).
//!
//! A form carries only strings, so a decoded body is a JSON object of
//! strings, objects and arrays; [`wire_args`] writes an operation's typed
//! arguments the same way, so that the two compare equal.

use serde_json::{Map, Value};

use crate::query;
pub use crate::query::PercentDecodeError;

/// Why a form body is refused; each message names the parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// The body is not UTF-8.
    #[error("the form body is not UTF-8")]
    NotUtf8,
    /// A parameter name does not decode.
    #[error(transparent)]
    Name(PercentDecodeError),
    /// A parameter's value does not decode.
    #[error("parameter `{name}`: {error}")]
    Value {
        /// The parameter, decoded.
        name: String,
        /// Why its value does not decode.
        error: PercentDecodeError,
    },
    /// The same name (or path) is given twice.
    #[error("parameter `{0}` is given more than once")]
    Repeated(String),
    /// A name starts with `[`.
    #[error("parameter `{0}` has no name before its brackets")]
    NoNameBeforeBrackets(String),
    /// Something other than `[` follows a `]`.
    #[error("parameter `{0}`: expected `[` after `]`")]
    ExpectedOpenBracket(String),
    /// A `[` has no `]`.
    #[error("parameter `{0}`: a `[` is never closed")]
    UnclosedBracket(String),
    /// A name nests under one that already holds a value (`a=1&a[b]=2`).
    #[error("parameter `{0}` nests under a name that already has a value")]
    NestsUnderValue(String),
}

/// Decodes a form body into the JSON object it describes. An error names the parameter.
pub fn decode_form(body: &[u8]) -> Result<Map<String, Value>, FormError> {
    let text = std::str::from_utf8(body).map_err(|_| FormError::NotUtf8)?;
    let mut root = Map::new();
    let mut nested = false;
    for pair in text.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decoded(name).map_err(FormError::Name)?;
        let value = match decoded(value) {
            Ok(value) => value.into_owned(),
            Err(error) => {
                return Err(FormError::Value {
                    name: name.into_owned(),
                    error,
                })
            }
        };
        if !name.contains('[') {
            // Most parameters are plain names: no path to split.
            if root
                .insert(name.to_string(), Value::String(value))
                .is_some()
            {
                return Err(FormError::Repeated(name.into_owned()));
            }
            continue;
        }
        nested = true;
        let path = split_name(&name)?;
        insert(&mut root, &name, &path, value)?;
    }
    if nested {
        for value in root.values_mut() {
            finish_in_place(value);
        }
    }
    Ok(root)
}

/// `text` percent-decoded, borrowed when there is nothing to decode.
fn decoded(text: &str) -> Result<std::borrow::Cow<'_, str>, PercentDecodeError> {
    if text.bytes().any(|b| b == b'%' || b == b'+') {
        query::decode(text).map(std::borrow::Cow::Owned)
    } else {
        Ok(std::borrow::Cow::Borrowed(text))
    }
}

/// `a[b][0][]` into `["a", "b", "0", ""]`.
fn split_name(name: &str) -> Result<Vec<&str>, FormError> {
    let (head, mut rest) = match name.find('[') {
        Some(at) => (&name[..at], &name[at..]),
        None => (name, ""),
    };
    if head.is_empty() {
        return Err(FormError::NoNameBeforeBrackets(name.to_owned()));
    }
    let mut path = vec![head];
    while !rest.is_empty() {
        let Some(inner) = rest.strip_prefix('[') else {
            return Err(FormError::ExpectedOpenBracket(name.to_owned()));
        };
        let Some(close) = inner.find(']') else {
            return Err(FormError::UnclosedBracket(name.to_owned()));
        };
        path.push(&inner[..close]);
        rest = &inner[close + 1..];
    }
    Ok(path)
}

/// Puts `value` at `path` under `node`: an empty segment appends (its index
/// is the count so far), every other names a member.
fn insert(
    node: &mut Map<String, Value>,
    name: &str,
    path: &[&str],
    value: String,
) -> Result<(), FormError> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(());
    };
    let key = if first.is_empty() {
        node.len().to_string()
    } else {
        (*first).to_owned()
    };
    if rest.is_empty() {
        return match node.insert(key, Value::String(value)) {
            None => Ok(()),
            Some(_) => Err(FormError::Repeated(name.to_owned())),
        };
    }
    let child = node.entry(key).or_insert_with(|| Value::Object(Map::new()));
    match child {
        Value::Object(child) => insert(child, name, rest, value),
        _ => Err(FormError::NestsUnderValue(name.to_owned())),
    }
}

/// Objects whose members are all indices become arrays, in index order.
fn finish_in_place(value: &mut Value) {
    let Value::Object(map) = value else {
        return;
    };
    for member in map.values_mut() {
        finish_in_place(member);
    }
    if map.is_empty() || !map.keys().all(|k| is_index(k)) {
        return;
    }
    let mut items: Vec<(usize, Value)> = std::mem::take(map)
        .into_iter()
        .map(|(k, v)| (k.parse().unwrap_or(usize::MAX), v))
        .collect();
    items.sort_by_key(|(index, _)| *index);
    *value = Value::Array(items.into_iter().map(|(_, v)| v).collect());
}

fn is_index(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 6
        && key.bytes().all(|b| b.is_ascii_digit())
        && (key == "0" || !key.starts_with('0'))
}

/// Typed arguments as a form carries them: numbers and booleans as their
/// text (`1200` as `"1200"`, `true` as `"true"`), `null`, empty lists and
/// empty objects left out (a form cannot say them).
pub fn wire_args(args: &Map<String, Value>) -> Map<String, Value> {
    args.iter()
        .filter_map(|(k, v)| wire_value(v).map(|v| (k.clone(), v)))
        .collect()
}

fn wire_value(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(Value::String(b.to_string())),
        Value::Number(n) => Some(Value::String(n.to_string())),
        Value::String(s) => Some(Value::String(s.clone())),
        Value::Array(items) => {
            let items: Vec<Value> = items.iter().filter_map(wire_value).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(map) => {
            let map = wire_args(map);
            (!map.is_empty()).then_some(Value::Object(map))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn decoded(body: &str) -> Value {
        Value::Object(decode_form(body.as_bytes()).unwrap())
    }

    #[test]
    fn brackets_nest_and_indices_make_lists() {
        assert_eq!(
            decoded("amount=1200&currency=usd&metadata[order_id]=A%201&expand[]=customer&expand[]=latest_charge&items[0][price]=p1&items[1][price]=p2&items[1][quantity]=2"),
            json!({
                "amount": "1200",
                "currency": "usd",
                "metadata": {"order_id": "A 1"},
                "expand": ["customer", "latest_charge"],
                "items": [{"price": "p1"}, {"price": "p2", "quantity": "2"}]
            })
        );
        assert_eq!(decoded("a[10]=x&a[2]=y"), json!({"a": ["y", "x"]}));
        assert_eq!(decoded(""), json!({}));
    }

    #[test]
    fn conflicting_or_broken_names_are_refused_by_name() {
        let error = |body: &str| decode_form(body.as_bytes()).unwrap_err().to_string();
        assert!(error("a=1&a=2").contains("`a`"));
        assert!(error("a=1&a[b]=2").contains("`a[b]`"));
        assert!(error("a[b=1").contains("never closed"));
        assert!(error("[a]=1").contains("no name"));
        assert!(error("a[b]c=1").contains("expected `[`"));
        assert!(error("a=%zz").contains("percent"));
        assert_eq!(
            error("a[b=1"),
            "parameter `a[b`: a `[` is never closed".to_owned()
        );
        assert!(decode_form(&[0xff]).is_err());
    }

    #[test]
    fn typed_arguments_are_written_as_a_form_carries_them() {
        let args = json!({"amount": 1200, "capture": true, "note": null, "tags": [], "nested": {"x": 1.5, "y": [1, "b"]}});
        let Value::Object(args) = args else { panic!() };
        assert_eq!(
            Value::Object(wire_args(&args)),
            json!({"amount": "1200", "capture": "true", "nested": {"x": "1.5", "y": ["1", "b"]}})
        );
    }
}

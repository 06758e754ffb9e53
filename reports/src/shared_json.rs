//! A JSON value kept as its compact text behind an `Arc`, for the requests
//! and replies of adapter calls.
//!
//! Why: a run of a million operations holds two million calls; as
//! `serde_json::Value` trees (an `IndexMap` per object under `preserve_order`)
//! they were most of the observation's 9.6 GiB, and the report deep-copied
//! them once more. As text they take a few hundred bytes each, and the report
//! shares the observation's copy (a reference count, not a copy).
//!
//! The JSON report is a public format (docs/report-json.md) written pretty:
//! text pasted in raw would keep its compact layout, so a value is written by
//! reading its text back into a tree for the moment it is written. The text
//! is always `serde_json`'s own compact writing of a `Value`, so the tree read
//! back is the one written (key order kept by `preserve_order`, floats exact by
//! `float_roundtrip`) and the output bytes are those of the `Value` itself.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON value as shared compact text. Cloning it shares the text.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SharedJson(Arc<str>);

impl SharedJson {
    /// The compact text of `value`.
    pub fn new(value: &Value) -> SharedJson {
        // `Value`'s `Display` is serde_json's compact writer, and it cannot fail.
        SharedJson(Arc::from(value.to_string()))
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value as a tree (built on each call: for readers of one call, not loops over a run).
    pub fn to_value(&self) -> Value {
        // The text was written from a `Value`, so it always reads back; `Null` only guards the type.
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// The member `key` of an object, if it is one and has it.
    pub fn get(&self, key: &str) -> Option<Value> {
        match self.to_value() {
            Value::Object(mut map) => map.shift_remove(key),
            _ => None,
        }
    }
}

impl From<Value> for SharedJson {
    fn from(value: Value) -> SharedJson {
        SharedJson::new(&value)
    }
}

impl From<&Value> for SharedJson {
    fn from(value: &Value) -> SharedJson {
        SharedJson::new(value)
    }
}

impl fmt::Debug for SharedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The compact text, as `Value`'s own `Display` writes it.
impl fmt::Display for SharedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for SharedJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SharedJson, D::Error> {
        Value::deserialize(deserializer).map(|v| SharedJson::new(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_pretty_as_the_value_itself() {
        let value = serde_json::json!({
            "z": 1, "a": [1.1, 0.30000000000000004, -2, "é\"\n"], "m": {"y": null, "b": true}, "e": {}, "l": []
        });
        let shared = SharedJson::new(&value);
        assert_eq!(
            serde_json::to_string_pretty(&shared).ok(),
            serde_json::to_string_pretty(&value).ok()
        );
        assert_eq!(
            serde_json::to_string(&shared).ok(),
            Some(shared.as_str().to_owned())
        );
        let back: SharedJson =
            serde_json::from_str(&serde_json::to_string_pretty(&shared).unwrap_or_default())
                .unwrap_or_else(|_| SharedJson::new(&Value::Null));
        assert_eq!(back, shared);
        assert_eq!(shared.get("z"), Some(serde_json::json!(1)));
        assert_eq!(shared.get("q"), None);
    }
}

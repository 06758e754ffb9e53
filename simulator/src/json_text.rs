//! JSON text kept as it was written, shared: an effect's arguments.
//!
//! Why: the store keeps an object's arguments as the compact text it answers
//! with, and the ledger hands each effect out again for every look (the
//! harness's observation holds a million in the largest runs). As a parsed
//! map each was some fifteen allocations and 400 bytes, re-parsed on every
//! look; as shared text it is a reference count, and the report writes it as
//! it is.

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Compact JSON text of a value, shared. Cloning it shares the text. (An
/// `Arc<RawValue>`, a fat pointer, rather than a thin `SharedStr`: every
/// create and lookup writes its answer from this text, and serde_json pastes
/// a `RawValue` as it is, where a plain string would be checked as JSON again
/// on each answer.)
#[derive(Clone)]
pub struct JsonText(Arc<RawValue>);

impl JsonText {
    /// The compact text of `value` (`null` if it cannot be written; a map of
    /// JSON values always can).
    pub fn of(value: &(impl Serialize + ?Sized)) -> JsonText {
        JsonText(Arc::from(raw(value)))
    }

    /// The text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The text read as an object; empty when it is not one.
    pub fn to_map(&self) -> Map<String, Value> {
        serde_json::from_str(self.get()).unwrap_or_default()
    }

    /// True when both are the same allocation (not merely equal text).
    pub fn ptr_eq(a: &JsonText, b: &JsonText) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

/// JSON text of a value; `null` if it cannot be written (it always can:
/// a `Value`'s keys are strings).
pub(crate) fn raw(value: &(impl Serialize + ?Sized)) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| null())
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_else(|_| Box::<RawValue>::default())
}

/// Equal text (what `JsonText::of` writes for equal maps in the same order).
impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.get() == other.get()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// Written as the value itself (the text pasted).
impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn written_as_the_value_it_holds_and_read_back_as_a_map() {
        let map: Map<String, Value> =
            serde_json::from_str(r#"{"z":1.5,"a":["é\n",null,{"k":true}],"m":-3}"#).unwrap();
        let text = JsonText::of(&map);
        assert_eq!(
            text.get(),
            r#"{"z":1.5,"a":["é\n",null,{"k":true}],"m":-3}"#
        );
        assert_eq!(text.to_map(), map);
        assert_eq!(
            serde_json::to_string(&serde_json::json!({ "args": text.clone() })).unwrap(),
            r#"{"args":{"z":1.5,"a":["é\n",null,{"k":true}],"m":-3}}"#
        );
        assert!(JsonText::ptr_eq(&text, &text.clone()));
        assert_eq!(JsonText::of(&serde_json::json!([1])).to_map(), Map::new());
    }
}

//! JSON text kept as it was written, shared: an effect's arguments.
//!
//! Why: the store keeps an object's arguments as the compact text it answers
//! with, and the ledger hands each effect out again for every look (the
//! harness's observation holds a million in the largest runs). As a parsed
//! map each would be some fifteen allocations and 400 bytes, re-parsed on
//! every look; as shared text it is a reference count, and the report writes it as
//! it is.

use std::fmt;
use std::sync::Arc;

use lostreply_text::SharedStr;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Compact JSON text of a value, shared. Cloning it shares the text.
///
/// Text serde_json wrote is kept as an `Arc<RawValue>`, which serde_json
/// pastes as it is when a record holding it is serialized. Text held as a
/// thin `SharedStr` is either text the simulator wrote itself with the same
/// bytes serde_json would write (a flat create body's arguments,
/// made when the create is read) or another record's copy of the same text
/// ([`JsonText::same_as`]: the harness shares an effect's arguments with
/// its operation's); it is checked as JSON only when serialized. Answers
/// paste either as it is ([`JsonText::get`]). Both fit in 16 bytes.
#[derive(Clone)]
pub struct JsonText(Repr);

#[derive(Clone)]
enum Repr {
    /// Written by serde_json.
    Raw(Arc<RawValue>),
    /// Written by the simulator as serde_json would, or another record's copy.
    Shared(SharedStr),
}

impl JsonText {
    /// The compact text of `value` (`null` if it cannot be written; a map of
    /// JSON values always can).
    pub fn of(value: &(impl Serialize + ?Sized)) -> JsonText {
        JsonText(Repr::Raw(Arc::from(raw(value))))
    }

    /// Text the simulator wrote itself as the compact JSON of an object
    /// (a flat create body's arguments), kept as it is rather than checked
    /// again: it is checked as JSON only if it is ever serialized.
    pub(crate) fn from_compact(text: SharedStr) -> JsonText {
        JsonText(Repr::Shared(text))
    }

    /// The text.
    pub fn get(&self) -> &str {
        match &self.0 {
            Repr::Raw(raw) => raw.get(),
            Repr::Shared(text) => text.as_str(),
        }
    }

    /// The text read as an object; empty when it is not one.
    pub fn to_map(&self) -> Map<String, Value> {
        serde_json::from_str(self.get()).unwrap_or_default()
    }

    /// This text held as `text`'s copy, when `text` is the very same text
    /// (so that two records that say the same keep it once); `None`
    /// otherwise. Only text equal to this, JSON already, is ever taken.
    pub fn same_as(&self, text: &SharedStr) -> Option<JsonText> {
        (self.get() == text.as_str()).then(|| JsonText(Repr::Shared(text.clone())))
    }

    /// True when both are the same allocation (not merely equal text).
    pub fn ptr_eq(a: &JsonText, b: &JsonText) -> bool {
        match (&a.0, &b.0) {
            (Repr::Raw(a), Repr::Raw(b)) => Arc::ptr_eq(a, b),
            (Repr::Shared(a), Repr::Shared(b)) => SharedStr::ptr_eq(a, b),
            _ => false,
        }
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
        match &self.0 {
            Repr::Raw(raw) => raw.serialize(serializer),
            // JSON by construction (`same_as` takes only text equal to a
            // `RawValue`'s); read as one so that serde_json pastes it.
            Repr::Shared(text) => serde_json::from_str::<&RawValue>(text)
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
        }
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

    #[test]
    fn the_same_text_held_as_another_copy_reads_and_writes_the_same() {
        let text = JsonText::of(&serde_json::json!({"t": "é", "n": [1, 2.5]}));
        let other = SharedStr::from(r#"{"t":"é","n":[1,2.5]}"#);
        let shared = text.same_as(&other).unwrap();
        assert_eq!(shared, text);
        assert_eq!(shared.get().as_ptr(), other.as_ptr());
        assert!(!JsonText::ptr_eq(&shared, &text));
        assert!(JsonText::ptr_eq(&shared, &shared.clone()));
        assert_eq!(shared.to_map(), text.to_map());
        assert_eq!(
            serde_json::to_string(&serde_json::json!({ "args": shared })).unwrap(),
            serde_json::to_string(&serde_json::json!({ "args": text.clone() })).unwrap()
        );
        // Other text, or the same value written otherwise, is not taken.
        assert!(text
            .same_as(&SharedStr::from(r#"{"n":[1,2.5],"t":"é"}"#))
            .is_none());
        assert!(text.same_as(&SharedStr::from("{}")).is_none());
        assert_eq!(std::mem::size_of::<JsonText>(), 16);
    }
}

//! JSON a record keeps either as its text or as what it was made from,
//! when that writes the text byte for byte: a call's reply kept as its
//! parsed outcome ([`crate::call_reply`]), a call's request kept as the
//! scenario's operation it was made from ([`crate::call_request`]).
//!
//! Why one type for both: what makes either safe is the same. The two forms
//! read, compare, print and are written as the one text (the made form
//! through the serializer calls the text's tree would make), and a record
//! read back from JSON keeps every value as text. Only what a value is made
//! from, and how it writes itself, differ.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::shared_json::SharedJson;

/// A value a JSON text was made from, standing for that text: its
/// `Serialize` writes exactly the calls the text's tree would make.
pub trait MadeJson: Serialize {
    /// The compact JSON text it stands for.
    fn json_text(&self) -> Cow<'_, str>;
}

/// A JSON value: one representation to every reader (its text, its tree,
/// its members, equality, serde), kept inside as its text or as the value
/// `M` it was made from. Which of the two is private: the compact form is
/// how large runs stay small, not something a reader chooses between.
#[derive(Clone)]
pub struct Kept<M>(Form<M>);

/// How a [`Kept`] value is held.
#[derive(Clone)]
enum Form<M> {
    /// The text.
    Text(SharedJson),
    /// What the text was made from (and writes the text exactly).
    Made(M),
}

impl<M> Kept<M> {
    /// The JSON that `made` writes, kept as `made`.
    pub fn made(made: M) -> Kept<M> {
        Kept(Form::Made(made))
    }

    /// What the value was made from, when it is kept as that; `None` when
    /// it is kept as text. For the tests that hold the compact form to the
    /// code that builds it, not for readers of a report.
    #[doc(hidden)]
    pub fn made_from(&self) -> Option<&M> {
        match &self.0 {
            Form::Made(made) => Some(made),
            Form::Text(_) => None,
        }
    }
}

impl<M: MadeJson> Kept<M> {
    /// The compact JSON text (borrowed when kept as text, whole).
    pub fn text(&self) -> Cow<'_, str> {
        match &self.0 {
            Form::Text(json) => json.text(),
            Form::Made(made) => made.json_text(),
        }
    }

    /// The value as a tree (built on each call: for readers of one call,
    /// not loops over a run).
    pub fn to_value(&self) -> Value {
        // The text was written from a `Value`, so it reads back; `Null` only guards the type.
        serde_json::from_str(&self.text()).unwrap_or(Value::Null)
    }

    /// The member `key` of the value, if it is an object and has it.
    pub fn get(&self, key: &str) -> Option<Value> {
        match self.to_value() {
            Value::Object(mut map) => map.shift_remove(key),
            _ => None,
        }
    }
}

impl<M> From<SharedJson> for Kept<M> {
    fn from(json: SharedJson) -> Kept<M> {
        Kept(Form::Text(json))
    }
}

impl<M> From<Value> for Kept<M> {
    fn from(value: Value) -> Kept<M> {
        Kept(Form::Text(value.into()))
    }
}

/// Equal when the texts are, however each is kept.
impl<M: MadeJson + PartialEq> PartialEq for Kept<M> {
    fn eq(&self, other: &Kept<M>) -> bool {
        match (&self.0, &other.0) {
            (Form::Text(a), Form::Text(b)) => a == b,
            (Form::Made(a), Form::Made(b)) if a == b => true,
            _ => self.text() == other.text(),
        }
    }
}

impl<M: MadeJson + PartialEq> Eq for Kept<M> {}

/// The compact text.
impl<M: MadeJson> fmt::Debug for Kept<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// The compact text, as [`SharedJson`]'s `Display` writes it.
impl<M: MadeJson> fmt::Display for Kept<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl<M: MadeJson> Serialize for Kept<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Form::Text(json) => json.serialize(serializer),
            Form::Made(made) => made.serialize(serializer),
        }
    }
}

/// Read back as text (what it was made from is not in the JSON).
impl<'de, M> Deserialize<'de> for Kept<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Kept<M>, D::Error> {
        SharedJson::deserialize(deserializer).map(Kept::from)
    }
}

/// What every made form is held to, for the tests of each.
#[cfg(test)]
pub(crate) mod testing {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A report-like nesting, so the value is written where a report writes
    /// it: beside an absent value, and beside the other form.
    #[derive(Serialize)]
    #[serde(bound = "M: MadeJson")]
    struct Nested<'a, M> {
        calls: [Call<'a, M>; 3],
    }

    #[derive(Serialize)]
    #[serde(bound = "M: MadeJson")]
    struct Call<'a, M> {
        index: usize,
        value: Option<&'a Kept<M>>,
    }

    fn nested<'a, M>(first: &'a Kept<M>, last: &'a Kept<M>) -> Nested<'a, M> {
        Nested {
            calls: [
                Call {
                    index: 0,
                    value: Some(first),
                },
                Call {
                    index: 1,
                    value: None,
                },
                Call {
                    index: 2,
                    value: Some(last),
                },
            ],
        }
    }

    /// `made` is `text` in every way it can be seen: its text, tree,
    /// equality both ways, `Display`, and every writer (serde_json compact and
    /// pretty, the report's own writer that re-indents text itself); read
    /// back, it is text, and equal.
    pub(crate) fn assert_the_same<M: MadeJson + PartialEq>(made: &Kept<M>, text: &SharedJson) {
        let text = Kept::<M>::from(text.clone());
        assert_eq!(made.text(), text.text());
        assert_eq!(made.to_value(), text.to_value());
        assert_eq!(made.to_string(), text.to_string());
        assert_eq!(*made, text);
        assert_eq!(text, *made);
        assert_eq!(
            serde_json::to_string(made).unwrap(),
            serde_json::to_string(&text).unwrap()
        );
        assert_eq!(
            serde_json::to_string_pretty(&nested(made, made)).unwrap(),
            serde_json::to_string_pretty(&nested(&text, &text)).unwrap()
        );
        let mut a = Vec::new();
        let mut b = Vec::new();
        crate::pretty::write_pretty(&mut a, &nested(made, &text)).unwrap();
        crate::pretty::write_pretty(&mut b, &nested(&text, &text)).unwrap();
        assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
        let back: Kept<M> = serde_json::from_str(&serde_json::to_string(made).unwrap()).unwrap();
        assert!(back.made_from().is_none());
        assert_eq!(back, *made);
    }
}

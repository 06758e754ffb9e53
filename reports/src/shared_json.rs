//! A JSON value kept as its compact shared text (`SharedStr`), for the requests
//! and replies of adapter calls.
//!
//! Why: a run of a million operations holds two million calls; as
//! `serde_json::Value` trees (an `IndexMap` per object under
//! `preserve_order`) they would be most of the observation (some 10 KiB an
//! operation), and the report would deep-copy them once more. As text they
//! take a few hundred bytes each, and the report shares the observation's
//! copy (a reference count, not a copy).
//!
//! The JSON report is a public format (docs/report-json.md) written pretty:
//! text pasted in raw would keep its compact layout. The report's own writer
//! (`crate::pretty`) takes the text and re-indents it in one pass; any other
//! serializer gets the calls the value's tree would make, from a walk of its
//! text. The text is always `serde_json`'s own compact writing of a `Value`
//! (every constructor goes through one), so what is read back is what was
//! written (member order as written, floats exact by `float_roundtrip`) and
//! the output bytes are those of the `Value` itself.
//!
//! An object may end in members that many values share ([`SharedTail`]: the
//! fields every adapter request repeats, the provider block with its contract
//! among them). Such a value keeps its own members' text and a share of the
//! tail's; it reads, compares, hashes and is written as the whole text.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use lostreply_text::SharedStr;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::inline_list::InlineList;
use crate::pretty;

/// A JSON value as shared compact text. Cloning it shares the text.
#[derive(Clone)]
pub struct SharedJson {
    /// The text, or its start when `tail` holds the rest (thin pointers both:
    /// a value is 16 bytes, and a run holds four million of them).
    head: SharedStr,
    /// The end of an object's text shared with other values: `,`, members, `}`.
    tail: Option<SharedStr>,
}

/// The last members of objects that many values end with, as compact text
/// (`,"a":1,"b":2}`), made once and shared by each [`SharedJson::with_tail`].
#[derive(Clone, Debug)]
pub struct SharedTail {
    text: SharedStr,
    /// The members the text was written from.
    members: Arc<Map<String, Value>>,
}

impl SharedTail {
    /// The members of `map`, in order, as the end of other objects; `None`
    /// for an empty map (no members to share).
    pub fn of_members(map: &Map<String, Value>) -> Option<SharedTail> {
        let text = serde_json::to_string(map).ok()?;
        // `{` then at least one member: the tail is the text with `,` for `{`.
        let members = text.strip_prefix('{').filter(|rest| *rest != "}")?;
        Some(SharedTail {
            text: SharedStr::from(format!(",{members}")),
            members: Arc::new(map.clone()),
        })
    }
}

/// Equal when the texts are (the members are what the text was written from).
impl SharedTail {
    /// The text: `,`, the members, `}`.
    pub(crate) fn text(&self) -> &SharedStr {
        &self.text
    }

    /// True when `own` names none of the tail's members (an object made of
    /// both holds each once).
    pub(crate) fn is_disjoint(&self, own: &Map<String, Value>) -> bool {
        !self.members.keys().any(|name| own.contains_key(name))
    }
}

impl PartialEq for SharedTail {
    fn eq(&self, other: &SharedTail) -> bool {
        self.text == other.text
    }
}

impl Eq for SharedTail {}

impl SharedJson {
    /// The compact text of `value`.
    pub fn new(value: &Value) -> SharedJson {
        // `Value`'s `Display` is serde_json's compact writer, and it cannot fail.
        SharedJson::whole(value.to_string())
    }

    /// The compact text of an object's members, as [`SharedJson::new`] of the object.
    pub fn from_map(map: &Map<String, Value>) -> SharedJson {
        // A map with string keys always serializes; `{}` only guards the type.
        SharedJson::whole(serde_json::to_string(map).unwrap_or_else(|_| "{}".to_owned()))
    }

    /// The object with `own`'s members, then `tail`'s: the value of
    /// [`SharedJson::new`] of them merged in that order, keeping only `own`'s
    /// text and a share of the tail's. When they have a name in common (the
    /// merged object would not hold both), or `own` is empty, the merged
    /// object's text is made whole instead.
    pub fn with_tail(own: &Map<String, Value>, tail: &SharedTail) -> SharedJson {
        if tail.is_disjoint(own) && !own.is_empty() {
            if let Ok(text) = serde_json::to_string(own) {
                // `own`'s text without its closing `}`: the tail's `,` follows
                // its last member, outside any string, at the object's depth.
                if let Some(head) = text.strip_suffix('}') {
                    return SharedJson {
                        head: SharedStr::from(head),
                        tail: Some(tail.text.clone()),
                    };
                }
            }
        }
        let mut merged = own.clone();
        merged.extend(tail.members.iter().map(|(k, v)| (k.clone(), v.clone())));
        SharedJson::from_map(&merged)
    }

    fn whole(text: String) -> SharedJson {
        SharedJson {
            head: SharedStr::from(text),
            tail: None,
        }
    }

    /// The text as one shared string, when it is kept whole (no shared
    /// tail): for another record that says the same to share it.
    pub fn whole_text(&self) -> Option<&SharedStr> {
        match self.tail {
            None => Some(&self.head),
            Some(_) => None,
        }
    }

    /// The compact JSON text (borrowed when it is kept whole).
    pub fn text(&self) -> Cow<'_, str> {
        match &self.tail {
            None => Cow::Borrowed(&self.head),
            Some(tail) => Cow::Owned(format!("{}{tail}", self.head)),
        }
    }

    /// The value as a tree (built on each call: for readers of one call, not loops over a run).
    pub fn to_value(&self) -> Value {
        // The text was written from a `Value`, so it always reads back; `Null` only guards the type.
        serde_json::from_str(&self.text()).unwrap_or(Value::Null)
    }

    /// The value read as an object (built on each call, as [`SharedJson::to_value`]); empty when it is not one.
    pub fn to_map(&self) -> Map<String, Value> {
        match self.to_value() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
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

/// Equal when the texts are (however each is kept).
impl PartialEq for SharedJson {
    fn eq(&self, other: &SharedJson) -> bool {
        match (&self.tail, &other.tail) {
            (None, None) => self.head == other.head,
            (Some(a), Some(b)) if SharedStr::ptr_eq(a, b) => self.head == other.head,
            _ => self.text() == other.text(),
        }
    }
}

impl Eq for SharedJson {}

/// The hash of the text, as `str`'s (so equal values hash alike however kept).
impl std::hash::Hash for SharedJson {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text().hash(state);
    }
}

impl fmt::Debug for SharedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The compact text, as `Value`'s own `Display` writes it.
impl fmt::Display for SharedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.head)?;
        f.write_str(self.tail.as_deref().unwrap_or_default())
    }
}

impl Serialize for SharedJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_parts(&self.head, self.tail.as_ref(), serializer)
    }
}

/// Writes the compact JSON text `head` then `tail` (an object's shared last
/// members) as the one value they make: the report's writer re-indents the
/// text itself, the tail after the head; any other serializer gets the calls
/// the value's tree would make.
pub(crate) fn serialize_parts<S: Serializer>(
    head: &str,
    tail: Option<&SharedStr>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if pretty::is_report_serializer::<S>() {
        return pretty::write_shared(head, tail, serializer);
    }
    match tail {
        None => Raw(head).serialize(serializer),
        Some(tail) => Raw(&format!("{head}{tail}")).serialize(serializer),
    }
}

/// One value of compact JSON text, written through a serializer with the very
/// calls `Value::serialize` makes for the tree it reads as (`serialize_map`
/// with its length and an entry per member in order, `serialize_seq` likewise),
/// so a pretty writer indents it the same. Objects and arrays are split into
/// borrowed members instead of being built into a tree: building two million
/// calls' trees to write them would be half the report's JSON time.
struct Raw<'a>(&'a str);

impl Serialize for Raw<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_bytes().first() {
            Some(b'{') => {
                let members: Members<'_> =
                    serde_json::from_str(self.0).map_err(ser::Error::custom)?;
                let mut map = serializer.serialize_map(Some(members.0.len()))?;
                for (key, value) in members.0.iter() {
                    map.serialize_entry(key.as_ref(), &Raw(value.get()))?;
                }
                map.end()
            }
            Some(b'[') => {
                let items: Items<'_> = serde_json::from_str(self.0).map_err(ser::Error::custom)?;
                let mut seq = serializer.serialize_seq(Some(items.0.len()))?;
                for item in items.0.iter() {
                    seq.serialize_element(&Raw(item.get()))?;
                }
                seq.end()
            }
            // A string: unescaped into a borrowed `str` when it holds no escape
            // (a `Value::String` would be an allocation per string of every call),
            // written with the one call `Value::String` makes.
            Some(b'"') => serializer.serialize_str(
                &serde_json::from_str::<JsonStr<'_>>(self.0)
                    .map_err(ser::Error::custom)?
                    .0,
            ),
            // Other scalars: read as a `Value` (no allocation for them) so
            // that numbers are written by serde_json's own code, as a tree's are.
            _ => serde_json::from_str::<Value>(self.0)
                .map_err(ser::Error::custom)?
                .serialize(serializer),
        }
    }
}

/// How many members or items are held inline (more spill into a `Vec`).
const INLINE: usize = 12;

/// An object's members in their order, names unescaped only when they must be.
struct Members<'a>(InlineList<(Cow<'a, str>, &'a RawValue), INLINE>);

/// An array's items in their order.
struct Items<'a>(InlineList<&'a RawValue, INLINE>);

impl<'de> Deserialize<'de> for Items<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Items<'de>, D::Error> {
        struct Array;
        impl<'de> Visitor<'de> for Array {
            type Value = Items<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<'de>, A::Error> {
                let mut items = InlineList::new(|| RawValue::NULL);
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    items.push(item);
                }
                Ok(Items(items))
            }
        }
        deserializer.deserialize_seq(Array)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'de>, D::Error> {
        let mut members = InlineList::new(|| (Cow::Borrowed(""), RawValue::NULL));
        EachMember(|name, value| members.push((name, value))).deserialize(deserializer)?;
        Ok(Members(members))
    }
}

/// Calls `each` with every member of the JSON object `text`, in order, names
/// borrowed from the text unless they hold an escape and values as their raw
/// text. Nothing is built: what to keep is the caller's choice (the report's
/// writer keeps them inline, the checks' attribution in a sorted `Vec`).
pub fn for_each_member<'a>(
    text: &'a str,
    each: impl FnMut(Cow<'a, str>, &'a RawValue),
) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    EachMember(each).deserialize(&mut deserializer)?;
    deserializer.end()
}

/// The visitor behind [`for_each_member`].
struct EachMember<F>(F);

impl<'de, F: FnMut(Cow<'de, str>, &'de RawValue)> DeserializeSeed<'de> for EachMember<F> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: FnMut(Cow<'de, str>, &'de RawValue)> Visitor<'de> for EachMember<F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some((JsonStr(name), value)) = map.next_entry::<JsonStr<'de>, &'de RawValue>()? {
            (self.0)(name, value);
        }
        Ok(())
    }
}

/// A JSON string borrowed unless escaped (kept in `lostreply-text`, where the
/// simulator's canonical writer reads member names with it too).
pub use lostreply_text::JsonStr;

impl<'de> Deserialize<'de> for SharedJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SharedJson, D::Error> {
        Value::deserialize(deserializer).map(|v| SharedJson::new(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_come_in_order_borrowed_unless_escaped() {
        let text = r#"{"b":1,"a\"q":[2,{"x":3}],"b":"s"}"#;
        let mut seen = Vec::new();
        for_each_member(text, |name, value| {
            seen.push((name.clone(), matches!(name, Cow::Borrowed(_)), value.get()))
        })
        .expect("an object");
        assert_eq!(
            seen,
            vec![
                (Cow::Borrowed("b"), true, "1"),
                (Cow::Borrowed("a\"q"), false, r#"[2,{"x":3}]"#),
                (Cow::Borrowed("b"), true, r#""s""#),
            ]
        );
        assert!(for_each_member("[1]", |_, _| {}).is_err());
        assert!(for_each_member(r#"{"a":1} x"#, |_, _| {}).is_err());
    }

    #[test]
    fn written_pretty_as_the_value_itself() {
        let value = serde_json::json!({
            "z": 1, "a": [1.1, 0.30000000000000004, -2, "é\"\n", [], {}, [[{"k": 1e300}]]],
            "m": {"y": null, "b": true, "q\"\\k\u{1}": {"e": {}, "l": []}}, "e": {}, "l": [],
            "big": 18446744073709551615u64, "neg": -9223372036854775808i64,
            "s": "plain", "u": "\u{2028}\u{7f}</\\", "t": ""
        });
        let shared = SharedJson::new(&value);
        assert_eq!(
            serde_json::to_string_pretty(&shared).ok(),
            serde_json::to_string_pretty(&value).ok()
        );
        assert_eq!(
            serde_json::to_string(&shared).ok(),
            Some(shared.text().into_owned())
        );
        let back: SharedJson =
            serde_json::from_str(&serde_json::to_string_pretty(&shared).unwrap_or_default())
                .unwrap_or_else(|_| SharedJson::new(&Value::Null));
        assert_eq!(back, shared);
        assert_eq!(shared.get("z"), Some(serde_json::json!(1)));
        for scalar in [
            serde_json::json!("plain"),
            serde_json::json!("a \"b\"\n"),
            serde_json::json!(""),
        ] {
            assert_eq!(
                serde_json::to_string_pretty(&SharedJson::new(&scalar)).ok(),
                serde_json::to_string_pretty(&scalar).ok()
            );
        }
        assert_eq!(shared.get("q"), None);
    }

    #[test]
    fn a_value_with_a_shared_tail_is_the_merged_object_in_every_way() {
        use std::hash::BuildHasher;
        let common = serde_json::json!({"protocol": 1, "provider": {"base_url": "http://127.0.0.1:1",
            "contract": {"modes": ["a", "b"], "empty": {}, "none": []}}, "t\"q": "x,\"y\":}"});
        let common = common.as_object().cloned().unwrap_or_default();
        let tail = SharedTail::of_members(&common).expect("members");
        for own in [
            serde_json::json!({"operation_id": "op-1"}),
            serde_json::json!({"operation": {"id": "op-1", "args": {"a": [1, {}], "b": "}"}}}),
            // A name in common, and no own member: both kept whole.
            serde_json::json!({"protocol": 2}),
            serde_json::json!({}),
        ] {
            let own = own.as_object().cloned().unwrap_or_default();
            let mut merged = own.clone();
            merged.extend(common.clone());
            let merged = Value::Object(merged);
            let split = SharedJson::with_tail(&own, &tail);
            let whole = SharedJson::new(&merged);
            assert_eq!(
                split.tail.is_some(),
                own.len() == 1 && !own.contains_key("protocol")
            );
            assert_eq!(split.text(), whole.text());
            assert_eq!(split.to_string(), whole.to_string());
            assert_eq!(split, whole);
            assert_eq!(whole, split);
            let hasher = std::hash::RandomState::new();
            assert_eq!(hasher.hash_one(&split), hasher.hash_one(&whole));
            assert_eq!(split.to_value(), merged);
            // Through the report's writer and through any other serializer.
            let mut ours = Vec::new();
            pretty::write_pretty(&mut ours, &vec![split.clone(), split.clone()]).expect("written");
            let theirs = serde_json::to_string_pretty(&vec![&merged, &merged]).unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&ours), format!("{theirs}\n"));
            assert_eq!(
                serde_json::to_string_pretty(&split).ok(),
                serde_json::to_string_pretty(&merged).ok()
            );
        }
        assert_eq!(SharedTail::of_members(&Map::new()), None);
        let own = |n: u32| {
            let value = serde_json::json!({ "a": n });
            SharedJson::with_tail(value.as_object().unwrap_or(&Map::new()), &tail)
        };
        let (a, b) = (own(1), own(2));
        assert_ne!(a, b);
    }
}

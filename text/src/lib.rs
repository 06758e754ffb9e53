//! A string that its copies share: the provider's records, the harness's
//! observation and the report model hold their ids, keys, tenants and other
//! repeated text as [`SharedStr`].
//!
//! Why: a report of a million operations holds some twenty strings per
//! operation (ids, keys, tenants, methods, fates, call names), most of them
//! the same text again and again or the same id in several records. As
//! `String`s each would be its own allocation: built that way, the report of
//! a million operations measured 2 GiB more and most of 10 s. A [`SharedStr`]
//! is an [`arcstr::ArcStr`]: cloning it is a reference count, so the report's
//! builder gives every record that says the same thing one copy ([`Recent`]
//! finds the repeated ones). It is a thin pointer (8 bytes, and 8 as an
//! `Option`) to one allocation that holds the count, the length and the text:
//! an `Arc<str>` is a 16-byte fat pointer, and an observation of a million
//! operations holds some thirty of these per operation.
//!
//! It serializes and deserializes as a plain JSON string, so the report's JSON
//! is byte for byte what a `String` wrote.
//!
//! [`JsonStr`] is a JSON string read without a copy unless it holds an
//! escape: how the report's writer and the simulator's canonical writer read
//! member names out of JSON text.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::ops::Deref;

use arcstr::ArcStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The crate's `arcstr`, which [`shared_literal!`] expands to.
#[doc(hidden)]
pub use arcstr as __arcstr;

/// A [`SharedStr`] of a string literal, made when the program is built.
/// Its copies share the literal itself: no allocation, and cloning or
/// dropping one touches no reference count, so text that every request
/// repeats (an HTTP method) costs no memory that threads on other cores
/// write too.
///
/// ```
/// const GET: lostreply_text::SharedStr = lostreply_text::shared_literal!("GET");
/// assert_eq!(GET.as_str(), "GET");
/// ```
#[macro_export]
macro_rules! shared_literal {
    ($text:literal) => {
        $crate::SharedStr::__from_literal($crate::__arcstr::literal!($text))
    };
}

/// A shared, immutable string. Cloning it shares the text.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(ArcStr);

impl SharedStr {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What [`shared_literal!`] expands to; not for direct use.
    #[doc(hidden)]
    pub const fn __from_literal(text: ArcStr) -> SharedStr {
        SharedStr(text)
    }

    /// True when both are the same allocation (not merely equal text).
    pub fn ptr_eq(a: &SharedStr, b: &SharedStr) -> bool {
        ArcStr::ptr_eq(&a.0, &b.0)
    }
}

/// The empty string is `ArcStr`'s static one: most calls' stderr is empty,
/// and a million of them need not be a million allocations.
impl Default for SharedStr {
    fn default() -> SharedStr {
        SharedStr(ArcStr::new())
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> SharedStr {
        if s.is_empty() {
            return SharedStr::default();
        }
        SharedStr(ArcStr::from(s))
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> SharedStr {
        SharedStr::from(s.as_str())
    }
}

impl From<&String> for SharedStr {
    fn from(s: &String) -> SharedStr {
        SharedStr::from(s.as_str())
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == *other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SharedStr, D::Error> {
        String::deserialize(deserializer).map(SharedStr::from)
    }
}

/// How many distinct texts [`Recent`] remembers.
const RECENT_SLOTS: usize = 8;

/// The last few distinct texts made into [`SharedStr`]s, so that a field that
/// says one of a handful of things (a tenant, a method, a fate, a call's name)
/// shares one copy of each across a million records. Bounded and found by a
/// scan of a few short compares, cheaper than hashing: a field with many
/// distinct values (an id) simply gets a copy each, as a `String` did.
#[derive(Debug, Default)]
pub struct Recent {
    slots: Vec<SharedStr>,
    /// The slot the next miss replaces once all are taken.
    next: usize,
}

impl Recent {
    /// A shared copy of `text`: one of the remembered ones when equal, a new one otherwise.
    pub fn get(&mut self, text: &str) -> SharedStr {
        if let Some(hit) = self.slots.iter().find(|s| s.as_str() == text) {
            return hit.clone();
        }
        let made = SharedStr::from(text);
        if self.slots.len() < RECENT_SLOTS {
            self.slots.push(made.clone());
        } else {
            self.slots[self.next] = made.clone();
            self.next = (self.next + 1) % RECENT_SLOTS;
        }
        made
    }
}

/// A JSON string (a member name or a string value), borrowed from the text
/// unless it holds an escape. Ordered as its text (bytewise, as `str`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct JsonStr<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for JsonStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<JsonStr<'de>, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = JsonStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<JsonStr<'de>, E> {
                Ok(JsonStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JsonStr<'de>, E> {
                Ok(JsonStr(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<JsonStr<'de>, E> {
                Ok(JsonStr(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn it_is_written_and_read_as_a_plain_string() {
        let s = SharedStr::from("tkt_\"1\"\n");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, serde_json::to_string("tkt_\"1\"\n").unwrap());
        let back: SharedStr = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert_eq!(back, "tkt_\"1\"\n");
    }

    #[test]
    fn recent_texts_share_one_copy_and_the_memory_stays_bounded() {
        let mut recent = Recent::default();
        let a = recent.get("sk_test_a");
        let b = recent.get("sk_test_a");
        assert!(SharedStr::ptr_eq(&a, &b));
        for i in 0..3 * RECENT_SLOTS {
            let made = recent.get(&format!("id-{i}"));
            assert_eq!(made, format!("id-{i}"));
        }
        assert!(recent.slots.len() <= RECENT_SLOTS);
        // Pushed out by the ids: equal text, a copy of its own.
        let c = recent.get("sk_test_a");
        assert_eq!(c, a);
        assert!(!SharedStr::ptr_eq(&a, &c));
    }
}

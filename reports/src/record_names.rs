//! The closed sets of names a report's records carry beside the protocol's
//! call names (`lostreply_protocol::CallName`): what a request asked of a
//! collection ([`RequestKind`]) and an object's status ([`ObjectStatus`]).
//!
//! Each is an enum of one byte where a shared string took eight, so that a
//! writer matches on it (a new name makes every writer decide how to show
//! it) and a million records hold no pointer each. In JSON each is its name,
//! written and read as the same string the report has always carried.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A name that is not one of its set's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`: expected one of {}", expected.join(", "))]
pub struct UnknownName {
    /// What the name was to name (`call`, `request kind`, `object status`).
    pub what: &'static str,
    /// The name as given.
    pub name: String,
    /// The set's names.
    pub expected: &'static [&'static str],
}

/// Deserializes a `T` from a JSON string through `parse`, without keeping
/// the string (read from a borrowed or an owned one alike).
pub(crate) fn deserialize_str_with<'de, D, T, E>(
    deserializer: D,
    expecting: &'static str,
    parse: fn(&str) -> Result<T, E>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    E: fmt::Display,
{
    struct Parsed<T, E> {
        expecting: &'static str,
        parse: fn(&str) -> Result<T, E>,
    }

    impl<T, E: fmt::Display> Visitor<'_> for Parsed<T, E> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_str<Er: de::Error>(self, v: &str) -> Result<T, Er> {
            (self.parse)(v).map_err(Er::custom)
        }
    }

    deserializer.deserialize_str(Parsed { expecting, parse })
}

/// Defines a closed set of names: the enum, its names, `Display`, `FromStr`
/// and serde as the name.
macro_rules! names {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal {
            $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every name of the set, in the order the documentation lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name, as the JSON report and every writer spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownName {
                        what: $what,
                        name: s.to_owned(),
                        expected: &[$($text,)+],
                    }),
                }
            }
        }

        /// A name equals its text, so that code that filters records by a
        /// name written as text (a test, a caller's filter) reads plainly.
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserialize_str_with(deserializer, concat!("a ", $what, " name"), str::parse)
            }
        }
    };
}

pub(crate) use names;

names! {
    /// What a request asked of a collection.
    RequestKind, "request kind" {
        /// `POST /v1/{resource}`.
        Create => "create",
        /// `GET /v1/{resource}/{id}`.
        Retrieve => "retrieve",
        /// `GET /v1/{resource}?client_reference=X`.
        Search => "search",
        /// `GET /v1/{resource}?created_gte=...`.
        List => "list",
    }
}

names! {
    /// The status of a provider object in the ledger.
    ObjectStatus, "object status" {
        /// Asynchronous work still running.
        Processing => "processing",
        /// Done.
        Succeeded => "succeeded",
        /// Asynchronous work that settled as a failure.
        Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn round_trips<T>(all: &[T])
    where
        T: Copy + fmt::Debug + fmt::Display + FromStr + PartialEq + Serialize,
        T: for<'de> Deserialize<'de>,
        T::Err: fmt::Debug,
    {
        for &value in all {
            let text = value.to_string();
            assert_eq!(text.parse::<T>().unwrap(), value);
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), value);
        }
    }

    #[test]
    fn a_name_equals_its_text() {
        assert!(ObjectStatus::Failed != "failed ");
        assert!(RequestKind::Search == *"search");
    }

    #[test]
    fn names_round_trip_as_their_text() {
        round_trips(RequestKind::ALL);
        round_trips(ObjectStatus::ALL);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_set() {
        let err = "done".parse::<ObjectStatus>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown object status `done`: expected one of processing, succeeded, failed"
        );
        assert!(serde_json::from_str::<ObjectStatus>("\"done\"").is_err());
        assert!(serde_json::from_str::<RequestKind>("1").is_err());
    }
}

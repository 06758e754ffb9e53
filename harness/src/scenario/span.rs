//! Values that remember where they were written, so that a check made after
//! parsing (an undeclared operation, an impossible rule) can still point at
//! the exact line and column.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;

/// A 1-based line and column (in characters). `line == 0` means "unknown".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in characters.
    pub column: u64,
}

impl Pos {
    /// For errors that have no better place than the top of the file.
    pub const START: Pos = Pos { line: 1, column: 1 };
}

/// A value with the position of the YAML node it came from.
///
/// A newtype rather than `Spanned` itself so that it can carry a JSON Schema
/// (the schema of the value; the position is invisible in the file).
#[derive(Debug, Clone)]
pub struct Sp<T> {
    /// The value.
    pub value: T,
    /// Where its node starts (for an alias: where the alias stands).
    pub pos: Pos,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sp<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<T>::deserialize(deserializer)?;
        // `referenced` is where the value is used: for an alias, the alias itself,
        // which is the place a reader of this file would look.
        let at = spanned.referenced;
        Ok(Sp {
            value: spanned.value,
            pos: Pos {
                line: at.line(),
                column: at.column(),
            },
        })
    }
}

impl<T: JsonSchema> JsonSchema for Sp<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

/// A mapping whose keys keep their positions, in file order (a `BTreeMap` would
/// lose both). Duplicate keys never reach it: the YAML reader rejects them.
#[derive(Debug, Clone)]
pub(crate) struct SpMap<K, V>(pub Vec<(Sp<K>, V)>);

impl<K, V> Default for SpMap<K, V> {
    fn default() -> Self {
        SpMap(Vec::new())
    }
}

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for SpMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<K, V>(PhantomData<(K, V)>);

        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for MapVisitor<K, V> {
            type Value = SpMap<K, V>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Sp<K>>()? {
                    entries.push((key, map.next_value::<V>()?));
                }
                Ok(SpMap(entries))
            }
        }

        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}

impl<K, V: JsonSchema> JsonSchema for SpMap<K, V> {
    fn schema_name() -> Cow<'static, str> {
        format!("Map_of_{}", V::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "additionalProperties": generator.subschema_for::<V>(),
        })
    }
}

/// One value or a list of them (`final: {op-1: succeeded}` or `[succeeded, pending]`).
#[derive(Debug, Clone)]
pub(crate) enum OneOrMany<T> {
    /// Written as a single scalar: its position is the enclosing node's.
    One(T),
    /// Written as a list.
    Many(Vec<Sp<T>>),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrManyVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for OneOrManyVisitor<T> {
            type Value = OneOrMany<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("one value or a list of them")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(OneOrMany::One)
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(OneOrMany::One)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(OneOrMany::One)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Sp<T>>()? {
                    items.push(item);
                }
                Ok(OneOrMany::Many(items))
            }
        }

        deserializer.deserialize_any(OneOrManyVisitor(PhantomData))
    }
}

impl<T: JsonSchema> JsonSchema for OneOrMany<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("OneOrMany_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<T>();
        json_schema!({
            "anyOf": [one.clone(), {"type": "array", "items": one, "minItems": 1}],
        })
    }
}

/// Deserializes a field that may be written as `null` on purpose (`provider_ref: null`)
/// into `Some(Sp(None))`, so that "written as null" and "not written" stay apart.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<Sp<Option<T>>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Sp::<Option<T>>::deserialize(deserializer).map(Some)
}

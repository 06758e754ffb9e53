//! The JSON Schema of the profile format, for editors. Derived from the raw
//! serde types; the few types with a hand-written `Deserialize` get a
//! hand-written schema here, next to each other so they change together.

use std::borrow::Cow;

use lostreply_simulator::profile::ErrorKind;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::node::Node;
use super::raw::{HeaderValue, KindName, OrGeneric, RawProfile};

/// A JSON Schema (draft 2020-12) describing profile files, format v1.
///
/// Point an editor's YAML language server at it to complete and check
/// profiles. Checks that need more than one value (paths distinct across
/// resources, placeholders, header names) are the parser's alone.
pub fn profile_schema() -> serde_json::Value {
    schemars::schema_for!(RawProfile).to_value()
}

impl JsonSchema for Node {
    fn schema_name() -> Cow<'static, str> {
        "Json".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Any JSON value written in YAML (no .nan or .inf).",
        })
    }
}

impl<T: JsonSchema> JsonSchema for OrGeneric<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("GenericOr{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let shaped = generator.subschema_for::<T>();
        json_schema!({
            "anyOf": [
                {"const": "generic", "description": "The generic profile's (docs/provider-api.md)."},
                shaped,
            ],
        })
    }
}

impl JsonSchema for KindName {
    fn schema_name() -> Cow<'static, str> {
        "ErrorKind".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        json_schema!({
            "type": "string",
            "enum": names,
            "description": "What went wrong, whatever status the engine answers it with.",
        })
    }
}

impl JsonSchema for HeaderValue {
    fn schema_name() -> Cow<'static, str> {
        "HeaderValue".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": ["string", "boolean", "integer"],
            "description": "A header's value (a boolean or a number is sent as its text).",
        })
    }
}

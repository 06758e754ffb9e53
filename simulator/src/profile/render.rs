//! The answers of a declared profile, made from its templates: objects,
//! pages, errors and events. The generic profile never comes here: its
//! answers are written by the engine's own fast paths.

use std::borrow::Cow;

use bytes::Bytes;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{ArgsPlacement, EventEnvelope, ObjectShape, PageShape, Profile, Resource, TimeFormat};
use crate::json_text::JsonText;
use crate::record::ObjectStatus;
use crate::scratch;
use crate::time::rfc3339;

/// What an object is, whatever the profile shows of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObjectFacts<'a> {
    pub(crate) id: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) status: ObjectStatus,
    pub(crate) client_reference: Option<&'a str>,
    pub(crate) created_at_ms: i64,
    pub(crate) args: &'a JsonText,
    pub(crate) metadata: Option<&'a JsonText>,
}

/// A time as the profile writes it.
pub(crate) fn time_value(ms: i64, format: TimeFormat) -> Value {
    match format {
        TimeFormat::Rfc3339 => Value::String(rfc3339(ms)),
        TimeFormat::UnixSeconds => Value::from(ms.div_euclid(1000)),
    }
}

/// The profile's word for an engine status, where the resource has a status field.
pub(crate) fn status_word(resource: Option<&Resource>, status: ObjectStatus) -> Option<&str> {
    let values = resource?.status.as_ref()?;
    Some(match status {
        ObjectStatus::Processing => &values.processing,
        ObjectStatus::Succeeded => &values.succeeded,
        ObjectStatus::Failed => &values.failed,
    })
}

/// An object in a declared shape, as a `Value` (for pages and events,
/// which place it inside a template).
pub(crate) fn object_value(
    profile: &Profile,
    shape: &ObjectShape,
    facts: ObjectFacts<'_>,
) -> Value {
    serde_json::to_value(ShapedObject::new(profile, shape, facts)).unwrap_or(Value::Null)
}

/// An object in a declared shape, written straight into its body: the
/// arguments and the metadata are pasted as the JSON text the store keeps,
/// never parsed into values, as the generic API's objects are.
pub(crate) fn object_bytes(
    profile: &Profile,
    shape: &ObjectShape,
    facts: ObjectFacts<'_>,
) -> Bytes {
    let view = ShapedObject::new(profile, shape, facts);
    let mut written = true;
    let body = scratch::bytes(|out| written = serde_json::to_writer(out, &view).is_ok());
    if written {
        body
    } else {
        Bytes::from_static(b"null")
    }
}

/// The object's fields in the shape's order, borrowed.
struct ShapedObject<'a> {
    shape: &'a ObjectShape,
    resource: Option<&'a Resource>,
    facts: ObjectFacts<'a>,
    /// The arguments' members, each its own JSON text.
    args: Members<'a>,
    metadata: Option<&'a RawValue>,
}

impl<'a> ShapedObject<'a> {
    fn new(profile: &'a Profile, shape: &'a ObjectShape, facts: ObjectFacts<'a>) -> Self {
        ShapedObject {
            shape,
            resource: profile.resource(facts.resource),
            facts,
            args: serde_json::from_str(facts.args.get()).unwrap_or_default(),
            metadata: facts
                .metadata
                .and_then(|m| serde_json::from_str::<&RawValue>(m.get()).ok()),
        }
    }

    /// Whether a field of the shape itself already has this name: such a
    /// field wins over an argument of the same name.
    fn shape_has(&self, name: &str) -> bool {
        let shape = self.shape;
        name == shape.id_field
            || shape.type_field.as_deref() == Some(name)
            || shape.constants.contains_key(name)
            || self
                .resource
                .is_some_and(|r| r.constants.contains_key(name))
            || shape.created.as_ref().is_some_and(|c| c.field == name)
            || self
                .resource
                .and_then(|r| r.status.as_ref())
                .is_some_and(|s| s.field == name)
            || shape.metadata.as_deref() == Some(name)
            || shape.client_reference.as_deref() == Some(name)
    }
}

impl Serialize for ShapedObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (shape, facts) = (self.shape, self.facts);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(&shape.id_field, facts.id)?;
        if let Some(field) = &shape.type_field {
            let name = self.resource.map_or(facts.resource, |r| r.object.as_str());
            map.serialize_entry(field, name)?;
        }
        let resource_constants = self.resource.iter().flat_map(|r| r.constants.iter());
        for (name, value) in shape.constants.iter().chain(resource_constants) {
            map.serialize_entry(name, value)?;
        }
        if let Some(created) = &shape.created {
            map.serialize_entry(
                &created.field,
                &time_value(facts.created_at_ms, created.format),
            )?;
        }
        if let (Some(values), Some(word)) = (
            self.resource.and_then(|r| r.status.as_ref()),
            status_word(self.resource, facts.status),
        ) {
            map.serialize_entry(&values.field, word)?;
        }
        let typed = shape.typed_values;
        match &shape.args {
            ArgsPlacement::Flatten => {
                for (name, value) in &self.args.0 {
                    if !self.shape_has(name) {
                        map.serialize_entry(name.as_ref(), &Typed(value, typed))?;
                    }
                }
            }
            ArgsPlacement::Nested(field) => map.serialize_entry(field, facts.args)?,
            ArgsPlacement::Pick(names) => {
                for (name, value) in &self.args.0 {
                    if names.iter().any(|n| n == name.as_ref()) {
                        map.serialize_entry(name.as_ref(), &Typed(value, typed))?;
                    }
                }
            }
            ArgsPlacement::Omit => {}
        }
        if let Some(field) = &shape.metadata {
            match self.metadata {
                Some(raw) => map.serialize_entry(field, raw)?,
                None => map.serialize_entry(field, &Map::new())?,
            }
        }
        if let Some(field) = &shape.client_reference {
            map.serialize_entry(field, &facts.client_reference)?;
        }
        map.end()
    }
}

/// An argument's JSON text, shown typed when the shape asks for it (see
/// `ObjectShape::typed_values`): a string that is an integer or a boolean
/// is written as one; everything else as it is.
struct Typed<'a>(&'a RawValue, bool);

impl Serialize for Typed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Typed(raw, typed) = *self;
        let text = raw.get();
        if typed && text.starts_with('"') {
            if let Ok(inner) = serde_json::from_str::<&str>(text) {
                match inner {
                    "true" => return serializer.serialize_bool(true),
                    "false" => return serializer.serialize_bool(false),
                    number if is_integer(number) => {
                        if let Ok(n) = number.parse::<i64>() {
                            return serializer.serialize_i64(n);
                        }
                    }
                    _ => {}
                }
            }
        }
        raw.serialize(serializer)
    }
}

/// `0`, or digits without a leading zero, with an optional minus: the text
/// an integer parameter has on the wire (not `007`, `+1` or `1.0`).
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
}

/// An object's members in their order, each value its own JSON text
/// (borrowed from the stored text; a name with escapes is unescaped).
#[derive(Default)]
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some((Name(name), value)) =
                    access.next_entry::<Name<'de>, &'de RawValue>()?
                {
                    members.push((name, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// A member's name, borrowed when it needs no unescaping.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(name)))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(name.to_owned())))
            }
        }
        deserializer.deserialize_str(Visit)
    }
}

/// Fills a template: a string leaf that is exactly `{name}` takes the
/// value `fill` gives for `name`; elsewhere `{name}` is replaced in the
/// text (a string as it is, anything else as JSON, `null` as nothing).
/// Names `fill` does not know are left as written.
pub(crate) fn fill(template: &Value, lookup: &dyn Fn(&str) -> Option<Value>) -> Value {
    match template {
        Value::String(text) => fill_text(text, lookup),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, lookup)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, lookup)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn fill_text(text: &str, lookup: &dyn Fn(&str) -> Option<Value>) -> Value {
    if let Some(name) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        if let Some(value) = lookup(name) {
            return value;
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after
            .find('}')
            .and_then(|close| lookup(&after[..close]).map(|v| (close, v)));
        match value {
            Some((close, value)) => {
                match value {
                    Value::String(s) => out.push_str(&s),
                    Value::Null => {}
                    other => out.push_str(&other.to_string()),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Value::String(out)
}

/// Which envelope a page is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageKind {
    List,
    Search,
}

/// A page of objects in a declared envelope.
pub(crate) fn page_body(
    shape: &PageShape,
    kind: PageKind,
    url: &str,
    data: Vec<(String, Value)>,
    has_more: bool,
) -> Bytes {
    let template = match kind {
        PageKind::List => &shape.list_envelope,
        PageKind::Search => &shape.search_envelope,
    };
    let first_id = data.first().map(|(id, _)| id.clone());
    let last_id = data.last().map(|(id, _)| id.clone());
    let objects: Vec<Value> = data.into_iter().map(|(_, v)| v).collect();
    let data = Value::Array(objects);
    let lookup = |name: &str| match name {
        "data" => Some(data.clone()),
        "has_more" => Some(Value::Bool(has_more)),
        "url" => Some(Value::String(url.to_owned())),
        "first_id" => Some(first_id.clone().map_or(Value::Null, Value::String)),
        "last_id" => Some(last_id.clone().map_or(Value::Null, Value::String)),
        "next_page" => Some(Value::Null),
        _ => None,
    };
    Bytes::from(fill(template, &lookup).to_string())
}

/// An event's body in the profile's envelope.
pub(crate) fn event_body(
    profile: &Profile,
    id: &str,
    event_type: &str,
    created_at_ms: i64,
    object: Value,
) -> String {
    let template = match &profile.webhooks.envelope {
        EventEnvelope::Generic => {
            let mut payload = Map::new();
            payload.insert("id".to_owned(), Value::String(id.to_owned()));
            payload.insert("type".to_owned(), Value::String(event_type.to_owned()));
            payload.insert(
                "created_at".to_owned(),
                Value::String(rfc3339(created_at_ms)),
            );
            payload.insert("data".to_owned(), object);
            return Value::Object(payload).to_string();
        }
        EventEnvelope::Shaped(template) => template,
    };
    let lookup = |name: &str| match name {
        "id" => Some(Value::String(id.to_owned())),
        "type" => Some(Value::String(event_type.to_owned())),
        "created" => Some(time_value(created_at_ms, TimeFormat::UnixSeconds)),
        "created_at" => Some(time_value(created_at_ms, TimeFormat::Rfc3339)),
        "object" => Some(object.clone()),
        _ => None,
    };
    fill(template, &lookup).to_string()
}

/// An event's type: the profile's template with `{resource}`, `{object}`
/// and `{event}` (`created`, or the status word the object settled to).
pub(crate) fn event_type(profile: &Profile, resource: &str, event: &str) -> String {
    let found = profile.resource(resource);
    let object = found.map_or(resource, |r| r.object.as_str());
    profile
        .webhooks
        .event_type
        .replace("{resource}", resource)
        .replace("{object}", object)
        .replace("{event}", event)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_leaves_take_values_and_text_leaves_take_their_text() {
        let lookup = |name: &str| match name {
            "code" => Some(Value::Null),
            "status" => Some(Value::from(409)),
            "message" => Some(Value::String("in use".to_owned())),
            _ => None,
        };
        let template = json!({"code": "{code}", "status": "{status}", "text": "{status}: {message}{code} {other}", "n": 1});
        assert_eq!(
            fill(&template, &lookup),
            json!({"code": null, "status": 409, "text": "409: in use {other}", "n": 1})
        );
    }

    #[test]
    fn a_stripe_object_carries_its_parameters_at_the_top_and_its_status_word() {
        let profile = crate::profile::builtin::stripe();
        let crate::profile::Objects::Shaped(shape) = &profile.objects else {
            panic!("stripe objects are shaped")
        };
        let args = JsonText::of(&json!({"amount": "1200", "currency": "usd"}));
        let metadata = JsonText::of(&json!({"operation_id": "op-1"}));
        let facts = ObjectFacts {
            id: "pi_1",
            resource: "payment_intents",
            status: ObjectStatus::Failed,
            client_reference: None,
            created_at_ms: 1_767_225_600_500,
            args: &args,
            metadata: Some(&metadata),
        };
        assert_eq!(
            object_value(&profile, shape, facts).to_string(),
            r#"{"id":"pi_1","object":"payment_intent","livemode":false,"created":1767225600,"status":"canceled","amount":1200,"currency":"usd","metadata":{"operation_id":"op-1"}}"#
        );
        assert_eq!(
            event_type(&profile, "payment_intents", "canceled"),
            "payment_intent.canceled"
        );
    }
}

//! A create body read for attribution: its group key and its references,
//! borrowed from the journal's text, or, for a create that committed, from
//! its effect (the run keeps no fingerprint for it). It sits below both the
//! checks (the attribution reads bodies with it) and the run (whose debug
//! builds assert that a committed create's key is derivable from its effect
//! before freeing the fingerprint), so neither of those layers imports the
//! other.
//!
//! The fingerprint is canonical (keys sorted at every depth), so the
//! arguments' canonical text is the fingerprint's own members, reserved ones
//! left out, copied as they are. Parsing every create into a `Value` tree and
//! writing it out again would be most of the attribution's time at a million
//! operations, and reading the members into owned strings and a `BTreeMap`
//! most of the rest, so they are borrowed and the key is written into a
//! buffer the caller reuses.

use std::borrow::Cow;

use lostreply_reports::shared_json::{for_each_member, JsonStr};
use lostreply_simulator::{write_canonical_text, Effect};
use serde_json::value::RawValue;
use serde_json::Value;

/// A create body's references (the group key is in the caller's buffer).
#[derive(Debug, PartialEq)]
pub(crate) struct References<'a> {
    /// `client_reference`, if a string.
    pub(crate) client_reference: Option<Cow<'a, str>>,
    /// `metadata.operation_id`, if a string.
    pub(crate) metadata_operation: Option<String>,
}

/// Writes `resource`, a space and the arguments' canonical text (the
/// fingerprint's members but the reserved ones) into `key` (cleared first),
/// and returns the references. `None` when the fingerprint is not an object
/// or the key is not UTF-8.
pub(crate) fn split_body<'a>(
    resource: &str,
    fingerprint: &'a str,
    key: &mut Vec<u8>,
) -> Option<References<'a>> {
    // Canonical already: each value is copied as it is.
    write_key(resource, fingerprint, copy_value, key)
}

/// [`split_body`] of a committed create's body, made again from the effect
/// it made: the effect keeps the body's members but the reserved ones as its
/// arguments (in the order sent, nested objects as sent) and the reserved
/// ones as fields of their own. The same key and references, byte for byte
/// (checked on every create a test run collects: a run's observation keeps
/// no fingerprint for these, see `forget_derivable_fingerprints`).
pub(crate) fn split_effect<'a>(
    resource: &str,
    effect: &'a Effect,
    key: &mut Vec<u8>,
) -> Option<References<'a>> {
    let mut references = write_key(resource, effect.args.get(), write_canonical_value, key)?;
    if let Some(reference) = effect.client_reference.as_deref() {
        references.client_reference = Some(Cow::Borrowed(reference));
    }
    if let Some(metadata) = &effect.metadata {
        references.metadata_operation = operation_of_metadata(metadata.get());
    }
    Some(references)
}

/// Panics unless `effect` gives the key and references that `entry`'s
/// fingerprint gives (a test build's check, before the fingerprint is
/// freed: see [`split_effect`]).
#[cfg(debug_assertions)]
pub(crate) fn assert_derivable(entry: &lostreply_simulator::JournalEntry, effect: &Effect) {
    let resource = entry.resource.as_deref().unwrap_or_default();
    let (mut from_body, mut from_effect) = (Vec::new(), Vec::new());
    let body = entry
        .fingerprint
        .as_deref()
        .and_then(|fingerprint| split_body(resource, fingerprint, &mut from_body));
    let made_again = split_effect(resource, effect, &mut from_effect);
    assert_eq!(
        (body, String::from_utf8_lossy(&from_body)),
        (made_again, String::from_utf8_lossy(&from_effect)),
        "request {}: its effect {} does not give its body's key",
        entry.seq,
        effect.id
    );
}

/// A canonical value, as it is.
fn copy_value(value: &RawValue, key: &mut Vec<u8>) -> bool {
    key.extend_from_slice(value.get().as_bytes());
    true
}

/// A value as the fingerprint writes it: objects sorted at every depth.
/// Scalars are copied: serde_json wrote them from the very values the
/// fingerprint was written from, so they are already as it writes them.
fn write_canonical_value(value: &RawValue, key: &mut Vec<u8>) -> bool {
    let text = value.get();
    if text.starts_with(['{', '[']) {
        write_canonical_text(text, key)
    } else {
        copy_value(value, key)
    }
}

/// `metadata.operation_id`, if `metadata` is an object and that a string.
fn operation_of_metadata(metadata: &str) -> Option<String> {
    serde_json::from_str::<Value>(metadata)
        .ok()
        .and_then(|m| m.get("operation_id")?.as_str().map(str::to_owned))
}

/// Writes the key from the members of the object `object` holds (each
/// value through `write`) and returns the references among them; `None`
/// when it is not an object.
fn write_key<'a>(
    resource: &str,
    object: &'a str,
    mut write: impl FnMut(&RawValue, &mut Vec<u8>) -> bool,
    key: &mut Vec<u8>,
) -> Option<References<'a>> {
    let mut members = Vec::new();
    for_each_member(object, |name, value| members.push((name, value))).ok()?;
    // In name order, as a map would hold them; of a name given twice, the last.
    members.sort_by(|a, b| a.0.cmp(&b.0));
    key.clear();
    key.extend_from_slice(resource.as_bytes());
    // A resource name never holds a space ([a-z][a-z0-9_]*), so this cannot collide.
    key.push(b' ');
    key.push(b'{');
    let mut references = References {
        client_reference: None,
        metadata_operation: None,
    };
    let mut first = true;
    for (index, (name, value)) in members.iter().enumerate() {
        if members.get(index + 1).is_some_and(|next| next.0 == *name) {
            continue;
        }
        match name.as_ref() {
            "client_reference" => {
                references.client_reference = serde_json::from_str::<JsonStr<'a>>(value.get())
                    .ok()
                    .map(|t| t.0);
            }
            "metadata" => references.metadata_operation = operation_of_metadata(value.get()),
            _ => {
                if !first {
                    key.push(b',');
                }
                first = false;
                // Writing a string into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *key, name.as_ref());
                key.push(b':');
                if !write(value, key) {
                    return None;
                }
            }
        }
    }
    key.push(b'}');
    std::str::from_utf8(key).ok()?;
    Some(references)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::BTreeMap;

    use serde_json::value::RawValue;

    use lostreply_simulator::canonical_json;

    use super::*;

    /// The key and references as the attribution computed them before: the
    /// members read into a `BTreeMap` of owned names.
    fn by_map(
        resource: &str,
        fingerprint: &str,
    ) -> Option<(String, Option<String>, Option<String>)> {
        let members: BTreeMap<String, Box<RawValue>> = serde_json::from_str(fingerprint).ok()?;
        let mut args = serde_json::Map::new();
        let (mut client_reference, mut metadata_operation) = (None, None);
        for (name, value) in members {
            match name.as_str() {
                "client_reference" => client_reference = serde_json::from_str(value.get()).ok(),
                "metadata" => {
                    metadata_operation = serde_json::from_str::<Value>(value.get())
                        .ok()
                        .and_then(|m| m.get("operation_id")?.as_str().map(str::to_owned));
                }
                _ => {
                    args.insert(name, serde_json::from_str(value.get()).ok()?);
                }
            }
        }
        let key = format!("{resource} {}", canonical_json(&Value::Object(args)));
        Some((key, client_reference, metadata_operation))
    }

    fn split(
        resource: &str,
        fingerprint: &str,
    ) -> Option<(String, Option<String>, Option<String>)> {
        let mut key = b"left over".to_vec();
        let refs = split_body(resource, fingerprint, &mut key)?;
        Some((
            String::from_utf8(key).unwrap(),
            refs.client_reference.map(Cow::into_owned),
            refs.metadata_operation,
        ))
    }

    #[test]
    fn the_split_key_is_the_group_key_of_the_arguments() {
        let body = serde_json::json!({
            "title": "a \"b\"", "n": 1, "nested": {"z": [1, {"y": 2, "x": null}], "a": "é"},
            "client_reference": "op-1", "metadata": {"operation_id": "op-2", "k": 1}
        });
        let fingerprint = canonical_json(&body);
        let (key, client_reference, metadata_operation) = split("tickets", &fingerprint).unwrap();
        assert!(key.starts_with("tickets {\"n\":1,"), "{key}");
        assert_eq!(client_reference.as_deref(), Some("op-1"));
        assert_eq!(metadata_operation.as_deref(), Some("op-2"));
        assert_eq!(
            split("tickets", &fingerprint),
            by_map("tickets", &fingerprint)
        );
    }

    #[test]
    fn odd_bodies_read_as_a_map_would_read_them() {
        for fingerprint in [
            // Escapes in names and in the reference (owned, not borrowed).
            r#"{"a\"b":1,"client_reference":"op-\u0031","z\n":[]}"#,
            // Not canonical: out of order, a name given twice (the last wins).
            r#"{"z":1,"a":2,"a":3,"client_reference":"x","client_reference":"y"}"#,
            // A reference that is not a string, metadata that is not an object.
            r#"{"client_reference":7,"metadata":[1],"t":"x"}"#,
            r#"{"metadata":{"operation_id":5},"t":null}"#,
            r#"{}"#,
        ] {
            assert_eq!(
                split("r", fingerprint),
                by_map("r", fingerprint),
                "{fingerprint}"
            );
        }
        for not_an_object in ["[1]", "1", "\"s\"", "{", ""] {
            assert_eq!(split("r", not_an_object), None, "{not_an_object}");
        }
    }
}

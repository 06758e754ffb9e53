//! A call's reply as the report keeps it: its own text, or, for the common
//! reply that is exactly its parsed [`OutcomeReply`] written out (the five
//! fields in the protocol's order), that parsed reply.
//!
//! Why: a million-operation run holds a million such replies (the final
//! `status` call shares the execute's), each some 160 bytes of text saying
//! again what the parsed outcome beside it says. A reply is kept as its
//! fields only when their compact writing is its text byte for byte
//! ([`OutcomeReply::writes_as`]), and the fields are written through the
//! same serializer calls, so every writer shows the same reply either way.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::model::OutcomeKind;
use crate::shared_json::SharedJson;
use crate::shared_str::SharedStr;

/// A reply that came back from an adapter call.
#[derive(Clone)]
pub enum CallReply {
    /// The reply's text.
    Text(SharedJson),
    /// A reply that was exactly its parsed outcome written out, kept as it.
    Outcome(OutcomeReply),
}

/// The reply to `execute`, `reconcile`, `resolve` and `status`: the adapter
/// protocol's type, which the harness reads replies into and re-exports
/// (`lostreply_harness::protocol::OutcomeReply`). Fields beyond these are
/// ignored (a later protocol version, or an adapter's own notes); the
/// harness names them in the report rather than failing the call.
///
/// Its text is shared ([`SharedStr`]): the report's records take it by a
/// reference count, and a large run holds two replies per operation. Serde
/// writes its fields in the protocol's order, `provider_ref` as `null` when
/// absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeReply {
    /// The operation's id.
    pub operation_id: SharedStr,
    /// What the adapter claims.
    pub outcome: OutcomeKind,
    /// Provider object id, if known.
    #[serde(default)]
    pub provider_ref: Option<SharedStr>,
    /// True when automation stopped and a person must decide.
    #[serde(default)]
    pub needs_review: bool,
    /// What the claim rests on.
    #[serde(default)]
    pub evidence: SharedStr,
}

impl OutcomeReply {
    /// True when `text` is exactly this reply's compact JSON (so the parsed
    /// reply may stand for its text).
    pub fn writes_as(&self, text: &str) -> bool {
        serde_json::to_string(self).is_ok_and(|written| written == text)
    }
}

impl CallReply {
    /// The compact JSON text (borrowed when kept as text, whole).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            CallReply::Text(json) => json.text(),
            // Writing five plain fields cannot fail; `null` only guards the type.
            CallReply::Outcome(fields) => {
                Cow::Owned(serde_json::to_string(fields).unwrap_or_else(|_| "null".to_owned()))
            }
        }
    }

    /// The reply as a tree (built on each call: for readers of one call, not
    /// loops over a run).
    pub fn to_value(&self) -> Value {
        match self {
            CallReply::Text(json) => json.to_value(),
            CallReply::Outcome(fields) => serde_json::to_value(fields).unwrap_or(Value::Null),
        }
    }

    /// The member `key` of the reply, if it is an object and has it.
    pub fn get(&self, key: &str) -> Option<Value> {
        match self.to_value() {
            Value::Object(mut map) => map.shift_remove(key),
            _ => None,
        }
    }
}

impl From<SharedJson> for CallReply {
    fn from(json: SharedJson) -> CallReply {
        CallReply::Text(json)
    }
}

impl From<Value> for CallReply {
    fn from(value: Value) -> CallReply {
        CallReply::Text(value.into())
    }
}

/// Equal when the texts are, however each is kept (a report read back from
/// JSON keeps every reply as text).
impl PartialEq for CallReply {
    fn eq(&self, other: &CallReply) -> bool {
        match (self, other) {
            (CallReply::Text(a), CallReply::Text(b)) => a == b,
            (CallReply::Outcome(a), CallReply::Outcome(b)) => a == b,
            _ => self.text() == other.text(),
        }
    }
}

impl Eq for CallReply {}

impl std::fmt::Debug for CallReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// The compact text, as [`SharedJson`]'s `Display` writes it.
impl std::fmt::Display for CallReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for CallReply {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CallReply::Text(json) => json.serialize(serializer),
            CallReply::Outcome(fields) => fields.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CallReply {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CallReply, D::Error> {
        SharedJson::deserialize(deserializer).map(CallReply::Text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn reply(op: &str, provider_ref: Option<&str>, evidence: &str) -> OutcomeReply {
        OutcomeReply {
            operation_id: op.into(),
            outcome: OutcomeKind::Succeeded,
            provider_ref: provider_ref.map(Into::into),
            needs_review: false,
            evidence: evidence.into(),
        }
    }

    /// Texts that need escaping, outside the basic plane, and empty.
    const AWKWARD: [&str; 6] = [
        "created tkt_1",
        "a \"quoted\" \\ back\\slash",
        "line\nbreak\ttab\u{1}control",
        "caf\u{e9} \u{1F600} \u{2028}",
        "</script><!--",
        "",
    ];

    #[test]
    fn fields_stand_for_exactly_their_own_compact_text() {
        for evidence in AWKWARD {
            for provider_ref in [None, Some("tkt_1"), Some(evidence)] {
                let f = reply("op-1", provider_ref, evidence);
                let value = json!({"operation_id": "op-1", "outcome": "succeeded",
                    "provider_ref": provider_ref, "needs_review": false, "evidence": evidence});
                let text = SharedJson::new(&value);
                assert!(f.writes_as(&text.text()), "{value}");
                assert_eq!(CallReply::Outcome(f.clone()), CallReply::Text(text));
                assert_eq!(CallReply::Outcome(f).to_value(), value);
            }
        }
        // Not the same text: another order, a field left out, another value,
        // one more field, other spacing.
        let f = reply("op-1", None, "e");
        for other in [
            r#"{"outcome":"succeeded","operation_id":"op-1","provider_ref":null,"needs_review":false,"evidence":"e"}"#,
            r#"{"operation_id":"op-1","outcome":"succeeded","needs_review":false,"evidence":"e"}"#,
            r#"{"operation_id":"op-1","outcome":"succeeded","provider_ref":null,"needs_review":true,"evidence":"e"}"#,
            r#"{"operation_id":"op-1","outcome":"succeeded","provider_ref":null,"needs_review":false,"evidence":"e","x":1}"#,
            r#"{"operation_id": "op-1","outcome":"succeeded","provider_ref":null,"needs_review":false,"evidence":"e"}"#,
        ] {
            assert!(!f.writes_as(other), "{other}");
        }
    }

    /// A report-like nesting, so the reply is written where a report writes it.
    #[derive(Serialize)]
    struct Nested<'a> {
        calls: [Call<'a>; 2],
    }

    #[derive(Serialize)]
    struct Call<'a> {
        index: usize,
        reply: Option<&'a CallReply>,
    }

    fn nested(reply: &CallReply) -> Nested<'_> {
        Nested {
            calls: [
                Call {
                    index: 0,
                    reply: Some(reply),
                },
                Call {
                    index: 1,
                    reply: None,
                },
            ],
        }
    }

    #[test]
    fn every_writer_writes_the_fields_as_the_text() {
        for evidence in AWKWARD {
            let f = reply("op-\"1\"", Some("tkt_\u{e9}"), evidence);
            let text = CallReply::Text(SharedJson::new(&serde_json::to_value(&f).unwrap()));
            let kept = CallReply::Outcome(f);
            // Compact and pretty, by serde_json.
            assert_eq!(
                serde_json::to_string(&kept).unwrap(),
                serde_json::to_string(&text).unwrap()
            );
            assert_eq!(
                serde_json::to_string_pretty(&nested(&kept)).unwrap(),
                serde_json::to_string_pretty(&nested(&text)).unwrap()
            );
            // The report's own writer (which re-indents text itself).
            let mut a = Vec::new();
            let mut b = Vec::new();
            crate::pretty::write_pretty(&mut a, &nested(&kept)).unwrap();
            crate::pretty::write_pretty(&mut b, &nested(&text)).unwrap();
            assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
            // Read back, it is text, and equal.
            let back: CallReply =
                serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
            assert!(matches!(back, CallReply::Text(_)));
            assert_eq!(back, kept);
        }
    }
}

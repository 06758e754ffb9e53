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

pub use lostreply_protocol::OutcomeReply;

use crate::kept_json::{Kept, MadeJson};

/// A reply that came back from an adapter call: its text, or a reply that
/// was exactly its parsed outcome written out, kept as it ([`Kept::made`]).
pub type CallReply = Kept<OutcomeReply>;

/// Its compact writing: the reply it stands for, when it [`OutcomeReply::writes_as`] it.
impl MadeJson for OutcomeReply {
    fn json_text(&self) -> Cow<'_, str> {
        // Writing five plain fields cannot fail; `null` only guards the type.
        Cow::Owned(serde_json::to_string(self).unwrap_or_else(|_| "null".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::kept_json::testing::assert_the_same;
    use crate::outcome::OutcomeKind;
    use crate::shared_json::SharedJson;

    fn reply(op: &str, provider_ref: Option<&str>, evidence: &str) -> OutcomeReply {
        OutcomeReply::new(op, OutcomeKind::Succeeded, evidence)
            .with_provider_ref(provider_ref.map(Into::into))
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
                assert_eq!(CallReply::made(f.clone()), CallReply::from(text));
                assert_eq!(CallReply::made(f).to_value(), value);
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

    #[test]
    fn every_writer_writes_the_fields_as_the_text() {
        for evidence in AWKWARD {
            let f = reply("op-\"1\"", Some("tkt_\u{e9}"), evidence);
            let text = SharedJson::new(&serde_json::to_value(&f).unwrap());
            assert_the_same(&CallReply::made(f), &text);
        }
    }
}

//! A call's request as a record keeps it: its own text with the common
//! fields' shared text after it, or, for the requests the harness makes from
//! a scenario's operation, that operation (or its id) with the same shared
//! common fields.
//!
//! Why: a million-operation run holds an `execute` request and a final
//! `status` request per operation. Their own text (`{"operation":{…}}`, and
//! `{"operation_id":"…"}`) would be some 170 bytes per operation in two
//! allocations, saying again what the scenario's operation says. A request is
//! kept as what it was made from only when that writes its own text byte for
//! byte (checked as it is recorded), and it is written through the same
//! serializer calls, so every writer shows the same request either way.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::kept_json::{Kept, MadeJson};
use crate::shared_json::{serialize_parts, SharedJson, SharedTail};
use crate::shared_str::SharedStr;

/// A logical operation as a scenario declares it (the harness's scenario
/// model re-exports it). Shared: cloning it is a reference count, so an
/// `execute` request can hold its operation rather than the operation's text
/// again. Its fields are read through it ([`OperationFields`]).
#[derive(Clone, PartialEq)]
pub struct OperationSpec(Arc<OperationFields>);

/// What an operation is.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationFields {
    /// `op-1`.
    pub id: SharedStr,
    /// Collection it creates in (for a tool operation: the tool's collection).
    pub resource: SharedStr,
    /// `Some`: an MCP operation, the paid tool it calls (`action: call_tool`);
    /// `None`: an HTTP create.
    pub tool: Option<SharedStr>,
    /// Its arguments (the create body before reserved fields; for a tool, the
    /// tool's arguments without its idempotency key argument, which only the
    /// adapter adds, and which the server strips before it records the effect),
    /// an object in file order, kept as its compact text: a million-operation
    /// run holds a million, and the report shares this copy (as a parsed map
    /// each would be some 550 bytes).
    pub args: SharedJson,
}

impl OperationSpec {
    /// The operation with these fields.
    pub fn new(fields: OperationFields) -> OperationSpec {
        OperationSpec(Arc::new(fields))
    }

    /// The protocol's `action` for it: `create`, or `call_tool` for a tool operation.
    pub fn action(&self) -> &'static str {
        match self.tool {
            None => "create",
            Some(_) => "call_tool",
        }
    }

    /// Its fields to change: this operation's own, copied first if it is
    /// shared (as `Arc::make_mut`; the requests made from it keep the old).
    pub fn make_mut(&mut self) -> &mut OperationFields {
        Arc::make_mut(&mut self.0)
    }

    /// True when both are the one shared operation (not only equal).
    pub fn ptr_eq(a: &OperationSpec, b: &OperationSpec) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl From<OperationFields> for OperationSpec {
    fn from(fields: OperationFields) -> OperationSpec {
        OperationSpec::new(fields)
    }
}

impl Deref for OperationSpec {
    type Target = OperationFields;

    fn deref(&self) -> &OperationFields {
        &self.0
    }
}

/// As its fields, under its own name.
impl fmt::Debug for OperationSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperationSpec")
            .field("id", &self.id)
            .field("resource", &self.resource)
            .field("tool", &self.tool)
            .field("args", &self.args)
            .finish()
    }
}

/// A request the harness sent to an adapter: its text (its own members',
/// and the common fields' shared after them), or the operation or the
/// operation's id it was made from.
pub type RecordedRequest = Kept<FromOperation>;

/// What a request was made from, with the common fields' shared text
/// (`tail`: `,`, the members, `}`) that follows its own members.
#[derive(Debug, Clone, PartialEq)]
pub enum FromOperation {
    /// `{"operation_id":` and the id, then the common fields: a `status` or
    /// `reconcile` request.
    Id {
        /// The operation's id.
        id: SharedStr,
        /// The common fields' shared text.
        tail: SharedStr,
    },
    /// `{"operation":` and the operation's object, then the common fields:
    /// an `execute` request.
    Operation {
        /// The operation.
        op: OperationSpec,
        /// The common fields' shared text.
        tail: SharedStr,
    },
}

/// What the harness made a request's own members from, as it records the
/// request ([`RecordedRequest::recorded`]).
#[derive(Debug, Clone, Copy)]
pub enum MadeFrom<'a> {
    /// `{"operation_id": id}`: `status` and `reconcile`.
    Id(&'a SharedStr),
    /// `{"operation": op}`: `execute`.
    Operation(&'a OperationSpec),
    /// Anything else (`resolve`, `webhook`): kept as text.
    Nothing,
}

impl RecordedRequest {
    /// `own`'s members then `tail`'s, kept as what `made_from` names when
    /// `own` is exactly it written out (`{"operation_id": id}`, or
    /// `{"operation": op}` as the protocol writes it), and as text otherwise.
    pub fn recorded(
        own: &Map<String, Value>,
        tail: &SharedTail,
        made_from: MadeFrom<'_>,
    ) -> RecordedRequest {
        let tail_text = tail.text().clone();
        let candidate = match made_from {
            MadeFrom::Id(id) => FromOperation::Id {
                id: id.clone(),
                tail: tail_text,
            },
            MadeFrom::Operation(op) => FromOperation::Operation {
                op: op.clone(),
                tail: tail_text,
            },
            MadeFrom::Nothing => return SharedJson::with_tail(own, tail).into(),
        };
        RecordedRequest::kept_as(own, tail, candidate)
    }

    /// `made_from` when its own text is `own`'s byte for byte (and the
    /// common fields would follow them, as [`SharedJson::with_tail`] keeps
    /// them), the text otherwise.
    fn kept_as(
        own: &Map<String, Value>,
        tail: &SharedTail,
        made_from: FromOperation,
    ) -> RecordedRequest {
        let exact = tail.is_disjoint(own)
            && serde_json::to_string(own).is_ok_and(|text| {
                let mut written = Vec::new();
                made_from.write_own(&mut written);
                text.strip_suffix('}').map(str::as_bytes) == Some(written.as_slice())
            });
        if exact {
            Kept::made(made_from)
        } else {
            SharedJson::with_tail(own, tail).into()
        }
    }
}

impl FromOperation {
    /// The common fields' shared text.
    fn tail(&self) -> &SharedStr {
        match self {
            FromOperation::Id { tail, .. } | FromOperation::Operation { tail, .. } => tail,
        }
    }

    /// Appends the request's own members' text, the text before the common
    /// fields (an object's start and its own members, without the closing
    /// `}`), as the harness's serde_json writes them: `{"operation_id":`
    /// and the id; or `{"operation":` and the operation's object, its
    /// members in the adapter protocol's order (docs/adapter-protocol.md:
    /// `id`, `action`, `resource`, `tool` only for a tool operation, `args`),
    /// the arguments as their compact text. Written by hand, not through a
    /// serializer: the arguments' text goes in as it is rather than split
    /// and written again, which made writing a million-operation report a
    /// quarter slower. Whatever this writes is held to the harness's own
    /// text byte for byte when the request is recorded
    /// ([`RecordedRequest::recorded`]), so it cannot drift unseen.
    fn write_own(&self, out: &mut Vec<u8>) {
        // Writing a string into a `Vec` cannot fail.
        let string = |out: &mut Vec<u8>, s: &str| {
            let _ = serde_json::to_writer(&mut *out, s);
        };
        match self {
            FromOperation::Id { id, .. } => {
                out.extend_from_slice(b"{\"operation_id\":");
                string(out, id);
            }
            FromOperation::Operation { op, .. } => {
                out.extend_from_slice(b"{\"operation\":{\"id\":");
                string(out, &op.id);
                out.extend_from_slice(b",\"action\":");
                string(out, op.action());
                out.extend_from_slice(b",\"resource\":");
                string(out, &op.resource);
                if let Some(tool) = &op.tool {
                    out.extend_from_slice(b",\"tool\":");
                    string(out, tool);
                }
                out.extend_from_slice(b",\"args\":");
                out.extend_from_slice(op.args.text().as_bytes());
                out.push(b'}');
            }
        }
    }
}

impl MadeJson for FromOperation {
    fn json_text(&self) -> Cow<'_, str> {
        let mut text = Vec::new();
        self.write_own(&mut text);
        text.extend_from_slice(self.tail().as_bytes());
        // Only JSON text and UTF-8 strings were written.
        Cow::Owned(String::from_utf8(text).unwrap_or_default())
    }
}

/// Written as the request's text: its own members, then the common fields.
impl Serialize for FromOperation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The own text is written into this thread's buffer, taken out while
        // it is in use: a report writes two million of these, and needs no
        // allocation for each.
        let mut own = OWN_TEXT.take();
        own.clear();
        self.write_own(&mut own);
        let written = match std::str::from_utf8(&own) {
            Ok(text) => serialize_parts(text, Some(self.tail()), serializer),
            Err(e) => Err(serde::ser::Error::custom(e)),
        };
        OWN_TEXT.set(own);
        written
    }
}

thread_local! {
    /// The buffer [`FromOperation`]'s `Serialize` writes a request's own text into.
    static OWN_TEXT: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::kept_json::testing::assert_the_same;

    /// Texts that need escaping, outside the basic plane, and empty.
    const AWKWARD: [&str; 6] = [
        "op-1",
        "a \"quoted\" \\ back\\slash",
        "line\nbreak\ttab\u{1}control",
        "caf\u{e9} \u{1F600} \u{2028}",
        "</script><!--",
        "",
    ];

    fn common() -> (Map<String, Value>, SharedTail) {
        let common = json!({"protocol": 1, "now": "2026-01-01T00:00:00Z",
            "provider": {"base_url": "http://127.0.0.1:1", "credential": "sk_\"a"},
            "client_timeout_ms": 250});
        let common = common.as_object().cloned().unwrap();
        let tail = SharedTail::of_members(&common).unwrap();
        (common, tail)
    }

    fn op(id: &str, tool: Option<&str>, args: Value) -> OperationSpec {
        OperationSpec::new(OperationFields {
            id: id.into(),
            resource: "tickets".into(),
            tool: tool.map(Into::into),
            args: SharedJson::new(&args),
        })
    }

    /// The operation as the harness sends it (the protocol's fields, in order).
    fn sent(op: &OperationSpec) -> Map<String, Value> {
        let mut operation = json!({"id": op.id.as_str(), "action": op.action(),
            "resource": op.resource.as_str()});
        if let Some(tool) = &op.tool {
            operation["tool"] = json!(tool.as_str());
        }
        operation["args"] = op.args.to_value();
        json!({ "operation": operation })
            .as_object()
            .cloned()
            .unwrap()
    }

    fn merged(own: &Map<String, Value>, common: &Map<String, Value>) -> Value {
        let mut merged = own.clone();
        merged.extend(common.clone());
        Value::Object(merged)
    }

    /// Every request kept as what it was made from, beside the same request as text.
    fn pairs() -> Vec<(RecordedRequest, Value)> {
        let (common, tail) = common();
        let mut pairs = Vec::new();
        for text in AWKWARD {
            let id = SharedStr::from(text);
            let own = json!({ "operation_id": text })
                .as_object()
                .cloned()
                .unwrap();
            let kept = RecordedRequest::recorded(&own, &tail, MadeFrom::Id(&id));
            assert!(
                matches!(kept.made_from(), Some(FromOperation::Id { .. })),
                "{text:?}"
            );
            pairs.push((kept, merged(&own, &common)));
            for tool in [None, Some(text)] {
                let op = op(
                    text,
                    tool,
                    json!({"title": text, "n": [1, 2.5, {}], "e": {}, "z": null}),
                );
                let own = sent(&op);
                let kept = RecordedRequest::recorded(&own, &tail, MadeFrom::Operation(&op));
                assert!(
                    matches!(kept.made_from(), Some(FromOperation::Operation { .. })),
                    "{text:?}"
                );
                pairs.push((kept, merged(&own, &common)));
            }
        }
        pairs
    }

    #[test]
    fn a_request_made_from_its_operation_is_the_request_in_every_way() {
        for (kept, value) in pairs() {
            assert_eq!(kept.to_value(), value);
            assert_eq!(kept.get("protocol"), Some(json!(1)));
            assert_the_same(&kept, &SharedJson::new(&value));
        }
    }

    #[test]
    fn a_request_that_says_anything_else_is_kept_as_its_text() {
        let (common, tail) = common();
        let id = SharedStr::from("op-1");
        let op = op("op-1", None, json!({"title": "t"}));
        let as_text = |own: &Value, kept: RecordedRequest| {
            let own = own.as_object().cloned().unwrap();
            assert!(kept.made_from().is_none(), "{own:?}");
            assert_eq!(kept.to_value(), merged(&own, &common));
        };
        for own in [
            // Another id, another member after it, a member of the common fields.
            json!({"operation_id": "op-2"}),
            json!({"operation_id": "op-1", "outcome": "failed"}),
            json!({"operation_id": "op-1", "protocol": 2}),
            json!({"operation_id": 1}),
        ] {
            let map = own.as_object().cloned().unwrap();
            as_text(
                &own,
                RecordedRequest::recorded(&map, &tail, MadeFrom::Id(&id)),
            );
        }
        let mut reordered = sent(&op);
        reordered["operation"] = json!({"action": "create", "id": "op-1",
            "resource": "tickets", "args": {"title": "t"}});
        let mut other_args = sent(&op);
        other_args["operation"]["args"] = json!({"title": "u"});
        let mut extra = sent(&op);
        extra.insert("note".to_owned(), json!("x"));
        for own in [reordered, other_args, extra, Map::new()] {
            let value = Value::Object(own.clone());
            as_text(
                &value,
                RecordedRequest::recorded(&own, &tail, MadeFrom::Operation(&op)),
            );
        }
    }

    #[test]
    fn an_operation_reads_as_its_fields_and_is_shared_by_its_clones() {
        let a = op("op-1", Some("pay"), json!({}));
        let b = a.clone();
        assert!(OperationSpec::ptr_eq(&a, &b));
        assert_eq!(b.action(), "call_tool");
        assert_eq!(op("op-1", None, json!({})).action(), "create");
        assert_eq!(a, op("op-1", Some("pay"), json!({})));
        assert!(format!("{a:?}").starts_with("OperationSpec { id: "));
        let mut changed = b.clone();
        changed.make_mut().id = "op-2".into();
        assert_eq!(
            (a.id.as_str(), b.id.as_str(), changed.id.as_str()),
            ("op-1", "op-1", "op-2")
        );
    }
}

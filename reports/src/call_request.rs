//! A call's request as a record keeps it: its own text with the common
//! fields' shared text after it, or, for the requests the harness makes from
//! a scenario's operation, that operation (or its id) with the same shared
//! common fields.
//!
//! Why: a million-operation run holds an `execute` request and a final
//! `status` request per operation. Their own text (`{"operation":{…}}`, and
//! `{"operation_id":"…"}`) was some 170 bytes per operation in two
//! allocations, saying again what the scenario's operation says. A request is
//! kept as what it was made from only when that writes its own text byte for
//! byte (checked as it is recorded), and it is written through the same
//! serializer calls, so every writer shows the same request either way.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

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
    /// each was some 550 bytes).
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

/// A request the harness sent to an adapter.
#[derive(Clone)]
pub enum RecordedRequest {
    /// Its text (its own members', and the common fields' shared after them).
    Text(SharedJson),
    /// `{"operation_id":` and the id, then the common fields (`tail`: `,`,
    /// the members, `}`): a `status` or `reconcile` request.
    OperationId {
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

impl RecordedRequest {
    /// `own`'s members then `tail`'s, kept as text.
    pub fn with_tail(own: &Map<String, Value>, tail: &SharedTail) -> RecordedRequest {
        RecordedRequest::Text(SharedJson::with_tail(own, tail))
    }

    /// `own`'s members then `tail`'s, kept as the operation's id `id` when
    /// `own` is exactly `{"operation_id": id}`, and as text otherwise.
    pub fn about(own: &Map<String, Value>, tail: &SharedTail, id: &SharedStr) -> RecordedRequest {
        RecordedRequest::made_from(
            own,
            tail,
            RecordedRequest::OperationId {
                id: id.clone(),
                tail: tail.text().clone(),
            },
        )
    }

    /// `own`'s members then `tail`'s, kept as the operation `op` when `own`
    /// is exactly `{"operation": op}` as the protocol writes it, and as text
    /// otherwise.
    pub fn executing(
        own: &Map<String, Value>,
        tail: &SharedTail,
        op: &OperationSpec,
    ) -> RecordedRequest {
        RecordedRequest::made_from(
            own,
            tail,
            RecordedRequest::Operation {
                op: op.clone(),
                tail: tail.text().clone(),
            },
        )
    }

    /// `made_from` when its own text is `own`'s byte for byte (and the
    /// common fields would follow them, as [`SharedJson::with_tail`] keeps
    /// them), the text otherwise.
    fn made_from(
        own: &Map<String, Value>,
        tail: &SharedTail,
        made_from: RecordedRequest,
    ) -> RecordedRequest {
        let exact = tail.is_disjoint(own)
            && serde_json::to_string(own)
                .is_ok_and(|text| text.strip_suffix('}') == Some(made_from.own_text().as_ref()));
        if exact {
            made_from
        } else {
            RecordedRequest::with_tail(own, tail)
        }
    }

    /// The own members' text: the whole text for [`RecordedRequest::Text`]; for
    /// the others, the text before the common fields (an object's start and
    /// its own members, without the closing `}`).
    fn own_text(&self) -> Cow<'_, str> {
        match self {
            RecordedRequest::Text(json) => json.text(),
            RecordedRequest::OperationId { .. } | RecordedRequest::Operation { .. } => {
                let mut out = Vec::new();
                self.write_own(&mut out);
                // Only JSON text and UTF-8 strings were written.
                Cow::Owned(String::from_utf8(out).unwrap_or_default())
            }
        }
    }

    /// Appends the own members' text of a request made from an operation
    /// (nothing for [`RecordedRequest::Text`]), as the harness's serde_json
    /// writes them: `{"operation_id":` and the id; or `{"operation":` and the
    /// operation's object, its members in the adapter protocol's order
    /// (docs/adapter-protocol.md: `id`, `action`, `resource`, `tool` only
    /// for a tool operation, `args`), the arguments as their compact text.
    /// Written by hand, not through a serializer: the arguments' text goes
    /// in as it is rather than split and written again, which made writing
    /// a million-operation report a quarter slower. Whatever this writes is
    /// held to the harness's own text byte for byte when the request is
    /// recorded ([`RecordedRequest::executing`]), so it cannot drift unseen.
    fn write_own(&self, out: &mut Vec<u8>) {
        // Writing a string into a `Vec` cannot fail.
        let string = |out: &mut Vec<u8>, s: &str| {
            let _ = serde_json::to_writer(&mut *out, s);
        };
        match self {
            RecordedRequest::Text(_) => {}
            RecordedRequest::OperationId { id, .. } => {
                out.extend_from_slice(b"{\"operation_id\":");
                string(out, id);
            }
            RecordedRequest::Operation { op, .. } => {
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

    /// The compact JSON text (borrowed when kept as text, whole).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            RecordedRequest::Text(json) => json.text(),
            RecordedRequest::OperationId { tail, .. } | RecordedRequest::Operation { tail, .. } => {
                Cow::Owned(format!("{}{tail}", self.own_text()))
            }
        }
    }

    /// The request as a tree (built on each call: for readers of one call,
    /// not loops over a run).
    pub fn to_value(&self) -> Value {
        // The text was written from a `Value`, so it reads back; `Null` only guards the type.
        serde_json::from_str(&self.text()).unwrap_or(Value::Null)
    }

    /// The member `key` of the request, if it is an object and has it.
    pub fn get(&self, key: &str) -> Option<Value> {
        match self.to_value() {
            Value::Object(mut map) => map.shift_remove(key),
            _ => None,
        }
    }
}

impl From<SharedJson> for RecordedRequest {
    fn from(json: SharedJson) -> RecordedRequest {
        RecordedRequest::Text(json)
    }
}

impl From<Value> for RecordedRequest {
    fn from(value: Value) -> RecordedRequest {
        RecordedRequest::Text(value.into())
    }
}

/// Equal when the texts are, however each is kept (a report read back from
/// JSON keeps every request as text).
impl PartialEq for RecordedRequest {
    fn eq(&self, other: &RecordedRequest) -> bool {
        match (self, other) {
            (RecordedRequest::Text(a), RecordedRequest::Text(b)) => a == b,
            _ => self.text() == other.text(),
        }
    }
}

impl Eq for RecordedRequest {}

impl fmt::Debug for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// The compact text, as [`SharedJson`]'s `Display` writes it.
impl fmt::Display for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for RecordedRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RecordedRequest::Text(json) => json.serialize(serializer),
            RecordedRequest::OperationId { tail, .. } | RecordedRequest::Operation { tail, .. } => {
                // The own text is written into this thread's buffer, taken
                // out while it is in use: a report writes two million of
                // these, and needs no allocation for each.
                let mut own = OWN_TEXT.take();
                own.clear();
                self.write_own(&mut own);
                let written = match std::str::from_utf8(&own) {
                    Ok(text) => serialize_parts(text, Some(tail), serializer),
                    Err(e) => Err(serde::ser::Error::custom(e)),
                };
                OWN_TEXT.set(own);
                written
            }
        }
    }
}

thread_local! {
    /// The buffer [`RecordedRequest`]'s `Serialize` writes a request's own text into.
    static OWN_TEXT: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl<'de> Deserialize<'de> for RecordedRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RecordedRequest, D::Error> {
        SharedJson::deserialize(deserializer).map(RecordedRequest::Text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

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
            let kept = RecordedRequest::about(&own, &tail, &id);
            assert!(
                matches!(kept, RecordedRequest::OperationId { .. }),
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
                let kept = RecordedRequest::executing(&own, &tail, &op);
                assert!(
                    matches!(kept, RecordedRequest::Operation { .. }),
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
            let text = RecordedRequest::Text(SharedJson::new(&value));
            assert_eq!(kept.text(), text.text());
            assert_eq!(kept.to_string(), value.to_string());
            assert_eq!(kept, text);
            assert_eq!(text, kept);
            assert_eq!(kept.to_value(), value);
            assert_eq!(kept.get("protocol"), Some(json!(1)));
        }
    }

    /// A report-like nesting, so the request is written where a report writes it.
    #[derive(Serialize)]
    struct Nested<'a> {
        calls: [Call<'a>; 2],
    }

    #[derive(Serialize)]
    struct Call<'a> {
        index: usize,
        request: &'a RecordedRequest,
    }

    fn nested<'a>(first: &'a RecordedRequest, second: &'a RecordedRequest) -> Nested<'a> {
        Nested {
            calls: [
                Call {
                    index: 0,
                    request: first,
                },
                Call {
                    index: 1,
                    request: second,
                },
            ],
        }
    }

    #[test]
    fn every_writer_writes_it_as_the_text() {
        for (kept, value) in pairs() {
            let text = RecordedRequest::Text(SharedJson::new(&value));
            assert_eq!(
                serde_json::to_string(&kept).unwrap(),
                serde_json::to_string(&value).unwrap()
            );
            assert_eq!(
                serde_json::to_string_pretty(&nested(&kept, &kept)).unwrap(),
                serde_json::to_string_pretty(&nested(&text, &text)).unwrap()
            );
            // The report's own writer (which re-indents text itself).
            let mut a = Vec::new();
            let mut b = Vec::new();
            crate::pretty::write_pretty(&mut a, &nested(&kept, &text)).unwrap();
            crate::pretty::write_pretty(&mut b, &nested(&text, &text)).unwrap();
            assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
            // Read back, it is text, and equal.
            let back: RecordedRequest =
                serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
            assert!(matches!(back, RecordedRequest::Text(_)));
            assert_eq!(back, kept);
        }
    }

    #[test]
    fn a_request_that_says_anything_else_is_kept_as_its_text() {
        let (common, tail) = common();
        let id = SharedStr::from("op-1");
        let op = op("op-1", None, json!({"title": "t"}));
        let as_text = |own: &Value, kept: RecordedRequest| {
            let own = own.as_object().cloned().unwrap();
            assert!(matches!(kept, RecordedRequest::Text(_)), "{own:?}");
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
            as_text(&own, RecordedRequest::about(&map, &tail, &id));
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
            as_text(&value, RecordedRequest::executing(&own, &tail, &op));
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

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

/// The `operation` object of an `execute` request, as the adapter protocol
/// writes it (docs/adapter-protocol.md): its members in this order, `tool`
/// only for a tool operation.
#[derive(Serialize)]
struct WireOperation<'a> {
    id: &'a str,
    action: &'a str,
    resource: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    args: &'a SharedJson,
}

/// A request the harness sent to an adapter.
#[derive(Clone)]
pub enum CallRequest {
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

impl CallRequest {
    /// `own`'s members then `tail`'s, kept as text.
    pub fn with_tail(own: &Map<String, Value>, tail: &SharedTail) -> CallRequest {
        CallRequest::Text(SharedJson::with_tail(own, tail))
    }

    /// `own`'s members then `tail`'s, kept as the operation's id `id` when
    /// `own` is exactly `{"operation_id": id}`, and as text otherwise.
    pub fn about(own: &Map<String, Value>, tail: &SharedTail, id: &SharedStr) -> CallRequest {
        CallRequest::made_from(
            own,
            tail,
            CallRequest::OperationId {
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
    ) -> CallRequest {
        CallRequest::made_from(
            own,
            tail,
            CallRequest::Operation {
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
        made_from: CallRequest,
    ) -> CallRequest {
        let exact = tail.is_disjoint(own)
            && serde_json::to_string(own)
                .is_ok_and(|text| text.strip_suffix('}') == Some(made_from.own_text().as_ref()));
        if exact {
            made_from
        } else {
            CallRequest::with_tail(own, tail)
        }
    }

    /// The own members' text: the whole text for [`CallRequest::Text`]; for
    /// the others, the text before the common fields (an object's start and
    /// its own members, without the closing `}`).
    fn own_text(&self) -> Cow<'_, str> {
        match self {
            CallRequest::Text(json) => json.text(),
            // A string always writes: the fallback only guards the type.
            CallRequest::OperationId { id, .. } => Cow::Owned(format!(
                "{{\"operation_id\":{}",
                serde_json::to_string(id.as_str()).unwrap_or_default()
            )),
            CallRequest::Operation { op, .. } => {
                let wire = WireOperation {
                    id: &op.id,
                    action: op.action(),
                    resource: &op.resource,
                    tool: op.tool.as_deref(),
                    args: &op.args,
                };
                // Strings and compact JSON text always write: as above.
                Cow::Owned(format!(
                    "{{\"operation\":{}",
                    serde_json::to_string(&wire).unwrap_or_default()
                ))
            }
        }
    }

    /// The compact JSON text (borrowed when kept as text, whole).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            CallRequest::Text(json) => json.text(),
            CallRequest::OperationId { tail, .. } | CallRequest::Operation { tail, .. } => {
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

impl From<SharedJson> for CallRequest {
    fn from(json: SharedJson) -> CallRequest {
        CallRequest::Text(json)
    }
}

impl From<Value> for CallRequest {
    fn from(value: Value) -> CallRequest {
        CallRequest::Text(value.into())
    }
}

/// Equal when the texts are, however each is kept (a report read back from
/// JSON keeps every request as text).
impl PartialEq for CallRequest {
    fn eq(&self, other: &CallRequest) -> bool {
        match (self, other) {
            (CallRequest::Text(a), CallRequest::Text(b)) => a == b,
            _ => self.text() == other.text(),
        }
    }
}

impl Eq for CallRequest {}

impl fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// The compact text, as [`SharedJson`]'s `Display` writes it.
impl fmt::Display for CallRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for CallRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CallRequest::Text(json) => json.serialize(serializer),
            CallRequest::OperationId { tail, .. } | CallRequest::Operation { tail, .. } => {
                serialize_parts(&self.own_text(), Some(tail), serializer)
            }
        }
    }
}

impl<'de> Deserialize<'de> for CallRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CallRequest, D::Error> {
        SharedJson::deserialize(deserializer).map(CallRequest::Text)
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
    fn pairs() -> Vec<(CallRequest, Value)> {
        let (common, tail) = common();
        let mut pairs = Vec::new();
        for text in AWKWARD {
            let id = SharedStr::from(text);
            let own = json!({ "operation_id": text })
                .as_object()
                .cloned()
                .unwrap();
            let kept = CallRequest::about(&own, &tail, &id);
            assert!(matches!(kept, CallRequest::OperationId { .. }), "{text:?}");
            pairs.push((kept, merged(&own, &common)));
            for tool in [None, Some(text)] {
                let op = op(
                    text,
                    tool,
                    json!({"title": text, "n": [1, 2.5, {}], "e": {}, "z": null}),
                );
                let own = sent(&op);
                let kept = CallRequest::executing(&own, &tail, &op);
                assert!(matches!(kept, CallRequest::Operation { .. }), "{text:?}");
                pairs.push((kept, merged(&own, &common)));
            }
        }
        pairs
    }

    #[test]
    fn a_request_made_from_its_operation_is_the_request_in_every_way() {
        for (kept, value) in pairs() {
            let text = CallRequest::Text(SharedJson::new(&value));
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
        request: &'a CallRequest,
    }

    fn nested<'a>(first: &'a CallRequest, second: &'a CallRequest) -> Nested<'a> {
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
            let text = CallRequest::Text(SharedJson::new(&value));
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
            let back: CallRequest =
                serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
            assert!(matches!(back, CallRequest::Text(_)));
            assert_eq!(back, kept);
        }
    }

    #[test]
    fn a_request_that_says_anything_else_is_kept_as_its_text() {
        let (common, tail) = common();
        let id = SharedStr::from("op-1");
        let op = op("op-1", None, json!({"title": "t"}));
        let as_text = |own: &Value, kept: CallRequest| {
            let own = own.as_object().cloned().unwrap();
            assert!(matches!(kept, CallRequest::Text(_)), "{own:?}");
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
            as_text(&own, CallRequest::about(&map, &tail, &id));
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
            as_text(&value, CallRequest::executing(&own, &tail, &op));
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

//! What a run of the MCP findings learns as it goes, and the reading of
//! retrieval answers that the pre-flight and the behaviour findings share.
//! Both the step sequence and the behaviour findings import this module; it
//! imports neither.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::book::{Book, FindingId};
use super::contract::{McpContract, RetrievalSpec};
use super::session::{Answer, Session};

/// A value at a JSON pointer, as a string id.
pub(super) fn id_at(value: Option<&Value>, pointer: &str) -> Option<String> {
    match value?.pointer(pointer)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An id of the same shape as `id` that no one was given: its last
/// alphanumeric characters rotated. Same length and prefix, so a server that
/// answers malformed ids differently is not mistaken for one that leaks.
pub(super) fn unknown_like(id: &str) -> String {
    let mut chars: Vec<char> = id.chars().collect();
    // Only the part after the last separator turns: prefixes (`tkt_`, `op-`) stay.
    let tail_from = chars
        .iter()
        .rposition(|c| !c.is_ascii_alphanumeric())
        .map_or(0, |at| at + 1);
    let mut turned = 0;
    for c in chars[tail_from..].iter_mut().rev().take(6) {
        *c = match *c {
            '9' => '0',
            'z' => 'a',
            'Z' => 'A',
            other => char::from_u32(other as u32 + 1).unwrap_or(other),
        };
        turned += 1;
    }
    let out: String = chars.into_iter().collect();
    if turned == 0 || out == id {
        format!("{id}x")
    } else {
        out
    }
}

/// `value` with `{marker}` replaced in every string.
pub(super) fn fill(value: &Value, marker: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{marker}", marker)),
        Value::Array(a) => Value::Array(a.iter().map(|v| fill(v, marker)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), fill(v, marker)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The ids of a recent list, newest first (`None`: no array where the contract says).
pub(super) fn listed_ids(answer: &Answer, spec: &RetrievalSpec) -> Option<Vec<String>> {
    let items = answer.structured()?.pointer(&spec.items_at)?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|i| id_at(Some(i), &spec.id_at))
            .collect(),
    )
}

/// Two answers alike for a caller: the same status and the same message bytes.
pub(super) fn alike(a: &Answer, b: &Answer) -> bool {
    let text = |x: &Answer| {
        x.message_text
            .clone()
            .map_or_else(|| x.body.clone(), String::into_bytes)
    };
    a.status == b.status && text(a) == text(b)
}

/// What the run learned as it went.
pub(super) struct Run<'c> {
    pub(super) contract: &'c McpContract,
    pub(super) book: Book,
    /// The argument retrieval wants a credential in (a defect, worked around
    /// so the other findings can still conclude).
    pub(super) credential_argument: Option<String>,
    pub(super) retention: Option<Duration>,
    /// Whether a retrieval answer carried a retention field.
    pub(super) retention_field_seen: bool,
}

impl<'c> Run<'c> {
    pub(super) fn new(contract: &'c McpContract) -> Run<'c> {
        Run {
            contract,
            book: Book::new(),
            credential_argument: None,
            retention: contract.retention,
            retention_field_seen: false,
        }
    }

    pub(super) fn arguments(
        &self,
        base: Map<String, Value>,
        credential: Option<&str>,
    ) -> Map<String, Value> {
        let mut args = base;
        if let (Some(arg), Some(c)) = (&self.credential_argument, credential) {
            args.insert(arg.clone(), json!(c));
        }
        args
    }

    pub(super) fn id_arguments(&self, id: &str, credential: Option<&str>) -> Map<String, Value> {
        let mut base = Map::new();
        base.insert(self.contract.retrieval.id_argument.clone(), json!(id));
        self.arguments(base, credential)
    }

    /// A retrieval call whose refusal or transport failure stops `finding`.
    pub(super) async fn retrieve(
        &mut self,
        s: &mut Session<'_>,
        finding: FindingId,
        label: &str,
        tool: &str,
        args: &Map<String, Value>,
        id: Option<Value>,
    ) -> Option<Answer> {
        let (result, evidence) = s.tool(label, tool, args, id).await;
        if let Some(e) = evidence {
            self.book.t(finding).push(e);
        }
        match result {
            Ok(answer) if answer.message.is_some() => Some(answer),
            Ok(answer) => {
                self.book.stop(
                    &[finding],
                    &format!("{label}: HTTP {} without a JSON-RPC message", answer.status),
                );
                None
            }
            Err(e) => {
                self.book.stop(&[finding], &format!("{label}: {e}"));
                None
            }
        }
    }

    /// Reads a retention field (`retention_s`, or any `retention…` number in
    /// seconds) from a retrieval answer: the field half of `retention_declared`.
    pub(super) fn retention_field(&mut self, answer: &Answer) -> bool {
        let Some(Value::Object(fields)) = answer.structured() else {
            return false;
        };
        let Some((key, value)) = fields.iter().find(|(k, _)| k.starts_with("retention")) else {
            return false;
        };
        if self.retention_field_seen {
            return true;
        }
        self.retention_field_seen = true;
        if self.retention.is_none() {
            if let Some(s) = value.as_u64() {
                self.retention = Some(Duration::from_secs(s));
            }
        }
        self.book
            .t(FindingId::RetentionDeclared)
            .held(format!("answers carry `{key}: {value}`"));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ids_keep_the_shape() {
        assert_eq!(unknown_like("op_000123"), "op_111234");
        assert_eq!(unknown_like("tkt_zz9"), "tkt_aa0");
        assert_eq!(unknown_like("--"), "--x");
        let id = "op_7f3a";
        assert_eq!(unknown_like(id).len(), id.len());
        assert_ne!(unknown_like(id), id);
    }
}

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

/// How two answers to the same question about two ids compare for a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Likeness {
    /// The same status and the same message bytes.
    Identical,
    /// The same once each answer's echo of the id it was asked about is
    /// masked: the only difference is what the caller sent itself.
    AlikeButTheEcho,
    /// A caller tells them apart.
    Different,
}

/// The byte-identity rule: `a` answered a request for `asked_a`, `b` one for
/// `asked_b`; they must carry the same status and the same message bytes
/// once each one's own id is replaced by one placeholder.
pub(super) fn compare(a: &Answer, asked_a: &str, b: &Answer, asked_b: &str) -> Likeness {
    let text = |x: &Answer| {
        x.message_text
            .clone()
            .unwrap_or_else(|| String::from_utf8_lossy(&x.body).into_owned())
    };
    let (ta, tb) = (text(a), text(b));
    if a.status != b.status {
        Likeness::Different
    } else if ta == tb {
        Likeness::Identical
    } else if mask(&ta, asked_a) == mask(&tb, asked_b) {
        Likeness::AlikeButTheEcho
    } else {
        Likeness::Different
    }
}

/// What stands for the caller's own id in a masked answer.
const ASKED: &str = "<the id asked about>";

/// `text` with every whole-word `asked` (as written, and as spelt inside a
/// JSON string) replaced by [`ASKED`]. Whole words only, so a short id does
/// not mask digits of a status or a count.
fn mask(text: &str, asked: &str) -> String {
    let escaped = serde_json::to_string(asked).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(asked);
    let once = mask_word(text, asked);
    if escaped == asked {
        once
    } else {
        mask_word(&once, escaped)
    }
}

fn mask_word(text: &str, word: &str) -> String {
    if word.is_empty() {
        return text.to_owned();
    }
    let in_word =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, _) in text.match_indices(word) {
        let end = at + word.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        if at >= from && !in_word(before) && !in_word(after) {
            out.push_str(&text[from..at]);
            out.push_str(ASKED);
            from = end;
        }
    }
    out.push_str(&text[from..]);
    out
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
        self.retrieve_for(s, &[finding], label, tool, args, id)
            .await
    }

    /// A retrieval call that several findings read: each gets its evidence,
    /// and a refusal or transport failure stops each.
    pub(super) async fn retrieve_for(
        &mut self,
        s: &mut Session<'_>,
        findings: &[FindingId],
        label: &str,
        tool: &str,
        args: &Map<String, Value>,
        id: Option<Value>,
    ) -> Option<Answer> {
        let (result, evidence) = s.tool(label, tool, args, id).await;
        if let Some(e) = evidence {
            for finding in findings {
                self.book.t(*finding).push(e.clone());
            }
        }
        match result {
            Ok(answer) if answer.message.is_some() => Some(answer),
            Ok(answer) => {
                self.book.stop(
                    findings,
                    &format!("{label}: HTTP {} without a JSON-RPC message", answer.status),
                );
                None
            }
            Err(e) => {
                self.book.stop(findings, &format!("{label}: {e}"));
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
    fn masking_takes_whole_words_only() {
        assert_eq!(
            mask("HTTP 404: operation op_1 not found", "op_1"),
            "HTTP 404: operation <the id asked about> not found"
        );
        assert_eq!(
            mask("HTTP 404: 4 of op_14", "4"),
            "HTTP 404: <the id asked about> of op_14"
        );
        assert_eq!(
            mask("\"a\\\"b\" is gone", "a\"b"),
            "\"<the id asked about>\" is gone"
        );
        assert_eq!(mask("nothing", ""), "nothing");
    }

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

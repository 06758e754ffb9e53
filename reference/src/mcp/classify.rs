//! What an MCP answer means, as docs/mcp.md's four shapes say (pure).
//!
//! - A result with an operation id: the effect happened, by evidence.
//! - `isError`: decided by the status it carries, never by its words: 408,
//!   409, 425 and every 5xx are ambiguous (the work may have run, or may
//!   still run); every other 4xx, 429 included, is a rejection without effect
//!   (docs/adapter-protocol.md, "Which statuses decide").
//! - A task's end is the server's word about the task: failed is failed.
//! - A task id: the work runs; wait for the task, never call again.
//! - Anything lost (a window ran out, the stream ended, the connection went):
//!   ambiguous; never call again, retrieve instead.

use serde_json::Value;

use super::wire::Exchange;
use crate::classify::Conclusion;
use lostreply_harness::protocol::OutcomeKind;

/// What a paid `tools/call` answered.
#[derive(Debug, Clone, PartialEq)]
pub enum CallVerdict {
    /// A verdict to record.
    Settled(Conclusion),
    /// The call became a background task with this id.
    Task(String),
}

/// Statuses after which the work may have run, or may still run: 408, 409,
/// 425 and every 5xx. Every other 4xx (429 "not now" included) refuses the
/// call before it runs.
pub fn ambiguous_status(status: u16) -> bool {
    !(400..500).contains(&status) || matches!(status, 408 | 409 | 425)
}

/// The operation id of a tool result's payload, if it names one.
pub fn payload_id(payload: &Value) -> Option<String> {
    payload
        .get("operation_id")
        .or_else(|| payload.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The structured payload of a tool result: `structuredContent`, or the JSON
/// of its first text content.
pub fn payload(result: &Value) -> Option<Value> {
    if let Some(structured) = result.get("structuredContent") {
        return Some(structured.clone());
    }
    let text = result
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|c| c.get("text").and_then(Value::as_str))?;
    serde_json::from_str(text).ok()
}

/// The HTTP-like status an `isError` result carries, if any.
pub fn error_status(result: &Value) -> Option<u16> {
    let structured = result
        .get("structuredContent")
        .and_then(|s| s.get("status"))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    structured.or_else(|| {
        // "HTTP 409: ..." in the text content.
        let text = result
            .get("content")?
            .as_array()?
            .iter()
            .find_map(|c| c.get("text").and_then(Value::as_str))?;
        let rest = text.trim_start().strip_prefix("HTTP ")?;
        rest.get(..3)?.parse().ok()
    })
}

fn settled(outcome: OutcomeKind, provider_ref: Option<String>, evidence: String) -> CallVerdict {
    CallVerdict::Settled(Conclusion {
        outcome,
        provider_ref,
        needs_review: false,
        evidence,
    })
}

/// The meaning of a paid `tools/call`'s exchange.
pub fn call_verdict(exchange: &Exchange) -> CallVerdict {
    let result = match exchange {
        Exchange::Result(result) => result,
        Exchange::Http { status, detail } if !ambiguous_status(*status) => {
            return settled(
                OutcomeKind::Failed,
                None,
                format!(
                    "the server refused the request before running it: HTTP {status}: {detail}"
                ),
            )
        }
        other => {
            return settled(
                OutcomeKind::Unknown,
                None,
                format!(
                    "{}: the call may have run; not calling again, retrieval will tell",
                    other.describe()
                ),
            )
        }
    };
    if let Some(task_id) = result
        .get("task")
        .and_then(|t| t.get("taskId"))
        .and_then(Value::as_str)
    {
        return CallVerdict::Task(task_id.to_owned());
    }
    tool_result_verdict(result, "the call")
}

/// The meaning of a `CallToolResult` (from the call, a task's result or a retrieval).
pub fn tool_result_verdict(result: &Value, source: &str) -> CallVerdict {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return match error_status(result) {
            Some(status) if !ambiguous_status(status) => settled(
                OutcomeKind::Failed,
                None,
                format!("{source} was rejected with status {status}: no effect"),
            ),
            Some(status) => settled(
                OutcomeKind::Unknown,
                None,
                format!("{source} answered an error with status {status}: it may have run"),
            ),
            None => settled(
                OutcomeKind::Unknown,
                None,
                format!("{source} answered an error without a status: its words decide nothing"),
            ),
        };
    }
    let Some(payload) = payload(result) else {
        return settled(
            OutcomeKind::Unknown,
            None,
            format!("{source} answered a result without a readable payload"),
        );
    };
    match payload_id(&payload) {
        Some(id) => settled(
            OutcomeKind::Succeeded,
            Some(id.clone()),
            format!("{source} returned operation {id}"),
        ),
        None => settled(
            OutcomeKind::Unknown,
            None,
            format!("{source} succeeded without an operation id"),
        ),
    }
}

/// The meaning of a terminal task's result (`tasks/result`). A task's end is
/// the server's own word about that task, not an attempt whose answer may
/// have been lost: an `isError` result is a failed task's, so no effect,
/// whatever HTTP-like status it carries.
pub fn task_result_verdict(result: &Value, source: &str) -> CallVerdict {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let status = error_status(result).map_or_else(String::new, |s| format!(" (status {s})"));
        return settled(
            OutcomeKind::Failed,
            None,
            format!("{source} ended with an error{status}: the task failed, no effect"),
        );
    }
    tool_result_verdict(result, source)
}

/// What `get_operation` says about an id.
#[derive(Debug, Clone, PartialEq)]
pub enum Retrieved {
    /// It exists; the verdict says in which state.
    Found(CallVerdict),
    /// Not ours, unknown or expired (the server answers all three alike).
    NotFound,
    /// The retrieval itself failed; nothing learned.
    Failed(String),
}

/// The meaning of a `get_operation` exchange for id `id`.
pub fn retrieved(exchange: &Exchange, id: &str) -> Retrieved {
    let Exchange::Result(result) = exchange else {
        return Retrieved::Failed(format!("get_operation {id}: {}", exchange.describe()));
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return match error_status(result) {
            Some(404) => Retrieved::NotFound,
            _ => Retrieved::Failed(format!("get_operation {id} answered an error")),
        };
    }
    let Some(body) = payload(result) else {
        return Retrieved::Failed(format!("get_operation {id}: unreadable answer"));
    };
    if body.get("found").and_then(Value::as_bool) == Some(false) {
        return Retrieved::NotFound;
    }
    let status = body.get("status").and_then(Value::as_str).unwrap_or("");
    let source = format!("get_operation {id}");
    match status {
        "working" | "processing" | "pending" | "input_required" => Retrieved::Found(settled(
            OutcomeKind::Pending,
            Some(id.to_owned()),
            format!("{source}: still {status}"),
        )),
        "failed" | "cancelled" => Retrieved::Found(settled(
            OutcomeKind::Failed,
            None,
            format!("{source}: {status}, no effect"),
        )),
        _ => {
            // Completed: the original payload, by value or nested.
            let original = body.get("result").cloned().unwrap_or(body.clone());
            let named = payload_id(&original).or_else(|| payload_id(&body));
            match named {
                Some(found) => Retrieved::Found(settled(
                    OutcomeKind::Succeeded,
                    Some(found.clone()),
                    format!("{source}: completed as operation {found}"),
                )),
                None => Retrieved::Failed(format!("{source}: a completed answer without an id")),
            }
        }
    }
}

/// The ids `list_recent_operations` answered, newest first; `None` when unreadable.
pub fn recent_ids(exchange: &Exchange) -> Option<Vec<String>> {
    recent_operations(exchange).map(|list| list.into_iter().map(|r| r.id).collect())
}

/// One item of `list_recent_operations`: its id and, when the server lists
/// them, the arguments it was called with (a keyed tool's key left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Recent {
    /// The operation id.
    pub id: String,
    /// The arguments, when the item carries them.
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// The operations `list_recent_operations` answered, newest first; `None` when unreadable.
pub fn recent_operations(exchange: &Exchange) -> Option<Vec<Recent>> {
    let Exchange::Result(result) = exchange else {
        return None;
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let body = payload(result)?;
    let list = body
        .get("operations")
        .or_else(|| body.get("ids"))
        .and_then(Value::as_array)?;
    Some(
        list.iter()
            .filter_map(|item| {
                let id = item
                    .as_str()
                    .map(str::to_owned)
                    .or_else(|| payload_id(item))?;
                let arguments = item.get("arguments").and_then(Value::as_object).cloned();
                Some(Recent { id, arguments })
            })
            .collect(),
    )
}

/// The arguments a retrieved operation was called with, if the answer shows them.
pub fn retrieved_arguments(exchange: &Exchange) -> Option<serde_json::Map<String, Value>> {
    let Exchange::Result(result) = exchange else {
        return None;
    };
    let body = payload(result)?;
    let original = body.get("result").cloned().unwrap_or(body);
    original
        .get("arguments")
        .and_then(Value::as_object)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(v: &CallVerdict) -> OutcomeKind {
        match v {
            CallVerdict::Settled(v) => v.outcome,
            CallVerdict::Task(_) => OutcomeKind::Pending,
        }
    }

    #[test]
    fn an_error_is_decided_by_its_status_never_by_its_words() {
        let timeout_words = json!({"isError": true, "content": [{"type": "text", "text": "HTTP 504: upstream timeout"}]});
        assert_eq!(
            outcome(&tool_result_verdict(&timeout_words, "x")),
            OutcomeKind::Unknown
        );
        let rejected = json!({"isError": true, "structuredContent": {"status": 422, "error": "timeout must be positive"}});
        assert_eq!(
            outcome(&tool_result_verdict(&rejected, "x")),
            OutcomeKind::Failed
        );
        let busy = json!({"isError": true, "structuredContent": {"status": 409}});
        assert_eq!(
            outcome(&tool_result_verdict(&busy, "x")),
            OutcomeKind::Unknown
        );
        let not_now = json!({"isError": true, "structuredContent": {"status": 429}});
        assert_eq!(
            outcome(&tool_result_verdict(&not_now, "x")),
            OutcomeKind::Failed
        );
        for status in [408, 425, 500, 502, 503, 504, 507] {
            assert!(ambiguous_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422, 429] {
            assert!(!ambiguous_status(status), "{status}");
        }
        let wordy = json!({"isError": true, "content": [{"type": "text", "text": "timeout"}]});
        assert_eq!(
            outcome(&tool_result_verdict(&wordy, "x")),
            OutcomeKind::Unknown
        );
    }

    #[test]
    fn a_failed_tasks_result_is_a_failure_whatever_its_status() {
        let failed = json!({"isError": true, "structuredContent": {"status": 500, "error": "the task failed"}});
        assert_eq!(
            outcome(&task_result_verdict(&failed, "task t1")),
            OutcomeKind::Failed
        );
        // The same answer to a call of its own is ambiguous.
        assert_eq!(
            outcome(&tool_result_verdict(&failed, "the call")),
            OutcomeKind::Unknown
        );
    }

    #[test]
    fn listed_operations_carry_their_arguments_when_the_server_lists_them() {
        let listed = Exchange::Result(json!({"structuredContent": {"operations": [
            {"operation_id": "tkt_2", "arguments": {"n": 2}},
            {"operation_id": "tkt_1"},
        ]}}));
        let recent = recent_operations(&listed).expect("a readable list");
        assert_eq!(recent[0].id, "tkt_2");
        assert_eq!(recent[0].arguments, json!({"n": 2}).as_object().cloned());
        assert_eq!(recent[1].arguments, None);
        assert_eq!(recent_ids(&listed).expect("readable"), ["tkt_2", "tkt_1"]);
    }

    #[test]
    fn a_task_is_waited_for_and_a_loss_is_never_a_failure() {
        let task = Exchange::Result(json!({"task": {"taskId": "t1", "status": "working"}}));
        assert_eq!(call_verdict(&task), CallVerdict::Task("t1".to_owned()));
        let lost = Exchange::TimedOut(super::super::wire::Window::WallClock);
        assert_eq!(outcome(&call_verdict(&lost)), OutcomeKind::Unknown);
        let ok = Exchange::Result(
            json!({"structuredContent": {"operation_id": "tkt_1", "status": "succeeded"}}),
        );
        assert_eq!(outcome(&call_verdict(&ok)), OutcomeKind::Succeeded);
    }
}

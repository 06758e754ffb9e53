//! What `tools/list` says and what tool results look like: the paid tools (their
//! duration, that the timeout is the client's, that results carry an operation
//! id and how to recover), the retrieval tools (read-only, their retention, the
//! not-yours rule), and the `Defect`s that alter exactly these things.

use serde_json::{json, Map, Value};

use super::plan::{Defect, McpPlan, PaidTool, Revision};

pub(crate) use super::plan::{GET_OPERATION, LIST_RECENT};
/// The argument `Defect::KeyInArguments` wants.
pub(crate) const API_KEY_ARGUMENT: &str = "api_key";

/// The retention in words ("7 days", "90 s").
pub(crate) fn retention_words(retention_s: u64) -> String {
    match retention_s {
        s if s >= 86_400 && s % 86_400 == 0 => plural(s / 86_400, "day"),
        s if s >= 3600 && s % 3600 == 0 => plural(s / 3600, "hour"),
        s if s >= 60 && s % 60 == 0 => plural(s / 60, "minute"),
        s => plural(s, "second"),
    }
}

fn plural(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

fn paid_description(plan: &McpPlan, tool: &PaidTool) -> String {
    let mut text = format!(
        "Creates one object in `{}`. Paid and side-effecting: every call that is not a replay is new work.",
        tool.resource
    );
    if let Some(hint) = &tool.duration_hint {
        text.push_str(&format!(" Expected duration: {hint}."));
    }
    if !plan.defects.contains(&Defect::TimeoutAsParameter) {
        text.push_str(
            " The timeout is a setting of your MCP client, not a parameter of this tool.",
        );
    }
    if !plan.defects.contains(&Defect::ResultWithoutId) {
        text.push_str(" Every result carries an operation_id.");
    }
    if plan.retrieval.enabled {
        text.push_str(&format!(
            " On a timeout do not call again: call {GET_OPERATION} with the id, or {LIST_RECENT} when you have no id."
        ));
    }
    if let Some(key) = &tool.key_argument {
        text.push_str(&format!(
            " Send `{key}` to make a retry safe: the same key with the same arguments replays the first result."
        ));
    }
    text
}

fn paid_schema(plan: &McpPlan, tool: &PaidTool) -> Value {
    let mut properties = Map::new();
    if let Some(key) = &tool.key_argument {
        properties.insert(
            key.clone(),
            json!({"type": "string", "description": "Idempotency key: the same key and arguments replay the first result."}),
        );
    }
    if plan.defects.contains(&Defect::TimeoutAsParameter) {
        properties.insert(
            "timeout_s".to_owned(),
            json!({"type": "number", "description": "How long the call may take, in seconds."}),
        );
    }
    json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
    })
}

fn retrieval_tools(plan: &McpPlan) -> Vec<Value> {
    let retention = retention_words(plan.retrieval.retention.as_secs());
    let not_yours = "An id that is not yours answers exactly like one that does not exist.";
    let annotations = if plan.defects.contains(&Defect::RetrievalNotReadOnly) {
        json!({})
    } else {
        json!({"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false})
    };
    let mut key_property = Map::new();
    let mut required = Vec::new();
    if plan.defects.contains(&Defect::KeyInArguments) {
        key_property.insert(
            API_KEY_ARGUMENT.to_owned(),
            json!({"type": "string", "description": "Your API key."}),
        );
        required.push(API_KEY_ARGUMENT);
    }
    let mut get_properties = key_property.clone();
    get_properties.insert(
        "id".to_owned(),
        json!({"type": "string", "description": "The operation_id a paid tool returned."}),
    );
    let mut get_required = required.clone();
    get_required.push("id");
    vec![
        json!({
            "name": GET_OPERATION,
            "description": format!("The status of one operation and, once complete, exactly the result its call returned. Read-only and free: call it as often as you like. Ids retrieve for {retention}. {not_yours}"),
            "inputSchema": {"type": "object", "properties": get_properties, "required": get_required},
            "annotations": annotations,
        }),
        json!({
            "name": LIST_RECENT,
            "description": format!("The operations recently created with your credential, newest first, each with the arguments it was called with (a keyed tool's key left out); an empty list is a normal answer. Read-only and free. Ids are listed for {retention}."),
            "inputSchema": {"type": "object", "properties": key_property, "required": required},
            "annotations": annotations,
        }),
    ]
}

/// The `tools/list` result.
pub(crate) fn list(plan: &McpPlan, revision: Revision) -> Value {
    let tasks = plan.tasks.enabled && revision == Revision::V2025_11_25;
    let mut tools: Vec<Value> = plan
        .tools
        .iter()
        .map(|tool| {
            let mut entry = json!({
                "name": tool.name,
                "description": paid_description(plan, tool),
                "inputSchema": paid_schema(plan, tool),
                "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
            });
            if tasks {
                entry["execution"] = json!({"taskSupport": "optional"});
            }
            entry
        })
        .collect();
    if plan.retrieval.enabled {
        tools.extend(retrieval_tools(plan));
    }
    json!({"tools": tools})
}

/// A successful tool result carrying `structured`.
pub(crate) fn success(structured: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
        "isError": false,
    })
}

/// A tool error result with an HTTP-like status.
pub(crate) fn failure(status: u16, message: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": format!("HTTP {status}: {message}")}],
        "structuredContent": {"status": status, "error": message},
        "isError": true,
    })
}

/// A tool error result as an SDK server sends when its tool raises: the
/// exception's text and nothing else (no status, no `structuredContent`).
pub(crate) fn raised(text: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": text}],
        "isError": true,
    })
}

/// The payload of a paid tool's success.
pub(crate) fn payload(
    plan: &McpPlan,
    operation_id: &str,
    resource: &str,
    arguments: &Map<String, Value>,
    created_at: &str,
) -> Value {
    let mut payload = Map::new();
    if !plan.defects.contains(&Defect::ResultWithoutId) {
        payload.insert("operation_id".to_owned(), json!(operation_id));
    }
    payload.insert("status".to_owned(), json!("succeeded"));
    payload.insert("resource".to_owned(), json!(resource));
    payload.insert("arguments".to_owned(), Value::Object(arguments.clone()));
    payload.insert("created_at".to_owned(), json!(created_at));
    Value::Object(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_reads_in_the_largest_whole_unit() {
        assert_eq!(retention_words(7 * 86_400), "7 days");
        assert_eq!(retention_words(3600), "1 hour");
        assert_eq!(retention_words(90), "90 seconds");
    }

    #[test]
    fn the_default_plan_lists_the_design_rules() {
        let plan = McpPlan::default();
        let listed = list(&plan, Revision::V2025_11_25);
        let text = listed.to_string();
        assert!(text.contains("not a parameter"));
        assert!(text.contains("operation_id"));
        assert!(text.contains("readOnlyHint"));
        assert!(text.contains("7 days"));
        assert!(text.contains("taskSupport"));
        assert!(!list(&plan, Revision::V2025_06_18)
            .to_string()
            .contains("taskSupport"));
    }
}

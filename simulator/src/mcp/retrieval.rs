//! The recovery path: `get_operation {id}` and `list_recent_operations {}`.
//! Read-only and free. They see the operations created through this MCP face
//! (paid tools' calls and completed tasks) by the caller's credential, within
//! the retention, while the store holds their objects; `/v1` objects are not
//! operations here. "Not yours", "unknown", "expired" and "summarised out"
//! answer byte for byte alike (unless the plan has `Defect::NotYoursDistinct`).

use serde_json::{json, Map, Value};

use super::plan::{Defect, ErrorStyle, McpPlan};
use super::tools::{self, API_KEY_ARGUMENT};
use crate::plan::Plan;
use crate::shared::mcp_state::Operation;
use crate::shared::State;
use crate::time::rfc3339;

fn retention_ms(mcp: &McpPlan) -> i64 {
    i64::try_from(mcp.retrieval.retention.as_millis()).unwrap_or(i64::MAX)
}

/// Inside the retention, and its object still in the store: one summarised
/// out past `Limits::max_objects` answers as an expired one, as a `/v1`
/// retrieve of the object does.
fn live(operation: &Operation, state: &State, mcp: &McpPlan) -> bool {
    operation.created_at_ms.saturating_add(retention_ms(mcp)) > state.now_ms
        && state.store.holds(&operation.id)
}

/// The credential retrieval acts for: the transport's, or (with
/// `Defect::KeyInArguments`) the one named in the arguments.
fn credential<'a>(
    plan: &'a Plan,
    mcp: &McpPlan,
    tenant: &'a str,
    args: &Map<String, Value>,
) -> Result<&'a str, Value> {
    if !mcp.defects.contains(&Defect::KeyInArguments) {
        return Ok(tenant);
    }
    let named = args.get(API_KEY_ARGUMENT).and_then(Value::as_str);
    match named.and_then(|key| plan.tenants.iter().find(|t| t.as_str() == key)) {
        Some(tenant) => Ok(tenant),
        None => Err(tools::failure(
            401,
            "this tool needs your API key in the api_key argument",
        )),
    }
}

/// `get_operation {id}`.
pub(crate) fn get_operation(
    state: &State,
    plan: &Plan,
    mcp: &McpPlan,
    tenant: &str,
    args: &Map<String, Value>,
) -> Value {
    let tenant = match credential(plan, mcp, tenant, args) {
        Ok(tenant) => tenant,
        Err(refusal) => return refusal,
    };
    let Some(id) = args.get("id").and_then(Value::as_str) else {
        return tools::failure(400, "get_operation needs the argument id (a string)");
    };
    let retention_s = mcp.retrieval.retention.as_secs();
    let found = state.mcp.operation(id).filter(|op| live(op, state, mcp));
    match found {
        Some(op) if op.tenant == tenant => {
            let mut payload = op.payload.clone();
            if mcp.defects.contains(&Defect::PayloadMismatch) {
                // Known-bad: retrieval rebuilds the payload instead of keeping it.
                if let Value::Object(fields) = &mut payload {
                    fields.insert("status".to_owned(), json!("completed"));
                    fields.remove("arguments");
                }
            }
            tools::success(json!({
                "found": true,
                "operation_id": op.id,
                "status": "succeeded",
                "tool": op.tool,
                "result": payload,
                "retention_s": retention_s,
            }))
        }
        Some(_) if mcp.defects.contains(&Defect::NotYoursDistinct) => {
            tools::failure(403, "this operation belongs to another credential")
        }
        Some(theirs) => not_found(mcp, id, Some(theirs)),
        None => not_found(mcp, id, None),
    }
}

/// The answer for an id the caller cannot read: another credential's
/// (`theirs`), unknown, or expired, all alike but for the id an SDK-style
/// message echoes, which the caller sent itself.
fn not_found(mcp: &McpPlan, id: &str, theirs: Option<&Operation>) -> Value {
    let leaks = mcp.defects.contains(&Defect::NotYoursEchoLeaks);
    if leaks || mcp.errors == ErrorStyle::Sdk {
        let mut text = format!("operation {id} not found");
        if let (true, Some(op)) = (leaks, theirs) {
            // Known-bad: the message tells the caller what another credential did.
            text.push_str(&format!(
                " (a {} call of another credential, arguments {})",
                op.tool,
                arguments(op)
            ));
        }
        return tools::raised(&text);
    }
    let retention_s = mcp.retrieval.retention.as_secs();
    tools::success(json!({
        "found": false,
        "retention_s": retention_s,
        "message": format!(
            "no such operation for this credential (ids retrieve for {}; an id that is not yours answers exactly like one that does not exist)",
            tools::retention_words(retention_s)
        ),
    }))
}

/// The arguments an operation was called with (without a keyed tool's key),
/// as its original payload holds them: a caller that lost its answer tells its
/// own operation from the list alone, without one `get_operation` per item.
fn arguments(operation: &Operation) -> Value {
    operation
        .payload
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// `list_recent_operations {}`.
pub(crate) fn list_recent(
    state: &State,
    plan: &Plan,
    mcp: &McpPlan,
    tenant: &str,
    args: &Map<String, Value>,
) -> Value {
    let tenant = match credential(plan, mcp, tenant, args) {
        Ok(tenant) => tenant,
        Err(refusal) => return refusal,
    };
    // Known-bad when set: the list is not scoped to the caller.
    let every_tenant = mcp.defects.contains(&Defect::ListShowsOtherTenants);
    let operations: Vec<Value> = state
        .mcp
        .operations
        .iter()
        .rev()
        .filter(|op| op.tenant == tenant || every_tenant)
        .filter(|op| live(op, state, mcp))
        .take(mcp.retrieval.list_limit)
        .map(|op| {
            json!({
                "operation_id": op.id,
                "tool": op.tool,
                "resource": op.resource,
                "status": "succeeded",
                "created_at": rfc3339(op.created_at_ms),
                "arguments": arguments(op),
            })
        })
        .collect();
    if operations.is_empty() && mcp.defects.contains(&Defect::EmptyListIsError) {
        return tools::failure(404, "no recent operations");
    }
    tools::success(json!({
        "operations": operations,
        "limit": mcp.retrieval.list_limit,
        "retention_s": mcp.retrieval.retention.as_secs(),
    }))
}

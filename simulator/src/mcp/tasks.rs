//! Background tasks (revision 2025-11-25): a task-augmented `tools/call` of a
//! paid tool becomes a task that ends on the simulator clock (`Simulator::advance`
//! moves it): it completes (the effect commits then, and the result is kept),
//! fails (no effect), or never finishes and is forgotten. Every task is
//! forgotten `ttl` after its creation, as the spec allows. Tasks are bound to
//! the credential: another tenant's task id answers like an unknown one.
//!
//! A task's commit happens inside `advance`, where no answer leaves, so the
//! harness's commit hook does not run for it.

use serde_json::{json, Map, Value};

use super::jsonrpc::INVALID_PARAMS;
use super::plan::{McpPlan, TaskEnd};
use super::tools;
use crate::idempotency::{Failure, Saved};
use crate::plan::{IdempotencyMode, Plan};
use crate::shared::mcp_state::Operation;
pub(crate) use crate::shared::mcp_state::{PendingCommit, TaskRecord, TaskStatus};
use crate::shared::State;
use crate::store::StoreFull;
use crate::time::rfc3339;

/// The polling interval tasks suggest (ms).
pub(crate) const POLL_INTERVAL_MS: u64 = 1000;
/// The `_meta` key naming a result's task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

impl TaskStatus {
    fn name(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

fn ms(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn as_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The `Task` object of the spec.
pub(crate) fn task_json(task: &TaskRecord) -> Value {
    json!({
        "taskId": task.id,
        "status": task.status.name(),
        "createdAt": rfc3339(task.created_at_ms),
        "lastUpdatedAt": rfc3339(task.updated_at_ms),
        "ttl": task.ttl_ms,
        "pollInterval": POLL_INTERVAL_MS,
    })
}

/// A new task for `pending`, ending as `end` says `after_ms` from now;
/// `requested_ttl_ms` is the client's wish, capped by the plan. Returns the
/// `CreateTaskResult`, or a tool error when the tenant has too many tasks.
pub(crate) fn create(
    state: &mut State,
    mcp: &McpPlan,
    pending: PendingCommit,
    (end, after_ms): (TaskEnd, u64),
    requested_ttl_ms: Option<u64>,
    seq: u64,
) -> Result<(String, Value), Value> {
    let tenant = pending.new.tenant.to_string();
    let held = state
        .mcp
        .tasks
        .values()
        .filter(|t| t.tenant == tenant)
        .count();
    if held >= mcp.limits.max_tasks {
        return Err(tools::failure(
            429,
            &format!("this credential already has {held} tasks"),
        ));
    }
    let now_ms = state.now_ms;
    let plan_ttl = ms(mcp.tasks.ttl);
    let ttl_ms = requested_ttl_ms.map_or(plan_ttl, |asked| asked.min(plan_ttl));
    let id = state.mcp.new_task_id();
    let record = TaskRecord {
        id: id.clone(),
        tenant,
        status: TaskStatus::Working,
        created_at_ms: now_ms,
        updated_at_ms: now_ms,
        ttl_ms,
        ends_at_ms: now_ms.saturating_add(as_i64(after_ms)),
        end,
        pending: Some(pending),
        result: None,
        seq,
    };
    let created = json!({"task": task_json(&record)});
    state.mcp.tasks.insert(id.clone(), record);
    Ok((id, created))
}

/// Commits a paid call's effect and records its operation; the tool result,
/// or a tool error when the tenant's store is full. Runs under the state lock.
pub(crate) fn commit_pending(
    state: &mut State,
    plan: &Plan,
    mcp: &McpPlan,
    pending: PendingCommit,
    seq: u64,
) -> Result<(crate::record::Effect, Value), Value> {
    let now_ms = state.now_ms;
    let fingerprint = pending.new.fingerprint.clone();
    let effect = match state.store.commit(plan, pending.new, now_ms) {
        Ok((effect, id)) => {
            state.journal.set_effect(seq, id);
            effect
        }
        Err(StoreFull { max_objects }) => {
            let reply = tools::failure(
                507,
                &format!("this tenant already holds {max_objects} objects"),
            );
            if let Some(scope) = pending.ticket {
                state.mcp.keys.fail(
                    IdempotencyMode::Stripe,
                    scope,
                    &fingerprint,
                    Failure::Abandoned,
                    now_ms,
                );
            }
            return Err(reply);
        }
    };
    let payload = tools::payload(
        mcp,
        &effect.id,
        &effect.resource,
        &effect.args.to_map(),
        &rfc3339(effect.created_at_ms),
    );
    state.mcp.record_operation(Operation {
        id: effect.id.to_string(),
        tenant: effect.tenant.to_string(),
        tool: pending.tool,
        resource: effect.resource.to_string(),
        created_at_ms: effect.created_at_ms,
        payload: payload.clone(),
    });
    drop_summarised_operations(state);
    let result = tools::success(payload);
    if let Some(scope) = pending.ticket {
        let saved = Saved {
            status: 200,
            body: bytes::Bytes::from(result.to_string()),
            location: None,
        };
        state.mcp.keys.succeed(scope, &fingerprint, saved, now_ms);
    }
    Ok((effect, result))
}

/// Drops the operations whose objects the store has summarised out (a
/// `/v1` create summarises too), so they stay as bounded as the objects.
fn drop_summarised_operations(state: &mut State) {
    let store = &state.store;
    state.mcp.drop_summarised(|id| store.holds(id));
}

/// Releases the key of a call that will never commit.
pub(crate) fn release(state: &mut State, pending: &PendingCommit) {
    if let Some(scope) = pending.ticket.clone() {
        let now_ms = state.now_ms;
        state.mcp.keys.fail(
            IdempotencyMode::Stripe,
            scope,
            &pending.new.fingerprint,
            Failure::Abandoned,
            now_ms,
        );
    }
}

fn with_related_task(mut result: Value, id: &str) -> Value {
    if let Value::Object(fields) = &mut result {
        fields.insert("_meta".to_owned(), json!({RELATED_TASK: {"taskId": id}}));
    }
    result
}

/// Ends the tasks whose time has come and forgets those past their ttl; called
/// whenever the clock moves and before every MCP request is served.
pub(crate) fn settle(state: &mut State, plan: &Plan) {
    let Some(mcp) = &plan.mcp else {
        return;
    };
    drop_summarised_operations(state);
    let now_ms = state.now_ms;
    let due: Vec<String> = state
        .mcp
        .tasks
        .values()
        .filter(|t| t.status == TaskStatus::Working && t.ends_at_ms <= now_ms)
        .filter(|t| match t.end {
            TaskEnd::Complete | TaskEnd::Fail => true,
            TaskEnd::Expire => false,
        })
        .map(|t| t.id.clone())
        .collect();
    for id in due {
        let Some(task) = state.mcp.tasks.get_mut(&id) else {
            continue;
        };
        let Some(pending) = task.pending.take() else {
            continue;
        };
        let (end, seq) = (task.end, task.seq);
        let (status, result) = match end {
            TaskEnd::Complete | TaskEnd::Expire => {
                match commit_pending(state, plan, mcp, pending, seq) {
                    Ok((_, result)) => (TaskStatus::Completed, result),
                    Err(refusal) => (TaskStatus::Failed, refusal),
                }
            }
            TaskEnd::Fail => {
                release(state, &pending);
                (TaskStatus::Failed, tools::failure(500, "the task failed"))
            }
        };
        if let Some(task) = state.mcp.tasks.get_mut(&id) {
            task.status = status;
            task.updated_at_ms = now_ms;
            task.result = Some(with_related_task(result, &id));
        }
    }
    let forgotten: Vec<String> = state
        .mcp
        .tasks
        .values()
        .filter(|t| t.created_at_ms.saturating_add(as_i64(t.ttl_ms)) <= now_ms)
        .map(|t| t.id.clone())
        .collect();
    for id in forgotten {
        if let Some(task) = state.mcp.tasks.remove(&id) {
            if let Some(pending) = &task.pending {
                release(state, pending);
            }
        }
    }
}

/// The caller's task `id`; another tenant's and an unknown id are alike.
fn visible<'a>(state: &'a State, tenant: &str, id: &str) -> Result<&'a TaskRecord, (i64, String)> {
    state
        .mcp
        .tasks
        .get(id)
        .filter(|t| t.tenant == tenant)
        .ok_or_else(|| (INVALID_PARAMS, "unknown task".to_owned()))
}

fn task_id(params: &Map<String, Value>) -> Result<&str, (i64, String)> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| (INVALID_PARAMS, "taskId (a string) is required".to_owned()))
}

/// `tasks/get`.
pub(crate) fn get(
    state: &State,
    tenant: &str,
    params: &Map<String, Value>,
) -> Result<Value, (i64, String)> {
    visible(state, tenant, task_id(params)?).map(task_json)
}

/// `tasks/list`: the caller's tasks, oldest first.
pub(crate) fn list(state: &State, tenant: &str) -> Value {
    let mut tasks: Vec<&TaskRecord> = state
        .mcp
        .tasks
        .values()
        .filter(|t| t.tenant == tenant)
        .collect();
    tasks.sort_by_key(|t| (t.created_at_ms, t.seq));
    json!({"tasks": tasks.into_iter().map(task_json).collect::<Vec<_>>()})
}

/// `tasks/cancel`: a working task is cancelled (it will never commit); a
/// terminal one is refused, as the spec says.
pub(crate) fn cancel(
    state: &mut State,
    tenant: &str,
    params: &Map<String, Value>,
) -> Result<Value, (i64, String)> {
    let id = task_id(params)?.to_owned();
    let status = visible(state, tenant, &id)?.status;
    if status != TaskStatus::Working {
        return Err((
            INVALID_PARAMS,
            format!("the task is already {}", status.name()),
        ));
    }
    let now_ms = state.now_ms;
    let pending = state.mcp.tasks.get_mut(&id).and_then(|t| t.pending.take());
    if let Some(pending) = &pending {
        release(state, pending);
    }
    let task = state
        .mcp
        .tasks
        .get_mut(&id)
        .ok_or_else(|| (INVALID_PARAMS, "unknown task".to_owned()))?;
    task.status = TaskStatus::Cancelled;
    task.updated_at_ms = now_ms;
    Ok(task_json(task))
}

/// What `tasks/result` can answer now.
pub(crate) enum ResultNow {
    /// The final answer (a result, or a JSON-RPC error).
    Ready(Result<Value, (i64, String)>),
    /// Still working: wait for the clock.
    Working,
}

/// `tasks/result`, as far as it can be answered now.
pub(crate) fn result_now(state: &State, tenant: &str, params: &Map<String, Value>) -> ResultNow {
    let task = match task_id(params).and_then(|id| visible(state, tenant, id)) {
        Ok(task) => task,
        Err(e) => return ResultNow::Ready(Err(e)),
    };
    match (task.status, &task.result) {
        (TaskStatus::Working, _) => ResultNow::Working,
        (TaskStatus::Cancelled, _) => ResultNow::Ready(Err((
            super::jsonrpc::INTERNAL_ERROR,
            "the task was cancelled".to_owned(),
        ))),
        (TaskStatus::Completed | TaskStatus::Failed, Some(result)) => {
            ResultNow::Ready(Ok(result.clone()))
        }
        (TaskStatus::Completed | TaskStatus::Failed, None) => ResultNow::Ready(Err((
            super::jsonrpc::INTERNAL_ERROR,
            "the task ended without a result".to_owned(),
        ))),
    }
}

//! `execute` and `reconcile` for a paid MCP tool call (`action: call_tool`).
//!
//! The rules of docs/mcp.md, in order:
//! - the intent is durable before the call, and the record says the call may
//!   have left before it does: a tool without a key is called once, ever;
//! - whatever the loss (wall clock, idle, first byte, a cut stream, a reset),
//!   the answer is `unknown`, never `failed`, and the tool is not called again;
//! - a task id means the work runs: wait for the task (`tasks/get`);
//! - an `isError` is decided by its status, never by its words;
//! - recovery is retrieval: `get_operation` by id, or, having no id,
//!   `list_recent_operations` and the one new id whose arguments are ours;
//!   a keyed tool may also replay with its key while the key is retained;
//! - an id another of our operations holds is theirs, not ours; and while
//!   another of our calls with the same arguments has been sent and may own
//!   an effect it has not identified, the one new id that matches may be
//!   theirs: it is not claimed (a keyed tool's replay may still tell);
//! - when nothing can tell any more (every rung's retention has passed since
//!   the call was sent), a person decides at once; before that, after three
//!   reconciles without evidence (a count of this design's own: the
//!   scenarios require none).

use jiff::Timestamp;
use serde_json::{json, Map, Value};

use super::classify::{self, CallVerdict, Retrieved};
use super::wire::{ClientSetupError, Exchange, McpClient};
use crate::calls::{absorb, parse_time, ReferenceAdapter, MAX_INCONCLUSIVE};
use crate::classify::Conclusion;
use crate::store::{McpState, OpRecord};
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    Common, ContractMcp, ContractRetrieval, ContractTool, Operation, OutcomeKind, OutcomeReply,
};

/// Most recent ids followed up one by one in a reconcile (each is a `get_operation`).
const MAX_CANDIDATES: usize = 20;

/// How long a requested background task may live (ms), when the server offers tasks.
const TASK_TTL_MS: u64 = 3_600_000;

fn mcp_contract(common: &Common) -> Result<&ContractMcp, AdapterFailure> {
    common.provider.contract.mcp.as_ref().ok_or_else(|| {
        AdapterFailure::new("a call_tool operation, but the provider contract has no mcp section")
    })
}

fn tool<'a>(
    contract: &'a ContractMcp,
    operation: &Operation,
) -> Result<&'a ContractTool, AdapterFailure> {
    let name = operation.tool.as_deref().ok_or_else(|| {
        AdapterFailure::new(format!(
            "operation {}: call_tool without a tool name",
            operation.id
        ))
    })?;
    contract
        .tools
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| {
            AdapterFailure::new(format!(
                "operation {}: the server offers no paid tool {name:?}",
                operation.id
            ))
        })
}

/// The arguments every call of this operation sends: the operation's, plus
/// its one key for a keyed tool.
fn arguments(record: &OpRecord, tool: &ContractTool) -> Map<String, Value> {
    let mut args = record.operation.args.clone();
    if let Some(key_argument) = &tool.key_argument {
        args.insert(key_argument.clone(), Value::String(record.key.clone()));
    }
    args
}

/// Why no MCP session could be opened: evidence that a call did not leave
/// (at `execute`), or that a reconcile learned nothing.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    /// No client for the contract's server.
    #[error(transparent)]
    Setup(#[from] ClientSetupError),
    /// `initialize` did not succeed: what came back instead.
    #[error("could not open an MCP session: {}", .0.describe())]
    Initialize(Exchange),
}

async fn session(contract: &ContractMcp, common: &Common) -> Result<McpClient, SessionError> {
    let mut client = McpClient::new(contract, &common.provider.credential)?;
    client.connect().await.map_err(SessionError::Initialize)?;
    Ok(client)
}

async fn call_retrieval(client: &mut McpClient, name: &str, arguments: Value) -> Exchange {
    client
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await
}

/// `execute` of a call_tool operation the store has never seen; the caller holds its lock.
pub(crate) async fn execute(
    adapter: &ReferenceAdapter,
    operation: Operation,
    common: &Common,
    now: Timestamp,
) -> Result<OutcomeReply, AdapterFailure> {
    let contract = mcp_contract(common)?;
    tool(contract, &operation)?;
    let id = operation.id.clone();
    let mut record = OpRecord {
        key: format!("lr-{id}"),
        client_reference: id,
        operation,
        first_sent_at: now.to_string(),
        outcome: OutcomeKind::Unknown,
        provider_ref: None,
        needs_review: false,
        evidence: "tool call about to be sent".to_owned(),
        inconclusive: 0,
        events_seen: Vec::new(),
        mcp: Some(McpState::default()),
        resolved_by_person: false,
    };
    adapter.save(&record).await?;
    send(adapter, &mut record, contract, common).await?;
    Ok(record.reply())
}

/// Opens a session, takes the baseline, marks the call sent (durably) and sends it once.
async fn send(
    adapter: &ReferenceAdapter,
    record: &mut OpRecord,
    contract: &ContractMcp,
    common: &Common,
) -> Result<(), AdapterFailure> {
    let tool = tool(contract, &record.operation)?.clone();
    let mut client = match session(contract, common).await {
        Ok(client) => client,
        Err(why) => {
            record.evidence = format!("{why}; the tool call was not sent");
            adapter.save(record).await?;
            return Ok(());
        }
    };
    let mut state = record.mcp.clone().unwrap_or_default();
    if let Some(retrieval) = &contract.retrieval {
        let listed = call_retrieval(&mut client, &retrieval.list_recent, json!({})).await;
        state.baseline = classify::recent_ids(&listed);
    }
    state.sent = true;
    record.mcp = Some(state.clone());
    record.evidence = "tool call sent; no answer recorded yet".to_owned();
    adapter.save(record).await?;

    let mut params = json!({
        "name": tool.name,
        "arguments": arguments(record, &tool),
        "_meta": {"progressToken": record.operation.id},
    });
    if contract.tasks {
        params["task"] = json!({"ttl": TASK_TTL_MS});
    }
    let exchange = client.request("tools/call", params).await;
    match classify::call_verdict(&exchange) {
        CallVerdict::Task(task_id) => {
            state.task_id = Some(task_id.clone());
            record.mcp = Some(state);
            absorb(
                record,
                Conclusion {
                    outcome: OutcomeKind::Pending,
                    provider_ref: None,
                    needs_review: false,
                    evidence: format!("the call became background task {task_id}; waiting for it, not calling again"),
                },
            );
        }
        CallVerdict::Settled(verdict) => absorb(record, verdict),
    }
    adapter.save(record).await?;
    Ok(())
}

/// What one reconcile established.
enum Finding {
    Evidence(Conclusion),
    Inconclusive(String),
}

/// `reconcile` of a non-terminal call_tool record; the caller holds its lock.
pub(crate) async fn reconcile(
    adapter: &ReferenceAdapter,
    mut record: OpRecord,
    common: &Common,
    now: Timestamp,
) -> Result<OutcomeReply, AdapterFailure> {
    let contract = mcp_contract(common)?;
    let state = record.mcp.clone().unwrap_or_default();
    if !state.sent {
        // Provably never left (the record is written before it does): send it now.
        send(adapter, &mut record, contract, common).await?;
        return Ok(record.reply());
    }
    let finding = match session(contract, common).await {
        Ok(mut client) => find(adapter, &mut client, &record, &state, contract, now).await?,
        Err(why) => Finding::Inconclusive(why.to_string()),
    };
    match finding {
        Finding::Evidence(verdict) => absorb(&mut record, verdict),
        Finding::Inconclusive(evidence) => {
            record.inconclusive = record.inconclusive.saturating_add(1);
            let unknown = record.outcome == OutcomeKind::Unknown;
            if unknown && no_rung_left(contract, &record, now)? {
                record.needs_review = true;
                record.evidence = format!(
                    "{evidence}; the retention of every way to find out has passed since the call was sent: nothing can tell any more, a person must check"
                );
            } else if unknown && record.inconclusive >= MAX_INCONCLUSIVE {
                record.needs_review = true;
                record.evidence = format!(
                    "{evidence}; {} reconciles in a row found no evidence: automation stopped, a person must check",
                    record.inconclusive
                );
            } else {
                record.evidence = evidence;
            }
        }
    }
    adapter.save(&record).await?;
    Ok(record.reply())
}

/// Seconds since the call was first sent, by the simulator clock.
fn age_s(record: &OpRecord, now: Timestamp) -> Result<i64, AdapterFailure> {
    let first = parse_time("stored first_sent_at", &record.first_sent_at)?;
    Ok(now.as_second().saturating_sub(first.as_second()))
}

fn retention(seconds: Option<u64>) -> i64 {
    seconds.map_or(0, |r| i64::try_from(r).unwrap_or(i64::MAX))
}

/// True once no rung can give evidence any more: retrieval (if offered) and a
/// keyed tool's replay (if keyed) are both past their retention counted from
/// the first send. The operation was created at or after that send, so past
/// it an id the list does not show has expired or never existed, and the two
/// can no longer be told apart.
fn no_rung_left(
    contract: &ContractMcp,
    record: &OpRecord,
    now: Timestamp,
) -> Result<bool, AdapterFailure> {
    let age_s = age_s(record, now)?;
    let retrieval_live = contract
        .retrieval
        .as_ref()
        .is_some_and(|r| age_s < retention(Some(r.retention_s)));
    let tool = tool(contract, &record.operation)?;
    let key_live = tool.key_argument.is_some() && age_s < retention(tool.key_retention_s);
    Ok(!retrieval_live && !key_live)
}

fn evidence_of(verdict: CallVerdict, source: &str) -> Finding {
    match verdict {
        CallVerdict::Settled(verdict) => Finding::Evidence(verdict),
        CallVerdict::Task(task_id) => Finding::Evidence(Conclusion {
            outcome: OutcomeKind::Pending,
            provider_ref: None,
            needs_review: false,
            evidence: format!("{source}: background task {task_id} runs"),
        }),
    }
}

async fn find(
    adapter: &ReferenceAdapter,
    client: &mut McpClient,
    record: &OpRecord,
    state: &McpState,
    contract: &ContractMcp,
    now: Timestamp,
) -> Result<Finding, AdapterFailure> {
    // a. A task: its status says it all.
    if let Some(task_id) = &state.task_id {
        if let Some(finding) = follow_task(client, task_id).await {
            return Ok(finding);
        }
    }
    // b. An id: retrieve it.
    if let (Some(id), Some(retrieval)) = (&record.provider_ref, &contract.retrieval) {
        let answer = call_retrieval(client, &retrieval.get, json!({"id": id})).await;
        return Ok(match classify::retrieved(&answer, id) {
            Retrieved::Found(verdict) => evidence_of(verdict, "get_operation"),
            Retrieved::NotFound => Finding::Inconclusive(format!(
                "get_operation {id}: not found (expired, or the server forgot it)"
            )),
            Retrieved::Failed(why) => Finding::Inconclusive(why),
        });
    }
    // c. No id: the recent list, and the one new id whose arguments are ours.
    let tool = tool(contract, &record.operation)?.clone();
    if let Some(retrieval) = &contract.retrieval {
        match find_in_recent(adapter, client, record, state, &tool, retrieval).await? {
            Some(finding @ Finding::Evidence(_)) => return Ok(finding),
            Some(Finding::Inconclusive(why)) => {
                if let Some(found) = replay(client, record, &tool, now).await? {
                    return Ok(found);
                }
                return Ok(Finding::Inconclusive(why));
            }
            None => {}
        }
    }
    // d. A keyed tool may replay with its key while the key is retained.
    if let Some(found) = replay(client, record, &tool, now).await? {
        return Ok(found);
    }
    if contract.retrieval.is_none() {
        return Ok(Finding::Evidence(Conclusion {
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: true,
            evidence: "the server offers no retrieval and no replay with the key is left (the tool takes no key, or the key's retention has passed): cannot tell whether the call ran; a person must check".to_owned(),
        }));
    }
    Ok(Finding::Inconclusive("nothing learned".to_owned()))
}

async fn follow_task(client: &mut McpClient, task_id: &str) -> Option<Finding> {
    let answer = client
        .request("tasks/get", json!({"taskId": task_id}))
        .await;
    let Exchange::Result(task) = &answer else {
        // Unknown or expired task: retrieval decides.
        return None;
    };
    let status = task
        .get("status")
        .or_else(|| task.get("task").and_then(|t| t.get("status")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let source = format!("task {task_id}");
    match status {
        "working" | "input_required" => Some(Finding::Evidence(Conclusion {
            outcome: OutcomeKind::Pending,
            provider_ref: None,
            needs_review: false,
            evidence: format!("{source} is still {status}"),
        })),
        "failed" | "cancelled" => Some(Finding::Evidence(Conclusion {
            outcome: OutcomeKind::Failed,
            provider_ref: None,
            needs_review: false,
            evidence: format!("{source} ended {status}: no effect"),
        })),
        "completed" => {
            let result = client
                .request("tasks/result", json!({"taskId": task_id}))
                .await;
            match &result {
                Exchange::Result(result) => Some(evidence_of(
                    classify::task_result_verdict(result, &source),
                    &source,
                )),
                other => Some(Finding::Inconclusive(format!(
                    "{source} completed, but its result could not be read: {}",
                    other.describe()
                ))),
            }
        }
        _ => None,
    }
}

/// Arguments without the key argument: what the server records as the call's arguments.
fn comparable(args: &Map<String, Value>, tool: &ContractTool) -> Map<String, Value> {
    let mut args = args.clone();
    if let Some(key) = &tool.key_argument {
        args.remove(key);
    }
    args
}

/// A new id (not in the baseline) whose arguments are ours, and what
/// `get_operation` answered for it.
type Match = (String, Retrieved);

/// What the recent list and `get_operation` show of new ids with our arguments.
enum Listed {
    /// At least one new id carries our arguments.
    Matches(Vec<Match>),
    /// None does, as far as could be read: nothing learned, and why.
    Nothing(String),
}

/// The one new id whose arguments are ours, unless another of our
/// operations holds it or may own it: two of our calls with the same
/// arguments are told apart only by what each already knows.
async fn find_in_recent(
    adapter: &ReferenceAdapter,
    client: &mut McpClient,
    record: &OpRecord,
    state: &McpState,
    tool: &ContractTool,
    retrieval: &ContractRetrieval,
) -> Result<Option<Finding>, AdapterFailure> {
    let mut matches = match new_with_our_arguments(client, record, state, tool, retrieval).await {
        Listed::Matches(matches) => matches,
        Listed::Nothing(why) => return Ok(Some(Finding::Inconclusive(why))),
    };
    // Read after the list: an operation whose record does not yet say its
    // call was sent had not sent it when the list was taken, so no listed id
    // can be its effect.
    let others: Vec<OpRecord> = adapter
        .records()
        .await?
        .into_iter()
        .filter(|other| other.operation.id != record.operation.id)
        .collect();
    matches.retain(|(id, _)| !others.iter().any(|o| o.provider_ref.as_deref() == Some(id)));
    let ours = comparable(&record.operation.args, tool);
    Ok(Some(match matches.len() {
        0 => Finding::Inconclusive(
            "each new operation with our arguments is already another of our operations' effect"
                .to_owned(),
        ),
        1 => {
            let (id, retrieved) = matches.remove(0);
            match (may_own(&others, &ours, tool, &id), retrieved) {
                (Some(other), _) => Finding::Inconclusive(format!(
                    "{id} carries our arguments, but so does the call of {}, sent and not yet matched to an effect: {id} may be its effect, so it is not claimed",
                    other.operation.id
                )),
                (None, Retrieved::Found(verdict)) => evidence_of(verdict, "list_recent_operations"),
                (None, Retrieved::NotFound) => {
                    Finding::Inconclusive(format!("{id} was listed but does not retrieve"))
                }
                (None, Retrieved::Failed(why)) => Finding::Inconclusive(why),
            }
        }
        n => Finding::Evidence(Conclusion {
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: true,
            evidence: format!(
                "{n} recent operations carry our arguments: which one is ours cannot be told; a person must check"
            ),
        }),
    }))
}

/// Another of our operations that may own the effect `id`: a tool call (an
/// operation on `/v1` makes no MCP operation) that carries the same
/// arguments (whatever its tool: the match compares arguments only), has
/// been sent, has not failed, names no effect of its own, and did not yet
/// see `id` listed before its call. Its call made at most one effect, but
/// whether `id` is that one or ours cannot be told.
fn may_own<'o>(
    others: &'o [OpRecord],
    ours: &Map<String, Value>,
    tool: &ContractTool,
    id: &str,
) -> Option<&'o OpRecord> {
    others.iter().find(|other| {
        let Some(mcp) = &other.mcp else { return false };
        let listed_before = mcp
            .baseline
            .as_ref()
            .is_some_and(|b| b.iter().any(|listed| listed == id));
        mcp.sent
            && other.outcome != OutcomeKind::Failed
            && other.provider_ref.is_none()
            && !listed_before
            && comparable(&other.operation.args, tool) == *ours
    })
}

/// Lists the recent operations and retrieves each new one that may carry our
/// arguments, keeping those whose retrieved arguments are ours.
async fn new_with_our_arguments(
    client: &mut McpClient,
    record: &OpRecord,
    state: &McpState,
    tool: &ContractTool,
    retrieval: &ContractRetrieval,
) -> Listed {
    let listed = call_retrieval(client, &retrieval.list_recent, json!({})).await;
    let Some(recent) = classify::recent_operations(&listed) else {
        return Listed::Nothing(format!("list_recent_operations: {}", listed.describe()));
    };
    let baseline = state.baseline.clone().unwrap_or_default();
    let ours = comparable(&record.operation.args, tool);
    let mut matches = Vec::new();
    let mut unreadable = 0usize;
    // A list that shows the arguments rules out the others without a
    // retrieval each; a candidate is still retrieved, for its state.
    let candidates = recent
        .iter()
        .filter(|item| !baseline.contains(&item.id))
        .filter(|item| {
            item.arguments
                .as_ref()
                .is_none_or(|args| comparable(args, tool) == ours)
        })
        .take(MAX_CANDIDATES);
    for item in candidates {
        let id = &item.id;
        let answer = call_retrieval(client, &retrieval.get, json!({"id": id})).await;
        match classify::retrieved_arguments(&answer) {
            Some(args) if comparable(&args, tool) == ours => {
                matches.push((id.clone(), classify::retrieved(&answer, id)));
            }
            Some(_) => {}
            None => unreadable += 1,
        }
    }
    match (matches.is_empty(), unreadable) {
        (false, _) => Listed::Matches(matches),
        (true, 0) => Listed::Nothing(format!(
            "none of the {} recent operations is ours (yet)",
            recent.len()
        )),
        (true, unreadable) => {
            Listed::Nothing(format!("{unreadable} recent operations could not be read"))
        }
    }
}

/// A same-key replay of a keyed tool, while its key is retained; `None` when not possible.
async fn replay(
    client: &mut McpClient,
    record: &OpRecord,
    tool: &ContractTool,
    now: Timestamp,
) -> Result<Option<Finding>, AdapterFailure> {
    if tool.key_argument.is_none() {
        return Ok(None);
    }
    // Past the key's retention a replay would be new work: a second effect.
    if age_s(record, now)? >= retention(tool.key_retention_s) {
        return Ok(None);
    }
    let params = json!({"name": tool.name, "arguments": arguments(record, tool)});
    let exchange = client.request("tools/call", params).await;
    Ok(Some(match classify::call_verdict(&exchange) {
        // A rejection answers this replay only, not the first attempt.
        CallVerdict::Settled(verdict)
            if matches!(verdict.outcome, OutcomeKind::Unknown | OutcomeKind::Failed) =>
        {
            Finding::Inconclusive(format!("replay with the same key: {}", verdict.evidence))
        }
        verdict => evidence_of(verdict, "replay with the same key"),
    }))
}

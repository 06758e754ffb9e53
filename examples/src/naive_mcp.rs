//! Deliberately naive MCP tool callers, one per shape of docs/mcp.md: each is
//! what agent-side code usually does with the word "timeout", right in every
//! way but one. Each variant's doc names its flaw and the scenario that must
//! catch it.
//!
//! They share the reference adapter's MCP wire client (windows applied as the
//! contract says) and the naive adapters' lock-free file store, so that the
//! flaw is the only difference from a careful caller.

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    Common, ContractMcp, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply,
};
use lostreply_reference::mcp::classify::{self, CallVerdict};
use lostreply_reference::mcp::wire::{Exchange, McpClient, Window};
use serde_json::{json, Value};

use crate::naive::kit::{Entry, Factory, FileStore, Naive, Records};

/// The one thing each naive caller gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpFlaw {
    /// Shape 1: after its own wall-clock abort (or any lost answer) it calls
    /// the tool again. Caught by two effects (invariant 1).
    CallsAgainAfterAbort,
    /// Shape 3: a task id is not a result, so it reports `failed`. Caught when
    /// the task completes: a failure claimed while the effect exists (invariant 3).
    TaskIsFailure,
    /// Shape 4: an idle abort "means the server hung", so it calls again.
    /// Caught by two effects (invariant 1).
    RetriesIdleAbort,
    /// Shape 2: an error whose text says "timeout" is transient, so it calls
    /// again, whatever status it carries. Caught by two effects (invariant 1).
    ReadsTheWordTimeout,
}

impl McpFlaw {
    /// Every flaw, in shape order.
    pub const ALL: [McpFlaw; 4] = [
        McpFlaw::CallsAgainAfterAbort,
        McpFlaw::ReadsTheWordTimeout,
        McpFlaw::TaskIsFailure,
        McpFlaw::RetriesIdleAbort,
    ];

    /// Whether this caller sends the tool call again after `exchange`.
    fn calls_again(self, exchange: &Exchange) -> bool {
        match self {
            McpFlaw::CallsAgainAfterAbort => matches!(
                exchange,
                Exchange::TimedOut(_) | Exchange::StreamEnded | Exchange::Transport(_)
            ),
            McpFlaw::RetriesIdleAbort => matches!(exchange, Exchange::TimedOut(Window::Idle)),
            McpFlaw::ReadsTheWordTimeout => match exchange {
                Exchange::Result(result) => {
                    result.get("isError").and_then(Value::as_bool) == Some(true)
                        && result.to_string().to_ascii_lowercase().contains("timeout")
                }
                _ => false,
            },
            McpFlaw::TaskIsFailure => false,
        }
    }
}

/// A naive MCP caller with one flaw: `McpFlaw::ALL[FLAW]`.
#[derive(Debug)]
pub struct NaiveMcp<const FLAW: usize> {
    store: FileStore,
}

impl<const FLAW: usize> NaiveMcp<FLAW> {
    fn flaw() -> McpFlaw {
        McpFlaw::ALL[FLAW % McpFlaw::ALL.len()]
    }
}

impl<const FLAW: usize> crate::naive::kit::Stored for NaiveMcp<FLAW> {
    fn open(state_dir: &std::path::Path) -> Result<Self, AdapterFailure> {
        Ok(NaiveMcp {
            store: FileStore::open(state_dir)?,
        })
    }

    fn records(&self) -> &dyn Records {
        &self.store
    }
}

/// The four naive callers, in the order of [`McpFlaw::ALL`].
pub const FACTORIES: [Factory; 4] = [
    Factory::of::<NaiveMcp<0>>("naive-mcp-calls-again-after-abort"),
    Factory::of::<NaiveMcp<1>>("naive-mcp-reads-the-word-timeout"),
    Factory::of::<NaiveMcp<2>>("naive-mcp-task-is-failure"),
    Factory::of::<NaiveMcp<3>>("naive-mcp-retries-idle-abort"),
];

/// The naive caller with `flaw`.
pub fn naive_mcp(flaw: McpFlaw) -> &'static Factory {
    let index = McpFlaw::ALL.iter().position(|f| *f == flaw).unwrap_or(0);
    &FACTORIES[index]
}

fn mcp(common: &Common) -> Result<&ContractMcp, AdapterFailure> {
    common
        .provider
        .contract
        .mcp
        .as_ref()
        .ok_or_else(|| AdapterFailure::new("no mcp section in the provider contract"))
}

async fn session(common: &Common) -> Result<McpClient, String> {
    let contract = mcp(common).map_err(|e| e.to_string())?;
    let mut client = McpClient::new(contract, &common.provider.credential)?;
    client
        .connect()
        .await
        .map_err(|e| format!("no MCP session: {}", e.describe()))?;
    Ok(client)
}

fn tool_arguments(common: &Common, entry: &Entry, tool: &str) -> serde_json::Map<String, Value> {
    let mut args = entry.args.clone();
    let key_argument = mcp(common)
        .ok()
        .and_then(|c| c.tools.iter().find(|t| t.name == tool))
        .and_then(|t| t.key_argument.clone());
    if let (Some(key_argument), Some(key)) = (key_argument, &entry.key) {
        args.insert(key_argument, Value::String(key.clone()));
    }
    args
}

fn record(entry: &mut Entry, verdict: CallVerdict, flaw: McpFlaw) {
    match verdict {
        CallVerdict::Settled(v) => entry.set(v.outcome, v.provider_ref, v.evidence),
        CallVerdict::Task(task_id) if flaw == McpFlaw::TaskIsFailure => entry.set(
            OutcomeKind::Failed,
            None,
            format!("got task {task_id} instead of a result: the call failed"),
        ),
        CallVerdict::Task(task_id) => entry.set(
            OutcomeKind::Pending,
            Some(format!("task:{task_id}")),
            format!("background task {task_id}"),
        ),
    }
}

#[async_trait]
impl<const FLAW: usize> Naive for NaiveMcp<FLAW> {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let op = &request.operation;
        if let Some(entry) = self.store.get(&op.id)? {
            return Ok(entry.reply());
        }
        let tool = op
            .tool
            .clone()
            .ok_or_else(|| AdapterFailure::new("not a call_tool operation"))?;
        let mut entry = self.store.record_intent(op)?;
        let mut client = match session(&request.common).await {
            Ok(client) => client,
            Err(why) => {
                entry.evidence = why;
                return self.store.keep(&entry);
            }
        };
        let mut params =
            json!({"name": tool, "arguments": tool_arguments(&request.common, &entry, &tool)});
        if mcp(&request.common)?.tasks {
            params["task"] = json!({"ttl": 3_600_000});
        }
        let mut exchange = client.request("tools/call", params.clone()).await;
        entry.attempts = 1;
        if Self::flaw().calls_again(&exchange) {
            // The flaw: one more try "because it timed out".
            exchange = client.request("tools/call", params).await;
            entry.attempts = 2;
        }
        record(&mut entry, classify::call_verdict(&exchange), Self::flaw());
        self.store.keep(&entry)
    }

    /// Looks for its operation among the recent ones, by arguments (the careful part).
    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let mut entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        let Some(retrieval) = mcp(&request.common)?.retrieval.clone() else {
            return Ok(entry.reply());
        };
        let mut client = match session(&request.common).await {
            Ok(client) => client,
            Err(why) => {
                entry.evidence = why;
                return self.store.keep(&entry);
            }
        };
        let listed = client
            .request(
                "tools/call",
                json!({"name": retrieval.list_recent, "arguments": {}}),
            )
            .await;
        for id in classify::recent_ids(&listed).unwrap_or_default() {
            let answer = client
                .request(
                    "tools/call",
                    json!({"name": retrieval.get, "arguments": {"id": id}}),
                )
                .await;
            if classify::retrieved_arguments(&answer).as_ref() == Some(&entry.args) {
                if let classify::Retrieved::Found(verdict) = classify::retrieved(&answer, &id) {
                    record(&mut entry, verdict, Self::flaw());
                }
                break;
            }
        }
        self.store.keep(&entry)
    }
}

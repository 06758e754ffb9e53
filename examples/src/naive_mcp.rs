//! Deliberately naive MCP tool callers, one per shape of docs/mcp.md, and two
//! more that get recovery wrong: each is what agent-side code usually does
//! with the word "timeout" or with a lost answer, right in every way but one.
//! Each variant's doc names its flaw and the scenario that must catch it.
//!
//! A caller recovers a lost answer in one of two designs ([`Recovery`]): only
//! on `reconcile`, or also at once, inside the `execute` that lost it. The
//! recovery flaws exist in both, and each must be caught in both.
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
use lostreply_reference::mcp::wire::{ClientSetupError, Exchange, McpClient, Window};
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
    /// Retrieval without an id: the newest recent operation is taken as its
    /// own, its arguments never compared. Caught by
    /// `mcp-retrieval-newest-is-not-ours`: a success naming another
    /// operation's effect (invariant 2).
    TakesNewestRecent,
    /// A keyed tool: a lost answer is recovered by replaying the key, however
    /// long ago it was first used. Caught by `mcp-keyed-replay-after-retention`:
    /// the server has forgotten the key, the replay is new work, two effects
    /// (invariant 1).
    ReplaysExpiredKey,
}

impl McpFlaw {
    /// Every flaw: the four shapes in order, then the two of recovery.
    pub const ALL: [McpFlaw; 6] = [
        McpFlaw::CallsAgainAfterAbort,
        McpFlaw::ReadsTheWordTimeout,
        McpFlaw::TaskIsFailure,
        McpFlaw::RetriesIdleAbort,
        McpFlaw::TakesNewestRecent,
        McpFlaw::ReplaysExpiredKey,
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
            McpFlaw::TaskIsFailure | McpFlaw::TakesNewestRecent | McpFlaw::ReplaysExpiredKey => {
                false
            }
        }
    }
}

/// When a caller tries to learn what became of a lost answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Only when asked to `reconcile`.
    OnReconcile,
    /// At once, inside the `execute` that lost the answer, and again on
    /// `reconcile` when that found nothing.
    AtOnce,
}

/// A naive MCP caller with one flaw, `McpFlaw::ALL[FLAW]`, recovering at once
/// when `AT_ONCE` (else only on reconcile).
#[derive(Debug)]
pub struct NaiveMcp<const FLAW: usize, const AT_ONCE: bool> {
    store: FileStore,
}

impl<const FLAW: usize, const AT_ONCE: bool> NaiveMcp<FLAW, AT_ONCE> {
    fn flaw() -> McpFlaw {
        McpFlaw::ALL[FLAW % McpFlaw::ALL.len()]
    }

    fn recovery() -> Recovery {
        if AT_ONCE {
            Recovery::AtOnce
        } else {
            Recovery::OnReconcile
        }
    }
}

impl<const FLAW: usize, const AT_ONCE: bool> crate::naive::kit::Stored for NaiveMcp<FLAW, AT_ONCE> {
    fn open(state_dir: &std::path::Path) -> Result<Self, AdapterFailure> {
        Ok(NaiveMcp {
            store: FileStore::open(state_dir)?,
        })
    }

    fn records(&self) -> &dyn Records {
        &self.store
    }
}

/// The naive callers: each flaw of [`McpFlaw::ALL`] in order, recovering on
/// reconcile; then the two recovery flaws recovering at once.
pub const FACTORIES: [Factory; 8] = [
    Factory::of::<NaiveMcp<0, false>>("naive-mcp-calls-again-after-abort"),
    Factory::of::<NaiveMcp<1, false>>("naive-mcp-reads-the-word-timeout"),
    Factory::of::<NaiveMcp<2, false>>("naive-mcp-task-is-failure"),
    Factory::of::<NaiveMcp<3, false>>("naive-mcp-retries-idle-abort"),
    Factory::of::<NaiveMcp<4, false>>("naive-mcp-takes-newest-recent"),
    Factory::of::<NaiveMcp<5, false>>("naive-mcp-replays-expired-key"),
    Factory::of::<NaiveMcp<4, true>>("naive-mcp-takes-newest-recent-at-once"),
    Factory::of::<NaiveMcp<5, true>>("naive-mcp-replays-expired-key-at-once"),
];

/// The naive caller with `flaw`, recovering on reconcile.
pub fn naive_mcp(flaw: McpFlaw) -> &'static Factory {
    naive_mcp_in(flaw, Recovery::OnReconcile)
}

/// The naive caller with `flaw` in the design `recovery`; a flaw that is not
/// about recovery has only the on-reconcile caller, which is given.
pub fn naive_mcp_in(flaw: McpFlaw, recovery: Recovery) -> &'static Factory {
    let index = McpFlaw::ALL.iter().position(|f| *f == flaw).unwrap_or(0);
    match (flaw, recovery) {
        (McpFlaw::TakesNewestRecent, Recovery::AtOnce) => &FACTORIES[6],
        (McpFlaw::ReplaysExpiredKey, Recovery::AtOnce) => &FACTORIES[7],
        _ => &FACTORIES[index],
    }
}

fn mcp(common: &Common) -> Result<&ContractMcp, AdapterFailure> {
    common
        .provider
        .contract
        .mcp
        .as_ref()
        .ok_or_else(|| AdapterFailure::new("no mcp section in the provider contract"))
}

/// Why no MCP session could be opened; the message becomes the record's evidence.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    /// The provider contract has no mcp section.
    #[error(transparent)]
    NoContract(#[from] AdapterFailure),
    /// No client for the contract's server.
    #[error(transparent)]
    Setup(#[from] ClientSetupError),
    /// `initialize` did not succeed: what came back instead.
    #[error("no MCP session: {}", .0.describe())]
    Initialize(Exchange),
}

async fn session(common: &Common) -> Result<McpClient, SessionError> {
    let contract = mcp(common)?;
    let mut client = McpClient::new(contract, &common.provider.credential)?;
    client.connect().await.map_err(SessionError::Initialize)?;
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

/// The paid tool whose effects go to `entry`'s collection.
fn tool_of(common: &Common, entry: &Entry) -> Option<String> {
    mcp(common)
        .ok()?
        .tools
        .iter()
        .find(|t| t.resource == entry.resource)
        .map(|t| t.name.clone())
}

/// Tries to learn what became of a lost answer.
async fn recover(client: &mut McpClient, common: &Common, entry: &mut Entry, flaw: McpFlaw) {
    let Ok(contract) = mcp(common) else {
        return;
    };
    if flaw == McpFlaw::ReplaysExpiredKey {
        let keyed = tool_of(common, entry).filter(|tool| {
            contract
                .tools
                .iter()
                .any(|t| &t.name == tool && t.key_argument.is_some())
        });
        if let Some(tool) = keyed {
            // The flaw: the key is replayed whenever, its retention never checked.
            let params = json!({"name": tool, "arguments": tool_arguments(common, entry, &tool)});
            let exchange = client.request("tools/call", params).await;
            entry.attempts = entry.attempts.saturating_add(1);
            record(entry, classify::call_verdict(&exchange), flaw);
            return;
        }
    }
    let Some(retrieval) = contract.retrieval.clone() else {
        return;
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
        // The flaw: the newest is taken as ours, its arguments never compared.
        let ours = flaw == McpFlaw::TakesNewestRecent
            || classify::retrieved_arguments(&answer).as_ref() == Some(&entry.args);
        if ours {
            if let classify::Retrieved::Found(verdict) = classify::retrieved(&answer, &id) {
                record(entry, verdict, flaw);
            }
            break;
        }
    }
}

#[async_trait]
impl<const FLAW: usize, const AT_ONCE: bool> Naive for NaiveMcp<FLAW, AT_ONCE> {
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
                entry.evidence = why.to_string();
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
        if Self::recovery() == Recovery::AtOnce && entry.outcome == OutcomeKind::Unknown {
            recover(&mut client, &request.common, &mut entry, Self::flaw()).await;
        }
        self.store.keep(&entry)
    }

    /// Looks for its operation among the recent ones, by arguments (the
    /// careful part, unless the flaw is there).
    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let mut entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        let mut client = match session(&request.common).await {
            Ok(client) => client,
            Err(why) => {
                entry.evidence = why.to_string();
                return self.store.keep(&entry);
            }
        };
        recover(&mut client, &request.common, &mut entry, Self::flaw()).await;
        self.store.keep(&entry)
    }
}

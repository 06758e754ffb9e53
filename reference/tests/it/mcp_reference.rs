//! The reference adapter's MCP side against the simulator's fake MCP server on
//! 127.0.0.1:0: each of the four shapes, checked against the ledger and the
//! journal (how many paid calls the adapter sent).

use std::time::Duration;

use lostreply_harness::adapter::{Adapter, AdapterFactory};
use lostreply_harness::protocol::{
    ClientWindows, Common, Contract, ContractIdempotency, ContractLookup, ContractMcp,
    ContractRetrieval, ContractTool, ExecuteRequest, Operation, OperationRequest, OutcomeKind,
    OutcomeReply, ProviderInfo, SharedStr,
};
use lostreply_reference::ReferenceFactory;
use lostreply_simulator::mcp::{
    CancelPolicy, CommitPoint, McpFault, McpMatch, McpPlan, McpRule, Stream, TaskEnd,
};
use lostreply_simulator::{Plan, Release, ServeOptions, Simulator, StallThen};

/// The client's wall-clock limit: stalls outlast it.
const WALL_CLOCK_MS: u64 = 300;

struct Run {
    sim: Simulator,
    dir: tempfile::TempDir,
    /// Whether the contract offers tasks (the adapter then asks for one).
    tasks: bool,
    /// `Some`: an idle window instead of the wall-clock limit.
    idle_ms: Option<u64>,
}

fn rule(fault: McpFault, cancel: CancelPolicy) -> McpRule {
    McpRule::builder()
        .when({
            let mut changed = McpMatch::default();
            changed.tool = Some("create_ticket".to_owned());
            changed.times = Some(1);
            changed
        })
        .fault(fault)
        .cancel(cancel)
        .build()
}

impl Run {
    async fn start(faults: Vec<McpRule>) -> Run {
        let plan = {
            let mut changed = Plan::default();
            changed.mcp = Some({
                let mut changed = McpPlan::default();
                changed.faults = faults;
                changed
            });
            changed
        };
        Run {
            sim: Simulator::start(plan, ServeOptions::default())
                .await
                .unwrap(),
            dir: tempfile::tempdir().unwrap(),
            tasks: false,
            idle_ms: None,
        }
    }

    /// A client with an idle window of `idle_ms` and no wall-clock limit.
    async fn idle_client(idle_ms: u64, faults: Vec<McpRule>) -> Run {
        Run {
            idle_ms: Some(idle_ms),
            ..Run::start(faults).await
        }
    }

    /// A server that offers tasks: every call the adapter makes becomes one.
    async fn with_tasks(faults: Vec<McpRule>) -> Run {
        Run {
            tasks: true,
            ..Run::start(faults).await
        }
    }

    fn common(&self) -> Common {
        let lookup = ContractLookup::NONE
            .with_retrieve(true)
            .with_client_reference(true)
            .with_list_recent(true);
        let client = ClientWindows::new("custom", 1.0)
            .with_wall_clock_ms(self.idle_ms.is_none().then_some(WALL_CLOCK_MS))
            .with_idle_ms(self.idle_ms, "bytes");
        let mcp = ContractMcp::new(
            self.sim.mcp_url().unwrap(),
            "2025-11-25",
            vec![ContractTool::new("create_ticket", "tickets")],
            Some(ContractRetrieval::new(
                "get_operation",
                "list_recent_operations",
                7 * 24 * 3600,
            )),
            self.tasks,
            client,
        );
        let contract = Contract::new(
            "generic",
            ContractIdempotency::new("none", "Idempotency-Key", 86_400),
            lookup,
            false,
        )
        .with_mcp(Some(mcp));
        let provider = ProviderInfo::new(self.sim.base_url(), "sk_test_a", contract);
        Common::new(
            lostreply_simulator::rfc3339(self.sim.now_ms()),
            provider,
            1_000,
        )
    }

    fn adapter(&self) -> Box<dyn Adapter> {
        ReferenceFactory.build(self.dir.path()).unwrap()
    }

    async fn execute(&self) -> OutcomeReply {
        let args = serde_json::json!({"title": "Refund", "amount": 1200});
        let operation = Operation::new(
            "op-1",
            "call_tool",
            "tickets",
            args.as_object().cloned().unwrap(),
        )
        .with_tool(Some("create_ticket".to_owned()));
        let request = ExecuteRequest::new(operation, self.common());
        let reply = self.adapter().execute(request).await.unwrap();
        self.quiet().await;
        reply
    }

    async fn reconcile(&self) -> OutcomeReply {
        let request = OperationRequest::new("op-1", self.common());
        let reply = self.adapter().reconcile(request).await.unwrap();
        self.quiet().await;
        reply
    }

    async fn quiet(&self) {
        let busy = self.sim.wait_quiet(Duration::from_secs(10)).await;
        assert!(busy.is_empty(), "still busy: {busy:?}");
    }

    /// Paid `tools/call`s the server received.
    fn paid_calls(&self) -> usize {
        self.sim
            .journal()
            .iter()
            .filter(|e| {
                e.rpc.as_ref().is_some_and(|r| {
                    r.method == "tools/call" && r.tool.as_deref() == Some("create_ticket")
                })
            })
            .count()
    }

    fn effect_id(&self) -> Option<SharedStr> {
        self.sim.ledger().first().map(|e| e.id.clone())
    }
}

#[tokio::test]
async fn an_answered_call_names_its_effect() {
    let run = Run::start(vec![]).await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
    assert_eq!(reply.provider_ref, run.effect_id());
    assert_eq!(run.paid_calls(), 1);
}

#[tokio::test]
async fn shape_1_a_wall_clock_abort_is_unknown_then_found_by_the_recent_list() {
    let run = Run::start(vec![rule(
        McpFault::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
            stream: Stream::Nothing,
        },
        CancelPolicy::Ignore,
    )])
    .await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Unknown, "{reply:?}");
    assert_eq!(
        run.sim.ledger().len(),
        1,
        "the server finished after the client left"
    );
    let reply = run.reconcile().await;
    assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
    assert_eq!(reply.provider_ref, run.effect_id());
    assert_eq!(run.paid_calls(), 1, "never called again");
}

#[tokio::test]
async fn shape_2_an_error_that_says_timeout_is_decided_by_its_status() {
    let run = Run::start(vec![rule(
        McpFault::IsError {
            status: 504,
            at: CommitPoint::AfterCommit,
            message: "upstream timeout".to_owned(),
        },
        CancelPolicy::Ignore,
    )])
    .await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Unknown, "{reply:?}");
    let reply = run.reconcile().await;
    assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
    assert_eq!(run.paid_calls(), 1);

    let rejected = Run::start(vec![rule(
        McpFault::IsError {
            status: 422,
            at: CommitPoint::BeforeCommit,
            message: "timeout must be positive".to_owned(),
        },
        CancelPolicy::Ignore,
    )])
    .await;
    let reply = rejected.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Failed, "{reply:?}");
    assert!(rejected.sim.ledger().is_empty());
}

#[tokio::test]
async fn shape_3_a_task_is_waited_for_not_called_again() {
    let run = Run::with_tasks(vec![rule(
        McpFault::Task {
            then: TaskEnd::Complete,
            after: Duration::from_secs(5),
        },
        CancelPolicy::Ignore,
    )])
    .await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Pending, "{reply:?}");
    let reply = run.reconcile().await;
    assert_eq!(reply.outcome, OutcomeKind::Pending, "{reply:?}");
    run.sim.advance(Duration::from_secs(10));
    let reply = run.reconcile().await;
    assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
    assert_eq!(reply.provider_ref, run.effect_id());
    assert_eq!(run.paid_calls(), 1);
}

#[tokio::test]
async fn a_call_lost_before_the_commit_is_never_called_again_and_goes_to_a_person() {
    let run = Run::start(vec![rule(
        McpFault::Drop {
            at: CommitPoint::BeforeCommit,
        },
        CancelPolicy::Ignore,
    )])
    .await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Unknown, "{reply:?}");
    let mut last = reply;
    for _ in 0..3 {
        last = run.reconcile().await;
    }
    assert_eq!(
        (last.outcome, last.needs_review),
        (OutcomeKind::Unknown, true),
        "{last:?}"
    );
    assert!(run.sim.ledger().is_empty());
    assert_eq!(run.paid_calls(), 1, "an unkeyed tool is called once, ever");
}

#[tokio::test]
async fn shape_4_an_idle_abort_is_unknown_then_found() {
    let run = Run::idle_client(
        150,
        vec![rule(
            McpFault::Stall {
                then: StallThen::Commit,
                until: Release::ClientGone,
                stream: Stream::HeadersThenSilence,
            },
            CancelPolicy::Ignore,
        )],
    )
    .await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Unknown, "{reply:?}");
    assert!(reply.evidence.contains("idle"), "{reply:?}");
    let reply = run.reconcile().await;
    assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
    assert_eq!(run.paid_calls(), 1);
}

#[tokio::test]
async fn progress_keeps_an_idle_window_open() {
    // The work outlasts the idle window twice over; progress every 50 ms
    // leaves a loaded machine 350 ms of slack per beat.
    let run = Run::idle_client(
        400,
        vec![rule(
            McpFault::Slow {
                work: Duration::from_millis(900),
                stream: Stream::Progress {
                    every: Duration::from_millis(50),
                },
            },
            CancelPolicy::Ignore,
        )],
    )
    .await;
    let reply = run.execute().await;
    assert_eq!(reply.outcome, OutcomeKind::Succeeded, "{reply:?}");
    assert_eq!(reply.provider_ref, run.effect_id());
}

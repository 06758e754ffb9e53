//! A held call whose client leaves before, after or without its
//! `notifications/cancelled`: each order forced over real loopback sockets
//! (the call on a raw connection the test closes itself, the cancel a POST of
//! its own), and the ledger checked after every call. Under `honour` no order
//! commits; under `race` every order does; under `ignore` the fault alone
//! decides.

use std::time::Duration;

use crate::common::mcp::*;
use crate::common::*;
use lostreply_simulator::mcp::{CancelPolicy, McpFault, Stream};
use lostreply_simulator::{JournalEntry, Release, ResponseFate, Simulator, StallThen};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Calls per order: the race these tests close was seen in 4 of 30 calls.
const TRIES: usize = 30;

/// How the client ends a call the server holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// The call's connection closes; its cancel arrives once the server saw that.
    CloseThenCancel,
    /// The cancel reaches the held call; then the call's connection closes.
    CancelThenClose,
    /// The call's connection closes and no cancel ever comes.
    CloseOnly,
    /// The session is deleted while the call's connection stays open.
    DeleteSession,
}

const ORDERS: [Order; 4] = [
    Order::CloseThenCancel,
    Order::CancelThenClose,
    Order::CloseOnly,
    Order::DeleteSession,
];

/// The faults that hold a call before its commit point.
fn holding_faults() -> Vec<McpFault> {
    vec![
        McpFault::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
            stream: Stream::Nothing,
        },
        McpFault::Stall {
            then: StallThen::Commit,
            until: Release::StepEnd(1),
            stream: Stream::Nothing,
        },
        McpFault::Slow {
            work: Duration::from_secs(4),
            stream: Stream::Nothing,
        },
        McpFault::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
            stream: Stream::KeepAlive {
                every: Duration::from_millis(20),
            },
        },
    ]
}

fn entry(sim: &Simulator, seq: u64) -> JournalEntry {
    sim.journal().into_iter().find(|e| e.seq == seq).unwrap()
}

/// Sends a `tools/call` on a connection of its own and waits until the
/// server has decided its rule (and so holds it); returns the connection,
/// the JSON-RPC id and the call's journal `seq`.
async fn held_call(sim: &Simulator, mcp: &mut Mcp) -> (TcpStream, Value, u64) {
    let before = sim.journal().len();
    let id = json!(mcp.next_id());
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "create_ticket", "arguments": {"t": 1}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\n\
         accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n\
         mcp-session-id: {}\r\nmcp-protocol-version: {}\r\ncontent-length: {}\r\n\r\n{body}",
        mcp.session.as_deref().unwrap(),
        mcp.version.as_deref().unwrap(),
        body.len()
    );
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seq = 0;
    wait_until("the server holds the call", || {
        let journal = sim.journal();
        let call = journal.iter().skip(before).find(|e| {
            e.rpc
                .as_ref()
                .is_some_and(|r| r.method == "tools/call" && r.fault.is_some())
        });
        seq = call.map_or(0, |e| e.seq);
        call.is_some()
    })
    .await;
    (stream, id, seq)
}

/// Ends one held call in `order`; returns its fate once the server is done.
async fn end_in_order(sim: &Simulator, mcp: &Mcp, order: Order) -> (u64, ResponseFate) {
    let mut fresh = Mcp::new(sim, A);
    fresh.session.clone_from(&mcp.session);
    fresh.version.clone_from(&mcp.version);
    let mut mcp = fresh;
    let (stream, id, seq) = held_call(sim, &mut mcp).await;
    let cancel = json!({"requestId": id, "reason": "timeout"});
    match order {
        Order::CloseThenCancel => {
            drop(stream);
            let fate = fate_of(sim, seq as usize).await;
            mcp.notify("notifications/cancelled", cancel).await;
            (seq, fate)
        }
        Order::CancelThenClose => {
            mcp.notify("notifications/cancelled", cancel).await;
            wait_until("the cancel reached the held call", || {
                entry(sim, seq)
                    .rpc
                    .is_some_and(|rpc| rpc.cancelled.is_some())
            })
            .await;
            drop(stream);
            (seq, fate_of(sim, seq as usize).await)
        }
        Order::CloseOnly => {
            drop(stream);
            (seq, fate_of(sim, seq as usize).await)
        }
        Order::DeleteSession => {
            let deleted = mcp
                .http
                .delete(&mcp.url)
                .bearer_auth(A)
                .header("mcp-session-id", mcp.session.as_deref().unwrap())
                .send()
                .await
                .unwrap();
            assert_eq!(deleted.status(), 200);
            let fate = fate_of(sim, seq as usize).await;
            drop(stream);
            (seq, fate)
        }
    }
}

/// Every order, `TRIES` times each, a session per call; the ledger after
/// each call, and the fates seen.
async fn every_order(fault: &McpFault, cancel: CancelPolicy) -> Vec<(Order, usize, ResponseFate)> {
    let mut plan = mcp_plan(vec![on_tickets(fault.clone(), cancel)]);
    plan.limits.stall_cap = Duration::from_secs(10);
    let sim = start(plan).await;
    sim.begin_step(1, None);
    let mut seen = Vec::new();
    for order in ORDERS {
        for _ in 0..TRIES {
            let mcp = session(&sim).await;
            let (_, fate) = end_in_order(&sim, &mcp, order).await;
            quiet(&sim).await;
            seen.push((order, sim.ledger().len(), fate));
        }
    }
    sim.shutdown().await;
    seen
}

/// The fate a call without a stream ends with: `cancelled` when its cancel
/// came first, `stalled` with the client gone when its leaving did.
fn plain_fate(order: Order) -> ResponseFate {
    match order {
        Order::CancelThenClose => ResponseFate::Cancelled,
        Order::CloseThenCancel | Order::CloseOnly | Order::DeleteSession => {
            ResponseFate::Stalled { client_left: true }
        }
    }
}

fn streams(fault: &McpFault) -> bool {
    matches!(
        fault,
        McpFault::Stall {
            stream: Stream::KeepAlive { .. },
            ..
        }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_honour_never_commits_whichever_comes_first_the_cancel_or_the_client_leaving() {
    for fault in holding_faults() {
        for (order, effects, fate) in every_order(&fault, CancelPolicy::Honour).await {
            assert_eq!(effects, 0, "{fault:?}, {order:?}: a held call committed");
            if !streams(&fault) {
                assert_eq!(fate, plain_fate(order), "{fault:?}, {order:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_race_commits_whichever_comes_first_the_cancel_or_the_client_leaving() {
    for fault in holding_faults() {
        let seen = every_order(&fault, CancelPolicy::Race).await;
        for (n, (order, effects, fate)) in seen.into_iter().enumerate() {
            assert_eq!(effects, n + 1, "{fault:?}, {order:?}: one commit per call");
            if !streams(&fault) {
                assert_eq!(fate, plain_fate(order), "{fault:?}, {order:?}");
            }
        }
    }
}

#[tokio::test]
async fn mcp_ignore_lets_the_fault_alone_decide_when_the_client_leaves() {
    // A stall released by the client leaving: `then` decides, cancel or not.
    for (then, effects) in [(StallThen::Commit, 1), (StallThen::Abandon, 0)] {
        let fault = McpFault::Stall {
            then,
            until: Release::ClientGone,
            stream: Stream::Nothing,
        };
        let sim = mcp_sim(vec![on_tickets(fault, CancelPolicy::Ignore)]).await;
        let mcp = session(&sim).await;
        let (_, fate) = end_in_order(&sim, &mcp, Order::CloseThenCancel).await;
        quiet(&sim).await;
        assert_eq!(sim.ledger().len(), effects, "{then:?}");
        assert_eq!(fate, ResponseFate::Stalled { client_left: true });
    }

    // Slow work goes on after the client left and commits; its answer is
    // written to nobody, and the journal says so.
    let fault = McpFault::Slow {
        work: Duration::from_millis(400),
        stream: Stream::Nothing,
    };
    let sim = mcp_sim(vec![on_tickets(fault, CancelPolicy::Ignore)]).await;
    let mut mcp = session(&sim).await;
    let (stream, _, seq) = held_call(&sim, &mut mcp).await;
    drop(stream);
    let fate = fate_of(&sim, seq as usize).await;
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 1);
    assert_eq!(
        fate,
        ResponseFate::Sent {
            status: 200,
            client_left: true
        }
    );
}

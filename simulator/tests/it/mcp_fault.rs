//! Every MCP fault, relative to the commit, seen by a real client over
//! loopback and checked against the ledger and the journal; cancel policies;
//! step scoping; the commit hook.

use std::sync::Arc;
use std::time::Duration;

use crate::common::mcp::*;
use crate::common::*;
use lostreply_simulator::mcp::{CancelPolicy, CommitPoint, McpFault, McpMatch, McpRule, Stream};
use lostreply_simulator::{Release, ResponseFate, Simulator, StallThen};
use serde_json::json;
use tokio::sync::{mpsc, Notify};

fn every_call(fault: McpFault) -> McpRule {
    on_tickets(fault, CancelPolicy::Ignore)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The journal entry of the (only) `tools/call`.
fn call_entry(sim: &Simulator) -> lostreply_simulator::JournalEntry {
    sim.journal()
        .into_iter()
        .find(|e| e.rpc.as_ref().is_some_and(|r| r.method == "tools/call"))
        .unwrap()
}

async fn call_fate(sim: &Simulator) -> ResponseFate {
    let seq = call_entry(sim).seq;
    fate_of(sim, seq as usize).await
}

#[tokio::test]
async fn a_stall_past_the_clients_limit_commits_after_it_left_or_abandons() {
    for (then, effects) in [(StallThen::Commit, 1), (StallThen::Abandon, 0)] {
        let sim = mcp_sim(vec![every_call(McpFault::Stall {
            then,
            until: Release::ClientGone,
            stream: Stream::Nothing,
        })])
        .await;
        let mut mcp = session(&sim).await;
        let seen = mcp
            .call_with_timeout("create_ticket", json!({"t": 1}), 300)
            .await;
        assert!(seen.is_err_and(|e| e.is_timeout()));
        quiet(&sim).await;
        assert_eq!(sim.ledger().len(), effects, "{then:?}");
        assert_eq!(
            call_fate(&sim).await,
            ResponseFate::Stalled { client_left: true }
        );
        assert_eq!(call_entry(&sim).rpc.unwrap().fault.unwrap().name, "stall");
    }
}

#[tokio::test]
async fn slow_work_answers_a_patient_client() {
    let sim = mcp_sim(vec![every_call(McpFault::Slow {
        work: ms(100),
        stream: Stream::Nothing,
    })])
    .await;
    let mut mcp = session(&sim).await;
    let answer = mcp
        .call_with_timeout("create_ticket", json!({"t": 1}), 5000)
        .await
        .unwrap();
    assert_eq!(answer.result()["isError"], false);
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn progress_notifications_flow_before_the_answer() {
    let sim = mcp_sim(vec![every_call(McpFault::Slow {
        work: ms(200),
        stream: Stream::Progress { every: ms(20) },
    })])
    .await;
    let mut mcp = session(&sim).await;
    let answer = mcp
        .request(
            "tools/call",
            json!({"name": "create_ticket", "arguments": {"t": 1}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    assert!(answer.content_type.starts_with("text/event-stream"));
    let progress = answer.text.matches("notifications/progress").count();
    assert!(progress >= 1, "{}", answer.text);
    assert!(answer.text.contains("\"progressToken\":\"p1\""));
    assert_eq!(answer.result()["isError"], false);
    assert_eq!(
        call_fate(&sim).await,
        ResponseFate::Sent {
            status: 200,
            client_left: false
        }
    );
    // Without a token, the same stream carries keep-alive comments instead.
    let plain = mcp.call("create_ticket", json!({"t": 2})).await;
    assert!(plain.text.contains(": keep-alive"));
    assert!(!plain.text.contains("notifications/progress"));
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn keep_alive_and_silent_streams_show_headers_then_lose_the_answer() {
    for stream in [
        Stream::KeepAlive { every: ms(20) },
        Stream::HeadersThenSilence,
    ] {
        let sim = mcp_sim(vec![every_call(McpFault::Stall {
            then: StallThen::Commit,
            until: Release::ClientGone,
            stream,
        })])
        .await;
        let mut mcp = session(&sim).await;
        let id = mcp.next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "create_ticket", "arguments": {"t": 1}}});
        let response = mcp
            .request_builder(&client(400), &body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "headers arrive at once");
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        assert!(response.text().await.is_err(), "the body never ends");
        quiet(&sim).await;
        assert_eq!(sim.ledger().len(), 1, "{stream:?}");
        let fate = call_fate(&sim).await;
        match stream {
            Stream::HeadersThenSilence => {
                assert_eq!(
                    fate,
                    ResponseFate::Idle {
                        status: 200,
                        client_left: true
                    }
                )
            }
            _ => assert!(
                matches!(fate, ResponseFate::Truncated { status: 200, bytes } if bytes > 0),
                "{fate:?}"
            ),
        }
    }
}

#[tokio::test]
async fn a_late_answer_comes_after_the_commit_and_never_is_never() {
    let sim = mcp_sim(vec![every_call(McpFault::Late { after: ms(300) })]).await;
    let mut mcp = session(&sim).await;
    let seen = mcp
        .call_with_timeout("create_ticket", json!({"t": 1}), 100)
        .await;
    assert!(seen.is_err_and(|e| e.is_timeout()));
    assert_eq!(sim.ledger().len(), 1, "committed before the client gave up");
    quiet(&sim).await;
    let patient = mcp
        .call_with_timeout("create_ticket", json!({"t": 2}), 5000)
        .await
        .unwrap();
    assert_eq!(patient.result()["isError"], false);

    let sim = mcp_sim(vec![every_call(McpFault::Never)]).await;
    let mut mcp = session(&sim).await;
    let seen = mcp
        .call_with_timeout("create_ticket", json!({"t": 1}), 200)
        .await;
    assert!(seen.is_err_and(|e| e.is_timeout()));
    assert_eq!(
        call_fate(&sim).await,
        ResponseFate::Stalled { client_left: true }
    );
    assert_eq!(sim.ledger().len(), 1);
}

#[tokio::test]
async fn tool_errors_rpc_errors_and_http_statuses_before_and_after_the_commit() {
    for (at, effects) in [
        (CommitPoint::BeforeCommit, 0),
        (CommitPoint::AfterCommit, 1),
    ] {
        let sim = mcp_sim(vec![every_call(McpFault::IsError {
            status: 504,
            at,
            message: "upstream timeout".to_owned(),
        })])
        .await;
        let mut mcp = session(&sim).await;
        let result = mcp.call("create_ticket", json!({"t": 1})).await.result();
        assert_eq!(result["isError"], true);
        assert_eq!(result["structuredContent"]["status"], 504);
        assert_eq!(result["content"][0]["text"], "HTTP 504: upstream timeout");
        assert_eq!(sim.ledger().len(), effects);

        let sim = mcp_sim(vec![every_call(McpFault::Http { status: 503, at })]).await;
        let mut mcp = session(&sim).await;
        assert_eq!(mcp.call("create_ticket", json!({"t": 1})).await.status, 503);
        assert_eq!(sim.ledger().len(), effects);
    }
    let sim = mcp_sim(vec![every_call(McpFault::RpcError {
        code: -32001,
        message: "Request timed out".to_owned(),
    })])
    .await;
    let mut mcp = session(&sim).await;
    let message = mcp.call("create_ticket", json!({"t": 1})).await.message();
    assert_eq!(message["error"]["code"], -32001);
    assert_eq!(sim.ledger().len(), 1);
}

/// A raw `tools/call` on a socket of its own, so FIN and RST can be told apart.
fn raw_call(mcp: &Mcp) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "create_ticket", "arguments": {"t": 1}}}).to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\naccept: application/json, text/event-stream\r\nmcp-session-id: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        mcp.tenant,
        mcp.session.clone().unwrap(),
        body.len()
    )
}

#[tokio::test]
async fn drop_and_reset_end_the_connection_without_a_byte() {
    for at in [CommitPoint::BeforeCommit, CommitPoint::AfterCommit] {
        let effects = usize::from(at == CommitPoint::AfterCommit);
        for (fault, seen, fate) in [
            (
                McpFault::Drop { at },
                Raw::Closed(Vec::new()),
                ResponseFate::Dropped,
            ),
            (
                McpFault::Reset { at },
                Raw::Reset(Vec::new()),
                ResponseFate::Reset,
            ),
        ] {
            let sim = mcp_sim(vec![every_call(fault.clone())]).await;
            let mcp = session(&sim).await;
            assert_eq!(
                raw_exchange(&sim, &raw_call(&mcp), 2000).await,
                seen,
                "{fault:?}"
            );
            assert_eq!(call_fate(&sim).await, fate);
            assert_eq!(sim.ledger().len(), effects, "{fault:?}");
        }
    }
}

#[tokio::test]
async fn prime_then_close_ends_the_stream_without_the_response() {
    for (then, effects) in [(StallThen::Commit, 1), (StallThen::Abandon, 0)] {
        let sim = mcp_sim(vec![every_call(McpFault::PrimeThenClose { then })]).await;
        let mut mcp = session(&sim).await;
        let answer = mcp.call("create_ticket", json!({"t": 1})).await;
        assert_eq!(answer.status, 200);
        assert!(answer.text.starts_with("id: "), "{}", answer.text);
        assert!(!answer.text.contains("\"result\""));
        quiet(&sim).await;
        assert_eq!(sim.ledger().len(), effects);
        assert!(matches!(
            call_fate(&sim).await,
            ResponseFate::Truncated { status: 200, .. }
        ));
    }
}

/// Starts a call in the background and waits until the server holds it.
async fn held_call(
    sim: &Simulator,
    mcp: &mut Mcp,
) -> (u64, tokio::task::JoinHandle<reqwest::Result<Answer>>) {
    let id = mcp.next_id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "create_ticket", "arguments": {"t": 1}}});
    let request = mcp.request_builder(&client(10_000), &body);
    let handle = tokio::spawn(async move {
        let response = request.send().await?;
        let status = response.status().as_u16();
        let text = response.text().await?;
        Ok(Answer {
            status,
            content_type: String::new(),
            session: None,
            text,
        })
    });
    wait_until("the call is held", || {
        sim.journal()
            .iter()
            .any(|e| e.rpc.as_ref().is_some_and(|r| r.method == "tools/call"))
    })
    .await;
    (id, handle)
}

fn stalled_with(cancel: CancelPolicy, then: StallThen, until: Release) -> McpRule {
    {
        let mut changed = every_call(McpFault::Stall {
            then,
            until,
            stream: Stream::Nothing,
        });
        changed.cancel = cancel;
        changed
    }
}

#[tokio::test]
async fn a_cancel_is_honoured_ignored_or_raced_and_journaled() {
    // Honour: the held call never commits.
    let sim = mcp_sim(vec![stalled_with(
        CancelPolicy::Honour,
        StallThen::Commit,
        Release::ClientGone,
    )])
    .await;
    let mut mcp = session(&sim).await;
    let (id, handle) = held_call(&sim, &mut mcp).await;
    mcp.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "timeout"}),
    )
    .await;
    assert!(handle.await.unwrap().is_err(), "no answer after a cancel");
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 0);
    assert_eq!(call_fate(&sim).await, ResponseFate::Cancelled);
    let cancelled = call_entry(&sim).rpc.unwrap().cancelled.unwrap();
    let note = sim.journal().into_iter().last().unwrap();
    assert_eq!(cancelled.request_seq, note.seq);
    assert_eq!(note.rpc.unwrap().method, "notifications/cancelled");

    // Race: the effect commits when the cancel arrives, whatever `then` says.
    let sim = mcp_sim(vec![stalled_with(
        CancelPolicy::Race,
        StallThen::Abandon,
        Release::ClientGone,
    )])
    .await;
    let mut mcp = session(&sim).await;
    let (id, handle) = held_call(&sim, &mut mcp).await;
    mcp.notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    assert!(handle.await.unwrap().is_err());
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 1);
    assert_eq!(call_fate(&sim).await, ResponseFate::Cancelled);

    // Ignore: nothing changes; the hold ends with its step and then commits.
    let sim = mcp_sim(vec![stalled_with(
        CancelPolicy::Ignore,
        StallThen::Commit,
        Release::StepEnd(1),
    )])
    .await;
    sim.begin_step(1, None);
    let mut mcp = session(&sim).await;
    let (id, handle) = held_call(&sim, &mut mcp).await;
    mcp.notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    assert!(call_entry(&sim).rpc.unwrap().cancelled.is_some());
    assert_eq!(
        sim.wait_quiet(ms(10)).await,
        Vec::<u64>::new(),
        "a parked hold is not busy"
    );
    assert_eq!(sim.ledger().len(), 0);
    sim.end_step(1);
    assert!(handle.await.unwrap().is_err());
    quiet(&sim).await;
    assert_eq!(sim.ledger().len(), 1);
    assert!(
        matches!(call_fate(&sim).await, ResponseFate::Stalled { .. }),
        "an ignored cancel ends nothing"
    );
}

#[tokio::test]
async fn step_scoped_rules_count_only_inside_their_steps() {
    let rule = McpRule::builder()
        .when(
            McpMatch::builder()
                .tool("create_ticket".to_owned())
                .times(1)
                .steps([2].into_iter().collect())
                .build(),
        )
        .fault(McpFault::IsError {
            status: 500,
            at: CommitPoint::BeforeCommit,
            message: "boom".to_owned(),
        })
        .cancel(CancelPolicy::Ignore)
        .build();
    let sim = mcp_sim(vec![rule]).await;
    let mut mcp = session(&sim).await;
    let mut errors = Vec::new();
    for step in [1, 2, 2] {
        sim.begin_step(step, None);
        let result = mcp.call("create_ticket", json!({"t": step})).await.result();
        errors.push(result["isError"] == true);
        sim.end_step(step);
    }
    assert_eq!(errors, [false, true, false]);
    assert_eq!(sim.ledger().len(), 2);
}

#[tokio::test]
async fn the_commit_hook_runs_after_an_mcp_commit_before_the_answer_leaves() {
    let sim = mcp_sim(vec![]).await;
    let (hooked_tx, mut hooked) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    sim.set_commit_hook(Some(Arc::new(move |effect| {
        let hooked_tx = hooked_tx.clone();
        let gate = gate.clone();
        Box::pin(async move {
            let _ = hooked_tx.send(effect.id.clone());
            gate.notified().await;
        })
    })));
    let mut mcp = session(&sim).await;
    let id = mcp.next_id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "create_ticket", "arguments": {"t": 1}}});
    let request = mcp.request_builder(&client(10_000), &body);
    let call = tokio::spawn(async move { request.send().await?.text().await });
    let effect = hooked.recv().await.unwrap();
    assert_eq!(sim.ledger()[0].id, effect);
    assert!(!call.is_finished(), "the answer waits for the hook");
    assert_eq!(call_entry(&sim).fate, ResponseFate::InProgress);
    release.notify_one();
    let text = call.await.unwrap().unwrap();
    assert!(text.contains(effect.as_str()));
}

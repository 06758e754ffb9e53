//! MCP sessions that clients never end: idle ones expire, the least recently
//! used idle one gives way at the cap, and one in use is never ended.

use std::time::Duration;

use crate::common::mcp::*;
use crate::common::*;
use lostreply_simulator::mcp::{CancelPolicy, McpFault, McpMatch, McpRule};
use lostreply_simulator::{McpSessionCounts, Plan, ResponseFate, Simulator};
use serde_json::json;

/// A plan whose `create_ticket` calls are never answered (the call stays in
/// flight until its client leaves), with the given session bounds.
fn plan_with(max_sessions: usize, session_idle: Duration) -> Plan {
    let rule = McpRule::builder()
        .when({
            let mut changed = McpMatch::default();
            changed.tool = Some("create_ticket".to_owned());
            changed
        })
        .fault(McpFault::Never)
        .cancel(CancelPolicy::Ignore)
        .build();
    let mut plan = mcp_plan(vec![rule]);
    if let Some(mcp) = plan.mcp.as_mut() {
        mcp.limits.max_sessions = max_sessions;
        mcp.limits.session_idle = session_idle;
    }
    plan
}

/// Another client on `mcp`'s session.
fn same_session(sim: &Simulator, mcp: &Mcp) -> Mcp {
    let mut other = Mcp::new(sim, A);
    other.session = mcp.session.clone();
    other.version = mcp.version.clone();
    other
}

/// Starts a `create_ticket` call on `mcp`'s session that stays in flight,
/// and waits until the simulator holds it.
async fn call_in_flight(sim: &Simulator, mcp: Mcp) -> tokio::task::JoinHandle<()> {
    let mut mcp = mcp;
    let call = tokio::spawn(async move {
        let _ = mcp
            .call_with_timeout("create_ticket", json!({"t": 1}), 30_000)
            .await;
    });
    wait_until("the call is held", || {
        sim.journal().iter().any(|e| {
            e.rpc.as_ref().is_some_and(|r| r.method == "tools/call")
                && e.fate == ResponseFate::InProgress
        })
    })
    .await;
    call
}

#[tokio::test]
async fn three_thousand_sessions_never_ended_all_open_and_the_recent_ones_work() {
    let sim = mcp_sim(vec![]).await;
    let mut mcp = Mcp::new(&sim, A);
    let mut opened = Vec::new();
    for _ in 0..3000 {
        mcp.session = None;
        mcp.version = None;
        let answer = mcp
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
            )
            .await;
        assert_eq!(answer.status, 200, "{answer:?}");
        opened.push(answer.session.unwrap());
    }
    mcp.version = Some("2025-11-25".to_owned());
    for id in &opened[opened.len() - 100..] {
        mcp.session = Some(id.clone());
        assert_eq!(mcp.request("ping", json!({})).await.status, 200);
    }
    mcp.session = Some(opened[0].clone());
    assert_eq!(mcp.request("ping", json!({})).await.status, 404);
    let (live, counts) = sim.mcp_sessions();
    assert_eq!(live, 1024);
    assert_eq!(counts.opened, 3000);
    assert_eq!(counts.evicted, 3000 - 1024);
    assert_eq!(counts.refused, 0);
    let (status, body) = json(get(&sim, A, "/_lostreply/mcp").await).await;
    assert_eq!(status, 200);
    assert_eq!(body["sessions"]["live"], 1024);
    assert_eq!(body["sessions"]["counts"]["evicted"], 3000 - 1024);
}

#[tokio::test]
async fn an_idle_session_expires_and_answers_as_unknown_but_one_in_use_does_not() {
    let idle = Duration::from_millis(50);
    let sim = start(plan_with(16, idle)).await;
    let mut quiet_one = session(&sim).await;
    let busy = session(&sim).await;
    let mut busy_too = same_session(&sim, &busy);
    let call = call_in_flight(&sim, busy).await;
    // Real time past the idle bound: both sessions had no new request since.
    tokio::time::sleep(idle * 3).await;
    assert_eq!(quiet_one.request("ping", json!({})).await.status, 404);
    assert_eq!(busy_too.request("ping", json!({})).await.status, 200);
    assert_eq!(
        sim.mcp_sessions().1,
        McpSessionCounts {
            opened: 2,
            expired: 1,
            ..McpSessionCounts::default()
        }
    );
    call.abort();
}

#[tokio::test]
async fn at_the_cap_the_least_recently_used_idle_session_gives_way_never_a_busy_one() {
    let sim = start(plan_with(2, Duration::from_secs(600))).await;
    let busy = session(&sim).await;
    let mut busy_too = same_session(&sim, &busy);
    let call = call_in_flight(&sim, busy).await;
    let mut idle = session(&sim).await;
    let mut newest = session(&sim).await;
    assert_eq!(idle.request("ping", json!({})).await.status, 404);
    assert_eq!(busy_too.request("ping", json!({})).await.status, 200);
    assert_eq!(newest.request("ping", json!({})).await.status, 200);
    assert_eq!(sim.mcp_sessions().1.evicted, 1);
    call.abort();
}

#[tokio::test]
async fn when_every_session_at_the_cap_is_in_use_initialize_is_refused_until_one_is_idle() {
    let sim = start(plan_with(1, Duration::from_secs(600))).await;
    let busy = session(&sim).await;
    let call = call_in_flight(&sim, busy).await;
    let mut late = Mcp::new(&sim, A);
    let refused = late
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.message()["error"]["message"], "at most 1 sessions");
    assert_eq!(sim.mcp_sessions().1.refused, 1);
    // The client leaves: its call's response ends, and the session is idle.
    call.abort();
    wait_until("the held call ended", || {
        sim.journal()
            .iter()
            .all(|e| e.fate != ResponseFate::InProgress)
    })
    .await;
    let _ = Mcp::connect(&sim, A, "2025-11-25").await;
    let counts = McpSessionCounts {
        opened: 2,
        evicted: 1,
        refused: 1,
        ..McpSessionCounts::default()
    };
    assert_eq!(sim.mcp_sessions(), (1, counts));
}

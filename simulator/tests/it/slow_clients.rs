//! Slow clients: heads and bodies that never finish arriving are cut off at
//! the plan's read deadline (`Limits::read_timeout`), so that hundreds of
//! them neither hold their connections for long nor keep normal requests
//! waiting, and a create whose body timed out is journaled as answered 408.

use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{Plan, PlanError, ResponseFate, ServeOptions, Simulator, StartError};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Slow connections opened at once (two sockets each in this process).
const SLOW: usize = 700;
/// A safety net on every wait, never a measure of speed: the deadline is 1 s.
const GENEROUS_MS: u64 = 20_000;

fn short_deadline() -> Plan {
    let mut plan = plan();
    plan.limits.read_timeout = Duration::from_secs(1);
    plan
}

/// How many slow connections this process can open: both ends of each are
/// descriptors here, so a low soft limit (1024 on many systems) lowers the
/// count rather than failing on "too many open files".
fn slow_count() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
            line.split_whitespace().nth(3)?.parse::<usize>().ok()
        });
    match soft {
        Some(soft) if soft < 2 * SLOW + 300 => {
            let fits = soft.saturating_sub(300) / 2;
            eprintln!("open-file limit {soft}: {fits} slow connections instead of {SLOW}");
            fits
        }
        _ => SLOW,
    }
}

/// A head that stops half way, or a whole create's head that declares 1000
/// body bytes and sends 10.
fn slow_request(index: usize) -> String {
    if index.is_multiple_of(2) {
        "POST /v1/tickets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk_te".to_owned()
    } else {
        format!(
            "POST /v1/tickets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\n\
             content-type: application/json\r\ncontent-length: 1000\r\n\r\n{{\"title\":"
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_heads_and_bodies_are_cut_off_and_do_not_keep_others_waiting() {
    let sim = start(short_deadline()).await;
    let count = slow_count();
    let mut slow = Vec::with_capacity(count);
    for index in 0..count {
        let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
        stream
            .write_all(slow_request(index).as_bytes())
            .await
            .unwrap();
        slow.push(stream);
    }

    // Normal requests, on connections of their own, are answered while the
    // slow ones are open.
    let http = client(GENEROUS_MS);
    for n in 0..20 {
        let answer = post_with(&http, &sim, A, "tickets", &json!({"n": n}), None)
            .await
            .expect("a normal request is answered");
        assert_eq!(answer.status().as_u16(), 201);
    }

    // Every slow connection is ended by the server: a late head with a close,
    // a late body with a 408 (then a close).
    for (index, stream) in slow.iter_mut().enumerate() {
        let seen = read_raw(stream, GENEROUS_MS).await;
        let bytes = match seen {
            Raw::Closed(bytes) | Raw::Reset(bytes) => bytes,
            Raw::Silent(_) => panic!("slow connection {index} was still open after 20 s"),
        };
        if !index.is_multiple_of(2) {
            let (status, _, body) = split_response(&bytes);
            assert_eq!(status, 408, "slow body {index}");
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(body["error"]["type"], "invalid_request", "{body}");
        } else {
            assert!(
                bytes.is_empty() || bytes.starts_with(b"HTTP/1.1 408"),
                "slow head {index}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    // The creates whose bodies timed out were journaled on arrival; their
    // fate says they were answered 408, and none made an effect.
    assert!(sim
        .wait_quiet(Duration::from_millis(GENEROUS_MS))
        .await
        .is_empty());
    let journal = sim.journal();
    let timed_out = journal
        .iter()
        .filter(|entry| {
            entry.fate
                == ResponseFate::Sent {
                    status: 408,
                    client_left: false,
                }
        })
        .count();
    assert_eq!(timed_out, count / 2);
    assert_eq!(journal.len(), count / 2 + 20);
    assert_eq!(sim.ledger().len(), 20);
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_at_the_deadline() {
    let sim = start(short_deadline()).await;
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    stream
        .write_all(raw_get("/_lostreply/health").as_bytes())
        .await
        .unwrap();
    // The answer, then a close once no next head has come within the deadline.
    let Raw::Closed(bytes) = read_raw(&mut stream, GENEROUS_MS).await else {
        panic!("the idle connection was not closed");
    };
    assert_eq!(split_response(&bytes).0, 200);
}

/// A body that is only partly there when the provider first reads it: what
/// had arrived is kept, the rest is read under the deadline, and the object
/// holds the whole body. The second piece is sent once the request is
/// journaled, which happens just before its body is first read.
#[tokio::test]
async fn a_body_that_arrives_in_two_pieces_is_read_whole() {
    let sim = start(short_deadline()).await;
    let body = r#"{"title":"in two pieces","n":7}"#;
    let (first, second) = body.split_at(12);
    let whole = raw_post(A, "tickets", body);
    let head_and_first = &whole[..whole.len() - second.len()];
    assert!(head_and_first.ends_with(first));
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    stream.write_all(head_and_first.as_bytes()).await.unwrap();
    wait_until("the create is journaled", || sim.journal_len() == 1).await;
    stream.write_all(second.as_bytes()).await.unwrap();
    let (status, answer) = read_one_response(&mut stream).await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&answer));
    let ledger = sim.ledger();
    assert_eq!(ledger.len(), 1);
    let args: serde_json::Value = serde_json::from_str(ledger[0].args.get()).unwrap();
    assert_eq!(args, json!({"title": "in two pieces", "n": 7}));
}

/// Reads one whole response (its head, then `content-length` bytes) from a
/// kept-alive connection.
async fn read_one_response(stream: &mut TcpStream) -> (u16, Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let (status, head, body) = split_response(&got);
            let length: usize = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .expect("a content-length");
            if got.len() >= end + 4 + length {
                return (status, body);
            }
        }
        let read =
            tokio::time::timeout(Duration::from_millis(GENEROUS_MS), stream.read(&mut buffer));
        match read.await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buffer[..n]),
            other => panic!("no whole response: {other:?} after {got:?}"),
        }
    }
}

fn raw_get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n")
}

#[tokio::test]
async fn a_late_control_body_is_answered_408() {
    let sim = start(short_deadline()).await;
    let request = "POST /_lostreply/clock HTTP/1.1\r\nhost: x\r\n\
                   content-type: application/json\r\ncontent-length: 100\r\n\r\n{\"adv";
    let Raw::Closed(bytes) = raw_exchange(&sim, request, GENEROUS_MS).await else {
        panic!("the late control body was not answered and closed");
    };
    let (status, _, body) = split_response(&bytes);
    assert_eq!(status, 408);
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["type"], "request_timeout", "{body}");
}

#[tokio::test]
async fn a_late_mcp_body_is_answered_408_and_journaled_so() {
    let mut plan = crate::common::mcp::mcp_plan(Vec::new());
    plan.limits.read_timeout = Duration::from_secs(1);
    let sim = start(plan).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {A}\r\n\
         accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n\
         content-length: 100\r\n\r\n{{\"jsonrpc\""
    );
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let Raw::Closed(bytes) = read_raw(&mut stream, GENEROUS_MS).await else {
        panic!("the late MCP body was not answered and closed");
    };
    assert_eq!(split_response(&bytes).0, 408);
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Sent {
            status: 408,
            client_left: false
        }
    );
}

#[tokio::test]
async fn a_read_deadline_of_zero_is_refused() {
    let mut plan = plan();
    plan.limits.read_timeout = Duration::ZERO;
    let refused = Simulator::start(plan, ServeOptions::default()).await;
    assert!(
        matches!(&refused, Err(StartError::InvalidPlan(PlanError::Field { field, .. })) if field == "limits.read_timeout"),
        "{refused:?}"
    );
}

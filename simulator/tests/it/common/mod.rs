//! Helpers shared by the simulator's integration tests: a simulator on
//! 127.0.0.1:0, real HTTP clients, a raw socket client that tells FIN from RST,
//! and bounded waits on conditions.

pub mod mcp;

use std::time::Duration;

use lostreply_simulator::{
    FaultResponse, FaultRule, Match, Plan, Position, RequestKind, ResponseFate, ServeOptions,
    Simulator,
};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const A: &str = "sk_test_a";
pub const B: &str = "sk_test_b";

/// A plan with small limits so that held connections end quickly in tests.
pub fn plan() -> Plan {
    let mut plan = Plan::default();
    plan.limits.stall_cap = Duration::from_secs(5);
    plan
}

pub async fn start(plan: Plan) -> Simulator {
    Simulator::start(plan, ServeOptions::default())
        .await
        .unwrap()
}

/// A client that gives up after `timeout_ms`, with no connection reuse so that
/// each request's connection fate is its own.
pub fn client(timeout_ms: u64) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_millis(timeout_ms))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

pub fn rule(when: Match, at: Position, response: FaultResponse) -> FaultRule {
    FaultRule::builder()
        .when(when)
        .at(at)
        .response(response)
        .build()
}

pub fn creates() -> Match {
    {
        let mut changed = Match::default();
        changed.method = Some("POST".to_owned());
        changed.kind = Some(RequestKind::Create);
        changed
    }
}

pub async fn post(
    sim: &Simulator,
    tenant: &str,
    resource: &str,
    body: &Value,
    key: Option<&str>,
) -> reqwest::Response {
    post_with(&client(2000), sim, tenant, resource, body, key)
        .await
        .unwrap()
}

pub async fn post_with(
    client: &reqwest::Client,
    sim: &Simulator,
    tenant: &str,
    resource: &str,
    body: &Value,
    key: Option<&str>,
) -> reqwest::Result<reqwest::Response> {
    let mut request = client
        .post(format!("{}/v1/{resource}", sim.base_url()))
        .bearer_auth(tenant)
        .json(body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    request.send().await
}

pub async fn get(sim: &Simulator, tenant: &str, path_and_query: &str) -> reqwest::Response {
    client(2000)
        .get(format!("{}{path_and_query}", sim.base_url()))
        .bearer_auth(tenant)
        .send()
        .await
        .unwrap()
}

pub async fn json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body = response.json::<Value>().await.unwrap();
    (status, body)
}

/// Waits (bounded: 5 s) until `condition` holds, re-checking every few ms.
pub async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The fate of journal entry `seq` (1-based) once it is no longer in progress
/// (woken by the simulator when the response ends, bounded at 5 s).
pub async fn fate_of(sim: &Simulator, seq: usize) -> ResponseFate {
    tokio::time::timeout(Duration::from_secs(5), sim.wait_request_done(seq as u64))
        .await
        .expect("the response ended within 5 s");
    sim.journal()[seq - 1].fate.clone()
}

/// What a raw client saw on the socket.
#[derive(Debug, PartialEq, Eq)]
pub enum Raw {
    /// Orderly close (FIN) after these bytes.
    Closed(Vec<u8>),
    /// ECONNRESET after these bytes.
    Reset(Vec<u8>),
    /// Nothing more within the wait; the socket is still open.
    Silent(Vec<u8>),
}

pub fn raw_post(tenant: &str, resource: &str, body: &str) -> String {
    format!(
        "POST /v1/{resource} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {tenant}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Sends `request` on a fresh connection and reads until close, reset or `wait_ms` of silence.
pub async fn raw_exchange(sim: &Simulator, request: &str, wait_ms: u64) -> Raw {
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    read_raw(&mut stream, wait_ms).await
}

pub async fn read_raw(stream: &mut TcpStream, wait_ms: u64) -> Raw {
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_millis(wait_ms), stream.read(&mut buffer)).await {
            Err(_) => return Raw::Silent(got),
            Ok(Ok(0)) => return Raw::Closed(got),
            Ok(Ok(n)) => got.extend_from_slice(&buffer[..n]),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Raw::Reset(got)
            }
            Ok(Err(e)) => panic!("unexpected socket error {e}"),
        }
    }
}

/// Splits a raw HTTP response into (status, headers text, body bytes).
pub fn split_response(bytes: &[u8]) -> (u16, String, Vec<u8>) {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete head");
    let head = String::from_utf8(bytes[..end].to_vec()).unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head, bytes[end + 4..].to_vec())
}

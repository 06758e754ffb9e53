//! `lostreply proxy` in front of real third-party middlewares on loopback:
//! express-idempotency (node) and fastapi-idempotency-key (the venv). One
//! scenario file's fault rules lose, refuse and cut the creates' answers; the
//! client sees exactly the fault, the proxy's read-back counts what the
//! middleware committed, a same-key retry through the proxy is replayed, and
//! the proxy's journal tells each request's story. Without node or the venv
//! the build marks each test ignored with the reason (certify/build.rs),
//! unless `LOSTREPLY_REQUIRE_NODE=1` or `LOSTREPLY_REQUIRE_THIRDPARTY_PYTHON=1`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lostreply_certify::contract::{self, Contract, KeySyntax};
use lostreply_certify::proxy::{self, Proxy, ProxyConfig};
use lostreply_certify::tls::Trust;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::thirdparty::start;
use crate::thirdparty_python::start_app;

/// Every create of the run goes through these rules, counted together: the
/// first create's answer is dropped after the commit, the third is reset
/// before it reaches the middleware, the fifth answered 503 after the
/// commit, the seventh cut to 5 body bytes.
const SCENARIO: &str = "version: 1
id: proxy-faults-on-creates
title: Creates through the proxy lose, refuse and cut their answers
operations:
  - {id: op-1, resource: orders, args: {amount: 1200}}
faults:
  - when: {method: POST, resource: orders, nth: 1}
    at: after_commit
    response: drop
  - when: {method: POST, resource: orders, nth: 3}
    at: before_commit
    response: reset
  - when: {method: POST, resource: orders, nth: 5}
    at: after_commit
    response: {status: 503}
  - when: {method: POST, resource: orders, nth: 7}
    at: after_commit
    response: {partial: 5}
steps:
  - execute: op-1
expect:
  final: {op-1: [succeeded]}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_node,
    ignore = "needs node and express-idempotency: apt-get install nodejs npm && npm ci --prefix certify/tests/thirdparty/express"
)]
async fn proxy_faults_before_and_after_express_idempotency_commits() {
    let (_app, url) = start_express();
    faults_keep_one_effect(&url, "tests/thirdparty/express.yaml").await;
}

/// Holds: the first create is held before the upstream until the client
/// leaves, then forwarded (the service commits after its client left); the
/// second is committed and answered with its head alone, then silence.
const HOLDS: &str = "version: 1
id: proxy-holds-on-creates
title: Creates through the proxy held until their client leaves
operations:
  - {id: op-1, resource: orders, args: {amount: 1200}}
faults:
  - when: {method: POST, resource: orders, nth: 1}
    at: before_commit
    response: {stall: {then: commit}}
  - when: {method: POST, resource: orders, nth: 2}
    at: after_commit
    response: idle
steps:
  - execute: op-1
expect:
  final: {op-1: [succeeded]}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_thirdparty_python,
    ignore = "needs the Python middlewares: python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt"
)]
async fn proxy_holds_end_when_the_client_leaves() {
    let (_app, url) = start_app("fastapi_idempotency_key_app.py", &[]);
    let contract = contract_for("tests/thirdparty/fastapi-idempotency-key.yaml", &url);
    // A cap far beyond the test: a hold ended by it would show in the journal.
    let proxy = start_proxy(&url, contract.clone(), HOLDS, Duration::from_secs(600)).await;
    let to = proxy.url();

    let mut held = connect_and_send(&to, &create_request(&contract, "hold-k1", "hold-m1")).await;
    wait_for_fate(&to, 0, "stalled").await;
    assert_eq!(effects(&to, "hold-m1").await, 0, "held before the upstream");
    held.shutdown().await.expect("the client leaves");
    let mut rest = Vec::new();
    held.read_to_end(&mut rest).await.expect("a FIN");
    assert_eq!(rest, b"", "no byte of answer");
    assert_eq!(
        effects(&to, "hold-m1").await,
        1,
        "committed after the client left"
    );

    let mut idle = connect_and_send(&to, &create_request(&contract, "hold-k2", "hold-m2")).await;
    let mut head = Vec::new();
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(
            idle.read(&mut byte).await.expect("the head"),
            1,
            "the head comes whole"
        );
        head.push(byte[0]);
    }
    assert_eq!(status(&head), 201);
    assert_eq!(
        effects(&to, "hold-m2").await,
        1,
        "committed before the head"
    );
    idle.shutdown().await.expect("the client leaves");
    let mut rest = Vec::new();
    idle.read_to_end(&mut rest).await.expect("a FIN");
    assert_eq!(rest, b"", "no body byte after the head");

    let journal = get_json(&to, "/_lostreply/journal").await;
    let story: Vec<(Option<u64>, &str, &str)> = journal["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let fate = e["fate"].as_str().unwrap_or("?");
            (
                e["upstream_status"].as_u64(),
                fate,
                e["held_until"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    let expected = vec![
        (Some(201), "stalled", "client_left"),
        (Some(201), "headers_only", "client_left"),
    ];
    assert_eq!(story, expected, "{journal:#}");
    proxy.shutdown().await;
}

pub(crate) async fn connect_and_send(url: &str, request: &[u8]) -> TcpStream {
    let addr = url.strip_prefix("http://").expect("an http URL");
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request).await.expect("sends");
    stream
}

/// Waits until the journal's entry `index` has `fate`: the proxy writes it
/// before the hold starts, so this is an event, not a guess at a delay.
pub(crate) async fn wait_for_fate(url: &str, index: usize, fate: &str) {
    for _ in 0..2000 {
        let journal = get_json(url, "/_lostreply/journal").await;
        if journal["entries"][index]["fate"] == fate {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("entry {index} never reached {fate}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_thirdparty_python,
    ignore = "needs the Python middlewares: python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt"
)]
async fn proxy_faults_before_and_after_fastapi_idempotency_key_commits() {
    let (_app, url) = start_app("fastapi_idempotency_key_app.py", &[]);
    faults_keep_one_effect(&url, "tests/thirdparty/fastapi-idempotency-key.yaml").await;
}

/// The Express app in front of express-idempotency on 127.0.0.1:0, and its base URL.
pub(crate) fn start_express() -> (crate::thirdparty::App, String) {
    let node = crate::thirdparty_express::node::find_node()
        .unwrap_or_else(|why| panic!("this test needs node and express-idempotency: {why}"));
    let mut command = Command::new(node);
    command
        .arg("app.js")
        .arg("0")
        .current_dir(crate::thirdparty_express::node::app_dir());
    start(command)
}

/// The contract at `path` (relative to the crate), aimed at `url`.
pub(crate) fn contract_for(path: &str, url: &str) -> Contract {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .expect("the contract is there");
    let base = url.to_owned();
    contract::parse(&text, path, &move |n| {
        (n == "LOSTREPLY_CERTIFY_BASE_URL").then(|| base.clone())
    })
    .expect("the contract is valid")
}

async fn start_proxy(url: &str, contract: Contract, scenario: &str, stall_cap: Duration) -> Proxy {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("proxy.yaml");
    std::fs::write(&file, scenario).expect("writes the scenario");
    let scenario = lostreply_harness::scenario::load(&file).expect("the scenario is valid");
    proxy::start(ProxyConfig {
        upstream: url.to_owned(),
        contract,
        faults: scenario.plan.faults,
        stall_cap,
        hold_cap: stall_cap,
        port: 0,
        trust: Trust::System,
    })
    .await
    .expect("the proxy starts")
}

async fn faults_keep_one_effect(url: &str, contract_path: &str) {
    let contract = contract_for(contract_path, url);
    let create = |key: &str, marker: &str| create_request(&contract, key, marker);
    let proxy = start_proxy(url, contract.clone(), SCENARIO, Duration::from_secs(30)).await;
    let to = proxy.url();

    // 1: the middleware commits, the client reads the end of the stream and nothing else.
    let lost = exchange(&to, &create("proxy-k1", "proxy-m1")).await;
    assert_eq!(lost.expect("a FIN, not an error"), b"", "no byte of answer");
    assert_eq!(effects(&to, "proxy-m1").await, 1, "the upstream committed");
    // 2: the retry with the same key is replayed, no second effect.
    let retry = exchange(&to, &create("proxy-k1", "proxy-m1"))
        .await
        .expect("an answer");
    assert_eq!(status(&retry), 201, "{}", String::from_utf8_lossy(&retry));
    assert_eq!(effects(&to, "proxy-m1").await, 1, "the retry was replayed");

    // 3: reset before the upstream: no effect at all.
    let refused = exchange(&to, &create("proxy-k2", "proxy-m2")).await;
    let kind = refused.expect_err("an RST, not an answer").kind();
    assert_eq!(kind, std::io::ErrorKind::ConnectionReset);
    assert_eq!(effects(&to, "proxy-m2").await, 0, "never forwarded");
    // 4: its retry is the first the middleware sees.
    let retry = exchange(&to, &create("proxy-k2", "proxy-m2"))
        .await
        .expect("an answer");
    assert_eq!(status(&retry), 201);
    assert_eq!(effects(&to, "proxy-m2").await, 1);

    // 5: committed, then the client is told 503; 6: the retry is replayed.
    let error = exchange(&to, &create("proxy-k3", "proxy-m3"))
        .await
        .expect("an answer");
    assert_eq!(status(&error), 503);
    let retry = exchange(&to, &create("proxy-k3", "proxy-m3"))
        .await
        .expect("an answer");
    assert_eq!(status(&retry), 201);
    assert_eq!(effects(&to, "proxy-m3").await, 1);

    // 7: status, headers with the whole length, then 5 body bytes and a FIN.
    let cut = exchange(&to, &create("proxy-k4", "proxy-m4"))
        .await
        .expect("a cut answer");
    assert_eq!(status(&cut), 201);
    let (head, body) = split_answer(&cut);
    let announced = content_length(head).expect("the upstream's length is announced");
    assert_eq!(body.len(), 5, "five body bytes of {announced}");
    assert!(announced > 5);
    assert_eq!(effects(&to, "proxy-m4").await, 1);

    assert_journal(&to).await;
    proxy.shutdown().await;
}

/// The journal tells each request's story: its key, what the upstream
/// answered (nothing for the request never forwarded) and the client's fate.
async fn assert_journal(to: &str) {
    let journal = get_json(to, "/_lostreply/journal").await;
    let entries = journal["entries"].as_array().expect("entries");
    let story: Vec<(&str, Option<u64>, &str, Option<u64>)> = entries
        .iter()
        .map(|e| {
            (
                e["key"].as_str().unwrap_or("-"),
                e["upstream_status"].as_u64(),
                e["fate"].as_str().unwrap_or("?"),
                e["fault"]["rule"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        story,
        vec![
            ("proxy-k1", Some(201), "dropped", Some(1)),
            ("proxy-k1", Some(201), "answered", None),
            ("proxy-k2", None, "reset", Some(2)),
            ("proxy-k2", Some(201), "answered", None),
            ("proxy-k3", Some(201), "error_status", Some(3)),
            ("proxy-k3", Some(201), "answered", None),
            ("proxy-k4", Some(201), "truncated", Some(4)),
        ],
        "{journal:#}"
    );
    assert!(entries
        .iter()
        .all(|e| e["method"] == "POST" && e["path"] == "/v1/orders"));
}

/// The contract's create, keyed and marked, as raw HTTP/1.1 bytes.
pub(crate) fn create_request(contract: &Contract, key: &str, marker: &str) -> Vec<u8> {
    let (header, key) = match &contract.key {
        KeySyntax::Token { header } => (header, key.to_owned()),
        KeySyntax::SfString { header } => (header, format!("\"{key}\"")),
        KeySyntax::BodyField { .. } => panic!("these contracts send the key in a header"),
    };
    let body = serde_json::to_string(&contract.body)
        .expect("the template is JSON")
        .replace("{marker}", marker);
    format!(
        "{} {} HTTP/1.1\r\nHost: proxy\r\n{}: {}{}\r\n{header}: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        contract.method,
        contract.path,
        contract.auth_header,
        contract.auth_prefix,
        contract.primary,
        body.len()
    )
    .into_bytes()
}

/// Sends `request` on a fresh connection and reads until the proxy closes it.
pub(crate) async fn exchange(url: &str, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let addr = url.strip_prefix("http://").expect("an http URL");
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(answer)
}

pub(crate) fn status(answer: &[u8]) -> u16 {
    let text = String::from_utf8_lossy(answer);
    text.strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {text:?}"))
}

fn split_answer(answer: &[u8]) -> (&str, &[u8]) {
    let at = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a whole head");
    let head = std::str::from_utf8(&answer[..at]).expect("a text head");
    (head, &answer[at + 4..])
}

fn content_length(head: &str) -> Option<usize> {
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })
}

pub(crate) async fn get_json(url: &str, path: &str) -> Value {
    let request = format!("GET {path} HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\r\n");
    let answer = exchange(url, request.as_bytes()).await.expect("an answer");
    assert_eq!(status(&answer), 200, "{}", String::from_utf8_lossy(&answer));
    serde_json::from_slice(split_answer(&answer).1).expect("JSON")
}

/// The effects carrying `marker`, as the proxy's read-back counts them.
pub(crate) async fn effects(url: &str, marker: &str) -> u64 {
    let answer = get_json(url, &format!("/_lostreply/effects?marker={marker}")).await;
    answer["count"].as_u64().expect("a count")
}

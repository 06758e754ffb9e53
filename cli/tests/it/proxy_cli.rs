//! `lostreply proxy` end to end through the binary: its JSON banner, a
//! scenario file's fault in front of a real upstream (`lostreply serve`, the
//! shipped simulator contract), its journal and effects, its summary on
//! SIGTERM, and every bad input with its documented exit code.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

/// A process ended when the test ends (pass or panic).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn contract() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../certify/contracts/simulator-ietf.yaml")
}

/// Starts `args` and reads the JSON banner on its first stdout line.
fn start(args: &[&str]) -> (Running, serde_json::Value) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lostreply starts");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    let banner = serde_json::from_str(&first)
        .unwrap_or_else(|e| panic!("the first line is JSON ({e}): {first:?}"));
    (running, banner)
}

/// One request on a fresh connection; everything the proxy sent until it closed.
fn exchange(url: &str, request: &str) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(url.trim_start_matches("http://"))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    Ok(answer)
}

fn create(key: &str, marker: &str) -> String {
    let body = format!(
        r#"{{"title":"proxied","amount":1200,"currency":"eur","client_reference":"{marker}"}}"#
    );
    format!(
        "POST /v1/certify_items HTTP/1.1\r\nHost: p\r\nAuthorization: Bearer sk_test_a\r\nIdempotency-Key: \"{key}\"\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn get_json(url: &str) -> serde_json::Value {
    let (base, path) = url.split_at(url.find("/_lostreply").expect("a proxy URL"));
    let answer = exchange(
        base,
        &format!("GET {path} HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n"),
    )
    .expect("an answer");
    let text = String::from_utf8(answer).expect("text");
    let (_, body) = text.split_once("\r\n\r\n").expect("a head");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("JSON ({e}): {text}"))
}

const DROP_FIRST: &str = "version: 1
id: proxy-cli
title: The first create's answer is lost after the commit
operations:
  - {id: op-1, resource: certify_items, args: {title: t}}
faults:
  - when: {method: POST, resource: certify_items, nth: 1}
    at: after_commit
    response: drop
steps:
  - execute: op-1
";

#[test]
fn proxy_announces_itself_faults_and_stops_on_sigterm() {
    let (_upstream, served) = start(&["serve", "--idempotency", "ietf"]);
    let upstream = served["base_url"].as_str().expect("base_url");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scenario = dir.path().join("drop.yaml");
    std::fs::write(&scenario, DROP_FIRST).expect("writes");
    let contract = contract();
    let (mut proxy, banner) = start(&[
        "proxy",
        "--upstream",
        upstream,
        "--contract",
        contract.to_str().expect("a UTF-8 path"),
        "--scenario",
        scenario.to_str().expect("a UTF-8 path"),
    ]);
    let url = banner["url"].as_str().expect("url").to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{banner}");
    assert_eq!(banner["upstream"], upstream);
    let effects = |marker: &str| {
        let url = format!(
            "{}{marker}",
            banner["effects_url"].as_str().expect("effects_url")
        );
        get_json(&url)["count"].as_u64().expect("a count")
    };

    let lost = exchange(&url, &create("cli-k1", "cli-m1")).expect("a FIN");
    assert!(
        lost.is_empty(),
        "no byte of answer: {:?}",
        String::from_utf8_lossy(&lost)
    );
    assert_eq!(effects("cli-m1"), 1, "the upstream committed");
    let retry = exchange(&url, &create("cli-k1", "cli-m1")).expect("an answer");
    assert!(
        retry.starts_with(b"HTTP/1.1 201"),
        "{}",
        String::from_utf8_lossy(&retry)
    );
    assert_eq!(effects("cli-m1"), 1, "replayed, not run again");
    let journal = get_json(banner["journal_url"].as_str().expect("journal_url"));
    let fates: Vec<&str> = journal["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["fate"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(fates, ["dropped", "answered"], "{journal:#}");
    assert_eq!(journal["entries"][0]["key"], "cli-k1");
    assert_eq!(
        journal["entries"][1]["client_left"], false,
        "the retry's client read its answer: {journal:#}"
    );

    let status = Command::new("kill")
        .args(["-TERM", &proxy.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = proxy.0.wait().expect("the proxy exits");
    assert_eq!(exit.code(), Some(0), "clean shutdown on SIGTERM");
    let mut stderr = String::new();
    proxy
        .0
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    assert!(stderr.contains("#1 POST /v1/certify_items key=cli-k1 upstream=201 client=dropped [rule 1: after_commit drop]"), "{stderr}");
    assert!(
        stderr.contains(
            "stopped: 2 requests (2 answered by the upstream); client fates: dropped 1, answered 1; answers written after the client left: 0"
        ),
        "{stderr}"
    );
}

/// Runs `lostreply proxy ARGS` expecting it to refuse: its exit code and stderr.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(BIN)
        .arg("proxy")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("lostreply runs");
    assert!(
        output.stdout.is_empty(),
        "no banner: {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn proxy_bad_inputs_have_their_exit_codes() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = contract();
    let good = good.to_str().expect("a UTF-8 path");
    // Nothing listens on a port just released.
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = free.local_addr().expect("an address").port();
    drop(free);
    let nowhere = format!("http://127.0.0.1:{port}");

    let (code, stderr) = refused(&["--upstream", &nowhere, "--contract", good]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("the upstream 127.0.0.1:{port} is unreachable")),
        "{stderr}"
    );

    let text = std::fs::read_to_string(contract()).expect("the contract");
    let line = 1 + text
        .lines()
        .position(|l| l.trim() == "timeout: 5s")
        .expect("a timeout line");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, text.replace("timeout: 5s", "timeout: banana")).expect("writes");
    let bad = bad.to_str().expect("a UTF-8 path");
    let (code, stderr) = refused(&["--upstream", &nowhere, "--contract", bad]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{bad}:{line}:12")), "{stderr}");

    let (code, stderr) = refused(&["--upstream", "http://example.com:80", "--contract", good]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not in target.allowed_hosts"), "{stderr}");

    let (code, stderr) = refused(&["--upstream", "http://127.0.0.1:1/v1", "--contract", good]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--upstream \"http://127.0.0.1:1/v1\": expected http://host:port or https://host:port (no path)"),
        "{stderr}"
    );

    let scenario = dir.path().join("stepped.yaml");
    std::fs::write(
        &scenario,
        DROP_FIRST.replace("{method: POST,", "{step: 1, method: POST,"),
    )
    .expect("writes");
    let scenario = scenario.to_str().expect("a UTF-8 path");
    let (code, stderr) = refused(&[
        "--upstream",
        &nowhere,
        "--contract",
        good,
        "--scenario",
        scenario,
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "fault rule 1 (at: after_commit, response: drop): it is scoped to scenario steps"
        ),
        "{stderr}"
    );
}

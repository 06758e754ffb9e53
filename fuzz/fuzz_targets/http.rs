//! The provider's HTTP request path on arbitrary bytes: each input is written
//! to a running simulator over a real loopback connection, the write half is
//! closed, and the answer is read until the server closes or a short deadline
//! passes. Whatever the bytes, the server must not panic and must go on
//! serving: a fresh connection asking `GET /_lostreply/health` gets its answer.
//!
//! The simulator runs in this process, on a runtime of its own, with a plan
//! that has idempotency, webhooks, seed objects and a fault rule on each of a
//! few resources, so that inputs reach the fault paths as well as the normal
//! ones. libFuzzer's panic hook aborts on a panic in any thread, the server's
//! tasks included, so a panic while serving an input is that input's crash.
#![no_main]

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use lostreply_simulator::{ServeOptions, Simulator};
use tokio::signal::unix::{Signal, SignalKind};

/// The plan, written as a scenario file so that the scenario reader checks it
/// as it checks any user's. Short caps: a stall, an idle or a delay ends in
/// milliseconds, so an input that meets one costs little.
const PLAN: &str = r#"
version: 1
id: fuzz-http
title: The provider's HTTP path under arbitrary bytes
client_timeout: 10ms
provider:
  idempotency: {mode: stripe, retention: 24h}
  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
  limits: {stall_cap: 50ms, max_body_bytes: 8192}
  seed_objects:
    - {tenant: sk_test_a, resource: tickets, args: {title: seeded}, client_reference: ref-1}
operations:
  - {id: op-1, resource: tickets, args: {title: fuzz}}
faults:
  - {when: {resource: drops}, response: drop}
  - {when: {resource: resets}, response: reset}
  - {when: {resource: stalls, kind: create}, response: {stall: {then: commit}}}
  - {when: {resource: abandons, kind: create}, response: stall}
  - {when: {resource: busy}, at: before_commit, response: {status: {code: 503, retry_after: 1s}}}
  - {when: {resource: errors}, response: {status: 500}}
  - {when: {resource: partials}, response: {partial: 7}}
  - {when: {resource: idles}, response: idle}
  - {when: {resource: delays}, response: {delay: 2ms}}
  - {when: {resource: early}, at: before_read, response: drop}
steps:
  - execute: op-1
"#;

/// Longest an input's answer is read for: past the plan's 50 ms caps, so only
/// a server that keeps a half-closed connection open without cause reaches it.
const ANSWER_DEADLINE: Duration = Duration::from_millis(500);
/// Longest the fixed request may take on a fresh connection (generous: the
/// sanitizers slow the server down).
const HEALTH_DEADLINE: Duration = Duration::from_secs(5);
/// A fresh connection is checked at least this often.
const CHECK_EVERY: u64 = 4;
/// The simulator is replaced after this many inputs: its journal, ledger,
/// keys and events grow with every request (bounded, but at a million),
/// and a fuzzing process must not spend its memory on them.
const RESTART_EVERY: u64 = 20_000;
/// Most answer bytes kept (the rest is read and dropped).
const ANSWER_KEEP: usize = 4096;

struct Server {
    simulator: Simulator,
    addr: SocketAddr,
    inputs: u64,
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        // A Rust `main` ignores SIGPIPE, and the server's writes to a client
        // that has gone rely on it; libFuzzer's C `main` does not, so a
        // server write after the client closed would kill the process. A
        // handler of tokio's own takes the signal instead, with no `unsafe`;
        // it is kept in a static for the process's life (dropped, or
        // forgotten, the sanitizer's exit check would call it a leak).
        static PIPE: Mutex<Option<Signal>> = Mutex::new(None);
        let pipe = runtime
            .block_on(async { tokio::signal::unix::signal(SignalKind::pipe()) })
            .expect("a SIGPIPE handler");
        *PIPE.lock().unwrap_or_else(|e| e.into_inner()) = Some(pipe);
        runtime
    })
}

fn start() -> Server {
    let scenario = lostreply_harness::scenario::parse(PLAN, "fuzz-http.yaml")
        .unwrap_or_else(|e| panic!("the fuzz plan does not read: {e}"));
    let simulator = runtime()
        .block_on(Simulator::start(scenario.plan, ServeOptions::default()))
        .unwrap_or_else(|e| panic!("the simulator does not start: {e}"));
    let addr = simulator.local_addr();
    Server {
        simulator,
        addr,
        inputs: 0,
    }
}

/// Opens a connection. A refusal for want of a local port is this process's
/// (a connection per input leaves tens of thousands in TIME_WAIT), not the
/// server's: it is waited out, a bounded number of times.
fn connect(addr: SocketAddr, deadline: Duration) -> std::io::Result<TcpStream> {
    let mut tries = 0;
    loop {
        match TcpStream::connect_timeout(&addr, deadline) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrNotAvailable && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Writes `data`, closes the write half, reads until EOF or `deadline`.
/// Errors are answers too (a reset, a refused write): only the server's
/// survival is judged, by [`healthy`].
fn exchange(addr: SocketAddr, data: &[u8], deadline: Duration) -> std::io::Result<Vec<u8>> {
    let started = Instant::now();
    let mut stream = connect(addr, deadline)?;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(deadline));
    // std sends with MSG_NOSIGNAL: a server that closed early is an error here.
    let _ = stream.write_all(data);
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_sub(started.elapsed());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no end within {deadline:?} after {} bytes", answer.len()),
            ));
        }
        match stream.read(&mut buffer) {
            Ok(0) => break,
            // A reset after an answer is an answer; a timeout is the deadline.
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no end within {deadline:?} after {} bytes", answer.len()),
                ));
            }
            Err(_) => break,
            Ok(n) => {
                let keep = n.min(ANSWER_KEEP.saturating_sub(answer.len()));
                answer.extend_from_slice(&buffer[..keep]);
            }
        }
    }
    Ok(answer)
}

/// A fresh connection gets a well-formed answer to the fixed request.
fn healthy(addr: SocketAddr) -> Result<(), String> {
    let request = b"GET /_lostreply/health HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n";
    let answer = exchange(addr, request, HEALTH_DEADLINE).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&answer);
    if text.starts_with("HTTP/1.1 200") && text.contains(r#"{"status":"ok"}"#) {
        Ok(())
    } else {
        Err(format!("answered {} bytes: {text:?}", answer.len()))
    }
}

fn server() -> &'static Mutex<Option<Server>> {
    static SERVER: Mutex<Option<Server>> = Mutex::new(None);
    &SERVER
}

fuzz_target!(|data: &[u8]| {
    let mut slot = server().lock().unwrap_or_else(|e| e.into_inner());
    if slot.as_ref().is_some_and(|s| s.inputs >= RESTART_EVERY) {
        if let Some(old) = slot.take() {
            runtime().block_on(old.simulator.shutdown());
        }
    }
    let server = slot.get_or_insert_with(start);
    server.inputs += 1;
    let started = Instant::now();
    let _ = exchange(server.addr, data, ANSWER_DEADLINE);
    // An answer that took the whole deadline is checked at once: the server
    // may be stuck.
    let slow = started.elapsed() >= ANSWER_DEADLINE;
    if slow || server.inputs % CHECK_EVERY == 0 {
        if let Err(e) = healthy(server.addr) {
            panic!(
                "the simulator stopped serving after input {} of this process: {e}",
                server.inputs
            );
        }
    }
});

//! The proxy's journal says when it answered a client that had already
//! left, over real loopback sockets: a client gives up while the upstream
//! is still working on its create (the upstream commits, the answer goes to
//! nobody), and a client that waits reads its answer. The upstream here
//! answers only when the test releases it, so every step waits for an event
//! (the upstream received the request, the proxy's socket received the
//! client's FIN, the journal entry ended), never for a guessed delay.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use lostreply_certify::proxy::{self, Proxy, ProxyConfig};
use lostreply_certify::simulator::{self, Wire};
use lostreply_certify::tls::Trust;
use lostreply_simulator::IdempotencyMode;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

use super::proxy_thirdparty::{connect_and_send, create_request, exchange, get_json, status};

/// How long any one awaited event may take before the test fails: generous,
/// so a loaded machine is slow rather than wrong.
const DEADLINE: Duration = Duration::from_secs(60);

/// A request the upstream has received; it answers 201 once released.
struct Arrival {
    release: oneshot::Sender<()>,
}

/// An upstream on 127.0.0.1 that reports each request it receives and
/// holds its answer until the test releases it.
async fn held_upstream() -> (String, mpsc::UnboundedReceiver<Arrival>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("the upstream binds");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let (arrived, arrivals) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let arrived = arrived.clone();
            let service = service_fn(move |_: Request<Incoming>| {
                let arrived = arrived.clone();
                async move {
                    let (release, released) = oneshot::channel();
                    let _ = arrived.send(Arrival { release });
                    let _ = released.await;
                    Ok::<_, Infallible>(created())
                }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    (url, arrivals)
}

fn created() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(br#"{"id":"obj_1"}"#)));
    *response.status_mut() = StatusCode::CREATED;
    response
}

async fn start(upstream: &str) -> (Proxy, lostreply_certify::contract::Contract) {
    let contract = simulator::contract(Wire::Generic, IdempotencyMode::Stripe, upstream)
        .expect("the shipped contract");
    let proxy = proxy::start(ProxyConfig {
        upstream: upstream.to_owned(),
        contract: contract.clone(),
        faults: Vec::new(),
        stall_cap: Duration::from_secs(600),
        hold_cap: Duration::from_secs(600),
        port: 0,
        trust: Trust::System,
    })
    .await
    .expect("the proxy starts");
    (proxy, contract)
}

async fn next_arrival(arrivals: &mut mpsc::UnboundedReceiver<Arrival>) -> Arrival {
    tokio::time::timeout(DEADLINE, arrivals.recv())
        .await
        .expect("the upstream receives the request in time")
        .expect("the upstream runs")
}

/// Journal entry `index` once its fate is decided (no longer `pending`).
async fn ended_entry(url: &str, index: usize) -> Value {
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let journal = get_json(url, "/_lostreply/journal").await;
        let entry = &journal["entries"][index];
        if !entry.is_null() && entry["fate"] != "pending" {
            return entry.clone();
        }
        assert!(
            tokio::time::Instant::now() < until,
            "entry {index} still pending: {journal:#}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn proxy_port(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .expect("a port")
}

/// Waits until the kernel shows the proxy's end of the connection from
/// `client_port` in CLOSE_WAIT: it has received the client's FIN, so the
/// proxy's next look at its socket sees the client gone. Where there is no
/// `/proc/net/tcp` (not Linux) it returns at once, and the test leans on
/// loopback delivering the FIN while the client's close runs.
async fn fin_received(proxy_port: u16, client_port: u16) {
    const CLOSE_WAIT: &str = "08";
    let ends = (format!(":{proxy_port:04X}"), format!(":{client_port:04X}"));
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
            return;
        };
        let received = table.lines().skip(1).any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            matches!(fields.as_slice(), [_, local, remote, state, ..]
                if local.ends_with(&ends.0) && remote.ends_with(&ends.1) && *state == CLOSE_WAIT)
        });
        if received {
            return;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "the proxy's socket never received the client's FIN"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_due_after_the_client_left_is_journaled_client_left() {
    let (upstream, mut arrivals) = held_upstream().await;
    let (proxy, contract) = start(&upstream).await;
    let to = proxy.url();

    // The client gives up while the upstream works on its create, and the
    // upstream answers once the proxy's socket holds the client's FIN.
    let client = connect_and_send(&to, &create_request(&contract, "cl-k1", "cl-m1")).await;
    let slow = next_arrival(&mut arrivals).await;
    let client_port = client.local_addr().expect("an address").port();
    drop(client);
    fin_received(proxy_port(&to), client_port).await;
    slow.release.send(()).expect("the proxy still waits for it");
    let left = ended_entry(&to, 0).await;
    assert_eq!(left["fate"], "answered", "{left:#}");
    assert_eq!(
        left["upstream_status"], 201,
        "the upstream committed: {left:#}"
    );
    assert_eq!(left["client_left"], true, "{left:#}");

    // A client that waits reads its answer.
    let waiting = tokio::spawn({
        let to = to.clone();
        let create = create_request(&contract, "cl-k2", "cl-m2");
        async move { exchange(&to, &create).await }
    });
    next_arrival(&mut arrivals)
        .await
        .release
        .send(())
        .expect("the proxy waits for it");
    let answer = waiting.await.expect("the client runs").expect("an answer");
    assert_eq!(status(&answer), 201);
    let read = ended_entry(&to, 1).await;
    assert_eq!(read["fate"], "answered", "{read:#}");
    assert_eq!(read["client_left"], false, "{read:#}");

    let summary = proxy.journal().summary();
    assert!(
        summary.ends_with("client fates: answered 2; answers written after the client left: 1"),
        "{summary}"
    );
    proxy.shutdown().await;
}

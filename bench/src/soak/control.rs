//! The soak's harness side while the clients run: it moves the simulator's
//! clock (so idempotency keys expire and their store stays bounded, as in a
//! long `serve`), and delivers webhooks as the harness does, asking the
//! simulator to sign an event and posting it to a receiver on loopback that
//! verifies every signature (a forged one among them must be refused).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::client::{self, Sender};
use crate::Error;

/// The plan's webhook secret (bench/src/soak/scenario.yaml).
pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// The clock moves this much every real second: a key's hour of retention
/// lasts a minute of the soak, so the key store reaches its steady size
/// inside the warm-up, and a replay (which follows its original within a
/// few requests) always finds its key.
const ADVANCE_EVERY: Duration = Duration::from_secs(1);
const ADVANCE: &str = r#"{"advance":"60s"}"#;
/// Webhooks are delivered every fifth second.
const DELIVER_EVERY_TICKS: u64 = 5;
/// Events delivered per round, spread over the events new since the last.
const DELIVERIES_PER_ROUND: usize = 20;
/// One delivery in this many is forged (its body changed after signing).
const FORGED_EVERY: u64 = 5;
/// Events asked for per page of `GET /_lostreply/events`: each page is
/// copied out under the lock every request takes, so a round reads the
/// events new since the last one a bounded page at a time, and its own
/// reading never becomes the load, however long the soak runs.
const PAGE: usize = 5_000;

/// What the harness side did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlFigures {
    /// Clock moves answered 200.
    pub advances: u64,
    /// Pages of events read.
    pub listings: u64,
    /// Events read in all pages (each event once).
    pub events_listed: u64,
    /// Deliveries signed by the simulator and posted unchanged.
    pub genuine: u64,
    /// Deliveries posted with a changed body.
    pub forged: u64,
    /// The receiver's verdicts: signatures verified.
    pub accepted: u64,
    /// The receiver's verdicts: refused.
    pub rejected: u64,
    /// Control requests that failed, and the first failure.
    pub failures: u64,
    /// See `failures`.
    pub first_failure: Option<String>,
}

impl ControlFigures {
    /// Every genuine delivery verified and every forged one refused.
    pub fn webhooks_hold(&self) -> bool {
        self.genuine > 0 && self.accepted == self.genuine && self.rejected == self.forged
    }

    fn fail(&mut self, text: String) {
        self.failures += 1;
        if self.first_failure.is_none() {
            self.first_failure = Some(text);
        }
    }
}

/// The loopback webhook receiver: verifies each delivery against the secret
/// at the simulator time the deliverer last read.
#[derive(Debug)]
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    now_s: Arc<AtomicI64>,
    accepted: Arc<AtomicU64>,
    rejected: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Receiver {
    /// Binds 127.0.0.1:0 and serves.
    pub async fn start() -> Result<Receiver, Error> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| Error::Io("binding the webhook receiver".to_owned(), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Io("local_addr".to_owned(), e))?;
        let now_s = Arc::new(AtomicI64::new(0));
        let accepted = Arc::new(AtomicU64::new(0));
        let rejected = Arc::new(AtomicU64::new(0));
        let counts = (now_s.clone(), accepted.clone(), rejected.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let counts = counts.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let counts = counts.clone();
                        async move { receive(request, &counts.0, &counts.1, &counts.2).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Receiver {
            addr,
            now_s,
            accepted,
            rejected,
            task,
        })
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn receive(
    request: hyper::Request<Incoming>,
    now_s: &AtomicI64,
    accepted: &AtomicU64,
    rejected: &AtomicU64,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let headers: BTreeMap<String, String> = request
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let body = request.into_body().collect().await?.to_bytes();
    let body = String::from_utf8_lossy(&body);
    let verdict = lostreply_simulator::standard_webhooks::verify(
        SECRET,
        &headers,
        &body,
        now_s.load(Ordering::Relaxed),
    );
    let status = if verdict.is_ok() {
        accepted.fetch_add(1, Ordering::Relaxed);
        StatusCode::NO_CONTENT
    } else {
        rejected.fetch_add(1, Ordering::Relaxed);
        StatusCode::BAD_REQUEST
    };
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    Ok(response)
}

#[derive(Deserialize)]
struct Listing {
    data: Vec<Listed>,
    has_more: bool,
}

#[derive(Deserialize)]
struct Listed {
    id: String,
}

#[derive(Deserialize)]
struct Delivery {
    headers: BTreeMap<String, String>,
    body: String,
}

#[derive(Deserialize)]
struct Clock {
    now_ms: i64,
}

/// Moves the clock every second and, with `webhooks`, delivers a few events
/// every fifth, until `until`; then the receiver's verdicts are read.
pub async fn run(
    simulator: SocketAddr,
    receiver: &Receiver,
    webhooks: bool,
    until: Instant,
) -> ControlFigures {
    let mut figures = ControlFigures::default();
    let mut last_listed: Option<String> = None;
    let mut tick = 0u64;
    while Instant::now() + ADVANCE_EVERY <= until {
        tokio::time::sleep(ADVANCE_EVERY).await;
        tick += 1;
        let (mut sim, _task) = match client::connect(simulator).await {
            Ok(c) => c,
            Err(e) => {
                figures.fail(e.to_string());
                continue;
            }
        };
        let path = "/_lostreply/clock";
        match client::post(
            &mut sim,
            simulator,
            path,
            Bytes::from_static(ADVANCE.as_bytes()),
        )
        .await
        {
            Ok((StatusCode::OK, _)) => figures.advances += 1,
            Ok((status, _)) => figures.fail(format!("POST {path} answered {status}")),
            Err(e) => figures.fail(format!("POST {path}: {e}")),
        }
        if webhooks && tick.is_multiple_of(DELIVER_EVERY_TICKS) {
            deliver_round(
                &mut sim,
                simulator,
                receiver,
                &mut last_listed,
                &mut figures,
            )
            .await;
        }
    }
    figures.accepted = receiver.accepted.load(Ordering::Relaxed);
    figures.rejected = receiver.rejected.load(Ordering::Relaxed);
    figures
}

/// Reads the events new since `last_listed`, a page at a time, and
/// delivers up to [`DELIVERIES_PER_ROUND`] of them, evenly spread.
async fn deliver_round(
    sim: &mut Sender,
    simulator: SocketAddr,
    receiver: &Receiver,
    last_listed: &mut Option<String>,
    figures: &mut ControlFigures,
) {
    let fresh = match events_since(sim, simulator, last_listed, figures).await {
        Ok(fresh) => fresh,
        Err(e) => return figures.fail(e),
    };
    if fresh.is_empty() {
        return;
    }
    match read_json::<Clock>(sim, simulator, "/_lostreply/clock").await {
        Ok(clock) => receiver
            .now_s
            .store(clock.now_ms.div_euclid(1000), Ordering::Relaxed),
        Err(e) => return figures.fail(e),
    }
    let step = fresh.len().div_ceil(DELIVERIES_PER_ROUND).max(1);
    let (mut to_receiver, _task) = match client::connect(receiver.addr).await {
        Ok(c) => c,
        Err(e) => return figures.fail(e.to_string()),
    };
    for event in fresh.iter().step_by(step) {
        let path = format!("/_lostreply/events/{}/delivery", event.id);
        let (status, body) = match client::post(sim, simulator, &path, Bytes::new()).await {
            Ok(answer) => answer,
            Err(e) => return figures.fail(format!("POST {path}: {e}")),
        };
        let Ok(delivery) = serde_json::from_slice::<Delivery>(&body) else {
            figures.fail(format!("POST {path} answered {status}, not a delivery"));
            continue;
        };
        let forged = (figures.genuine + figures.forged + 1).is_multiple_of(FORGED_EVERY);
        let mut body = delivery.body;
        if forged {
            body.push(' ');
            figures.forged += 1;
        } else {
            figures.genuine += 1;
        }
        let mut request = client::bare(Method::POST, receiver.addr, "/webhooks", Bytes::from(body));
        for (name, value) in &delivery.headers {
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_str(value),
            ) {
                request.headers_mut().insert(name, value);
            }
        }
        if let Err(e) = client::send(&mut to_receiver, request).await {
            figures.fail(format!("delivering {}: {e}", event.id));
        }
    }
}

/// The events produced after `last_listed` (from the first, when none is),
/// read page by page, and `last_listed` moved to the newest. When the
/// event it names has been summarised out with its object (the store keeps
/// the newest `limits.max_objects`), reading starts again from the oldest
/// held, all of which are newer than it: the soak's objects make only
/// created events (nothing settles later), in the order the objects are made.
async fn events_since(
    sim: &mut Sender,
    simulator: SocketAddr,
    last_listed: &mut Option<String>,
    figures: &mut ControlFigures,
) -> Result<Vec<Listed>, String> {
    let mut fresh = Vec::new();
    loop {
        let path = match last_listed.as_deref() {
            Some(after) => format!("/_lostreply/events?limit={PAGE}&after={after}"),
            None => format!("/_lostreply/events?limit={PAGE}"),
        };
        let (status, body) = client::get(sim, simulator, &path)
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        if status == StatusCode::NOT_FOUND && last_listed.is_some() {
            *last_listed = None;
            continue;
        }
        if status != StatusCode::OK {
            return Err(format!("GET {path} answered {status}"));
        }
        let page: Listing =
            serde_json::from_slice(&body).map_err(|e| format!("GET {path}: {e}"))?;
        figures.listings += 1;
        figures.events_listed += page.data.len() as u64;
        if let Some(newest) = page.data.last() {
            *last_listed = Some(newest.id.clone());
        }
        fresh.extend(page.data);
        if !page.has_more {
            return Ok(fresh);
        }
    }
}

/// `GET path`, its body read as `T`; the error as text.
pub async fn read_json<T: serde::de::DeserializeOwned>(
    sender: &mut Sender,
    addr: SocketAddr,
    path: &str,
) -> Result<T, String> {
    let (status, body) = client::get(sender, addr, path)
        .await
        .map_err(|e| format!("GET {path}: {e}"))?;
    if status != StatusCode::OK {
        return Err(format!("GET {path} answered {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("GET {path}: {e}"))
}

//! The servers under load, all on 127.0.0.1:0 in this process: the simulator,
//! a bare hyper server (the practical limit: parse, read the body, answer a
//! fixed body or close the connection) and wiremock's `MockServer` (what a Rust
//! user would pick instead of the simulator). The simulator speaks the generic
//! wire or, with its Stripe profile, Stripe's.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use lostreply_simulator::{
    FaultResponse, FaultRule, Match, Plan, Position, Profile, ServeOptions, Simulator,
};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::client::{Target, Wire, CREDENTIAL, RESOURCE};
use crate::Error;

/// What the references answer to every create and retrieve: the shape and
/// size of a simulator ticket, so that bytes on the wire are comparable.
pub const FIXED_BODY: &str = r#"{"id":"tkt_0123456789abcdef","object":"tickets","status":"succeeded","client_reference":null,"created_at":"2026-01-01T00:00:00Z","args":{"n":0,"title":"bench"},"metadata":null}"#;

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServerKind {
    /// `lostreply_simulator::Simulator`.
    Simulator,
    /// hyper's HTTP/1 server with a fixed answer.
    BareHyper,
    /// `wiremock::MockServer` with equivalent stubs.
    Wiremock,
}

impl ServerKind {
    /// The name in tables and JSON lines.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Simulator => "simulator",
            ServerKind::BareHyper => "bare_hyper",
            ServerKind::Wiremock => "wiremock",
        }
    }
}

/// What the server does with a create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Answer (the simulator commits and answers 201).
    Ok,
    /// Commit, then close the connection without a byte (FIN).
    DropAfterCommit,
    /// Commit, then abort the connection (RST).
    ResetAfterCommit,
}

impl Behaviour {
    /// The simulator fault that gives this behaviour to every POST.
    fn fault(self) -> Option<FaultResponse> {
        match self {
            Behaviour::Ok => None,
            Behaviour::DropAfterCommit => Some(FaultResponse::Drop),
            Behaviour::ResetAfterCommit => Some(FaultResponse::Reset),
        }
    }
}

/// A started server.
#[derive(Debug)]
pub struct RunningServer {
    /// Which one.
    pub kind: ServerKind,
    /// Where it listens.
    pub addr: SocketAddr,
    /// What it speaks.
    pub wire: Wire,
    inner: Inner,
}

enum Inner {
    Simulator(Simulator),
    Bare(JoinHandle<()>),
    Wiremock(wiremock::MockServer),
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inner::Simulator(s) => s.fmt(f),
            Inner::Bare(_) => f.write_str("BareHyper"),
            Inner::Wiremock(w) => write!(f, "MockServer({})", w.address()),
        }
    }
}

impl RunningServer {
    /// Starts `kind` with `behaviour`. Wiremock has no connection-level faults,
    /// so it only serves [`Behaviour::Ok`].
    pub async fn start(kind: ServerKind, behaviour: Behaviour) -> Result<RunningServer, Error> {
        match kind {
            ServerKind::Simulator => RunningServer::simulator(Wire::Generic, behaviour).await,
            ServerKind::BareHyper => {
                let listener = bind().await?;
                let addr = listener
                    .local_addr()
                    .map_err(|e| Error::Io("local_addr".to_owned(), e))?;
                let task = tokio::spawn(bare_accept_loop(listener, behaviour));
                Ok(RunningServer {
                    kind,
                    addr,
                    wire: Wire::Generic,
                    inner: Inner::Bare(task),
                })
            }
            ServerKind::Wiremock => {
                if behaviour != Behaviour::Ok {
                    return Err(Error::Unsupported(
                        "wiremock cannot drop or reset a connection after answering".to_owned(),
                    ));
                }
                let server = wiremock_server().await;
                let addr = *server.address();
                Ok(RunningServer {
                    kind,
                    addr,
                    wire: Wire::Generic,
                    inner: Inner::Wiremock(server),
                })
            }
        }
    }

    /// Starts the simulator speaking `wire`, with `behaviour`. A profile's
    /// plan takes the profile's own idempotency mode, as a scenario that
    /// names the profile gets it.
    pub async fn simulator(wire: Wire, behaviour: Behaviour) -> Result<RunningServer, Error> {
        let mut plan = Plan::default();
        if wire == Wire::Stripe {
            let profile = Profile::builtin("stripe").ok_or_else(|| {
                Error::Unsupported("the simulator has no stripe profile".to_owned())
            })?;
            plan.idempotency.mode = profile.keys.default_mode;
            plan.profile = Arc::new(profile);
        }
        if let Some(response) = behaviour.fault() {
            plan.faults.push(
                FaultRule::builder()
                    .when({
                        let mut changed = Match::default();
                        changed.method = Some("POST".to_owned());
                        changed
                    })
                    .at(Position::AfterCommit)
                    .response(response)
                    .build(),
            );
        }
        let sim = Simulator::start(plan, ServeOptions::default())
            .await
            .map_err(|e| Error::Start(e.to_string()))?;
        Ok(RunningServer {
            kind: ServerKind::Simulator,
            addr: sim.local_addr(),
            wire,
            inner: Inner::Simulator(sim),
        })
    }

    /// Where the load client sends its requests, on the wire this server speaks.
    pub fn target(&self) -> Target {
        Target::speaking(self.addr, self.wire)
    }

    /// The simulator's ledger length (effects committed); `None` for the references.
    pub fn effects(&self) -> Option<usize> {
        match &self.inner {
            Inner::Simulator(sim) => Some(sim.ledger().len()),
            Inner::Bare(_) | Inner::Wiremock(_) => None,
        }
    }

    /// How the simulator's journal says responses ended: (dropped, reset, sent).
    pub fn journal_fates(&self) -> Option<(usize, usize, usize)> {
        let Inner::Simulator(sim) = &self.inner else {
            return None;
        };
        let mut counts = (0, 0, 0);
        for entry in sim.journal() {
            match entry.fate {
                lostreply_simulator::ResponseFate::Dropped => counts.0 += 1,
                lostreply_simulator::ResponseFate::Reset => counts.1 += 1,
                lostreply_simulator::ResponseFate::Sent { .. } => counts.2 += 1,
                lostreply_simulator::ResponseFate::InProgress
                | lostreply_simulator::ResponseFate::Stalled { .. }
                | lostreply_simulator::ResponseFate::Cancelled
                | lostreply_simulator::ResponseFate::Truncated { .. }
                | lostreply_simulator::ResponseFate::Idle { .. } => {}
            }
        }
        Some(counts)
    }

    /// Stops it and waits for its tasks.
    pub async fn shutdown(self) {
        match self.inner {
            Inner::Simulator(sim) => sim.shutdown().await,
            Inner::Bare(task) => {
                // Aborting the accept loop drops its JoinSet, which aborts every connection.
                task.abort();
                let _ = task.await;
            }
            Inner::Wiremock(server) => drop(server),
        }
    }
}

async fn bind() -> Result<TcpListener, Error> {
    TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .map_err(|e| Error::Io("bind 127.0.0.1:0".to_owned(), e))
}

async fn bare_accept_loop(listener: TcpListener, behaviour: Behaviour) {
    let mut connections = JoinSet::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of descriptors and the like: back off instead of spinning.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        // Reap finished connections so the set does not grow with every drop.
        while connections.try_join_next().is_some() {}
        let _ = stream.set_nodelay(true);
        if behaviour == Behaviour::ResetAfterCommit {
            // With SO_LINGER 0 the close after the request becomes an RST.
            let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
        }
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                bare_answer(request, behaviour)
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The bare server's whole logic: read the body (as any real server must),
/// then answer the fixed body, or fail the service so hyper closes the
/// connection without writing a byte.
async fn bare_answer(
    request: Request<Incoming>,
    behaviour: Behaviour,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let method = request.method().clone();
    let _ = request.into_body().collect().await;
    let status = match (&method, behaviour) {
        (&Method::POST, Behaviour::DropAfterCommit | Behaviour::ResetAfterCommit) => {
            return Err(std::io::Error::other(
                "closing without an answer, on purpose",
            ));
        }
        (&Method::POST, Behaviour::Ok) => StatusCode::CREATED,
        (&Method::GET, _) => StatusCode::OK,
        _ => StatusCode::NOT_FOUND,
    };
    let mut response = Response::new(Full::new(Bytes::from_static(FIXED_BODY.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// A fresh (not pooled) MockServer with request recording left on, as a user
/// gets it by default, and stubs equivalent to the simulator's ok path:
/// authenticated create answers 201, retrieve by id answers 200.
async fn wiremock_server() -> wiremock::MockServer {
    use wiremock::matchers::{header, method, path, path_regex};
    use wiremock::{Mock, ResponseTemplate};
    let server = wiremock::MockServer::builder().start().await;
    let auth = format!("Bearer {CREDENTIAL}");
    Mock::given(method("POST"))
        .and(path(format!("/v1/{RESOURCE}")))
        .and(header("authorization", auth.as_str()))
        .respond_with(ResponseTemplate::new(201).set_body_raw(FIXED_BODY, "application/json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!("^/v1/{RESOURCE}/[^/]+$")))
        .and(header("authorization", auth.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_raw(FIXED_BODY, "application/json"))
        .mount(&server)
        .await;
    server
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_answer_names_an_object_the_client_can_retrieve() {
        assert_eq!(
            crate::client::object_id(FIXED_BODY.as_bytes()).as_deref(),
            Some("tkt_0123456789abcdef")
        );
    }
}

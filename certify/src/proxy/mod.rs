//! `lostreply proxy`: a fault-injecting reverse proxy in front of a real
//! service. It forwards every request to the upstream through the same client
//! as the probes (the contract's allowlist, HTTPS with the same trust), and
//! places the simulator's fault rules relative to the upstream's answer:
//! `before_commit` never forwards, `after_commit` lets the upstream commit and
//! then loses, cuts or replaces its answer. It keeps its own journal and
//! counts effects through the contract's read-back, so that what a client
//! behind it did is judged from outside the service.
//!
//! Map: `rules` (which responses it can make, and matching), `conn` (the
//! client's socket shared between hyper and the faults), `serve` (one
//! request's life), `state` (what requests share), `journal` (its record), `control` (`/_lostreply/`: the
//! journal and the effects counted through the read-back).

mod conn;
mod control;
pub mod journal;
pub mod rules;
mod serve;
mod state;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use lostreply_harness::exit;
use lostreply_simulator::FaultRule;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::client::{Client, ClientError};
use crate::contract::{split_base_url, Contract};
use crate::tls::Trust;
pub use journal::{Entry, Fate, HeldUntil, Journal};
pub use rules::{RuleError, Steps};
pub(crate) use state::carries;

/// Everything a proxy needs to start.
#[derive(Debug)]
pub struct ProxyConfig {
    /// `http://host:port` or `https://host:port` of the service behind the proxy.
    pub upstream: String,
    /// The contract: the allowlist, the key header, the credential header and the read-back.
    pub contract: Contract,
    /// The fault rules, in order (a scenario's `faults`).
    pub faults: Vec<FaultRule>,
    /// The longest a stall or a head without its body holds a connection.
    pub stall_cap: Duration,
    /// The longest a stall released at a step's end holds a request, in
    /// case its step never ends (only a harness run has steps).
    pub hold_cap: Duration,
    /// Port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// Whose CAs an `https://` upstream must be signed by.
    pub trust: Trust,
}

/// Why a proxy does not start. [`ProxyError::exit_code`] is the documented code.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// `--upstream` is not an origin.
    #[error("--upstream {0:?}: expected http://host:port or https://host:port (no path)")]
    BadUpstream(String),
    /// The upstream's host is not in the contract's allowlist.
    #[error("refusing --upstream {url:?}: its host {host:?} is not in the contract's target.allowed_hosts ({allowed})")]
    NotAllowed {
        /// The URL given.
        url: String,
        /// Its host.
        host: String,
        /// The contract's allowlist.
        allowed: String,
    },
    /// A fault rule the proxy cannot make exactly.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// Nothing accepts connections at the upstream's address.
    #[error("the upstream {addr} is unreachable: {why}")]
    Unreachable {
        /// Host and port.
        addr: String,
        /// Why.
        why: String,
    },
    /// The proxy's own port cannot be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {why}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// Why.
        why: String,
    },
    /// For an `https://` upstream: no usable trusted roots, or a failed
    /// handshake (the host and the reason named).
    #[error("the upstream: {0}")]
    Client(ClientError),
}

impl ProxyError {
    /// 2 for bad input (the URL, the allowlist, a rule), 3 for the network
    /// and the machine (unreachable upstream, a failed TLS handshake, a port
    /// in use, no trusted roots).
    pub fn exit_code(&self) -> i32 {
        match self {
            ProxyError::BadUpstream(_) | ProxyError::NotAllowed { .. } | ProxyError::Rule(_) => {
                exit::BAD_INPUT
            }
            ProxyError::Unreachable { .. } | ProxyError::Bind { .. } | ProxyError::Client(_) => {
                exit::ADAPTER_OR_INFRA
            }
        }
    }
}

/// A running proxy.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    upstream: String,
    state: Arc<state::State>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

/// The `--upstream` URL's origin, or why it is not one: checked before the
/// contract is read, which takes the URL as its base URL.
pub fn upstream_origin(url: &str) -> Result<crate::contract::Origin, ProxyError> {
    split_base_url(url.trim_end_matches('/')).ok_or_else(|| ProxyError::BadUpstream(url.to_owned()))
}

/// Checks the configuration, reaches the upstream once (a TCP connection,
/// and the TLS handshake for `https://`), and starts listening, with
/// nobody running steps (`lostreply proxy`).
pub async fn start(config: ProxyConfig) -> Result<Proxy, ProxyError> {
    start_with(config, Steps::Absent).await
}

/// [`start`] for a harness that runs a scenario's steps through the proxy
/// (`lostreply run --upstream`): rules scoped to steps fire in their steps
/// ([`Proxy::begin_step`]), each request's body is kept in the journal for
/// the judge, and a crash point can be armed ([`Proxy::crash_after_commit`]).
pub async fn start_driven(config: ProxyConfig) -> Result<Proxy, ProxyError> {
    start_with(config, Steps::Driven).await
}

async fn start_with(config: ProxyConfig, steps: Steps) -> Result<Proxy, ProxyError> {
    rules::check(&config.faults, steps)?;
    let upstream = config.upstream.trim_end_matches('/').to_owned();
    let origin = upstream_origin(&upstream)?;
    let bare = origin.host.trim_start_matches('[').trim_end_matches(']');
    let allowed = &config.contract.allowed_hosts;
    if !allowed.contains(&origin.host.to_ascii_lowercase())
        && !allowed.contains(&bare.to_ascii_lowercase())
    {
        return Err(ProxyError::NotAllowed {
            url: upstream,
            host: origin.host,
            allowed: allowed.iter().cloned().collect::<Vec<_>>().join(", "),
        });
    }
    // The probes' client, without their budget and rate: every request a
    // client sends through the proxy is forwarded, as the service would see it.
    let client = Client::trusting(
        &upstream,
        config.contract.timeout,
        config.contract.max_response_bytes,
        u32::MAX,
        u32::MAX,
        &config.trust,
    )
    .map_err(ProxyError::Client)?;
    client.reach().await.map_err(|e| match e {
        ClientError::Tls { .. } => ProxyError::Client(e),
        other => ProxyError::Unreachable {
            addr: format!("{}:{}", origin.host, origin.port),
            why: other.to_string(),
        },
    })?;
    let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|e| ProxyError::Bind {
            port: config.port,
            why: e.to_string(),
        })?;
    let local = listener.local_addr().map_err(|e| ProxyError::Bind {
        port: config.port,
        why: e.to_string(),
    })?;
    let state = Arc::new(state::State {
        client,
        contract: config.contract,
        rules: rules::Rules::new(config.faults),
        stall_cap: config.stall_cap,
        hold_cap: config.hold_cap,
        journal: Journal::default(),
        log: std::sync::atomic::AtomicBool::new(false),
        steps,
        step: watch::channel(0).0,
        ended: watch::channel(0).0,
        busy: watch::channel(0).0,
        crash: std::sync::Mutex::new(None),
    });
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(serve::accept(listener, Arc::clone(&state), stopped));
    Ok(Proxy {
        addr: local,
        upstream,
        state,
        stop,
        task,
    })
}

impl Proxy {
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The upstream's origin.
    pub fn upstream(&self) -> &str {
        &self.upstream
    }

    /// The journal so far.
    pub fn journal(&self) -> &Journal {
        &self.state.journal
    }

    /// Writes one line per finished request to stderr (the command line's choice).
    pub fn log_to_stderr(&self) {
        self.state
            .log
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Harness step `step` (from 1) starts: rules scoped to it see the
    /// requests that arrive from now on.
    pub fn begin_step(&self, step: u32) {
        self.state.step.send_replace(step);
    }

    /// The step running ended: no rule scoped to a step matches until the
    /// next, and holds released at its end let go.
    pub fn end_step(&self) {
        let ended = self.state.step.send_replace(0);
        self.state.ended.send_replace(ended);
    }

    /// Waits until no request is being served, apart from those held for a
    /// step that has not ended, or until `bound` passes; true when quiet. A
    /// harness waits for it after each step, so that what a step's end let
    /// go (a held request forwarded, a held answer closed) is done before
    /// the next step starts, as the simulator settles between steps.
    pub async fn wait_quiet(&self, bound: Duration) -> bool {
        let mut busy = self.state.busy.subscribe();
        let quiet = tokio::time::timeout(bound, busy.wait_for(|n| *n == 0)).await;
        quiet.is_ok()
    }

    /// Arms a crash point: the next create whose body carries `marker` and
    /// that the upstream answers with a success sends on `fire` before its
    /// answer leaves, and the answer is then held until its client is gone
    /// (or the stall cap), as the simulator holds a crash step's commit.
    /// Replaces a crash point armed before and never reached.
    pub fn crash_after_commit(&self, marker: &str, fire: tokio::sync::oneshot::Sender<()>) {
        let mut armed = self
            .state
            .crash
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *armed = Some(state::CrashPoint {
            marker: marker.to_owned(),
            fire,
        });
    }

    /// Disarms a crash point that never fired.
    pub fn disarm_crash(&self) {
        let mut armed = self
            .state
            .crash
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *armed = None;
    }

    /// Stops accepting; requests in progress end with their connections.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

//! The soak's clients: keep-alive connections sending a fixed mix of
//! requests (creates on every faulted collection, lookups, replays of a
//! recent key with the same body, and reuses of one with another body),
//! each with an idempotency key, each bounded by a client timeout. Every
//! request counts as sent once hyper has taken it for the wire, so the total
//! can be held against the journal's.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;
use tokio::task::JoinHandle;

use crate::client::{self, classify, Lost, Sender};

/// How long a client waits for a whole answer: past the plan's 5 ms delay,
/// well short of its 1 s stall cap, so a stall or an idle answer is left by
/// the client, as the plan's `client_timeout` says.
pub const CLIENT_TIMEOUT: Duration = Duration::from_millis(250);
/// Creates a client remembers for replays: a replay comes soon after its
/// original, well inside the key's retention however fast the clock moves.
const RECENT: usize = 32;
/// The tenants of the plan's default credentials; one create in
/// `OTHER_TENANT_EVERY` goes to the second.
const TENANTS: [&str; 2] = ["sk_test_a", "sk_test_b"];
const OTHER_TENANT_EVERY: u64 = 8;

/// The plan's collections, each with its fault rule (bench/src/soak/scenario.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Collection {
    /// No fault.
    Tickets,
    /// Committed, then FIN.
    Drops,
    /// Committed, then RST.
    Resets,
    /// Held before the commit, committed once the client left.
    Stalls,
    /// Held before the commit, abandoned once the client left.
    Abandons,
    /// Committed, answered 500.
    Errors,
    /// Refused before the commit with a 503.
    Busy,
    /// Committed, the body cut after 20 bytes.
    Partials,
    /// Committed, answered after 5 ms.
    Delays,
    /// Committed, headers sent, then silence.
    Idles,
}

impl Collection {
    /// Its name in paths.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Tickets => "tickets",
            Collection::Drops => "drops",
            Collection::Resets => "resets",
            Collection::Stalls => "stalls",
            Collection::Abandons => "abandons",
            Collection::Errors => "errors",
            Collection::Busy => "busy",
            Collection::Partials => "partials",
            Collection::Delays => "delays",
            Collection::Idles => "idles",
        }
    }
}

/// What one request of the mix does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A create with a new key in a collection.
    Create(Collection),
    /// `GET /v1/{collection}/{id}` of a recent object.
    Retrieve,
    /// `GET /v1/tickets?client_reference=…` of a recent create.
    Search,
    /// A recent create sent again: same key, same body.
    Replay,
    /// A recent create's key with another body.
    Conflict,
}

impl Action {
    /// Its name in figures.
    pub fn name(self) -> String {
        match self {
            Action::Create(c) => format!("create {}", c.name()),
            Action::Retrieve => "retrieve".to_owned(),
            Action::Search => "search".to_owned(),
            Action::Replay => "replay".to_owned(),
            Action::Conflict => "conflict".to_owned(),
        }
    }
}

/// The mix, in requests per thousand. Holds and stalls are rare: each costs
/// the client its whole timeout, and the soak is a load.
pub const MIX: [(Action, u32); 14] = [
    (Action::Create(Collection::Tickets), 374),
    (Action::Retrieve, 200),
    (Action::Search, 30),
    (Action::Replay, 100),
    (Action::Conflict, 20),
    (Action::Create(Collection::Drops), 50),
    (Action::Create(Collection::Resets), 50),
    (Action::Create(Collection::Errors), 50),
    (Action::Create(Collection::Busy), 50),
    (Action::Create(Collection::Partials), 50),
    (Action::Create(Collection::Delays), 20),
    (Action::Create(Collection::Stalls), 2),
    (Action::Create(Collection::Abandons), 2),
    (Action::Create(Collection::Idles), 2),
];

/// How a request ended, as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seen {
    /// A whole answer with this status.
    Answered(u16),
    /// The connection closed before an answer (FIN).
    Closed,
    /// The connection was reset (RST).
    Reset,
    /// Status and headers came, the body did not end well.
    CutBody,
    /// Nothing whole within [`CLIENT_TIMEOUT`].
    TimedOut,
    /// Any other client error.
    Other,
}

impl Seen {
    /// Its name in figures.
    pub fn name(self) -> String {
        match self {
            Seen::Answered(status) => status.to_string(),
            Seen::Closed => "closed (FIN)".to_owned(),
            Seen::Reset => "reset (RST)".to_owned(),
            Seen::CutBody => "body cut".to_owned(),
            Seen::TimedOut => "timed out".to_owned(),
            Seen::Other => "other error".to_owned(),
        }
    }
}

/// What the clients did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traffic {
    /// Requests hyper took for the wire.
    pub sent: u64,
    /// Requests given up before they were sent (the connection had gone).
    pub not_sent: u64,
    /// Connections opened.
    pub connections: u64,
    /// Connections that could not be opened.
    pub connect_errors: u64,
    /// Sent requests by what they were.
    pub by_action: BTreeMap<Action, u64>,
    /// Sent requests by how they ended.
    pub by_seen: BTreeMap<Seen, u64>,
    /// Replays answered with another object than their original's.
    pub replay_mismatches: u64,
    /// The first such, or the first other error, as text.
    pub first_problem: Option<String>,
}

impl Traffic {
    fn add(&mut self, other: Traffic) {
        self.sent += other.sent;
        self.not_sent += other.not_sent;
        self.connections += other.connections;
        self.connect_errors += other.connect_errors;
        for (k, v) in other.by_action {
            *self.by_action.entry(k).or_default() += v;
        }
        for (k, v) in other.by_seen {
            *self.by_seen.entry(k).or_default() += v;
        }
        self.replay_mismatches += other.replay_mismatches;
        if self.first_problem.is_none() {
            self.first_problem = other.first_problem;
        }
    }

    fn problem(&mut self, text: String) {
        if self.first_problem.is_none() {
            self.first_problem = Some(text);
        }
    }
}

/// A create a client remembers, to replay it or reuse its key.
#[derive(Debug, Clone)]
struct Recent {
    tenant: &'static str,
    collection: Collection,
    key: String,
    body: Bytes,
    n: u64,
    /// The object its answer named, when one came back whole.
    id: Option<String>,
}

/// Starts `clients` clients until `until`; `sent` counts their requests as
/// they go (the memory sampler reads it). Join the handles for the totals.
pub fn start(
    addr: SocketAddr,
    clients: usize,
    until: Instant,
    sent: Arc<AtomicU64>,
) -> Vec<JoinHandle<Traffic>> {
    (0..clients)
        .map(|worker| {
            let sent = sent.clone();
            tokio::spawn(async move { run_client(addr, worker as u64, until, &sent).await })
        })
        .collect()
}

/// Adds up the clients' totals.
pub async fn join(handles: Vec<JoinHandle<Traffic>>) -> Traffic {
    let mut all = Traffic::default();
    for handle in handles {
        match handle.await {
            Ok(traffic) => all.add(traffic),
            Err(e) => all.problem(format!("a client task failed: {e}")),
        }
    }
    all
}

/// A connection and the task that drives it (aborted to close the socket at once).
struct Connection {
    sender: Sender,
    task: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Client {
    addr: SocketAddr,
    worker: u64,
    rng: u64,
    n: u64,
    recent: VecDeque<Recent>,
    traffic: Traffic,
}

async fn run_client(addr: SocketAddr, worker: u64, until: Instant, sent: &AtomicU64) -> Traffic {
    let mut client = Client {
        addr,
        worker,
        // xorshift64*: any non-zero state.
        rng: 0x9E37_79B9_7F4A_7C15 ^ (worker + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9),
        n: 0,
        recent: VecDeque::with_capacity(RECENT),
        traffic: Traffic::default(),
    };
    let mut connection: Option<Connection> = None;
    while Instant::now() < until {
        let live = match connection.as_mut() {
            Some(live) => live,
            None => match client::connect(addr).await {
                Ok((sender, task)) => {
                    client.traffic.connections += 1;
                    connection.insert(Connection { sender, task })
                }
                Err(e) => {
                    client.traffic.connect_errors += 1;
                    client.traffic.problem(e.to_string());
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let action = client.pick();
        let keep = client.one(&mut live.sender, action, sent).await;
        if !keep {
            connection = None;
        }
    }
    client.traffic
}

impl Client {
    fn next_random(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick(&mut self) -> Action {
        let total: u32 = MIX.iter().map(|(_, w)| w).sum();
        let mut at = (self.next_random() % u64::from(total)) as u32;
        for (action, weight) in MIX {
            if at < weight {
                return action;
            }
            at -= weight;
        }
        Action::Create(Collection::Tickets)
    }

    fn recent_one(&mut self) -> Option<Recent> {
        if self.recent.is_empty() {
            return None;
        }
        let i = (self.next_random() % self.recent.len() as u64) as usize;
        self.recent.get(i).cloned()
    }

    /// Sends one request of `action`; false when the connection is done for.
    async fn one(&mut self, sender: &mut Sender, action: Action, sent: &AtomicU64) -> bool {
        let (request, remembered, replay_of) = self.request(action);
        if tokio::time::timeout(CLIENT_TIMEOUT, sender.ready())
            .await
            .map_or(true, |r| r.is_err())
        {
            self.traffic.not_sent += 1;
            return false;
        }
        let started = tokio::time::timeout(CLIENT_TIMEOUT, async {
            let response = sender.send_request(request).await;
            match response {
                Ok(response) => {
                    let status = response.status();
                    match response.into_body().collect().await {
                        Ok(body) => Ok((status, Some(body.to_bytes()))),
                        Err(_) => Ok((status, None)),
                    }
                }
                Err(e) => Err(e),
            }
        })
        .await;
        let seen = match &started {
            Err(_) => Seen::TimedOut,
            Ok(Ok((status, Some(_)))) => Seen::Answered(status.as_u16()),
            Ok(Ok((_, None))) => Seen::CutBody,
            // Taken back before a byte was written: not sent.
            Ok(Err(e)) if e.is_canceled() => {
                self.traffic.not_sent += 1;
                return false;
            }
            Ok(Err(e)) => match classify(e) {
                Lost::Closed => Seen::Closed,
                Lost::Reset => Seen::Reset,
                Lost::Other(text) => {
                    self.traffic.problem(text);
                    Seen::Other
                }
            },
        };
        self.traffic.sent += 1;
        sent.fetch_add(1, Ordering::Relaxed);
        *self.traffic.by_action.entry(action).or_default() += 1;
        *self.traffic.by_seen.entry(seen).or_default() += 1;
        let answered = match started {
            Ok(Ok((status, Some(body)))) => Some((status, body)),
            _ => None,
        };
        self.learn(remembered, replay_of, answered.as_ref());
        matches!(seen, Seen::Answered(_))
    }

    /// The request of `action`: for a create, what to remember of it; for a
    /// replay, which remembered create it repeats.
    fn request(
        &mut self,
        action: Action,
    ) -> (
        http::Request<http_body_util::Full<Bytes>>,
        Option<Recent>,
        Option<String>,
    ) {
        let earlier = match action {
            Action::Retrieve | Action::Search | Action::Replay | Action::Conflict => {
                self.recent_one()
            }
            Action::Create(_) => None,
        };
        match (action, earlier) {
            (Action::Create(collection), _) => {
                let recent = self.new_create(collection);
                let request = self.create(&recent, recent.body.clone());
                (request, Some(recent), None)
            }
            (Action::Replay, Some(earlier)) => {
                let request = self.create(&earlier, earlier.body.clone());
                (request, None, Some(earlier.key))
            }
            (Action::Conflict, Some(earlier)) => {
                let body = Bytes::from(format!(r#"{{"title":"conflict","n":{}}}"#, earlier.n));
                (self.create(&earlier, body), None, None)
            }
            (Action::Retrieve, Some(earlier)) => {
                let path = match &earlier.id {
                    Some(id) => format!("/v1/{}/{id}", earlier.collection.name()),
                    None => "/v1/tickets/tkt_missing".to_owned(),
                };
                (self.lookup(earlier.tenant, &path), None, None)
            }
            (Action::Search, Some(earlier)) => {
                let path = format!(
                    "/v1/tickets?client_reference=ref-{}-{}",
                    self.worker, earlier.n
                );
                (self.lookup(earlier.tenant, &path), None, None)
            }
            // Nothing created yet: a lookup that finds nothing.
            (Action::Retrieve | Action::Search | Action::Replay | Action::Conflict, None) => (
                self.lookup(TENANTS[0], "/v1/tickets/tkt_missing"),
                None,
                None,
            ),
        }
    }

    fn new_create(&mut self, collection: Collection) -> Recent {
        self.n += 1;
        let n = self.n;
        let tenant = if n.is_multiple_of(OTHER_TENANT_EVERY) {
            TENANTS[1]
        } else {
            TENANTS[0]
        };
        let body = if n.is_multiple_of(5) {
            format!(
                r#"{{"title":"soak","n":{n},"worker":{w},"client_reference":"ref-{w}-{n}"}}"#,
                w = self.worker
            )
        } else {
            format!(r#"{{"title":"soak","n":{n},"worker":{}}}"#, self.worker)
        };
        Recent {
            tenant,
            collection,
            key: format!("soak-{}-{n}", self.worker),
            body: Bytes::from(body),
            n,
            id: None,
        }
    }

    fn create(&self, recent: &Recent, body: Bytes) -> http::Request<http_body_util::Full<Bytes>> {
        let path = format!("/v1/{}", recent.collection.name());
        let mut request = client::bare(Method::POST, self.addr, &path, body);
        let headers = request.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(AUTHORIZATION, bearer(recent.tenant));
        if let Ok(key) = HeaderValue::from_str(&recent.key) {
            headers.insert("idempotency-key", key);
        }
        request
    }

    fn lookup(&self, tenant: &str, path: &str) -> http::Request<http_body_util::Full<Bytes>> {
        let mut request = client::bare(Method::GET, self.addr, path, Bytes::new());
        request.headers_mut().insert(AUTHORIZATION, bearer(tenant));
        request
    }

    /// Remembers a new create (and the object its answer named), and holds
    /// a replay's answer against its original's.
    fn learn(
        &mut self,
        remembered: Option<Recent>,
        replay_of: Option<String>,
        answered: Option<&(StatusCode, Bytes)>,
    ) {
        let id = answered
            .filter(|(status, _)| status.is_success())
            .and_then(|(_, body)| client::object_id(body));
        if let Some(mut recent) = remembered {
            recent.id = id;
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(recent);
            return;
        }
        let (Some(key), Some(id)) = (replay_of, id) else {
            return;
        };
        let Some(original) = self.recent.iter_mut().find(|r| r.key == key) else {
            return;
        };
        match &original.id {
            Some(first) if *first != id => {
                self.traffic.replay_mismatches += 1;
                self.traffic.problem(format!(
                    "key {key}: answered {first}, then {id} on a replay"
                ));
            }
            Some(_) => {}
            // The original's answer was lost; the replay tells which object it made.
            None => original.id = Some(id),
        }
    }
}

fn bearer(tenant: &str) -> HeaderValue {
    HeaderValue::from_str(&format!("Bearer {tenant}"))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_per_thousand() {
        assert_eq!(MIX.iter().map(|(_, w)| w).sum::<u32>(), 1000);
    }
}

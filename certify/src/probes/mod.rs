//! The probes: each a named, documented check with its own verdict and
//! evidence. One module per family; [`ALL`] is the order they run and report in.
//!
//! Every probe uses its own markers and keys, derived from the run's seed and
//! the probe's name, so probes never see each other's effects and a run can be
//! reproduced with `--seed`.

mod basic;
mod concurrency;
mod keys;
mod lost;
mod retention;
mod scope;

use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

use crate::client::{Client, ClientError, Request, Response};
use crate::contract::{ContentType, Contract, KeySyntax};
use crate::readback::{self, ReadbackError};
use crate::report::ProbeResult;
use crate::verdict::{Evidence, Verdict};

/// A probe: name, one-line title, and the check.
#[derive(Clone, Copy)]
pub struct Probe {
    /// Stable name (used by `--only` and in reports).
    pub name: &'static str,
    /// What it checks.
    pub title: &'static str,
    run: for<'a> fn(&'a Ctx, &'a mut Trail) -> BoxFuture<'a, Result<(), Stop>>,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe").field("name", &self.name).finish()
    }
}

/// Every probe, in run order. `retention` runs last: it may move the provider's clock.
pub const ALL: [Probe; 13] = [
    Probe { name: "baseline", title: "a keyed create succeeds and the read-back sees exactly one effect", run: |c, t| Box::pin(basic::baseline(c, t)) },
    Probe { name: "sequential_replay", title: "the same key and body again returns the saved result, no second effect", run: |c, t| Box::pin(basic::sequential_replay(c, t)) },
    Probe { name: "replay_fidelity", title: "a replay has the first answer's status and body, and the declared replay marker", run: |c, t| Box::pin(basic::replay_fidelity(c, t)) },
    Probe { name: "lost_response", title: "the answer is lost (connection closed after sending); retries with the same key after each wait leave one effect", run: |c, t| Box::pin(lost::lost_response(c, t)) },
    Probe { name: "concurrent_duplicates", title: "identical keyed requests released together by a barrier leave one effect", run: |c, t| Box::pin(concurrency::concurrent_duplicates(c, t)) },
    Probe { name: "key_reuse_other_args", title: "the same key with other arguments is refused with the declared status, no new effect", run: |c, t| Box::pin(basic::other_args(c, t)) },
    Probe { name: "key_reuse_reordered_args", title: "the same arguments in another key order are a replay, not a mismatch", run: |c, t| Box::pin(basic::reordered_args(c, t)) },
    Probe { name: "in_flight", title: "while the first request runs, the same key (same or other arguments) gets the declared in-flight answer, no second effect", run: |c, t| Box::pin(concurrency::in_flight(c, t)) },
    Probe { name: "other_endpoint", title: "the same key on another endpoint is separate work", run: |c, t| Box::pin(scope::other_endpoint(c, t)) },
    Probe { name: "cross_tenant", title: "the same key from another tenant is separate work and leaks nothing of the first tenant's", run: |c, t| Box::pin(scope::cross_tenant(c, t)) },
    Probe { name: "rejected_not_poisoned", title: "a rejected request does not leave its key unusable", run: |c, t| Box::pin(keys::rejected_not_poisoned(c, t)) },
    Probe { name: "key_validation", title: "missing, malformed and over-long keys get the declared answers", run: |c, t| Box::pin(keys::key_validation(c, t)) },
    Probe { name: "retention", title: "a key still replays within the declared retention (sampled, or by the provider's clock)", run: |c, t| Box::pin(retention::retention(c, t)) },
];

/// The names of every probe, in order.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|p| p.name).collect()
}

/// Why a probe stopped without a verdict of its own (becomes [`Verdict::Error`]).
#[derive(Debug)]
pub struct Stop(pub String);

impl From<ClientError> for Stop {
    fn from(e: ClientError) -> Self {
        Stop(e.to_string())
    }
}

impl From<ReadbackError> for Stop {
    fn from(e: ReadbackError) -> Self {
        Stop(e.to_string())
    }
}

/// What one probe gathers: evidence and findings.
#[derive(Debug, Default)]
pub struct Trail {
    evidence: Vec<Evidence>,
    fails: Vec<String>,
    hard: Vec<String>,
    skipped: Option<String>,
    passed: Vec<String>,
}

impl Trail {
    /// A finding against the contract's declaration.
    pub fn fail(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.note(format!("FAIL: {text}"));
        self.fails.push(text);
    }
    /// A duplicate effect or a leak.
    pub fn hard(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.note(format!("HARD FAIL: {text}"));
        self.hard.push(text);
    }
    /// Something that held.
    pub fn held(&mut self, text: impl Into<String>) {
        self.passed.push(text.into());
    }
    /// A remark.
    pub fn note(&mut self, text: impl Into<String>) {
        self.evidence.push(Evidence::Note { text: text.into() });
    }
    /// The probe does not apply.
    pub fn skip(&mut self, why: impl Into<String>) {
        self.skipped = Some(why.into());
    }
}

/// What every probe shares.
#[derive(Debug)]
pub struct Ctx {
    /// The contract.
    pub contract: Contract,
    /// The bounded client.
    pub client: Client,
    /// The seed of markers and keys.
    pub seed: u64,
}

/// How a create carries its key.
#[derive(Debug, Clone)]
pub enum KeyUse {
    /// No key.
    None,
    /// A key, written in the contract's syntax.
    Key(String),
    /// Exactly this header value (or body field value), for malformed keys.
    Raw(String),
}

impl Ctx {
    fn digest(&self, what: &str, probe: &str, n: u32) -> String {
        let mut h = Sha256::new();
        h.update(self.seed.to_be_bytes());
        h.update(what.as_bytes());
        h.update([0]);
        h.update(probe.as_bytes());
        h.update(n.to_be_bytes());
        h.finalize()
            .iter()
            .take(10)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The n-th marker of a probe: `lrm_` + 20 hex digits.
    pub fn marker(&self, probe: &str, n: u32) -> String {
        format!("lrm_{}", self.digest("marker", probe, n))
    }

    /// The n-th key of a probe: `lrk_` + 20 hex digits.
    pub fn key(&self, probe: &str, n: u32) -> String {
        format!("lrk_{}", self.digest("key", probe, n))
    }

    /// The contract's body with the marker written in.
    pub fn body(&self, marker: &str) -> serde_json::Map<String, serde_json::Value> {
        fill(&self.contract.body, marker)
    }

    /// The body with the `vary` field changed.
    pub fn varied(
        &self,
        body: &serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut out = body.clone();
        if let Some(v) = out.get_mut(&self.contract.vary) {
            let new = match &*v {
                serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                    (Some(i), _) => serde_json::json!(i.saturating_add(1)),
                    (None, Some(f)) => serde_json::json!(f + 1.0),
                    (None, None) => serde_json::json!(1),
                },
                serde_json::Value::String(s) => serde_json::Value::String(format!("{s}-other")),
                other => other.clone(),
            };
            *v = new;
        }
        out
    }

    /// A create request.
    pub fn create(
        &self,
        path: &str,
        body: &serde_json::Map<String, serde_json::Value>,
        key: &KeyUse,
        credential: &str,
    ) -> Request {
        let c = &self.contract;
        let mut headers = vec![(
            c.auth_header.clone(),
            format!("{}{credential}", c.auth_prefix),
        )];
        let mut body = body.clone();
        match (&c.key, key) {
            (_, KeyUse::None) => {}
            (KeySyntax::Token { header }, KeyUse::Key(k)) => {
                headers.push((header.clone(), k.clone()))
            }
            (KeySyntax::SfString { header }, KeyUse::Key(k)) => {
                headers.push((header.clone(), format!("\"{k}\"")))
            }
            (KeySyntax::Token { header } | KeySyntax::SfString { header }, KeyUse::Raw(k)) => {
                headers.push((header.clone(), k.clone()))
            }
            (KeySyntax::BodyField { field }, KeyUse::Key(k) | KeyUse::Raw(k)) => {
                body.insert(field.clone(), serde_json::Value::String(k.clone()));
            }
        }
        let bytes = match c.content_type {
            ContentType::Json => {
                headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
                serde_json::to_vec(&body).unwrap_or_default()
            }
            ContentType::Form => {
                headers.push((
                    "Content-Type".to_owned(),
                    "application/x-www-form-urlencoded".to_owned(),
                ));
                form(&body).into_bytes()
            }
        };
        Request {
            method: c.method.clone(),
            path: path.to_owned(),
            headers,
            body: bytes,
        }
    }

    /// A create on the main path by the primary tenant.
    pub fn create_main(
        &self,
        body: &serde_json::Map<String, serde_json::Value>,
        key: &KeyUse,
    ) -> Request {
        self.create(&self.contract.path, body, key, &self.contract.primary)
    }

    /// Sends, and records the exchange.
    pub async fn send(&self, t: &mut Trail, label: &str, req: &Request) -> Result<Response, Stop> {
        let result = self.client.send(req).await;
        t.evidence.push(exchange(label, req, &result));
        Ok(result?)
    }

    /// Counts the effects carrying `marker` and records the count.
    pub async fn count(&self, t: &mut Trail, marker: &str, expected: usize) -> Result<usize, Stop> {
        let (method, found) =
            readback::count(&self.client, &self.contract, &self.contract.primary, marker).await?;
        t.evidence.push(Evidence::Count {
            marker: marker.to_owned(),
            method: method.name().to_owned(),
            found,
            expected,
        });
        Ok(found)
    }

    /// Whether a status means "created".
    pub fn is_success(&self, status: u16) -> bool {
        self.contract.success.contains(&status)
    }

    /// The created object's id in an answer.
    pub fn id_of(&self, response: &Response) -> Option<String> {
        match response.json()?.pointer(&self.contract.id_at)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// The judgement on the number of effects with one marker, expecting exactly `expected`.
    pub fn judge_count(&self, t: &mut Trail, found: usize, expected: usize, what: &str) {
        if found > expected {
            t.hard(format!(
                "{what}: {found} effects carry the marker, {expected} expected (a duplicate effect)"
            ));
        } else if found < expected {
            t.fail(format!(
                "{what}: {found} effects carry the marker, {expected} expected (an answered create left no effect the read-back can see)"
            ));
        } else {
            t.held(format!("{what}: {found} effect(s), as expected"));
        }
    }
}

/// Records a request and its result as evidence.
pub fn exchange(label: &str, req: &Request, result: &Result<Response, ClientError>) -> Evidence {
    let key = req
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("idempotency-key"))
        .map(|(_, v)| clip(v, 80));
    let (outcome, body) = match result {
        Ok(r) => {
            let replay = r
                .header("idempotent-replayed")
                .map(|v| format!(" (Idempotent-Replayed: {v})"))
                .unwrap_or_default();
            (
                format!("{}{replay} in {} ms", r.status, r.elapsed.as_millis()),
                clip(&String::from_utf8_lossy(&r.body), 300),
            )
        }
        Err(e) => (format!("no answer: {e}"), String::new()),
    };
    Evidence::Exchange {
        label: label.to_owned(),
        request: format!(
            "{} {} {}",
            req.method,
            req.path,
            clip(&String::from_utf8_lossy(&req.body), 200)
        )
        .trim_end()
        .to_owned(),
        key,
        outcome,
        body,
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

fn fill(
    template: &serde_json::Map<String, serde_json::Value>,
    marker: &str,
) -> serde_json::Map<String, serde_json::Value> {
    fn go(v: &serde_json::Value, marker: &str) -> serde_json::Value {
        match v {
            serde_json::Value::String(s) => {
                serde_json::Value::String(s.replace("{marker}", marker))
            }
            serde_json::Value::Array(a) => a.iter().map(|x| go(x, marker)).collect(),
            serde_json::Value::Object(o) => serde_json::Value::Object(
                o.iter().map(|(k, x)| (k.clone(), go(x, marker))).collect(),
            ),
            other => other.clone(),
        }
    }
    template
        .iter()
        .map(|(k, v)| (k.clone(), go(v, marker)))
        .collect()
}

fn form(body: &serde_json::Map<String, serde_json::Value>) -> String {
    body.iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            };
            format!("{}={}", readback::percent(k), readback::percent(&text))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Runs one probe to its result.
pub async fn run_probe(ctx: &Ctx, probe: &Probe) -> ProbeResult {
    let started = Instant::now();
    let mut trail = Trail::default();
    let outcome = (probe.run)(ctx, &mut trail).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    trail.finish(probe.name, probe.title, outcome, duration_ms)
}

impl Trail {
    /// The result of a check that ended with `outcome`: an error when it
    /// stopped, else skipped, hard-failed, failed or passed, in that order.
    pub fn finish(
        mut self,
        name: &str,
        title: &str,
        outcome: Result<(), Stop>,
        duration_ms: u64,
    ) -> ProbeResult {
        let (verdict, summary) = match outcome {
            Err(Stop(why)) => (Verdict::Error, format!("could not conclude: {why}")),
            Ok(()) => {
                if let Some(why) = self.skipped.take() {
                    (Verdict::Skipped, why)
                } else if !self.hard.is_empty() {
                    (Verdict::HardFail, self.hard.join("; "))
                } else if !self.fails.is_empty() {
                    (Verdict::Fail, self.fails.join("; "))
                } else {
                    (Verdict::Pass, self.passed.join("; "))
                }
            }
        };
        ProbeResult {
            name: name.to_owned(),
            title: title.to_owned(),
            verdict,
            summary,
            evidence: self.evidence,
            duration_ms,
        }
    }

    /// Adds a piece of evidence.
    pub fn push(&mut self, evidence: Evidence) {
        self.evidence.push(evidence);
    }
}

/// A probe's own declared wait (never anything else sleeps).
pub async fn wait(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}

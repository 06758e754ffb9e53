//! What every probe shares: the contract, the bounded client and the seed,
//! with the markers, keys and requests derived from them, and the sending and
//! counting that record their evidence on the way.

use std::time::Duration;

use sha2::{Digest, Sha256};

use super::trail::{Stop, Trail};
use crate::client::{Client, ClientError, Request, Response};
use crate::contract::{ContentType, Contract, KeySyntax};
use crate::readback;
use crate::verdict::Evidence;

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
        t.push(exchange(label, req, &result));
        Ok(result?)
    }

    /// Counts the effects carrying `marker` and records the count.
    pub async fn count(&self, t: &mut Trail, marker: &str, expected: usize) -> Result<usize, Stop> {
        let (method, found) =
            readback::count(&self.client, &self.contract, &self.contract.primary, marker).await?;
        t.push(Evidence::Count {
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

pub(super) fn fill(
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

/// A probe's own declared wait (never anything else sleeps).
pub async fn wait(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}

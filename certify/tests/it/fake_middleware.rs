//! A tiny idempotency middleware on 127.0.0.1, with switches where real
//! middlewares differ and the simulator has no mode: whether a rejection is
//! saved under its key, whether a server error after the commit releases the
//! key, what the fingerprint covers, the statuses. One key store for every
//! caller and path (like express-idempotency), no key validation, and a
//! ledger of effects by marker (`/ledger`, `/count?marker=`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a body difference is to the fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp {
    /// The parsed JSON (and the path).
    Canonical,
    /// The bytes (and the path).
    Raw,
    /// Nothing: any request under a used key gets the first answer.
    Off,
    /// Folded into the key (the bytes): a changed body is another key and runs.
    InKey,
}

/// The switches.
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    /// The answer to an amount over 100000 (after the key is claimed).
    pub rejection_status: u16,
    /// The answer to a used key with other arguments.
    pub mismatch_status: u16,
    /// Whether a rejection is saved and replayed for its key.
    pub saves_errors: bool,
    /// Whether `/v1/fails` (commit, then 500) releases its key instead of saving the 500.
    pub releases_on_5xx: bool,
    /// What the fingerprint covers.
    pub fingerprint: Fp,
    /// Whether only the first amount over the limit is rejected (a transient refusal).
    pub rejects_once: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            rejection_status: 422,
            mismatch_status: 422,
            saves_errors: false,
            releases_on_5xx: false,
            fingerprint: Fp::Canonical,
            rejects_once: false,
        }
    }
}

#[derive(Default)]
struct State {
    keys: HashMap<String, (String, u16, String)>,
    effects: Vec<String>,
    requests: u64,
    rejections: u64,
}

/// A running server; it stops when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts one on 127.0.0.1:0.
pub async fn start(behaviour: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(Mutex::new(State::default()));
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, behaviour, state.clone()));
        }
    });
    Server { base_url, task }
}

/// One request per connection, answered and closed.
async fn serve(mut stream: TcpStream, b: Behaviour, state: Arc<Mutex<State>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_len, method, path, key, length) = loop {
        let Ok(n) = stream.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(len)) = req.parse(&buf) {
            let header = |name: &str| {
                req.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned())
            };
            let length = header("content-length").and_then(|v| v.parse().ok());
            break (
                len,
                req.method.unwrap_or("").to_owned(),
                req.path.unwrap_or("").to_owned(),
                header("idempotency-key"),
                length.unwrap_or(0usize),
            );
        }
    };
    while buf.len() < head_len + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buf[head_len..head_len + length]).into_owned();
    let (status, answer) = {
        let mut s = state.lock().unwrap();
        s.requests += 1;
        route(&mut s, b, &method, &path, key, &body)
    };
    let text = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    );
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn route(
    s: &mut State,
    b: Behaviour,
    method: &str,
    path: &str,
    key: Option<String>,
    body: &str,
) -> (u16, String) {
    if method == "GET" && path == "/ledger" {
        let data: Vec<_> = s
            .effects
            .iter()
            .map(|m| serde_json::json!({ "client_reference": m }))
            .collect();
        return (200, serde_json::json!({ "data": data }).to_string());
    }
    if let (true, Some(marker)) = (method == "GET", path.strip_prefix("/count?marker=")) {
        let n = s.effects.iter().filter(|m| *m == marker).count();
        return (200, serde_json::json!({ "effects": n }).to_string());
    }
    if method != "POST" {
        return (404, "{}".to_owned());
    }
    let fingerprint = match b.fingerprint {
        Fp::Canonical => format!(
            "{path} {}",
            serde_json::from_str::<serde_json::Value>(body)
                .map_or_else(|_| body.to_owned(), |v| canonical(&v))
        ),
        Fp::Raw => format!("{path} {body}"),
        Fp::Off | Fp::InKey => String::new(),
    };
    let key = match b.fingerprint {
        Fp::InKey => key.map(|k| format!("{k} {path} {body}")),
        Fp::Canonical | Fp::Raw | Fp::Off => key,
    };
    if let Some((saved_fp, status, answer)) = key.as_ref().and_then(|k| s.keys.get(k)) {
        return if *saved_fp == fingerprint {
            (*status, answer.clone())
        } else {
            (
                b.mismatch_status,
                r#"{"error":"key reused with other arguments"}"#.to_owned(),
            )
        };
    }
    let (status, answer, keep) = work(s, b, path, body);
    if let (Some(k), true) = (key, keep) {
        s.keys.insert(k, (fingerprint, status, answer.clone()));
    }
    (status, answer)
}

/// The handler behind the middleware: the answer, and whether the key keeps it.
fn work(s: &mut State, b: Behaviour, path: &str, body: &str) -> (u16, String, bool) {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let marker = json["client_reference"].as_str().unwrap_or("").to_owned();
    let request = s.requests;
    let over = json["amount"].as_i64().unwrap_or(0) > 100_000;
    if over && !(b.rejects_once && s.rejections > 0) {
        s.rejections += 1;
        let answer = serde_json::json!({ "error": "amount too large", "request": request });
        return (b.rejection_status, answer.to_string(), b.saves_errors);
    }
    s.effects.push(marker.clone());
    if path == "/v1/fails" {
        let answer = serde_json::json!({ "error": "failed after the commit", "request": request });
        return (500, answer.to_string(), !b.releases_on_5xx);
    }
    let id = format!("it_{}", s.effects.len());
    let answer = serde_json::json!({ "id": id, "client_reference": marker });
    (201, answer.to_string(), true)
}

/// JSON with every object's keys sorted: what a canonical fingerprint compares.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(o) => {
            let sorted: std::collections::BTreeMap<_, _> =
                o.iter().map(|(k, x)| (k.clone(), canonical(x))).collect();
            format!("{sorted:?}")
        }
        serde_json::Value::Array(a) => format!("{:?}", a.iter().map(canonical).collect::<Vec<_>>()),
        other => other.to_string(),
    }
}

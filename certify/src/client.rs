//! HTTP/1.1 over raw TCP, bounded everywhere: a request budget, a rate limit,
//! an allowlist (only the contract's origin), a timeout per exchange, and a
//! cap on what is read. Raw TCP because two probes need the connection itself:
//! "abort after sending, before reading" and "release N requests at once"
//! (everything but the last byte is sent first, then the last bytes together).
//! An `https://` base URL gets the same connection inside TLS ([`crate::tls`]),
//! with every one of these abilities kept.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use crate::contract::Scheme;
use crate::tls::{Conn, Tls, TlsFailure, Trust};

/// Most bytes of response head read.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Why an exchange did not produce an answer.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ClientError {
    /// The run's request budget is spent.
    #[error("the request budget ({0}) is spent")]
    BudgetSpent(u32),
    /// The URL is not the contract's origin.
    #[error("refusing {0}: not the contract's base URL")]
    NotAllowed(String),
    /// Connecting, sending or reading failed.
    #[error("{0}")]
    Io(String),
    /// The TLS handshake failed.
    #[error("TLS with {host}: {failure}")]
    Tls {
        /// The host and port.
        host: String,
        /// Why.
        failure: TlsFailure,
    },
    /// No whole answer within the timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The answer is not HTTP/1.1 as we read it, or is too large.
    #[error("unreadable answer: {0}")]
    Nonsense(String),
}

/// A request to send: everything but the host.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Extra headers (credential, key, content type).
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Vec<u8>,
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Real time the exchange took.
    pub elapsed: Duration,
}

impl Response {
    /// The first header of that name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, when it is.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// The client every probe shares.
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    host: String,
    port: u16,
    tls: Option<Tls>,
    timeout: Duration,
    max_body: usize,
    budget: u32,
    sent: AtomicU32,
    interval: Duration,
    next_start: Mutex<Instant>,
}

/// A request sent but for its last byte (for barriers).
#[derive(Debug)]
pub struct Primed {
    stream: Conn,
    last: u8,
    started: Instant,
}

impl Client {
    /// A client for `http://host:port` (or `https://`, trusting the
    /// system's roots) with the contract's bounds.
    pub fn new(
        base_url: &str,
        timeout: Duration,
        max_body: usize,
        budget: u32,
        rate_per_s: u32,
    ) -> Result<Client, ClientError> {
        Client::trusting(
            base_url,
            timeout,
            max_body,
            budget,
            rate_per_s,
            &Trust::System,
        )
    }

    /// The same, trusting `trust`'s CAs when the base URL is `https://`.
    pub fn trusting(
        base_url: &str,
        timeout: Duration,
        max_body: usize,
        budget: u32,
        rate_per_s: u32,
        trust: &Trust,
    ) -> Result<Client, ClientError> {
        let origin = crate::contract::split_base_url(base_url)
            .ok_or_else(|| ClientError::NotAllowed(base_url.to_owned()))?;
        let shown = format!("{}:{}", origin.host, origin.port);
        let tls = match origin.scheme {
            Scheme::Http => None,
            Scheme::Https => {
                Some(
                    Tls::new(&origin.host, trust).map_err(|failure| ClientError::Tls {
                        host: shown,
                        failure,
                    })?,
                )
            }
        };
        Ok(Client {
            inner: Arc::new(Inner {
                host: origin.host,
                port: origin.port,
                tls,
                timeout,
                max_body,
                budget,
                sent: AtomicU32::new(0),
                interval: Duration::from_secs(1) / rate_per_s.max(1),
                next_start: Mutex::new(Instant::now()),
            }),
        })
    }

    /// Requests sent so far (each counted before its first byte).
    pub fn sent(&self) -> u32 {
        self.inner.sent.load(Ordering::SeqCst)
    }

    /// Takes one request from the budget and waits for the rate limit.
    async fn admit(&self, path: &str) -> Result<(), ClientError> {
        if !path.starts_with('/') || path.starts_with("//") {
            return Err(ClientError::NotAllowed(path.to_owned()));
        }
        let n = self.inner.sent.fetch_add(1, Ordering::SeqCst);
        if n >= self.inner.budget {
            self.inner.sent.fetch_sub(1, Ordering::SeqCst);
            return Err(ClientError::BudgetSpent(self.inner.budget));
        }
        let wait = {
            let mut next = self.inner.next_start.lock().await;
            let now = Instant::now();
            let at = (*next).max(now);
            *next = at + self.inner.interval;
            at - now
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        Ok(())
    }

    fn encode(&self, req: &Request) -> Vec<u8> {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\nUser-Agent: lostreply-certify\r\n",
            req.method, req.path, self.inner.host, self.inner.port
        );
        // MCP servers may read `Accept` strictly (it must list both JSON and
        // SSE), so a request's own `Accept` replaces the default, never joins it.
        if !req
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept"))
        {
            head.push_str("Accept: */*\r\n");
        }
        for (name, value) in &req.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !req.body.is_empty() || req.method == "POST" || req.method == "PUT" {
            head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&req.body);
        bytes
    }

    /// A connection to the base URL's host and port, with the TLS handshake
    /// done when it is `https://`; one timeout covers both.
    async fn connect(&self) -> Result<Conn, ClientError> {
        let addr = format!("{}:{}", self.inner.host, self.inner.port);
        let open = async {
            let tcp = TcpStream::connect(&addr)
                .await
                .map_err(|e| ClientError::Io(format!("cannot connect to {addr}: {e}")))?;
            let _ = tcp.set_nodelay(true);
            match &self.inner.tls {
                None => Ok(Conn::Plain(tcp)),
                Some(tls) => tls
                    .handshake(tcp)
                    .await
                    .map_err(|failure| ClientError::Tls {
                        host: addr.clone(),
                        failure,
                    }),
            }
        };
        match tokio::time::timeout(self.inner.timeout, open).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::Timeout(self.inner.timeout)),
        }
    }

    /// Connects (with the TLS handshake for `https://`) and closes without
    /// sending a byte, outside the budget: whether the origin can be reached
    /// at all, for a proxy that must say so before it listens.
    pub async fn reach(&self) -> Result<(), ClientError> {
        self.connect().await.map(drop)
    }

    /// Sends and reads the whole answer.
    pub async fn send(&self, req: &Request) -> Result<Response, ClientError> {
        let primed = self.prime(req).await?;
        self.release(primed).await
    }

    /// Sends everything but the last byte (counted against the budget now).
    pub async fn prime(&self, req: &Request) -> Result<Primed, ClientError> {
        self.admit(&req.path).await?;
        let started = Instant::now();
        let mut bytes = self.encode(req);
        let last = bytes.pop().unwrap_or(b'\n');
        let mut stream = self.connect().await?;
        write_all(&mut stream, &bytes, self.inner.timeout).await?;
        Ok(Primed {
            stream,
            last,
            started,
        })
    }

    /// Sends the last byte and reads the answer.
    pub async fn release(&self, mut primed: Primed) -> Result<Response, ClientError> {
        write_all(&mut primed.stream, &[primed.last], self.inner.timeout).await?;
        let timeout = self.inner.timeout;
        match tokio::time::timeout(
            timeout,
            read_response(&mut primed.stream, self.inner.max_body),
        )
        .await
        {
            Ok(Ok((status, headers, body))) => Ok(Response {
                status,
                headers,
                body,
                elapsed: primed.started.elapsed(),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ClientError::Timeout(timeout)),
        }
    }

    /// Sends the whole request and closes the connection without reading a byte:
    /// the answer, if any, is lost on purpose.
    pub async fn send_and_abort(&self, req: &Request) -> Result<(), ClientError> {
        let primed = self.prime(req).await?;
        let mut stream = primed.stream;
        write_all(&mut stream, &[primed.last], self.inner.timeout).await?;
        // Over TLS the close is announced (`close_notify`), as a TCP close
        // announces itself with FIN: either way the server sees the client gone.
        if matches!(stream, Conn::Tls(_)) {
            let _ = tokio::time::timeout(self.inner.timeout, stream.shutdown()).await;
        }
        drop(stream);
        Ok(())
    }
}

/// Writes and flushes: TLS may hold written bytes in its own buffer, and a
/// primed request must be on the wire (all but its last byte) when priming ends.
async fn write_all(stream: &mut Conn, bytes: &[u8], timeout: Duration) -> Result<(), ClientError> {
    let write = async {
        stream.write_all(bytes).await?;
        stream.flush().await
    };
    match tokio::time::timeout(timeout, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(ClientError::Io(format!("sending: {e}"))),
        Err(_) => Err(ClientError::Timeout(timeout)),
    }
}

type Parsed = (u16, Vec<(String, String)>, Vec<u8>);

/// A response head as read: status, headers (names lowercased), and the
/// bytes read past it (the start of the body).
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    rest: Vec<u8>,
}

impl Head {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.trim().to_ascii_lowercase())
    }
}

async fn read_response(stream: &mut Conn, max_body: usize) -> Result<Parsed, ClientError> {
    let head = read_head(stream).await?;
    if (100..200).contains(&head.status) {
        return Err(ClientError::Nonsense(format!(
            "interim status {} is not supported",
            head.status
        )));
    }
    let chunked = head
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    // A chunked body's length is its chunks': any Content-Length is not read.
    let length = match (chunked, head.header("content-length")) {
        (false, Some(v)) => Some(
            v.parse::<usize>()
                .map_err(|_| ClientError::Nonsense(format!("bad Content-Length {v:?}")))?,
        ),
        (true, _) | (false, None) => None,
    };
    let Head {
        status,
        headers,
        rest,
    } = head;
    let body = if chunked {
        read_chunked(stream, rest, max_body).await?
    } else {
        read_sized(stream, rest, length, max_body).await?
    };
    Ok((status, headers, body))
}

async fn read_some(stream: &mut Conn, chunk: &mut [u8], what: &str) -> Result<usize, ClientError> {
    match stream.read(chunk).await {
        Ok(n) => Ok(n),
        Err(e) if stream.is_unannounced_close(&e) => Ok(0),
        Err(e) => Err(ClientError::Io(format!("{what}: {e}"))),
    }
}

/// Reads until the head is whole (at most [`MAX_HEAD_BYTES`]).
async fn read_head(stream: &mut Conn) -> Result<Head, ClientError> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    loop {
        let n = read_some(stream, &mut chunk, "reading").await?;
        if n == 0 {
            return Err(if buf.is_empty() {
                ClientError::Io("the connection closed without an answer".to_owned())
            } else {
                ClientError::Nonsense("the connection closed inside the response head".to_owned())
            });
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut slots = [httparse::EMPTY_HEADER; 100];
        let mut parsed = httparse::Response::new(&mut slots);
        match parsed.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let status = parsed.code.unwrap_or(0);
                let headers = parsed
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_ascii_lowercase(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect::<Vec<_>>();
                let rest = buf.split_off(len);
                return Ok(Head {
                    status,
                    headers,
                    rest,
                });
            }
            Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
                return Err(ClientError::Nonsense(format!(
                    "response head longer than {MAX_HEAD_BYTES} bytes"
                )))
            }
            Ok(httparse::Status::Partial) => {}
            Err(e) => return Err(ClientError::Nonsense(format!("bad response head: {e}"))),
        }
    }
}

/// A chunked body, decoded, from the bytes already read and the rest of the stream.
async fn read_chunked(
    stream: &mut Conn,
    mut raw: Vec<u8>,
    max_body: usize,
) -> Result<Vec<u8>, ClientError> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(done) = dechunk(&raw, max_body)? {
            return Ok(done);
        }
        let n = read_some(stream, &mut chunk, "reading").await?;
        if n == 0 {
            return Err(ClientError::Nonsense("chunked body cut short".to_owned()));
        }
        raw.extend_from_slice(&chunk[..n]);
        if raw.len() > max_body.saturating_mul(2) + 4096 {
            return Err(ClientError::Nonsense(format!("body over {max_body} bytes")));
        }
    }
}

/// A body of `Content-Length` bytes, or up to the connection's close without one.
async fn read_sized(
    stream: &mut Conn,
    mut body: Vec<u8>,
    length: Option<usize>,
    max_body: usize,
) -> Result<Vec<u8>, ClientError> {
    if let Some(len) = length {
        if len > max_body {
            return Err(ClientError::Nonsense(format!(
                "body of {len} bytes is over the limit of {max_body}"
            )));
        }
    }
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(len) = length {
            if body.len() >= len {
                body.truncate(len);
                return Ok(body);
            }
        }
        let n = read_some(stream, &mut chunk, "reading the body").await?;
        if n == 0 {
            return match length {
                Some(len) => Err(ClientError::Nonsense(format!(
                    "body cut short: {} of {len} bytes",
                    body.len()
                ))),
                None => Ok(body),
            };
        }
        body.extend_from_slice(&chunk[..n]);
        if body.len() > max_body {
            return Err(ClientError::Nonsense(format!("body over {max_body} bytes")));
        }
    }
}

/// The decoded body once the whole chunked stream is there; `None` for more.
fn dechunk(raw: &[u8], max_body: usize) -> Result<Option<Vec<u8>>, ClientError> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let Some(eol) = raw[at..].windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let line = String::from_utf8_lossy(&raw[at..at + eol]);
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ClientError::Nonsense(format!("bad chunk size {size_text:?}")))?;
        at += eol + 2;
        if size == 0 {
            return Ok(Some(out));
        }
        if raw.len() < at + size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&raw[at..at + size]);
        if out.len() > max_body {
            return Err(ClientError::Nonsense(format!("body over {max_body} bytes")));
        }
        at += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks() {
        let raw = b"4\r\nwiki\r\n5\r\npedia\r\n0\r\n\r\n";
        assert_eq!(dechunk(raw, 100), Ok(Some(b"wikipedia".to_vec())));
        assert_eq!(dechunk(b"4\r\nwi", 100), Ok(None));
        assert!(dechunk(b"zz\r\n", 100).is_err());
    }
}

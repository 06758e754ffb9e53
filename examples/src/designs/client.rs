//! Requests to the provider, each under the request's whole-request timeout,
//! with bounded bodies, and a precise account of how an answer was lost.

use std::error::Error as _;
use std::time::Duration;

use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::Common;
use serde_json::Value;

/// Largest response body read. Provider bodies are a few kilobytes (a list
/// holds at most 100 objects); anything larger is not an answer we can trust.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A response that arrived whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Idempotent-Replayed: true`.
    pub replayed: bool,
    /// `Content-Type: application/problem+json`.
    pub problem_json: bool,
    /// The body bytes.
    pub body: Vec<u8>,
}

/// How an answer failed to arrive whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loss {
    /// The timeout ran out; `status` is set when the head had arrived.
    Timeout {
        /// The status of a head that arrived before the body ran out of time.
        status: Option<u16>,
        /// Body bytes that had arrived.
        received: usize,
    },
    /// The connection was reset.
    Reset,
    /// The connection closed before a response head arrived.
    Closed,
    /// The head arrived, then the body stopped short.
    Truncated {
        /// The head's status.
        status: u16,
        /// Body bytes that arrived.
        received: usize,
        /// `Content-Length`, when declared.
        expected: Option<u64>,
    },
    /// The body was larger than [`MAX_BODY_BYTES`].
    TooLarge {
        /// The head's status.
        status: u16,
    },
    /// Anything else the client reported.
    Other(String),
}

/// An answer lost on the way, with the request it belonged to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// `POST /v1/tickets`.
    pub request: String,
    /// How.
    pub loss: Loss,
    /// The timeout in force.
    pub timeout_ms: u64,
}

impl Lost {
    /// One sentence for the evidence.
    pub fn describe(&self) -> String {
        let what = match &self.loss {
            Loss::Timeout { status: None, .. } => {
                format!("no answer within {} ms", self.timeout_ms)
            }
            Loss::Timeout {
                status: Some(status),
                received,
            } => format!(
                "{status} head arrived but the body did not finish within {} ms ({received} bytes)",
                self.timeout_ms
            ),
            Loss::Reset => "connection reset".to_owned(),
            Loss::Closed => "connection closed without a response".to_owned(),
            Loss::Truncated {
                status,
                received,
                expected: Some(expected),
            } => format!("{status} body cut short ({received} of {expected} bytes)"),
            Loss::Truncated {
                status, received, ..
            } => format!("{status} body cut short after {received} bytes"),
            Loss::TooLarge { status } => {
                format!("{status} body larger than {MAX_BODY_BYTES} bytes")
            }
            Loss::Other(detail) => detail.clone(),
        };
        format!("{}: {what}", self.request)
    }
}

/// What one request came to.
pub type Answer = Result<Reply, Lost>;

/// The provider, as one call sees it.
#[derive(Debug, Clone)]
pub struct Provider {
    http: reqwest::Client,
    base_url: String,
    credential: String,
    timeout_ms: u64,
}

impl Provider {
    /// A client whose every request, body included, must finish within the
    /// request's `client_timeout_ms`.
    pub fn new(common: &Common) -> Result<Provider, AdapterFailure> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(common.client_timeout_ms))
            .no_proxy()
            // A connection the provider held or cut is never worth reusing,
            // and a fresh one per request keeps each answer's fate its own.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| AdapterFailure::new(format!("cannot build the HTTP client: {e}")))?;
        Ok(Provider {
            http,
            base_url: common.provider.base_url.trim_end_matches('/').to_owned(),
            credential: common.provider.credential.clone(),
            timeout_ms: common.client_timeout_ms,
        })
    }

    /// `POST /v1/{resource}` with the body and, when given, the key header.
    pub async fn create(&self, resource: &str, body: &Value, key: Option<(&str, &str)>) -> Answer {
        let path = format!("/v1/{resource}");
        let mut request = self
            .http
            .post(format!("{}{path}", self.base_url))
            .bearer_auth(&self.credential)
            .json(body);
        if let Some((header, value)) = key {
            request = request.header(header, value);
        }
        self.exchange(format!("POST {path}"), request).await
    }

    /// `GET {path_and_query}`. Callers build the path only from validated
    /// parts (op ids, provider ids, timestamps), none of which need escaping.
    pub async fn get(&self, path_and_query: &str) -> Answer {
        let request = self
            .http
            .get(format!("{}{path_and_query}", self.base_url))
            .bearer_auth(&self.credential);
        self.exchange(format!("GET {path_and_query}"), request)
            .await
    }

    async fn exchange(&self, label: String, request: reqwest::RequestBuilder) -> Answer {
        let lost = |loss| Lost {
            request: label.clone(),
            loss,
            timeout_ms: self.timeout_ms,
        };
        let mut response = request
            .send()
            .await
            .map_err(|e| lost(loss_before_head(&e)))?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_ascii_lowercase)
        };
        let replayed = header("idempotent-replayed").as_deref() == Some("true");
        let problem_json =
            header("content-type").is_some_and(|t| t.starts_with("application/problem+json"));
        let expected = response.content_length();
        if expected.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return Err(lost(Loss::TooLarge { status }));
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > MAX_BODY_BYTES {
                        return Err(lost(Loss::TooLarge { status }));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) if error.is_timeout() => {
                    return Err(lost(Loss::Timeout {
                        status: Some(status),
                        received: body.len(),
                    }))
                }
                Err(_) => {
                    return Err(lost(Loss::Truncated {
                        status,
                        received: body.len(),
                        expected,
                    }))
                }
            }
        }
        // The client normally reports a short body itself; this catches one
        // that ended cleanly but short of what the head promised.
        if expected.is_some_and(|n| n != body.len() as u64) {
            return Err(lost(Loss::Truncated {
                status,
                received: body.len(),
                expected,
            }));
        }
        Ok(Reply {
            status,
            replayed,
            problem_json,
            body,
        })
    }
}

/// Why no response head arrived.
fn loss_before_head(error: &reqwest::Error) -> Loss {
    if error.is_timeout() {
        return Loss::Timeout {
            status: None,
            received: 0,
        };
    }
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionReset => return Loss::Reset,
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::BrokenPipe => {
                    return Loss::Closed
                }
                _ => {}
            }
        }
        // hyper says this when the peer closed before a response began.
        if cause
            .to_string()
            .contains("closed before message completed")
        {
            return Loss::Closed;
        }
        source = cause.source();
    }
    Loss::Other(chain(error))
}

fn chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

//! The provider client: plain HTTP to the provider's generic API, one bounded
//! request at a time. It reports what came back (or how the answer was lost)
//! and leaves the meaning to [`super::classify`].

use std::error::Error as _;
use std::io;
use std::time::Duration;

use lostreply_harness::protocol::Common;

/// Largest response body the adapter reads; a larger one counts as unreadable.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// A complete HTTP answer: status, the headers that matter, the whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    /// HTTP status.
    pub status: u16,
    /// `Idempotent-Replayed: true` was present.
    pub replayed: bool,
    /// The whole body.
    pub body: Vec<u8>,
}

/// How an answer was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossKind {
    /// The client timeout ran out (request, headers or body).
    Timeout,
    /// The connection could not be opened: the request never left.
    Connect,
    /// The peer aborted the connection (TCP RST).
    Reset,
    /// The connection closed before a complete response.
    Closed,
    /// The body was larger than [`MAX_RESPONSE_BYTES`].
    TooLarge,
}

/// An answer that did not arrive whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// How it was lost.
    pub kind: LossKind,
    /// The status, when headers arrived before the loss.
    pub status: Option<u16>,
    /// The client's own words.
    pub detail: String,
}

impl Lost {
    /// One sentence for the evidence field.
    pub fn describe(&self, timeout_ms: u64) -> String {
        let after_headers = match self.status {
            Some(status) => format!(" after status {status} and headers"),
            None => String::new(),
        };
        match self.kind {
            LossKind::Timeout => format!("timeout after {timeout_ms} ms{after_headers}"),
            LossKind::Connect => format!("could not connect: {}", self.detail),
            LossKind::Reset => format!("connection reset{after_headers}: {}", self.detail),
            LossKind::Closed => format!("connection closed{after_headers}: {}", self.detail),
            LossKind::TooLarge => {
                format!("response body larger than {MAX_RESPONSE_BYTES} bytes{after_headers}")
            }
        }
    }
}

/// What one request produced.
pub type Answer = Result<HttpAnswer, Lost>;

/// A client for one call: the provider's address, our credential, the timeout.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    base_url: reqwest::Url,
    credential: String,
    timeout_ms: u64,
}

/// The client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientBuildError {
    /// `provider.base_url` is not an `http://host:port` URL.
    #[error("provider.base_url {0:?} is not an http(s) URL that can hold a path")]
    BaseUrl(String),
    /// reqwest could not set itself up.
    #[error("cannot build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

impl ProviderClient {
    /// A client for the provider named in a request's common fields.
    pub fn new(common: &Common) -> Result<ProviderClient, ClientBuildError> {
        let http = reqwest::Client::builder()
            // The provider is on loopback; an environment proxy would only get in the way.
            .no_proxy()
            // A fresh connection per request: a connection the provider dropped or
            // reset must not leak into the next request's fate.
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_millis(common.client_timeout_ms))
            .build()?;
        let base_url = reqwest::Url::parse(&common.provider.base_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && !u.cannot_be_a_base())
            .ok_or_else(|| ClientBuildError::BaseUrl(common.provider.base_url.clone()))?;
        Ok(ProviderClient {
            http,
            base_url,
            credential: common.provider.credential.clone(),
            timeout_ms: common.client_timeout_ms,
        })
    }

    /// `{base_url}/v1/{segments...}`, each segment percent-encoded, so an id
    /// from the provider can never address another path.
    fn url(&self, segments: &[&str]) -> reqwest::Url {
        let mut url = self.base_url.clone();
        url.set_query(None);
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().push("v1").extend(segments);
        }
        url
    }

    /// The per-request timeout, for evidence sentences.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    /// `POST /v1/{resource}` with a JSON body and, when given, the key header.
    pub async fn create(
        &self,
        resource: &str,
        body: &serde_json::Value,
        key: Option<(&str, &str)>,
    ) -> Answer {
        let mut request = self
            .http
            .post(self.url(&[resource]))
            .bearer_auth(&self.credential)
            .json(body);
        if let Some((header, key)) = key {
            request = request.header(header, key);
        }
        self.send(request).await
    }

    /// `GET /v1/{resource}/{id}`.
    pub async fn retrieve(&self, resource: &str, id: &str) -> Answer {
        let request = self
            .http
            .get(self.url(&[resource, id]))
            .bearer_auth(&self.credential);
        self.send(request).await
    }

    /// `GET /v1/{resource}?<query>` (search or list).
    pub async fn query(&self, resource: &str, query: &[(&str, &str)]) -> Answer {
        let request = self
            .http
            .get(self.url(&[resource]))
            .bearer_auth(&self.credential)
            .query(query);
        self.send(request).await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        // reqwest's own timeout covers the body too; the outer one makes "the
        // whole answer within the timeout" hold whatever the client does.
        let budget = Duration::from_millis(self.timeout_ms);
        let mut status = None;
        let exchange = async {
            let mut response = request.send().await.map_err(|e| lost(&e, None))?;
            let code = response.status().as_u16();
            status = Some(code);
            let replayed = response
                .headers()
                .get("idempotent-replayed")
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| lost(&e, Some(code)))? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(Lost {
                        kind: LossKind::TooLarge,
                        status: Some(code),
                        detail: String::new(),
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(HttpAnswer {
                status: code,
                replayed,
                body,
            })
        };
        let finished = tokio::time::timeout(budget, exchange).await;
        match finished {
            Ok(answer) => answer,
            Err(_elapsed) => Err(Lost {
                kind: LossKind::Timeout,
                status,
                detail: String::new(),
            }),
        }
    }
}

/// Names the way a reqwest error lost the answer.
pub(crate) fn lost(error: &reqwest::Error, status: Option<u16>) -> Lost {
    let kind = if error.is_timeout() {
        LossKind::Timeout
    } else if error.is_connect() {
        LossKind::Connect
    } else if caused_by_reset(error) {
        LossKind::Reset
    } else {
        LossKind::Closed
    };
    Lost {
        kind,
        status,
        detail: error_chain(error),
    }
}

fn caused_by_reset(error: &reqwest::Error) -> bool {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            if io.kind() == io::ErrorKind::ConnectionReset {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

/// The error and its causes on one line, without the URL (it adds nothing the
/// journal does not show).
fn error_chain(error: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        parts.push(cause.to_string());
        source = cause.source();
    }
    if parts.is_empty() {
        error.to_string()
    } else {
        parts.join(": ")
    }
}

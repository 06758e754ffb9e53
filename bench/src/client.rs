//! The load client: hyper's low-level HTTP/1.1 client, one connection per
//! task, so that the client costs as little as possible and the same for every
//! server. It speaks just enough of the provider API, on the generic wire or
//! on Stripe's: create, then retrieve.

use std::error::Error as _;
use std::net::SocketAddr;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderValue, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::Error;

/// The collection every benchmark creates in.
pub const RESOURCE: &str = "tickets";
/// The collection creates go to on Stripe's wire.
pub const STRIPE_RESOURCE: &str = "customers";
/// The adapter tenant's credential in the simulator's default plan.
pub const CREDENTIAL: &str = "sk_test_a";

/// The wire a server speaks, and so the requests the client sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wire {
    /// The generic provider API: JSON tickets, a create answered 201.
    Generic,
    /// The simulator's Stripe profile: form-encoded customers, a create answered 200.
    Stripe,
}

impl Wire {
    /// The name in tables and JSON lines.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Generic => "generic",
            Wire::Stripe => "stripe",
        }
    }

    /// The collection a create posts to.
    pub fn create_path(self) -> String {
        match self {
            Wire::Generic => format!("/v1/{RESOURCE}"),
            Wire::Stripe => format!("/v1/{STRIPE_RESOURCE}"),
        }
    }

    /// The status a committed create answers.
    pub fn created_status(self) -> StatusCode {
        match self {
            Wire::Generic => StatusCode::CREATED,
            Wire::Stripe => StatusCode::OK,
        }
    }

    fn content_type(self) -> HeaderValue {
        match self {
            Wire::Generic => HeaderValue::from_static("application/json"),
            Wire::Stripe => HeaderValue::from_static("application/x-www-form-urlencoded"),
        }
    }

    /// A create's body with distinct arguments `n`: a ticket as JSON, or a
    /// customer as stripe-python writes one (bracket notation for metadata).
    pub fn create_body(self, n: u64) -> String {
        match self {
            Wire::Generic => format!(r#"{{"title":"bench","n":{n}}}"#),
            Wire::Stripe => {
                format!("email=bench{n}%40x.io&name=Bench&metadata[operation_id]=op-{n}")
            }
        }
    }
}

/// Where requests go, with the headers every request carries built once.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server's address.
    pub addr: SocketAddr,
    /// What the server speaks.
    pub wire: Wire,
    host: HeaderValue,
    auth: HeaderValue,
    content_type: HeaderValue,
    create_path: String,
}

impl Target {
    /// The generic provider API at `addr`, as the default tenant.
    pub fn new(addr: SocketAddr) -> Target {
        Target::speaking(addr, Wire::Generic)
    }

    /// The provider API at `addr` on `wire`, as the default tenant.
    pub fn speaking(addr: SocketAddr, wire: Wire) -> Target {
        Target {
            addr,
            wire,
            host: HeaderValue::from_str(&addr.to_string())
                .unwrap_or_else(|_| HeaderValue::from_static("127.0.0.1")),
            auth: HeaderValue::from_str(&format!("Bearer {CREDENTIAL}"))
                .unwrap_or_else(|_| HeaderValue::from_static("")),
            content_type: wire.content_type(),
            create_path: wire.create_path(),
        }
    }
}

/// One client connection's request half.
pub type Sender = SendRequest<Full<Bytes>>;

/// Opens a keep-alive HTTP/1.1 connection; the returned task drives it and
/// ends when the connection does.
pub async fn connect(addr: SocketAddr) -> Result<(Sender, JoinHandle<()>), Error> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| Error::Io(format!("connect {addr}"), e))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Error::Http("handshake".to_owned(), e))?;
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok((sender, task))
}

/// `POST /v1/tickets` (or `/v1/customers` on Stripe's wire) with distinct
/// arguments `n`; returns the status and the body.
pub async fn create(
    sender: &mut Sender,
    target: &Target,
    n: u64,
) -> Result<(StatusCode, Bytes), hyper::Error> {
    let body = target.wire.create_body(n);
    let mut request = Request::new(Full::new(Bytes::from(body)));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = path_uri(&target.create_path);
    let headers = request.headers_mut();
    headers.insert(HOST, target.host.clone());
    headers.insert(AUTHORIZATION, target.auth.clone());
    headers.insert(CONTENT_TYPE, target.content_type.clone());
    send(sender, request).await
}

/// `GET /v1/tickets/{id}` (or `/v1/customers/{id}`); returns the status and the body.
pub async fn retrieve(
    sender: &mut Sender,
    target: &Target,
    id: &str,
) -> Result<(StatusCode, Bytes), hyper::Error> {
    let mut request = Request::new(Full::new(Bytes::new()));
    *request.uri_mut() = path_uri(&format!("{}/{id}", target.create_path));
    let headers = request.headers_mut();
    headers.insert(HOST, target.host.clone());
    headers.insert(AUTHORIZATION, target.auth.clone());
    send(sender, request).await
}

/// `GET path` (a control API path, say) with no credential; returns the status and the body.
pub async fn get(
    sender: &mut Sender,
    addr: SocketAddr,
    path: &str,
) -> Result<(StatusCode, Bytes), hyper::Error> {
    send(sender, bare(http::Method::GET, addr, path, Bytes::new())).await
}

/// `POST path` with a JSON body and no credential; returns the status and the body.
pub async fn post(
    sender: &mut Sender,
    addr: SocketAddr,
    path: &str,
    body: Bytes,
) -> Result<(StatusCode, Bytes), hyper::Error> {
    let mut request = bare(http::Method::POST, addr, path, body);
    request
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    send(sender, request).await
}

/// A request with only a `Host` header, for the caller to add to.
pub fn bare(
    method: http::Method,
    addr: SocketAddr,
    path: &str,
    body: Bytes,
) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(body));
    *request.method_mut() = method;
    *request.uri_mut() = path_uri(path);
    if let Ok(host) = HeaderValue::from_str(&addr.to_string()) {
        request.headers_mut().insert(HOST, host);
    }
    request
}

/// Sends one request on a ready connection and reads its whole body.
pub async fn send(
    sender: &mut Sender,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), hyper::Error> {
    sender.ready().await?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

fn path_uri(path: &str) -> http::Uri {
    // Ids come from the server; one that is not a valid path segment fails the
    // retrieve with a 404 rather than panicking here.
    path.parse()
        .unwrap_or_else(|_| http::Uri::from_static("/invalid"))
}

/// The `id` of a provider object in a response body.
pub fn object_id(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value.get("id")?.as_str().map(str::to_owned)
}

/// How a request whose response was lost ended, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    /// The connection closed before any response byte (FIN).
    Closed,
    /// The connection was aborted (RST: `ECONNRESET`).
    Reset,
    /// Anything else (the text says what).
    Other(String),
}

/// Reads a client error: an `ECONNRESET` anywhere in its causes is a reset;
/// otherwise hyper's "connection closed before message completed" is a FIN.
pub fn classify(err: &hyper::Error) -> Lost {
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionReset {
                return Lost::Reset;
            }
        }
        source = cause.source();
    }
    if err.is_incomplete_message() {
        Lost::Closed
    } else {
        Lost::Other(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ids_are_read_from_objects() {
        assert_eq!(
            object_id(br#"{"id":"tkt_1","status":"succeeded"}"#).as_deref(),
            Some("tkt_1")
        );
        assert_eq!(object_id(b"{}"), None);
        assert_eq!(object_id(b"not json"), None);
    }
}

//! What every request through the proxy shares, and the answers of the
//! proxy's own, apart from one request's life (`serve`) and the control API
//! (`control`) so that both read them without reaching into each other.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::HeaderValue;
use hyper::{Response, StatusCode};

use super::journal::Journal;
use super::rules::Rules;
use crate::client::Client;
use crate::contract::Contract;

/// What every request shares.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) client: Client,
    pub(crate) contract: Contract,
    pub(crate) rules: Rules,
    pub(crate) stall_cap: Duration,
    pub(crate) journal: Journal,
    pub(crate) log: AtomicBool,
}

/// A JSON answer of the proxy's own.
pub(crate) fn json(status: StatusCode, body: &serde_json::Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON error of the proxy's own.
pub(crate) fn plain(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    json(status, &serde_json::json!({"error": {"message": message}}))
}

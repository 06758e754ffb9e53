//! What every request through the proxy shares, and the answers of the
//! proxy's own, apart from one request's life (`serve`) and the control API
//! (`control`) so that both read them without reaching into each other.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::HeaderValue;
use hyper::{Response, StatusCode};

use tokio::sync::{oneshot, watch};

use super::journal::Journal;
use super::rules::{Rules, Steps};
use crate::client::Client;
use crate::contract::Contract;

/// What every request shares.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) client: Client,
    pub(crate) contract: Contract,
    pub(crate) rules: Rules,
    pub(crate) stall_cap: Duration,
    pub(crate) hold_cap: Duration,
    pub(crate) journal: Journal,
    pub(crate) log: AtomicBool,
    /// Who runs steps: nobody (the command line), or a harness run.
    pub(crate) steps: Steps,
    /// The step running now (0: none), as the harness says.
    pub(crate) step: watch::Sender<u32>,
    /// The last step that ended (0: none yet).
    pub(crate) ended: watch::Sender<u32>,
    /// Requests being served, less those held for a step that has not
    /// ended: 0 when the proxy is quiet.
    pub(crate) busy: watch::Sender<usize>,
    /// A crash point armed by the harness: the create carrying this marker
    /// fires it once the upstream has committed it.
    pub(crate) crash: Mutex<Option<CrashPoint>>,
}

/// A harness's `crash` step: when the upstream commits the create whose body
/// carries `marker`, `fire` tells the harness to kill its caller, and the
/// answer is held until that caller is gone.
#[derive(Debug)]
pub(crate) struct CrashPoint {
    pub(crate) marker: String,
    pub(crate) fire: oneshot::Sender<()>,
}

impl State {
    /// The step running now (0: none).
    pub(crate) fn current_step(&self) -> u32 {
        *self.step.borrow()
    }

    /// Waits until harness step `step` has ended. Meanwhile the request is
    /// not busy: it waits for the harness, which waits for quiet.
    pub(crate) async fn step_ended(&self, step: u32) {
        let mut ended = self.ended.subscribe();
        self.busy.send_modify(|n| *n = n.saturating_sub(1));
        let _ = ended.wait_for(|last| *last >= step).await;
        self.busy.send_modify(|n| *n += 1);
    }

    /// Takes the armed crash point when `body` carries its marker.
    pub(crate) fn crash_for(&self, body: &[u8]) -> Option<CrashPoint> {
        let mut armed = self
            .crash
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let carries = armed
            .as_ref()
            .is_some_and(|point| carries(body, point.marker.as_bytes()));
        if carries {
            armed.take()
        } else {
            None
        }
    }
}

/// One request being served, counted in [`State::busy`] while it lives.
pub(crate) struct Busy<'a>(&'a State);

impl<'a> Busy<'a> {
    pub(crate) fn of(state: &'a State) -> Busy<'a> {
        state.busy.send_modify(|n| *n += 1);
        Busy(state)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Whether `needle` occurs in `haystack`: a body carries a marker.
pub(crate) fn carries(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
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

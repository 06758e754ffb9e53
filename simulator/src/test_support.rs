//! Unit-test support: a connection over tokio-test's scripted stream instead
//! of a socket, and a simulator's shared state with one journaled request, so
//! the connection and body code runs without a listener. The real-socket
//! tests (`tests/`) prove what reaches a client (FIN, RST, cut bodies); these
//! prove the logic in between, one poll at a time.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{oneshot, watch};
use tokio_test::io::Mock;

use crate::body::FateSink;
use crate::conn::{Conn, Ending, SharedSocket};
use crate::plan::Plan;
use crate::record::{JournalEntry, ResponseFate};
use crate::shared::Shared;
use crate::store::Store;
use crate::sync::lock;

/// A [`SharedSocket`] that follows a tokio-test script: reads return what the
/// script says the client sends, writes must be exactly what it expects (a
/// write it does not expect panics, and so does dropping it with expected
/// bytes unwritten).
///
/// The mock wakes one reader at a time, so unlike a `TcpStream` a hold must
/// not wait on it while hyper reads too; no test does.
#[derive(Debug)]
pub(crate) struct ScriptedSocket {
    mock: Mutex<Mock>,
    fins: AtomicUsize,
}

impl ScriptedSocket {
    /// How many times the write half was closed.
    pub(crate) fn fins(&self) -> usize {
        self.fins.load(Ordering::SeqCst)
    }

    fn poll_mock<T>(&self, poll: impl FnOnce(Pin<&mut Mock>) -> Poll<T>) -> Poll<T> {
        poll(Pin::new(&mut *lock(&self.mock)))
    }
}

impl SharedSocket for ScriptedSocket {
    fn poll_read_shared(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.poll_mock(|mock| mock.poll_read(cx, buf))
    }

    fn poll_write_shared(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_mock(|mock| mock.poll_write(cx, data))
    }

    fn poll_write_vectored_shared(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_mock(|mock| mock.poll_write_vectored(cx, bufs))
    }

    async fn until_client_leaves(&self) {
        let mut scratch = [0u8; 4096];
        loop {
            let read = std::future::poll_fn(|cx| {
                let mut buf = ReadBuf::new(&mut scratch);
                self.poll_read_shared(cx, &mut buf)
                    .map_ok(|()| buf.filled().len())
            })
            .await;
            match read {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    }

    fn has_left(&self) -> bool {
        // A script has no kernel to ask ahead of its reads; the tests that
        // need a client who left use real sockets.
        false
    }

    fn shutdown_write(&self) -> io::Result<()> {
        self.fins.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A connection over `mock`, and the receiver of the ending a fault asks for.
pub(crate) fn scripted_conn(mock: Mock) -> (Arc<Conn<ScriptedSocket>>, oneshot::Receiver<Ending>) {
    Conn::new(ScriptedSocket {
        mock: Mutex::new(mock),
        fins: AtomicUsize::new(0),
    })
}

/// A simulator's shared state (default plan) with one request journaled, in
/// progress.
pub(crate) struct OneRequest {
    pub shared: Arc<Shared>,
    /// Keep it: a dropped sender reads as "shutting down".
    pub shutdown: watch::Sender<bool>,
    pub seq: u64,
}

impl OneRequest {
    pub(crate) fn new() -> OneRequest {
        let plan = Plan::default();
        let store = Store::new(plan.seed);
        let (shutdown, shutdown_rx) = watch::channel(false);
        // No MCP plan here: the clock moves nothing of the MCP face's.
        let shared = Arc::new(Shared::new(plan, store, shutdown_rx, None, None, |_, _| {}));
        let entry = JournalEntry {
            seq: 0,
            at_ms: shared.state().now_ms,
            real_start_ms: 0,
            real_end_ms: None,
            tenant: None,
            method: "GET".into(),
            path: "/v1/things".into(),
            query: None,
            kind: None,
            resource: None,
            idempotency_key: None,
            fingerprint: None,
            fault: None,
            effect: None,
            replayed: false,
            step: None,
            rpc: None,
            fate: ResponseFate::InProgress,
        };
        let seq = shared.state().journal.push(entry);
        OneRequest {
            shared,
            shutdown,
            seq,
        }
    }

    /// Where a body answering this request with `status` records its fate.
    pub(crate) fn sink(&self, status: u16) -> FateSink {
        FateSink {
            shared: self.shared.clone(),
            seq: self.seq,
            status,
        }
    }

    /// How the journal says this request's response ended.
    pub(crate) fn fate(&self) -> Option<ResponseFate> {
        let state = self.shared.state();
        state.journal.fate(self.seq).cloned()
    }
}

//! Response bodies that know how their response ended: complete, cut after N
//! bytes (`partial`), or never sent after the headers (`idle`). Each records
//! its fate in the journal from what hyper actually pulled and flushed.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use hyper::body::{Body, Frame, SizeHint};
use tokio::net::TcpStream;

use crate::conn::{hold_until_client_leaves, Conn, HoldEnd, SharedSocket};
use crate::record::ResponseFate;
use crate::shared::Shared;

/// Where a body reports its fate.
#[derive(Debug, Clone)]
pub(crate) struct FateSink {
    pub shared: Arc<Shared>,
    pub seq: u64,
    pub status: u16,
}

impl FateSink {
    fn record(&self, fate: ResponseFate) {
        self.shared.finish(self.seq, fate);
    }
}

enum Mode {
    /// The whole body.
    Full,
    /// `data` is the first N bytes; after they are flushed, the body fails and
    /// hyper closes the connection.
    Partial { flushes_before: Option<u64> },
    /// Nothing after the headers until the client leaves or the cap runs out.
    Idle {
        hold: Option<BoxFuture<'static, HoldEnd>>,
    },
}

/// A response body with fault behaviour and fate recording.
pub(crate) struct FaultBody<S = TcpStream> {
    data: Bytes,
    full_len: u64,
    handed: u64,
    mode: Mode,
    conn: Arc<Conn<S>>,
    sink: Option<FateSink>,
}

impl<S> std::fmt::Debug for FaultBody<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultBody")
            .field("full_len", &self.full_len)
            .finish_non_exhaustive()
    }
}

impl<S> FaultBody<S> {
    pub(crate) fn full(data: Bytes, conn: Arc<Conn<S>>, sink: FateSink) -> FaultBody<S> {
        FaultBody {
            full_len: data.len() as u64,
            data,
            handed: 0,
            mode: Mode::Full,
            conn,
            sink: Some(sink),
        }
    }

    /// The first `bytes` bytes of `data`. A cut at or beyond the end sends it whole.
    pub(crate) fn partial(
        data: Bytes,
        bytes: usize,
        conn: Arc<Conn<S>>,
        sink: FateSink,
    ) -> FaultBody<S> {
        if bytes >= data.len() {
            return FaultBody::full(data, conn, sink);
        }
        let full_len = data.len() as u64;
        FaultBody {
            data: data.slice(..bytes),
            full_len,
            handed: 0,
            mode: Mode::Partial {
                flushes_before: None,
            },
            conn,
            sink: Some(sink),
        }
    }

    pub(crate) fn idle(data: Bytes, conn: Arc<Conn<S>>, sink: FateSink) -> FaultBody<S> {
        FaultBody {
            full_len: data.len() as u64,
            data: Bytes::new(),
            handed: 0,
            mode: Mode::Idle { hold: None },
            conn,
            sink: Some(sink),
        }
    }

    fn record(&mut self, fate: ResponseFate) {
        if let Some(sink) = self.sink.take() {
            sink.record(fate);
        }
    }

    fn status(&self) -> u16 {
        self.sink.as_ref().map_or(0, |s| s.status)
    }

    fn cut(reason: &str) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        Poll::Ready(Some(Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            reason.to_owned(),
        ))))
    }
}

impl<S: SharedSocket> Body for FaultBody<S> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        if !this.data.is_empty() {
            let chunk = std::mem::take(&mut this.data);
            this.handed += chunk.len() as u64;
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        match &mut this.mode {
            Mode::Full => Poll::Ready(None),
            Mode::Partial { flushes_before } => {
                // Fail only once hyper has flushed the bytes handed over: failing
                // earlier could close the connection with them still buffered.
                let before = *flushes_before.get_or_insert_with(|| this.conn.flushes());
                this.conn.register_flush_waker(cx);
                if this.conn.flushes() <= before {
                    return Poll::Pending;
                }
                let fate = ResponseFate::Truncated {
                    status: this.status(),
                    bytes: this.handed as usize,
                };
                this.record(fate);
                Self::cut("partial fault: response cut")
            }
            Mode::Idle { hold } => {
                let hold = hold.get_or_insert_with(|| {
                    let conn = this.conn.clone();
                    let (cap, shutdown) = match &this.sink {
                        Some(sink) => (
                            sink.shared.plan.limits.stall_cap,
                            sink.shared.shutdown.clone(),
                        ),
                        None => (
                            std::time::Duration::ZERO,
                            tokio::sync::watch::channel(true).1,
                        ),
                    };
                    async move { hold_until_client_leaves(&conn, cap, shutdown).await }.boxed()
                });
                let Poll::Ready(end) = hold.poll_unpin(cx) else {
                    return Poll::Pending;
                };
                let client_left = match end {
                    HoldEnd::ClientLeft => true,
                    HoldEnd::Cap | HoldEnd::Shutdown => false,
                };
                let fate = ResponseFate::Idle {
                    status: this.status(),
                    client_left,
                };
                this.record(fate);
                Self::cut("idle fault: response abandoned")
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self.mode {
            Mode::Full => self.data.is_empty(),
            Mode::Partial { .. } | Mode::Idle { .. } => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        // The full length, so the client knows the body it got is incomplete.
        SizeHint::with_exact(self.full_len.saturating_sub(self.handed))
    }
}

impl<S> Drop for FaultBody<S> {
    fn drop(&mut self) {
        // hyper drops the body as soon as it has written all of it, or when the
        // connection dies under it.
        let status = self.status();
        let fate = match self.mode {
            Mode::Full if self.handed == self.full_len => ResponseFate::Sent { status },
            Mode::Full | Mode::Partial { .. } => ResponseFate::Truncated {
                status,
                bytes: self.handed as usize,
            },
            Mode::Idle { .. } => ResponseFate::Idle {
                status,
                client_left: true,
            },
        };
        self.record(fate);
    }
}

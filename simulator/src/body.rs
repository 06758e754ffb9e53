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

/// What every response the simulator serves carries: a provider answer's
/// own body, or anything else (control API, MCP streams) as axum's boxed
/// `Body`. Not a `Body` for all: boxing each `/v1` answer would cost an
/// allocation and a dynamic call per frame on every request.
pub(crate) type ServedBody = http_body_util::Either<FaultBody, axum::body::Body>;

/// A response as the simulator serves it.
pub(crate) type Served = http::Response<ServedBody>;

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
pub(crate) struct FaultBody<S: SharedSocket = TcpStream> {
    data: Bytes,
    full_len: u64,
    handed: u64,
    mode: Mode,
    conn: Arc<Conn<S>>,
    sink: Option<FateSink>,
}

impl<S: SharedSocket> std::fmt::Debug for FaultBody<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultBody")
            .field("full_len", &self.full_len)
            .finish_non_exhaustive()
    }
}

impl<S: SharedSocket> FaultBody<S> {
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
                    bytes: u32::try_from(this.handed).unwrap_or(u32::MAX),
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

impl<S: SharedSocket> Drop for FaultBody<S> {
    fn drop(&mut self) {
        // hyper drops the body as soon as it has written all of it, or when the
        // connection dies under it.
        let status = self.status();
        let fate = match self.mode {
            Mode::Full if self.handed == self.full_len => ResponseFate::Sent {
                status,
                client_left: self.conn.stream.has_left(),
            },
            Mode::Full | Mode::Partial { .. } => ResponseFate::Truncated {
                status,
                bytes: u32::try_from(self.handed).unwrap_or(u32::MAX),
            },
            Mode::Idle { .. } => ResponseFate::Idle {
                status,
                client_left: true,
            },
        };
        self.record(fate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::FaultIo;
    use crate::sync::lock;
    use crate::test_support::{scripted_conn, OneRequest, ScriptedSocket};
    use http_body_util::BodyExt;
    use hyper::server::conn::http1;
    use hyper_util::rt::TokioIo;
    use std::sync::Mutex;
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;
    use tokio_test::io::Builder;
    use tokio_test::{assert_pending, assert_ready, task};

    const REQUEST: &[u8] = b"GET /v1/things/obj_1 HTTP/1.1\r\nhost: provider\r\n\r\n";
    const BODY: &[u8] = b"0123456789";
    /// hyper's head for `BODY`: the full length, whatever part of it is sent.
    const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n";

    /// Serves one connection with hyper as `server.rs` does (its hyper
    /// settings, `FaultIo` under it), answering every request with `body`.
    async fn serve_one(
        conn: Arc<Conn<ScriptedSocket>>,
        body: FaultBody<ScriptedSocket>,
    ) -> Result<(), hyper::Error> {
        let body = Mutex::new(Some(body));
        let service = hyper::service::service_fn(move |_request| {
            let body = lock(&body).take();
            async move {
                body.map(hyper::Response::new)
                    .ok_or_else(|| io::Error::other("one response only"))
            }
        });
        let served = http1::Builder::new()
            .half_close(true)
            .auto_date_header(false)
            .serve_connection(TokioIo::new(FaultIo::new(conn)), service);
        tokio::time::timeout(Duration::from_secs(10), served)
            .await
            .unwrap_or_else(|_| panic!("hyper never finished with the connection"))
    }

    #[tokio::test]
    async fn a_full_body_writes_everything() {
        let mut wire = HEAD.to_vec();
        wire.extend_from_slice(BODY);
        // The client sends one request and closes after the answer.
        let mock = Builder::new().read(REQUEST).write(&wire).build();
        let (conn, _ending) = scripted_conn(mock);
        let request = OneRequest::new();
        let body = FaultBody::full(Bytes::from_static(BODY), conn.clone(), request.sink(200));

        serve_one(conn.clone(), body)
            .await
            .expect("a full answer ends the connection cleanly");
        assert_eq!(
            request.fate(),
            Some(ResponseFate::Sent {
                status: 200,
                client_left: false
            })
        );
        assert_eq!(conn.stream.fins(), 1);
    }

    #[tokio::test]
    async fn a_partial_body_writes_exactly_n_bytes_then_ends() {
        let mut wire = HEAD.to_vec();
        wire.extend_from_slice(&BODY[..4]);
        // Any byte past the fourth would be a write the script does not expect.
        let mock = Builder::new().read(REQUEST).write(&wire).build();
        let (conn, _ending) = scripted_conn(mock);
        let request = OneRequest::new();
        let body = FaultBody::partial(Bytes::from_static(BODY), 4, conn.clone(), request.sink(200));

        let served = serve_one(conn.clone(), body).await;
        assert!(served.is_err(), "the cut must end the connection");
        assert_eq!(
            request.fate(),
            Some(ResponseFate::Truncated {
                status: 200,
                bytes: 4
            })
        );
    }

    #[tokio::test]
    async fn a_cut_at_or_past_the_end_sends_the_whole_body() {
        let mut wire = HEAD.to_vec();
        wire.extend_from_slice(BODY);
        let mock = Builder::new().read(REQUEST).write(&wire).build();
        let (conn, _ending) = scripted_conn(mock);
        let request = OneRequest::new();
        let body = FaultBody::partial(
            Bytes::from_static(BODY),
            BODY.len(),
            conn.clone(),
            request.sink(200),
        );

        serve_one(conn, body)
            .await
            .expect("a full answer ends the connection cleanly");
        assert_eq!(
            request.fate(),
            Some(ResponseFate::Sent {
                status: 200,
                client_left: false
            })
        );
    }

    #[tokio::test]
    async fn a_partial_body_fails_only_after_its_bytes_are_flushed() {
        let (conn, _ending) = scripted_conn(Builder::new().build());
        let request = OneRequest::new();
        let mut body =
            FaultBody::partial(Bytes::from_static(BODY), 4, conn.clone(), request.sink(200));

        let first = body.frame().await.map(|frame| frame.map(Frame::into_data));
        assert!(matches!(first, Some(Ok(Ok(data))) if data == BODY[..4]));

        let mut next = task::spawn(body.frame());
        assert_pending!(next.poll());
        assert_pending!(next.poll());
        assert_eq!(request.fate(), Some(ResponseFate::InProgress));

        // hyper flushes once it has written what it was handed.
        FaultIo::new(conn)
            .flush()
            .await
            .expect("a flush never fails");
        assert!(next.is_woken());
        let cut = assert_ready!(next.poll());
        assert!(matches!(cut, Some(Err(_))), "the body fails: {cut:?}");
        drop(next);
        assert_eq!(
            request.fate(),
            Some(ResponseFate::Truncated {
                status: 200,
                bytes: 4
            })
        );
    }

    #[tokio::test]
    async fn an_idle_body_stays_pending_until_the_client_leaves() {
        let (mock, mut client) = Builder::new().build_with_handle();
        let (conn, _ending) = scripted_conn(mock);
        let request = OneRequest::new();
        let mut body = FaultBody::idle(Bytes::from_static(BODY), conn, request.sink(200));

        let mut next = task::spawn(body.frame());
        assert_pending!(next.poll());
        client.read(b"anyone there?");
        assert_pending!(next.poll());
        assert_eq!(request.fate(), Some(ResponseFate::InProgress));

        drop(client);
        assert!(next.is_woken());
        let end = assert_ready!(next.poll());
        assert!(matches!(end, Some(Err(_))), "the body fails: {end:?}");
        drop(next);
        assert_eq!(
            request.fate(),
            Some(ResponseFate::Idle {
                status: 200,
                client_left: true
            })
        );
    }

    #[tokio::test]
    async fn an_idle_body_gives_up_at_shutdown_with_the_client_still_there() {
        let (mock, _client) = Builder::new().build_with_handle();
        let (conn, _ending) = scripted_conn(mock);
        let request = OneRequest::new();
        let mut body = FaultBody::idle(Bytes::from_static(BODY), conn, request.sink(200));

        let mut next = task::spawn(body.frame());
        assert_pending!(next.poll());
        let _ = request.shutdown.send(true);
        assert!(next.is_woken());
        assert!(matches!(assert_ready!(next.poll()), Some(Err(_))));
        drop(next);
        assert_eq!(
            request.fate(),
            Some(ResponseFate::Idle {
                status: 200,
                client_left: false
            })
        );
    }
}

//! An SSE answer that is written while the call runs: headers at once, then
//! keep-alive comments, progress notifications, a priming event, and maybe the
//! response. The body reports how it ended (everything handed to hyper, or
//! dropped when the connection died under it); the call's driver, which knows
//! whether the response was among the bytes, writes the journal fate once the
//! provider is done with the call (a stall that commits commits first).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body as AxumBody;
use axum::response::Response;
use bytes::Bytes;
use http::HeaderValue;
use hyper::body::{Body, Frame};
use tokio::sync::{mpsc, watch};

use super::wire::EVENT_STREAM;
use crate::record::ResponseFate;

/// Frames waiting for hyper at most: a client that stops reading makes further
/// keep-alives wait rather than pile up.
const QUEUED_FRAMES: usize = 16;

/// How the body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyEnd {
    /// Every frame was handed to hyper and the stream ended.
    pub complete: bool,
    /// Body bytes handed to hyper.
    pub handed: u64,
}

/// The response body: frames from the driver, in order.
#[derive(Debug)]
pub(crate) struct SseBody {
    frames: mpsc::Receiver<Bytes>,
    handed: u64,
    end: Option<watch::Sender<Option<BodyEnd>>>,
}

impl SseBody {
    fn report(&mut self, complete: bool) {
        if let Some(end) = self.end.take() {
            let _ = end.send(Some(BodyEnd {
                complete,
                handed: self.handed,
            }));
        }
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.frames.poll_recv(cx) {
            Poll::Ready(Some(bytes)) => {
                self.handed += bytes.len() as u64;
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(None) => {
                self.report(true);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        // hyper drops a body it pulled to the end too; `report` keeps the first word.
        self.report(false);
    }
}

/// The driver's side of one SSE answer.
#[derive(Debug)]
pub(crate) struct SseWriter {
    frames: Option<mpsc::Sender<Bytes>>,
    end: watch::Receiver<Option<BodyEnd>>,
    seq: u64,
    next_event: u64,
    /// The response message went into the stream.
    pub answered: bool,
}

/// A 200 `text/event-stream` response and the writer that feeds it.
pub(crate) fn open(seq: u64, extra_headers: &[(&'static str, String)]) -> (Response, SseWriter) {
    let (tx, rx) = mpsc::channel(QUEUED_FRAMES);
    let (end_tx, end_rx) = watch::channel(None);
    let body = SseBody {
        frames: rx,
        handed: 0,
        end: Some(end_tx),
    };
    let mut response = Response::new(AxumBody::new(body));
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(EVENT_STREAM),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    for (name, value) in extra_headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(*name, value);
        }
    }
    let writer = SseWriter {
        frames: Some(tx),
        end: end_rx,
        seq,
        next_event: 1,
        answered: false,
    };
    (response, writer)
}

impl SseWriter {
    /// The next event id of this stream (`{seq}-{n}`).
    pub(crate) fn next_id(&mut self) -> String {
        let id = format!("{}-{}", self.seq, self.next_event);
        self.next_event += 1;
        id
    }

    /// Queues `bytes` unless the queue is full (a keep-alive can be skipped);
    /// false once the body is gone (the client left or the connection died).
    pub(crate) fn offer(&self, bytes: Bytes) -> bool {
        match &self.frames {
            Some(tx) => match tx.try_send(bytes) {
                Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => true,
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            },
            None => false,
        }
    }

    /// Queues `bytes`, waiting at most `bound` for room; false when it could not.
    pub(crate) async fn send(&self, bytes: Bytes, bound: Duration) -> bool {
        let Some(tx) = &self.frames else {
            return false;
        };
        matches!(
            tokio::time::timeout(bound, tx.send(bytes)).await,
            Ok(Ok(()))
        )
    }

    /// Ends the stream (a clean end: no further event).
    pub(crate) fn close(&mut self) {
        self.frames = None;
    }

    /// Whether the body is gone already.
    pub(crate) fn body_gone(&self) -> bool {
        self.frames.as_ref().is_none_or(mpsc::Sender::is_closed)
            || self.end.borrow().is_some_and(|end| !end.complete)
    }

    /// Closes the stream, waits (at most `bound`) for the body to end and says
    /// how the answer ended; `client_left` is what the driver saw of the
    /// client (for an answer sent, whether it had left before the answer was
    /// handed over).
    pub(crate) async fn finish(mut self, bound: Duration, client_left: bool) -> ResponseFate {
        self.close();
        let ended = tokio::time::timeout(bound, self.end.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(|end| end.ok().and_then(|end| *end));
        match ended {
            Some(BodyEnd {
                complete: true,
                handed: _,
            }) if self.answered => ResponseFate::Sent {
                status: 200,
                client_left,
            },
            Some(BodyEnd { handed: 0, .. }) | None => ResponseFate::Idle {
                status: 200,
                client_left: client_left || ended.is_some_and(|e| !e.complete),
            },
            Some(BodyEnd { handed, .. }) => ResponseFate::Truncated {
                status: 200,
                bytes: u32::try_from(handed).unwrap_or(u32::MAX),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn a_stream_that_ends_after_its_answer_is_sent() {
        let (response, mut writer) = open(3, &[]);
        assert!(writer.offer(Bytes::from_static(b": keep-alive\n\n")));
        let id = writer.next_id();
        assert_eq!(id, "3-1");
        assert!(
            writer
                .send(Bytes::from_static(b"data: {}\n\n"), Duration::from_secs(1))
                .await
        );
        writer.answered = true;
        let reader = tokio::spawn(async move { response.into_body().collect().await });
        let fate = writer.finish(Duration::from_secs(5), false).await;
        assert_eq!(
            fate,
            ResponseFate::Sent {
                status: 200,
                client_left: false
            }
        );
        let body = reader.await.ok().and_then(Result::ok).map(|c| c.to_bytes());
        assert_eq!(body.as_deref(), Some(&b": keep-alive\n\ndata: {}\n\n"[..]));
    }

    #[tokio::test]
    async fn a_stream_closed_without_its_answer_is_truncated_or_idle() {
        let (response, writer) = open(1, &[]);
        assert!(writer.offer(Bytes::from_static(b"id: 1-1\ndata: \n\n")));
        let reader = tokio::spawn(async move { response.into_body().collect().await });
        let fate = writer.finish(Duration::from_secs(5), false).await;
        assert_eq!(
            fate,
            ResponseFate::Truncated {
                status: 200,
                bytes: 16
            }
        );
        let _ = reader.await;

        let (response, writer) = open(2, &[]);
        drop(response);
        assert!(writer.body_gone());
        assert!(!writer.offer(Bytes::from_static(b": x\n\n")));
        let fate = writer.finish(Duration::from_secs(5), false).await;
        assert_eq!(
            fate,
            ResponseFate::Idle {
                status: 200,
                client_left: true
            }
        );
    }
}

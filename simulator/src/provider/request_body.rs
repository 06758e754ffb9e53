//! Request bodies: a create's body read within bounds, and the bodies nobody
//! reads drained, so that the client reads the answer rather than a reset
//! caused by unread data. Both wait at most the plan's
//! `Limits::read_timeout`, so that a client sending slowly (or not at all)
//! holds its connection, its task and at most the body limit's bytes for that
//! long only.

use std::ops::ControlFlow;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::FutureExt;
use http::HeaderMap;
use http_body_util::BodyExt;
use hyper::body::Frame;

/// Most bytes of an unread or oversized body the provider drains so that the
/// client reads the answer instead of a reset.
pub const DRAIN_LIMIT_BYTES: usize = 1024 * 1024;

/// Why a body could not be read.
pub(crate) enum BodyError {
    TooLarge,
    /// Not complete within the read deadline: answered 408.
    TimedOut,
    Unreadable(String),
}

/// What a request that sent its body too slowly is told.
pub(crate) fn timed_out_message(deadline: Duration) -> String {
    format!(
        "the request body did not arrive within {}",
        humantime::format_duration(deadline)
    )
}

/// Reads at most `max` bytes within `deadline`; a longer body is drained (up
/// to [`DRAIN_LIMIT_BYTES`], within the same deadline) and refused.
///
/// Any request body: hyper's own for `/v1` (wrapping it in axum's `Body`
/// would box it, an allocation per request), axum's for the MCP endpoint.
pub(crate) async fn read_body<B>(
    mut body: B,
    headers: &HeaderMap,
    max: usize,
    deadline: Duration,
) -> Result<Bytes, BodyError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        drain(body, deadline).await;
        return Err(BodyError::TooLarge);
    }
    // Nearly every body is whole by the time the handler runs: the frames
    // already there are taken first, without a timer, which spares those
    // bodies a clock read and a timer entry made, polled and dropped. A body
    // still arriving is then read under the deadline, polled again at once
    // with the task's own waker.
    let mut gathered = Gathered::new(max);
    loop {
        match body.frame().now_or_never() {
            Some(Some(frame)) => {
                if gathered.take(frame)?.is_break() {
                    return gathered.finish();
                }
            }
            Some(None) => return gathered.finish(),
            None => break,
        }
    }
    // The buffer lives inside the bounded future: a body that times out
    // frees what it had gathered (at most `max` bytes) at once. Boxed, as
    // the drain's wait is: the timer inline would make every create's future
    // a few hundred bytes larger for the few bodies still arriving.
    let rest = async move {
        while let Some(frame) = body.frame().await {
            if gathered.take(frame)?.is_break() {
                break;
            }
        }
        gathered.finish()
    };
    Box::pin(tokio::time::timeout(deadline, rest))
        .await
        .unwrap_or(Err(BodyError::TimedOut))
}

/// A body's frames as they are read, within its bound.
struct Gathered {
    max: usize,
    /// A body that arrives in one frame (nearly every one) is kept as that
    /// frame, not copied into a buffer of its own.
    only_frame: Option<Bytes>,
    buffer: BytesMut,
    too_large: bool,
    seen: usize,
}

impl Gathered {
    fn new(max: usize) -> Gathered {
        Gathered {
            max,
            only_frame: None,
            buffer: BytesMut::new(),
            too_large: false,
            seen: 0,
        }
    }

    /// Takes one frame; `Break` once the body is past what is drained.
    fn take<E: std::fmt::Display>(
        &mut self,
        frame: Result<Frame<Bytes>, E>,
    ) -> Result<ControlFlow<()>, BodyError> {
        let frame = frame.map_err(|e| BodyError::Unreadable(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            return Ok(ControlFlow::Continue(()));
        };
        self.seen = self.seen.saturating_add(data.len());
        if self.seen > self.max {
            self.too_large = true;
            if self.seen > DRAIN_LIMIT_BYTES {
                return Ok(ControlFlow::Break(()));
            }
            return Ok(ControlFlow::Continue(()));
        }
        match self.only_frame.take() {
            None if self.buffer.is_empty() => self.only_frame = Some(data),
            earlier => {
                if let Some(earlier) = earlier {
                    self.buffer.extend_from_slice(&earlier);
                }
                self.buffer.extend_from_slice(&data);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(self) -> Result<Bytes, BodyError> {
        if self.too_large {
            Err(BodyError::TooLarge)
        } else {
            Ok(self.only_frame.unwrap_or_else(|| self.buffer.freeze()))
        }
    }
}

/// Reads and discards what is left of a body, within bounds (at most
/// [`DRAIN_LIMIT_BYTES`], at most `deadline`).
pub(crate) async fn drain<B>(mut body: B, deadline: Duration)
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    // Most bodies left to drain are a GET's, which has none: skip the bounded
    // wait, whose timer cost a clock read and a timer entry built and dropped
    // on every request.
    if body.is_end_stream() {
        return;
    }
    let discard = async {
        let mut seen = 0usize;
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                seen = seen.saturating_add(data.len());
                if seen > DRAIN_LIMIT_BYTES {
                    return;
                }
            }
        }
    };
    // Boxed: the timer inline made every request's future (the drain is
    // part of each one) larger than the allocator's small-size cache, for a
    // wait that only a body left unread needs.
    let _ = Box::pin(tokio::time::timeout(deadline, discard)).await;
}

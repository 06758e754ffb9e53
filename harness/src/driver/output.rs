//! What every form of the adapter shares: what one call produced, the bounds
//! on what is read of a process's stdout and kept of its stderr, the check
//! that a reply is a JSON object, and the crash signal. The forms import it;
//! it imports none of them.

use lostreply_reports::model::CallEnd;
use tokio::sync::oneshot;

/// The most stderr kept per call (the tail is kept: errors come last).
pub const STDERR_KEEP_BYTES: usize = 16 * 1024;
/// The most stdout read per call; a larger reply is a bad reply.
pub const STDOUT_LIMIT_BYTES: usize = 1024 * 1024;

/// What one call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The reply, when a well-formed JSON object came back.
    pub reply: Option<serde_json::Value>,
    /// How it ended.
    pub end: CallEnd,
    /// The tail of its stderr.
    pub stderr: String,
}

impl CallOutput {
    /// A call that could not be made at all (nothing started, nothing on stderr).
    pub(crate) fn failed(message: String) -> CallOutput {
        CallOutput {
            reply: None,
            end: CallEnd::Failed {
                message: message.into(),
            },
            stderr: String::new(),
        }
    }
}

/// How a call ended whose process exited: replied when it exited 0 with a
/// JSON object on stdout, else why not; and the reply.
pub(crate) fn exited(
    status: &std::io::Result<std::process::ExitStatus>,
    stdout: &[u8],
) -> (CallEnd, Option<serde_json::Value>) {
    match status {
        Ok(s) if s.success() => match parse_reply(stdout) {
            Ok(reply) => (CallEnd::Replied, Some(reply)),
            Err(reason) => (bad_reply(&reason), None),
        },
        Ok(s) => (CallEnd::Exited { code: s.code() }, None),
        Err(e) => (
            CallEnd::Failed {
                message: format!("waiting for the adapter: {e}").into(),
            },
            None,
        ),
    }
}

/// A call that outlived `deadline`.
pub(crate) fn past_deadline(deadline: std::time::Duration) -> CallEnd {
    CallEnd::Deadline {
        deadline_ms: deadline.as_millis() as u64,
    }
}

/// Keeps the last `limit` bytes of `bytes` as text, cut at a character boundary.
pub(crate) fn tail_text(bytes: &[u8], limit: usize) -> String {
    let start = bytes.len().saturating_sub(limit);
    let text = String::from_utf8_lossy(&bytes[start..]);
    if start > 0 {
        format!("[… {start} bytes cut …]{text}")
    } else {
        text.into_owned()
    }
}

/// Why a process's stdout is not a reply: the text of a call's
/// [`CallEnd::BadReply`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadReply {
    /// More than [`STDOUT_LIMIT_BYTES`].
    #[error("stdout is {bytes} bytes, over the {STDOUT_LIMIT_BYTES}-byte limit")]
    TooLarge {
        /// How many bytes came.
        bytes: usize,
    },
    /// Not UTF-8 text.
    #[error("stdout is not UTF-8: {0}")]
    NotUtf8(std::str::Utf8Error),
    /// Nothing but whitespace.
    #[error("stdout is empty: the protocol wants one JSON object")]
    Empty,
    /// Not one JSON value.
    #[error("stdout is not one JSON value: {0}")]
    NotJson(serde_json::Error),
    /// JSON, but not an object.
    #[error("stdout is JSON but not an object")]
    NotObject,
}

/// Checks that a reply is a JSON object, as the protocol demands.
pub(crate) fn parse_reply(stdout: &[u8]) -> Result<serde_json::Value, BadReply> {
    if stdout.len() > STDOUT_LIMIT_BYTES {
        return Err(BadReply::TooLarge {
            bytes: stdout.len(),
        });
    }
    let text = std::str::from_utf8(stdout).map_err(BadReply::NotUtf8)?;
    if text.trim().is_empty() {
        return Err(BadReply::Empty);
    }
    let value: serde_json::Value = serde_json::from_str(text.trim()).map_err(BadReply::NotJson)?;
    if !value.is_object() {
        return Err(BadReply::NotObject);
    }
    Ok(value)
}

/// A call that ended with a reply that is not one: [`CallEnd::BadReply`]
/// with the reason's text.
pub(crate) fn bad_reply(reason: &BadReply) -> CallEnd {
    CallEnd::BadReply {
        message: reason.to_string().into(),
    }
}

/// Resolves when the harness fires the crash signal; never, without one (or when
/// the sender is dropped: the crash point was not reached).
pub(crate) async fn crash_signal(crash: Option<oneshot::Receiver<()>>) {
    if let Some(rx) = crash {
        if rx.await.is_ok() {
            return;
        }
    }
    std::future::pending::<()>().await
}

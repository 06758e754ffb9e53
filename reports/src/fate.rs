//! What became of a request's response ([`Fate`]): the way it ended, and
//! whether it was a replay attempt whose saved answer was not sent.
//!
//! Kept as numbers and a tag in every one of a run's million journal
//! records (16 bytes, as the shared text was 8 and padding made up the
//! rest), matched on by the writers, and written and read as the sentence
//! the JSON report carries (`sent 201`, `dropped (closed without a byte)`).
//! A report read back may say a fate in words this version does not write
//! (one written by hand or by another tool, as the JSON's documentation
//! allows any text): that fate is kept as its text, so that it is written
//! again byte for byte.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::record_names::deserialize_str_with;
use crate::shared_str::SharedStr;

/// How a response ended, and whether a replay's saved answer went unsent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fate {
    /// What this version writes: how the response ended.
    Ended {
        /// How the response ended.
        end: ResponseEnd,
        /// True when the request was a replay attempt that a fault answered
        /// instead: the saved answer was not sent.
        unsent_replay: bool,
    },
    /// A fate read from a report that says it in other words, kept as read.
    Text(SharedStr),
}

/// How a response ended, as the provider saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseEnd {
    /// `still in progress`: still being handled when the journal was read.
    InProgress,
    /// `sent 201`: a complete response with this status.
    Sent {
        /// HTTP status sent.
        status: u16,
    },
    /// `dropped (closed without a byte)`.
    Dropped,
    /// `reset (TCP RST)`.
    Reset,
    /// `stalled until the client left` or `stalled until the cap`.
    Stalled {
        /// True when the client closed first; false when the cap ended the stall.
        client_left: bool,
    },
    /// `ended by the client's cancel`: an MCP call held until the client's
    /// cancel ended it, without a byte of a response.
    Cancelled,
    /// `200 truncated after 12 body bytes`.
    Truncated {
        /// HTTP status sent.
        status: u16,
        /// Body bytes that got through.
        bytes: u32,
    },
    /// `200 headers, then silence until the client left` (or `until the cap`).
    Idle {
        /// HTTP status sent.
        status: u16,
        /// True when the client closed first.
        client_left: bool,
    },
}

/// What [`Fate::parse_ended`] was given that is no fate's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a response's fate: `{text}`")]
pub struct BadFate {
    /// The text as given.
    pub text: String,
}

/// Appended to the fate of a replay attempt whose saved answer was not sent.
const UNSENT_REPLAY: &str = " (a replay attempt: the saved answer was not sent)";

impl Fate {
    /// A response that ended so, not an unsent replay.
    pub fn new(end: ResponseEnd) -> Fate {
        Fate::Ended {
            end,
            unsent_replay: false,
        }
    }

    /// Reads the text `Display` writes for [`Fate::Ended`], and only that.
    pub fn parse_ended(s: &str) -> Result<Fate, BadFate> {
        let (end, unsent_replay) = match s.strip_suffix(UNSENT_REPLAY) {
            Some(end) => (end, true),
            None => (s, false),
        };
        let end = end
            .parse()
            .map_err(|_: BadFate| BadFate { text: s.to_owned() })?;
        Ok(Fate::Ended { end, unsent_replay })
    }
}

/// A fate's text as read: [`Fate::Ended`] when it is one this version
/// writes, [`Fate::Text`] otherwise.
impl From<&str> for Fate {
    fn from(s: &str) -> Fate {
        Fate::parse_ended(s).unwrap_or_else(|_| Fate::Text(SharedStr::from(s)))
    }
}

impl ResponseEnd {
    /// True unless a complete response was sent: the client never got one.
    pub fn is_lost(self) -> bool {
        match self {
            ResponseEnd::Sent { .. } => false,
            ResponseEnd::InProgress
            | ResponseEnd::Dropped
            | ResponseEnd::Reset
            | ResponseEnd::Stalled { .. }
            | ResponseEnd::Cancelled
            | ResponseEnd::Truncated { .. }
            | ResponseEnd::Idle { .. } => true,
        }
    }
}

impl fmt::Display for ResponseEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let until = |client_left: bool| {
            if client_left {
                "the client left"
            } else {
                "the cap"
            }
        };
        match *self {
            ResponseEnd::InProgress => f.write_str("still in progress"),
            ResponseEnd::Sent { status } => write!(f, "sent {status}"),
            ResponseEnd::Dropped => f.write_str("dropped (closed without a byte)"),
            ResponseEnd::Reset => f.write_str("reset (TCP RST)"),
            ResponseEnd::Stalled { client_left } => {
                write!(f, "stalled until {}", until(client_left))
            }
            ResponseEnd::Cancelled => f.write_str("ended by the client's cancel"),
            ResponseEnd::Truncated { status, bytes } => {
                write!(f, "{status} truncated after {bytes} body bytes")
            }
            ResponseEnd::Idle {
                status,
                client_left,
            } => write!(
                f,
                "{status} headers, then silence until {}",
                until(client_left)
            ),
        }
    }
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::Ended { end, unsent_replay } => {
                end.fmt(f)?;
                if *unsent_replay {
                    f.write_str(UNSENT_REPLAY)?;
                }
                Ok(())
            }
            Fate::Text(text) => f.write_str(text),
        }
    }
}

/// A number as [`fmt::Display`] writes it: ASCII digits, no sign, no
/// leading zero, so that the text read is the text written again.
pub(crate) fn plain_number<T: FromStr>(text: &str) -> Option<T> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

impl FromStr for ResponseEnd {
    type Err = BadFate;

    fn from_str(s: &str) -> Result<Self, BadFate> {
        let client_left = |until: &str| match until {
            "the client left" => Some(true),
            "the cap" => Some(false),
            _ => None,
        };
        let end = match s {
            "still in progress" => Some(ResponseEnd::InProgress),
            "dropped (closed without a byte)" => Some(ResponseEnd::Dropped),
            "reset (TCP RST)" => Some(ResponseEnd::Reset),
            "ended by the client's cancel" => Some(ResponseEnd::Cancelled),
            _ => None,
        }
        .or_else(|| {
            let status = plain_number(s.strip_prefix("sent ")?)?;
            Some(ResponseEnd::Sent { status })
        })
        .or_else(|| {
            let client_left = client_left(s.strip_prefix("stalled until ")?)?;
            Some(ResponseEnd::Stalled { client_left })
        })
        .or_else(|| {
            let (status, rest) = s.split_once(' ')?;
            let status = plain_number(status)?;
            if let Some(bytes) = rest
                .strip_prefix("truncated after ")
                .and_then(|r| r.strip_suffix(" body bytes"))
            {
                let bytes = plain_number(bytes)?;
                return Some(ResponseEnd::Truncated { status, bytes });
            }
            let client_left = client_left(rest.strip_prefix("headers, then silence until ")?)?;
            Some(ResponseEnd::Idle {
                status,
                client_left,
            })
        });
        end.ok_or_else(|| BadFate { text: s.to_owned() })
    }
}

/// Room for the longest fate's text (`65535 headers, then silence until
/// the client left` with the unsent replay's words is under 100 bytes).
const FATE_TEXT_MAX: usize = 128;

/// A fate's text written on the stack, so that writing a million journal
/// records allocates nothing for their fates.
struct StackText {
    bytes: [u8; FATE_TEXT_MAX],
    len: usize,
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl Serialize for Fate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use std::fmt::Write as _;
        if let Fate::Text(text) = self {
            return serializer.serialize_str(text);
        }
        let mut text = StackText {
            bytes: [0; FATE_TEXT_MAX],
            len: 0,
        };
        // Every fate's text fits; one that did not would be written through
        // a `String` instead.
        if write!(text, "{self}").is_ok() {
            if let Some(Ok(s)) = text.bytes.get(..text.len).map(std::str::from_utf8) {
                return serializer.serialize_str(s);
            }
        }
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Fate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_str_with(deserializer, "a response's fate", |s| {
            Ok::<_, std::convert::Infallible>(Fate::from(s))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn every_end() -> Vec<ResponseEnd> {
        let mut ends = vec![
            ResponseEnd::InProgress,
            ResponseEnd::Dropped,
            ResponseEnd::Reset,
            ResponseEnd::Cancelled,
        ];
        for client_left in [true, false] {
            ends.push(ResponseEnd::Stalled { client_left });
            for status in [0, 200, 201, 429, u16::MAX] {
                ends.push(ResponseEnd::Idle {
                    status,
                    client_left,
                });
            }
        }
        for status in [0, 200, 201, 429, u16::MAX] {
            ends.push(ResponseEnd::Sent { status });
            for bytes in [0, 12, u32::MAX] {
                ends.push(ResponseEnd::Truncated { status, bytes });
            }
        }
        ends
    }

    #[test]
    fn every_fate_says_what_it_always_said() {
        let cases = [
            (ResponseEnd::InProgress, "still in progress"),
            (ResponseEnd::Sent { status: 201 }, "sent 201"),
            (ResponseEnd::Dropped, "dropped (closed without a byte)"),
            (ResponseEnd::Reset, "reset (TCP RST)"),
            (
                ResponseEnd::Stalled { client_left: true },
                "stalled until the client left",
            ),
            (
                ResponseEnd::Stalled { client_left: false },
                "stalled until the cap",
            ),
            (ResponseEnd::Cancelled, "ended by the client's cancel"),
            (
                ResponseEnd::Truncated {
                    status: 200,
                    bytes: 12,
                },
                "200 truncated after 12 body bytes",
            ),
            (
                ResponseEnd::Idle {
                    status: 200,
                    client_left: false,
                },
                "200 headers, then silence until the cap",
            ),
        ];
        for (end, text) in cases {
            assert_eq!(Fate::new(end).to_string(), text);
        }
        let replay = Fate::Ended {
            end: ResponseEnd::Sent { status: 500 },
            unsent_replay: true,
        };
        assert_eq!(
            replay.to_string(),
            "sent 500 (a replay attempt: the saved answer was not sent)"
        );
    }

    #[test]
    fn every_fate_round_trips_through_its_text_and_json() {
        for end in every_end() {
            for unsent_replay in [false, true] {
                let fate = Fate::Ended { end, unsent_replay };
                let text = fate.to_string();
                assert!(text.len() < FATE_TEXT_MAX, "{text}");
                assert_eq!(Fate::parse_ended(&text).unwrap(), fate, "{text}");
                assert_eq!(Fate::from(text.as_str()), fate, "{text}");
                let json = serde_json::to_string(&fate).unwrap();
                assert_eq!(json, serde_json::to_string(&text).unwrap());
                assert_eq!(serde_json::from_str::<Fate>(&json).unwrap(), fate);
            }
        }
    }

    #[test]
    fn other_words_are_kept_as_read() {
        for text in [
            "dropped",
            "sent 0201",
            "held until the client left",
            "",
            "é\n",
        ] {
            let fate = Fate::from(text);
            assert_eq!(fate, Fate::Text(SharedStr::from(text)));
            assert_eq!(fate.to_string(), text);
            let json = serde_json::to_string(&fate).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            assert_eq!(serde_json::from_str::<Fate>(&json).unwrap(), fate);
        }
    }

    #[test]
    fn only_the_written_text_is_ended() {
        for text in [
            "",
            "sent",
            "sent 0201",
            "sent +201",
            "sent 70000",
            "Sent 201",
            "sent 201 ",
            "stalled until later",
            "200 truncated after -1 body bytes",
            "200 headers, then silence",
            " (a replay attempt: the saved answer was not sent)",
        ] {
            assert!(Fate::parse_ended(text).is_err(), "{text:?}");
        }
    }
}

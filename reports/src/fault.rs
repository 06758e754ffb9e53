//! The fault that struck a request ([`Fault`]): an HTTP fault rule, an MCP
//! fault rule, and a client's cancel that arrived while the server held the
//! call, each when there was one.
//!
//! Few requests meet a fault, so a journal record holds it boxed (8 bytes
//! when absent, as the shared text was). It is written and read as the text
//! the JSON report carries: `after_commit drop (rule 1)`,
//! `mcp stall (MCP rule 1); the client cancelled (request #7)`. Durations
//! are spelled by `humantime` (`1s 500ms`), the scenario's own words for
//! them. A report read back may say a fault in words this version
//! does not write (one written by hand or by another tool, as the JSON's
//! documentation allows any text): that fault is kept as its text, so that
//! it is written again byte for byte.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::fate::plain_number;
use crate::record_names::{deserialize_str_with, names, UnknownName};
use crate::shared_str::SharedStr;

/// What struck a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// What this version writes: at least one of the three parts is there.
    Parts {
        /// The HTTP fault rule that struck, if one did.
        http: Option<HttpFault>,
        /// The MCP fault rule that decided the call, if one did.
        mcp: Option<McpFault>,
        /// The journal position of the client's `notifications/cancelled`,
        /// when one arrived while the server held the call.
        cancelled_by: Option<u64>,
    },
    /// A fault read from a report that says it in other words, kept as read.
    Text(SharedStr),
}

/// An HTTP fault rule that struck: `after_commit drop (rule 1)`.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct HttpFault {
    /// The rule's number in the scenario's list of faults, from 1.
    pub rule: usize,
    /// Where it struck.
    pub at: FaultPoint,
    /// What it did.
    pub response: FaultResponse,
}

names! {
    /// Where in a request's life an HTTP fault strikes.
    FaultPoint, "fault point" {
        /// Before the provider reads the request body.
        BeforeRead => "before_read",
        /// After the request is read and validated, before the effect commits.
        BeforeCommit => "before_commit",
        /// After the effect commits, on the way out.
        AfterCommit => "after_commit",
    }
}

/// What an HTTP fault did to the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultResponse {
    /// `ok`: served normally.
    Ok,
    /// `drop`: closed without a byte.
    Drop,
    /// `reset`: aborted with a TCP RST.
    Reset,
    /// `stall`, `stall until step 3 ends then commit`: held.
    Stall {
        /// What the provider did once the hold ended.
        then: StallThen,
        /// When the hold ended.
        until: Release,
    },
    /// `gather 2 (at most 5s)`: held until that many met.
    Gather {
        /// How many requests meet before any goes on.
        requests: u32,
        /// The longest one request waits.
        at_most: Duration,
    },
    /// `delay 300ms`: served after a wait.
    Delay {
        /// How long.
        delay: Duration,
    },
    /// `status 500`, `status 429 (Retry-After 3)`: an error status instead.
    Status {
        /// HTTP status code.
        code: u16,
        /// The `Retry-After` seconds the rule set, if it set them.
        retry_after_s: Option<u32>,
    },
    /// `partial 12 bytes`: the first bytes of the body, then close.
    Partial {
        /// How many body bytes got through.
        bytes: u64,
    },
    /// `idle`: status and headers, then silence.
    Idle,
}

/// What a `before_commit` stall does once the hold ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StallThen {
    /// No effect (nothing said).
    Abandon,
    /// ` then commit`: the effect commits after the client left.
    Commit,
}

/// When a stall ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Release {
    /// When the client leaves (nothing said).
    ClientGone,
    /// ` until step 3 ends`: when that harness step has ended.
    StepEnd(u32),
}

/// An MCP fault rule that decided a `tools/call`: `mcp stall (MCP rule 1)`.
#[derive(bon::Builder, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct McpFault {
    /// The rule's number among the scenario's MCP fault rules, from 1.
    pub rule: usize,
    /// What the rule does.
    pub kind: McpFaultKind,
}

names! {
    /// The kinds of MCP fault rule.
    McpFaultKind, "MCP fault" {
        /// Served normally.
        Ok => "ok",
        /// The work takes long before the answer.
        Slow => "slow",
        /// The call is held without an answer.
        Stall => "stall",
        /// Committed, then answered late.
        Late => "late",
        /// Committed, then never answered.
        Never => "never",
        /// A tool error result.
        IsError => "is_error",
        /// A JSON-RPC error after the commit.
        RpcError => "rpc_error",
        /// An HTTP status instead of an answer.
        Http => "http",
        /// The connection closed without an answer.
        Drop => "drop",
        /// The connection aborted.
        Reset => "reset",
        /// The call became a background task.
        Task => "task",
        /// A priming event, then the connection closed.
        PrimeThenClose => "prime_then_close",
    }
}

/// What [`Fault::parse_parts`] was given that is no fault's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a request's fault: `{text}`")]
pub struct BadFault {
    /// The text as given.
    pub text: String,
}

impl From<UnknownName> for BadFault {
    fn from(e: UnknownName) -> BadFault {
        BadFault { text: e.name }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (http, mcp, cancelled_by) = match self {
            Fault::Parts {
                http,
                mcp,
                cancelled_by,
            } => (http, mcp, cancelled_by),
            Fault::Text(text) => return f.write_str(text),
        };
        let mut sep = "";
        if let Some(http) = http {
            write!(f, "{http}")?;
            sep = "; ";
        }
        if let Some(mcp) = mcp {
            write!(f, "{sep}mcp {} (MCP rule {})", mcp.kind, mcp.rule)?;
            sep = "; ";
        }
        if let Some(seq) = cancelled_by {
            write!(f, "{sep}the client cancelled (request #{seq})")?;
        }
        Ok(())
    }
}

impl fmt::Display for HttpFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} (rule {})", self.at, self.response, self.rule)
    }
}

impl fmt::Display for FaultResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FaultResponse::Ok => f.write_str("ok"),
            FaultResponse::Drop => f.write_str("drop"),
            FaultResponse::Reset => f.write_str("reset"),
            FaultResponse::Stall { then, until } => {
                f.write_str("stall")?;
                match until {
                    Release::ClientGone => {}
                    Release::StepEnd(step) => write!(f, " until step {step} ends")?,
                }
                match then {
                    StallThen::Abandon => Ok(()),
                    StallThen::Commit => f.write_str(" then commit"),
                }
            }
            FaultResponse::Gather { requests, at_most } => {
                write!(
                    f,
                    "gather {requests} (at most {})",
                    humantime::format_duration(at_most)
                )
            }
            FaultResponse::Delay { delay } => {
                write!(f, "delay {}", humantime::format_duration(delay))
            }
            FaultResponse::Status {
                code,
                retry_after_s: None,
            } => write!(f, "status {code}"),
            FaultResponse::Status {
                code,
                retry_after_s: Some(seconds),
            } => write!(f, "status {code} (Retry-After {seconds})"),
            FaultResponse::Partial { bytes } => write!(f, "partial {bytes} bytes"),
            FaultResponse::Idle => f.write_str("idle"),
        }
    }
}

impl FromStr for FaultResponse {
    type Err = BadFault;

    fn from_str(s: &str) -> Result<Self, BadFault> {
        let plain = match s {
            "ok" => Some(FaultResponse::Ok),
            "drop" => Some(FaultResponse::Drop),
            "reset" => Some(FaultResponse::Reset),
            "idle" => Some(FaultResponse::Idle),
            _ => None,
        };
        plain
            .or_else(|| {
                let rest = s.strip_prefix("stall")?;
                let (rest, then) = match rest.strip_suffix(" then commit") {
                    Some(rest) => (rest, StallThen::Commit),
                    None => (rest, StallThen::Abandon),
                };
                let until = if rest.is_empty() {
                    Release::ClientGone
                } else {
                    let step = rest.strip_prefix(" until step ")?.strip_suffix(" ends")?;
                    Release::StepEnd(plain_number(step)?)
                };
                Some(FaultResponse::Stall { then, until })
            })
            .or_else(|| {
                let rest = s.strip_prefix("gather ")?.strip_suffix(')')?;
                let (requests, at_most) = rest.split_once(" (at most ")?;
                Some(FaultResponse::Gather {
                    requests: plain_number(requests)?,
                    at_most: humantime::parse_duration(at_most).ok()?,
                })
            })
            .or_else(|| {
                let delay = humantime::parse_duration(s.strip_prefix("delay ")?).ok()?;
                Some(FaultResponse::Delay { delay })
            })
            .or_else(|| {
                let rest = s.strip_prefix("status ")?;
                let (code, retry_after_s) = match rest.split_once(" (Retry-After ") {
                    Some((code, seconds)) => {
                        (code, Some(plain_number(seconds.strip_suffix(')')?)?))
                    }
                    None => (rest, None),
                };
                Some(FaultResponse::Status {
                    code: plain_number(code)?,
                    retry_after_s,
                })
            })
            .or_else(|| {
                let bytes = plain_number(s.strip_prefix("partial ")?.strip_suffix(" bytes")?)?;
                Some(FaultResponse::Partial { bytes })
            })
            .ok_or_else(|| BadFault { text: s.to_owned() })
    }
}

impl FromStr for HttpFault {
    type Err = BadFault;

    fn from_str(s: &str) -> Result<Self, BadFault> {
        let bad = || BadFault { text: s.to_owned() };
        let (head, rule) = s
            .strip_suffix(')')
            .and_then(|s| s.rsplit_once(" (rule "))
            .ok_or_else(bad)?;
        let (at, response) = head.split_once(' ').ok_or_else(bad)?;
        Ok(HttpFault {
            rule: plain_number(rule).ok_or_else(bad)?,
            at: at.parse()?,
            response: response.parse()?,
        })
    }
}

impl FromStr for McpFault {
    type Err = BadFault;

    fn from_str(s: &str) -> Result<Self, BadFault> {
        let bad = || BadFault { text: s.to_owned() };
        let (kind, rule) = s
            .strip_prefix("mcp ")
            .and_then(|s| s.strip_suffix(')'))
            .and_then(|s| s.rsplit_once(" (MCP rule "))
            .ok_or_else(bad)?;
        Ok(McpFault {
            rule: plain_number(rule).ok_or_else(bad)?,
            kind: kind.parse()?,
        })
    }
}

impl Fault {
    /// Reads the text `Display` writes for [`Fault::Parts`], and only that: a
    /// text that would be written otherwise (parts out of order, a duration
    /// spelled another way) is refused, so that what is read is written
    /// again byte for byte.
    pub fn parse_parts(s: &str) -> Result<Fault, BadFault> {
        let bad = || BadFault { text: s.to_owned() };
        let (mut http, mut mcp, mut cancelled_by) = (None, None, None);
        for part in s.split("; ") {
            if let Some(seq) = part
                .strip_prefix("the client cancelled (request #")
                .and_then(|rest| rest.strip_suffix(')'))
            {
                cancelled_by = Some(plain_number(seq).ok_or_else(bad)?);
            } else if part.starts_with("mcp ") {
                mcp = Some(part.parse().map_err(|_: BadFault| bad())?);
            } else {
                http = Some(part.parse().map_err(|_: BadFault| bad())?);
            }
        }
        let fault = Fault::Parts {
            http,
            mcp,
            cancelled_by,
        };
        if fault.to_string() == s {
            Ok(fault)
        } else {
            Err(bad())
        }
    }
}

/// A fault's text as read: [`Fault::Parts`] when it is one this version
/// writes, [`Fault::Text`] otherwise.
impl From<&str> for Fault {
    fn from(s: &str) -> Fault {
        Fault::parse_parts(s).unwrap_or_else(|_| Fault::Text(SharedStr::from(s)))
    }
}

impl Serialize for Fault {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Fault {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_str_with(deserializer, "a request's fault", |s| {
            Ok::<_, std::convert::Infallible>(Fault::from(s))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn http(rule: usize, at: FaultPoint, response: FaultResponse) -> Fault {
        Fault::Parts {
            http: Some(HttpFault { rule, at, response }),
            mcp: None,
            cancelled_by: None,
        }
    }

    fn responses() -> Vec<FaultResponse> {
        let mut all = vec![
            FaultResponse::Ok,
            FaultResponse::Drop,
            FaultResponse::Reset,
            FaultResponse::Idle,
            FaultResponse::Status {
                code: 500,
                retry_after_s: None,
            },
            FaultResponse::Status {
                code: 429,
                retry_after_s: Some(3),
            },
            FaultResponse::Partial { bytes: 12 },
        ];
        for then in [StallThen::Abandon, StallThen::Commit] {
            for until in [Release::ClientGone, Release::StepEnd(3)] {
                all.push(FaultResponse::Stall { then, until });
            }
        }
        for d in durations() {
            all.push(FaultResponse::Delay { delay: d });
            all.push(FaultResponse::Gather {
                requests: 2,
                at_most: d,
            });
        }
        all
    }

    /// Seconds in a day, and in humantime's year (365.25 days) and month
    /// (30.44 days): durations that spell with those units.
    const DAY_S: u64 = 86_400;
    const YEAR_S: u64 = 31_557_600;
    const MONTH_S: u64 = 2_630_016;

    fn durations() -> Vec<Duration> {
        vec![
            Duration::ZERO,
            Duration::from_millis(300),
            Duration::from_millis(1500),
            Duration::from_secs(90),
            Duration::from_secs(DAY_S + 3600),
            Duration::from_secs(2 * DAY_S),
            Duration::from_secs(YEAR_S + MONTH_S + 1),
            Duration::from_secs(3 * YEAR_S + 2 * MONTH_S),
            Duration::new(7, 1_002_003),
        ]
    }

    #[test]
    fn faults_say_what_they_always_said() {
        let cases = [
            (
                http(1, FaultPoint::AfterCommit, FaultResponse::Drop),
                "after_commit drop (rule 1)",
            ),
            (
                http(
                    2,
                    FaultPoint::BeforeCommit,
                    FaultResponse::Stall {
                        then: StallThen::Commit,
                        until: Release::StepEnd(3),
                    },
                ),
                "before_commit stall until step 3 ends then commit (rule 2)",
            ),
            (
                http(
                    1,
                    FaultPoint::BeforeCommit,
                    FaultResponse::Gather {
                        requests: 2,
                        at_most: Duration::from_millis(1500),
                    },
                ),
                "before_commit gather 2 (at most 1s 500ms) (rule 1)",
            ),
            (
                http(
                    3,
                    FaultPoint::AfterCommit,
                    FaultResponse::Status {
                        code: 429,
                        retry_after_s: Some(3),
                    },
                ),
                "after_commit status 429 (Retry-After 3) (rule 3)",
            ),
            (
                Fault::Parts {
                    http: None,
                    mcp: Some(McpFault {
                        rule: 1,
                        kind: McpFaultKind::Stall,
                    }),
                    cancelled_by: Some(7),
                },
                "mcp stall (MCP rule 1); the client cancelled (request #7)",
            ),
            (
                Fault::Parts {
                    http: None,
                    mcp: None,
                    cancelled_by: Some(12),
                },
                "the client cancelled (request #12)",
            ),
        ];
        for (fault, text) in cases {
            assert_eq!(fault.to_string(), text);
            assert_eq!(Fault::parse_parts(text).unwrap(), fault);
            assert_eq!(Fault::from(text), fault);
        }
    }

    #[test]
    fn every_fault_round_trips_through_its_text_and_json() {
        let mut n = 0;
        for response in responses() {
            for at in FaultPoint::ALL.iter().copied() {
                for mcp in [None, Some(McpFaultKind::PrimeThenClose)] {
                    for cancelled_by in [None, Some(41)] {
                        n += 1;
                        let fault = Fault::Parts {
                            http: Some(HttpFault {
                                rule: n,
                                at,
                                response,
                            }),
                            mcp: mcp.map(|kind| McpFault { rule: 2, kind }),
                            cancelled_by,
                        };
                        let text = fault.to_string();
                        assert_eq!(Fault::parse_parts(&text).unwrap(), fault, "{text}");
                        let json = serde_json::to_string(&fault).unwrap();
                        assert_eq!(json, serde_json::to_string(&text).unwrap());
                        assert_eq!(serde_json::from_str::<Fault>(&json).unwrap(), fault);
                    }
                }
            }
        }
        for kind in McpFaultKind::ALL.iter().copied() {
            let fault = Fault::Parts {
                http: None,
                mcp: Some(McpFault { rule: 4, kind }),
                cancelled_by: None,
            };
            assert_eq!(Fault::parse_parts(&fault.to_string()).unwrap(), fault);
        }
    }

    #[test]
    fn other_words_are_kept_as_read() {
        for text in ["slow 360ms, stream nothing (mcp rule 1)", "", "drop"] {
            let fault = Fault::from(text);
            assert_eq!(fault, Fault::Text(SharedStr::from(text)));
            assert_eq!(fault.to_string(), text);
            let json = serde_json::to_string(&fault).unwrap();
            assert_eq!(serde_json::from_str::<Fault>(&json).unwrap(), fault);
        }
    }

    #[test]
    fn only_the_written_text_is_parts() {
        for text in [
            "",
            "; ",
            "drop (rule 1)",
            "after_commit drop",
            "after_commit drop (rule x)",
            "after_commit drop (rule 01)",
            "during drop (rule 1)",
            "after_commit explode (rule 1)",
            "after_commit delay 1000ms (rule 1)",
            "after_commit delay 1s  (rule 1)",
            "after_commit delay 0ms (rule 1)",
            "after_commit delay 1years (rule 1)",
            "mcp stall (MCP rule 1); after_commit drop (rule 1)",
            "after_commit drop (rule 1); after_commit drop (rule 2)",
            "mcp wait (MCP rule 1)",
            "the client cancelled (request #)",
            "the client cancelled (request #7); mcp stall (MCP rule 1)",
        ] {
            assert!(Fault::parse_parts(text).is_err(), "{text:?}");
        }
    }
}

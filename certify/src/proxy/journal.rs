//! The proxy's own record of every request it served: what the client sent
//! (method, path, idempotency key), whether the upstream saw it and how it
//! answered, and what the client got. A fault is judged against this record,
//! not against what the upstream says of itself.

use std::sync::Mutex;

use lostreply_simulator::{FaultResponse, Position};
use serde::Serialize;

/// Most requests journaled; later ones are counted, not kept, so a long-running
/// proxy holds bounded memory.
pub const MAX_JOURNAL_ENTRIES: usize = 100_000;

/// What the client got, whatever the upstream did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Still being served.
    Pending,
    /// The upstream's answer, as it was.
    Answered,
    /// The connection closed (FIN) without a byte of answer.
    Dropped,
    /// The connection was reset (RST) without a byte of answer.
    Reset,
    /// Held without a byte of answer until the client left or the stall cap
    /// passed, then closed.
    Stalled,
    /// The status line, the headers (with the full length) and fewer body
    /// bytes than announced, then closed.
    Truncated,
    /// The status line and the headers, then silence until the client left or
    /// the stall cap passed, then closed.
    HeadersOnly,
    /// An error status of the proxy's making instead of the upstream's answer.
    ErrorStatus,
    /// The upstream gave no answer; the proxy answered 502.
    UpstreamUnanswered,
}

impl Fate {
    /// The word in the journal and on stderr.
    pub fn name(self) -> &'static str {
        match self {
            Fate::Pending => "pending",
            Fate::Answered => "answered",
            Fate::Dropped => "dropped",
            Fate::Reset => "reset",
            Fate::Stalled => "stalled",
            Fate::Truncated => "truncated",
            Fate::HeadersOnly => "headers_only",
            Fate::ErrorStatus => "error_status",
            Fate::UpstreamUnanswered => "upstream_unanswered",
        }
    }

    /// Whether the proxy writes an answer, whole or in part, for this fate:
    /// only such a fate can be an answer written to a client that has left.
    pub fn writes_an_answer(self) -> bool {
        match self {
            Fate::Answered
            | Fate::Truncated
            | Fate::HeadersOnly
            | Fate::ErrorStatus
            | Fate::UpstreamUnanswered => true,
            Fate::Pending | Fate::Dropped | Fate::Reset | Fate::Stalled => false,
        }
    }
}

/// What ended a hold (a stall, or the silence after a head).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldUntil {
    /// The client closed its side.
    ClientLeft,
    /// The stall cap passed first.
    StallCap,
    /// The harness step the hold waited for ended (`until: {end_of_step: N}`).
    StepEnd,
    /// The hold cap passed before that step ended.
    HoldCap,
}

/// The fault rule that decided a request, written with the scenario
/// format's names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Struck {
    /// The rule's place in the scenario's `faults` (1-based).
    pub rule: usize,
    /// Where it strikes (`before_read`, `before_commit` or `after_commit`).
    #[serde(serialize_with = "position_name")]
    pub at: Position,
    /// What it does (`drop`, `reset`, `status`, ...).
    #[serde(serialize_with = "response_name")]
    pub response: FaultResponse,
}

fn position_name<S: serde::Serializer>(at: &Position, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(at.name())
}

fn response_name<S: serde::Serializer>(r: &FaultResponse, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(super::rules::response_name(r))
}

/// One request through the proxy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Arrival order, from 1.
    pub seq: u64,
    /// The request's method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The contract's idempotency key, when the request carried one.
    pub key: Option<String>,
    /// The fault rule that matched, if any.
    pub fault: Option<Struck>,
    /// The upstream's status; `None` when the request was not forwarded or
    /// the upstream did not answer.
    pub upstream_status: Option<u16>,
    /// What the client got.
    pub fate: Fate,
    /// The status the client read, when it read one.
    pub client_status: Option<u16>,
    /// The client had closed its side of the connection when the proxy
    /// wrote its answer (or was due to): the answer went to nobody, so the
    /// caller never learns what the upstream did. Always false for a fate
    /// that writes nothing ([`Fate::writes_an_answer`]).
    pub client_left: bool,
    /// For a held connection: what ended the hold.
    pub held_until: Option<HeldUntil>,
    /// The request's body, kept only when a harness runs steps through the
    /// proxy (its judge reads which operation a create was for, and whether
    /// every attempt sent the same body); never served.
    #[serde(skip)]
    pub body: Option<bytes::Bytes>,
    /// The harness step it arrived in (0: none, or nobody runs steps).
    #[serde(skip)]
    pub step: u32,
    /// When it arrived.
    #[serde(skip)]
    pub arrived: std::time::Instant,
    /// When its client's fate was decided.
    #[serde(skip)]
    pub ended: Option<std::time::Instant>,
}

/// The journal: entries in arrival order, bounded.
#[derive(Debug, Default)]
pub struct Journal {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<Entry>,
    dropped: u64,
}

impl Journal {
    /// Records an arrival and returns its sequence number.
    pub(crate) fn arrive(&self, mut entry: Entry) -> u64 {
        let mut inner = self.lock();
        let seq = inner.entries.len() as u64 + inner.dropped + 1;
        entry.seq = seq;
        if inner.entries.len() < MAX_JOURNAL_ENTRIES {
            inner.entries.push(entry);
        } else {
            inner.dropped += 1;
        }
        seq
    }

    /// Changes entry `seq` in place (nothing when it was not kept).
    pub(crate) fn update(&self, seq: u64, change: impl FnOnce(&mut Entry)) {
        let mut inner = self.lock();
        let index = usize::try_from(seq.saturating_sub(1)).unwrap_or(usize::MAX);
        if let Some(entry) = inner.entries.get_mut(index) {
            change(entry);
        }
    }

    /// A copy of entry `seq`, when it was kept.
    pub fn entry(&self, seq: u64) -> Option<Entry> {
        let index = usize::try_from(seq.checked_sub(1)?).ok()?;
        self.lock().entries.get(index).cloned()
    }

    /// A copy of the entries kept.
    pub fn entries(&self) -> Vec<Entry> {
        self.lock().entries.clone()
    }

    /// Requests journaled so far, kept or not.
    pub fn len(&self) -> u64 {
        let inner = self.lock();
        inner.entries.len() as u64 + inner.dropped
    }

    /// Whether no request has arrived yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Requests served but not kept (past [`MAX_JOURNAL_ENTRIES`]).
    pub fn not_kept(&self) -> u64 {
        self.lock().dropped
    }

    /// The journal as served at `GET /_lostreply/journal`.
    pub fn to_json(&self) -> serde_json::Value {
        let inner = self.lock();
        serde_json::json!({
            "entries": inner.entries,
            "not_kept": inner.dropped,
        })
    }

    /// One line per fate with its count, for stderr when the proxy stops.
    pub fn summary(&self) -> String {
        let inner = self.lock();
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for entry in &inner.entries {
            match counts
                .iter_mut()
                .find(|(name, _)| *name == entry.fate.name())
            {
                Some((_, n)) => *n += 1,
                None => counts.push((entry.fate.name(), 1)),
            }
        }
        let forwarded = inner
            .entries
            .iter()
            .filter(|e| e.upstream_status.is_some())
            .count();
        let written_to_nobody = inner.entries.iter().filter(|e| e.client_left).count();
        let fates: Vec<String> = counts.iter().map(|(n, c)| format!("{n} {c}")).collect();
        format!(
            "{} requests ({} answered by the upstream); client fates: {}; answers written after the client left: {}",
            inner.entries.len() as u64 + inner.dropped,
            forwarded,
            if fates.is_empty() {
                "none".to_owned()
            } else {
                fates.join(", ")
            },
            written_to_nobody
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One line for stderr about a finished request.
pub fn line(entry: &Entry) -> String {
    let upstream = entry
        .upstream_status
        .map_or_else(|| "none".to_owned(), |s| s.to_string());
    let fault = entry.fault.as_ref().map_or_else(String::new, |f| {
        let response = super::rules::response_name(&f.response);
        format!(" [rule {}: {} {response}]", f.rule, f.at.name())
    });
    let left = if entry.client_left {
        " (written after the client left)"
    } else {
        ""
    };
    format!(
        "#{} {} {} key={} upstream={} client={}{}{}",
        entry.seq,
        entry.method,
        entry.path,
        entry.key.as_deref().unwrap_or("-"),
        upstream,
        entry.fate.name(),
        left,
        fault
    )
}

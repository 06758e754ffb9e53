//! A journal entry as kept: shared strings instead of copies, the fault boxed
//! (most requests have none), the sequence number implied by the position.

use lostreply_text::SharedStr;
use nonmax::{NonMaxU32, NonMaxU64};

use crate::plan::RequestKind;
use crate::record::{AppliedFault, JournalEntry, ResponseFate, RpcCall};

use super::interner::Interner;

/// A request as it arrives, borrowed from the request itself.
#[derive(Debug)]
pub(crate) struct Arrival<'a> {
    pub(crate) at_ms: i64,
    pub(crate) real_start_ms: u64,
    /// The plan's shared copy (see `Shared::tenants`): kept as it is, not
    /// interned again.
    pub(crate) tenant: Option<&'a SharedStr>,
    pub(crate) method: &'a str,
    pub(crate) path: &'a str,
    pub(crate) query: Option<&'a str>,
    pub(crate) kind: Option<RequestKind>,
    pub(crate) resource: Option<&'a str>,
    pub(crate) idempotency_key: Option<&'a str>,
    pub(crate) fault: Option<AppliedFault>,
    pub(crate) step: Option<u32>,
}

/// Paths longer than this are never interned: only collection paths repeat.
const MAX_INTERNED_PATH: usize = 64;

/// The method's shared text: a literal for HTTP's standard methods (every
/// request names one, and a literal's copies share no reference count),
/// interned for any other.
fn method_text(method: &str, strings: &mut Interner) -> SharedStr {
    use lostreply_text::shared_literal;
    const GET: SharedStr = shared_literal!("GET");
    const POST: SharedStr = shared_literal!("POST");
    const PUT: SharedStr = shared_literal!("PUT");
    const PATCH: SharedStr = shared_literal!("PATCH");
    const DELETE: SharedStr = shared_literal!("DELETE");
    const HEAD: SharedStr = shared_literal!("HEAD");
    const OPTIONS: SharedStr = shared_literal!("OPTIONS");
    match method {
        "GET" => GET,
        "POST" => POST,
        "PUT" => PUT,
        "PATCH" => PATCH,
        "DELETE" => DELETE,
        "HEAD" => HEAD,
        "OPTIONS" => OPTIONS,
        other => strings.intern(other),
    }
}

/// One retained journal entry.
#[derive(Debug)]
pub(super) struct Compact {
    pub(super) at_ms: i64,
    pub(super) real_start_ms: u64,
    pub(super) real_end_ms: Option<NonMaxU64>,
    pub(super) tenant: Option<SharedStr>,
    pub(super) method: SharedStr,
    pub(super) path: SharedStr,
    pub(super) query: Option<SharedStr>,
    pub(super) kind: Option<RequestKind>,
    pub(super) resource: Option<SharedStr>,
    pub(super) idempotency_key: Option<SharedStr>,
    pub(super) fingerprint: Option<SharedStr>,
    pub(super) fault: Option<Box<AppliedFault>>,
    pub(super) effect: Option<SharedStr>,
    pub(super) replayed: bool,
    pub(super) step: Option<NonMaxU32>,
    pub(super) fate: ResponseFate,
    /// The JSON-RPC side of an MCP request (boxed: most requests are `/v1`).
    pub(super) rpc: Option<Box<RpcCall>>,
}

impl Compact {
    pub(super) fn from_entry(entry: JournalEntry, strings: &mut Interner) -> Compact {
        let arrival = Arrival {
            at_ms: entry.at_ms,
            real_start_ms: entry.real_start_ms,
            tenant: entry.tenant.as_ref(),
            method: &entry.method,
            path: &entry.path,
            // Set below from the entry's own shared copies.
            query: None,
            kind: entry.kind,
            resource: entry.resource.as_deref(),
            idempotency_key: None,
            fault: entry.fault.map(|fault| *fault),
            step: entry.step.map(|s| s.get()),
        };
        let mut compact = Compact::from_arrival(&arrival, strings);
        // Text that is not interned stays the entry's copy (shared, not copied).
        compact.query = entry.query;
        compact.idempotency_key = entry.idempotency_key;
        compact.real_end_ms = entry.real_end_ms;
        compact.fingerprint = entry.fingerprint;
        compact.effect = entry.effect;
        compact.replayed = entry.replayed;
        compact.fate = entry.fate;
        compact.rpc = entry.rpc;
        compact
    }

    /// A request just arrived: nothing decided yet, its fate in progress.
    pub(super) fn from_arrival(arrival: &Arrival<'_>, strings: &mut Interner) -> Compact {
        // An item path (`/v1/tickets/tkt_…`) is unique to its request:
        // interning it would only fill the table.
        let repeats = arrival.path.len() <= MAX_INTERNED_PATH
            && arrival.path.bytes().filter(|&b| b == b'/').count() <= 2;
        let path = if repeats {
            strings.intern(arrival.path)
        } else {
            SharedStr::from(arrival.path)
        };
        Compact {
            at_ms: arrival.at_ms,
            real_start_ms: arrival.real_start_ms,
            real_end_ms: None,
            tenant: arrival.tenant.cloned(),
            method: method_text(arrival.method, strings),
            path,
            query: arrival.query.map(SharedStr::from),
            kind: arrival.kind,
            resource: arrival.resource.map(|r| strings.intern(r)),
            idempotency_key: arrival.idempotency_key.map(SharedStr::from),
            fingerprint: None,
            fault: arrival.fault.map(Box::new),
            effect: None,
            replayed: false,
            step: arrival.step.map(crate::record::nonmax_u32),
            fate: ResponseFate::InProgress,
            rpc: None,
        }
    }

    pub(super) fn to_entry(&self, seq: u64) -> JournalEntry {
        JournalEntry {
            seq,
            at_ms: self.at_ms,
            real_start_ms: self.real_start_ms,
            real_end_ms: self.real_end_ms,
            // Shared text: a reference count per field, not a copy.
            tenant: self.tenant.clone(),
            method: self.method.clone(),
            path: self.path.clone(),
            query: self.query.clone(),
            kind: self.kind,
            resource: self.resource.clone(),
            idempotency_key: self.idempotency_key.clone(),
            fingerprint: self.fingerprint.clone(),
            fault: self.fault.clone(),
            effect: self.effect.clone(),
            replayed: self.replayed,
            step: self.step,
            fate: self.fate.clone(),
            rpc: self.rpc.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standard_method_is_its_literal_and_any_other_is_interned() {
        let mut strings = Interner::default();
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] {
            let text = method_text(method, &mut strings);
            assert_eq!(text.as_str(), method);
            // A literal: every copy is the same static text.
            assert!(SharedStr::ptr_eq(&text, &method_text(method, &mut strings)));
        }
        let odd = method_text("PROPFIND", &mut strings);
        assert_eq!(odd.as_str(), "PROPFIND");
        assert!(SharedStr::ptr_eq(&odd, &strings.intern("PROPFIND")));
    }
}

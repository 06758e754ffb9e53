//! The journal: every provider request, in arrival order, with how it ended.
//!
//! Entries are kept compact (`compact`): repeated strings (tenant, method,
//! collection path, resource) are interned, and a create's fingerprint and
//! effect id are shared with the store rather than copied. [`JournalEntry`]
//! stays the boundary type: it goes in through [`Journal::push`] and comes out
//! of [`Journal::entries`].
//!
//! Bounded: past [`MAX_JOURNAL_ENTRIES`] retained entries the oldest finished
//! ones are summarised (counts by kind and fate, [`DroppedSummary`]) and
//! dropped, so a `serve` that runs for days keeps serving. An entry still in
//! progress is never dropped: `wait_quiet` and `wait_request_done` must see it.

mod compact;
mod interner;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use lostreply_text::SharedStr;
use serde::Serialize;

use crate::record::{JournalEntry, ResponseFate};

pub(crate) use compact::Arrival;
use compact::Compact;
pub(crate) use interner::Interner;

/// Most journal entries kept; past it the oldest finished entries are
/// summarised and dropped. Far above any scenario run (a few hundred
/// requests), so the harness always reads whole journals.
pub const MAX_JOURNAL_ENTRIES: usize = 1_000_000;

/// What the dropped (oldest) entries were: their number and their counts by
/// kind and by fate, so a long run's totals stay known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DroppedSummary {
    /// Entries dropped: the retained journal starts at `seq` `dropped + 1`.
    pub dropped: u64,
    /// Counts by request kind (`create`, `retrieve`, …; `none` when the
    /// request addressed no collection).
    pub by_kind: BTreeMap<String, u64>,
    /// Counts by fate (`sent`, `dropped`, `reset`, `stalled`, `truncated`, `idle`).
    pub by_fate: BTreeMap<String, u64>,
    /// Dropped entries that committed an effect.
    pub committed: u64,
}

/// The journal.
#[derive(Debug)]
pub(crate) struct Journal {
    entries: VecDeque<Compact>,
    /// Requests whose response has not ended: `in_progress` answers from
    /// here instead of scanning a journal of up to a million entries.
    open: BTreeSet<u64>,
    summary: DroppedSummary,
    strings: Interner,
    limit: usize,
}

impl Default for Journal {
    fn default() -> Journal {
        Journal::with_limit(MAX_JOURNAL_ENTRIES)
    }
}

impl Journal {
    /// A journal keeping at most `limit` entries (tests use small ones).
    pub(crate) fn with_limit(limit: usize) -> Journal {
        Journal {
            entries: VecDeque::new(),
            open: BTreeSet::new(),
            summary: DroppedSummary::default(),
            strings: Interner::default(),
            limit: limit.max(1),
        }
    }

    /// The retained entries, in arrival order.
    pub(crate) fn entries(&self) -> Vec<JournalEntry> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| e.to_entry(self.seq_of(i)))
            .collect()
    }

    /// Requests journaled since the start, dropped ones included: the last `seq`.
    pub(crate) fn total(&self) -> u64 {
        self.summary.dropped + self.entries.len() as u64
    }

    /// What was dropped to keep the journal bounded.
    pub(crate) fn dropped(&self) -> &DroppedSummary {
        &self.summary
    }

    fn seq_of(&self, index: usize) -> u64 {
        self.summary.dropped + index as u64 + 1
    }

    fn index_of(&self, seq: u64) -> Option<usize> {
        let offset = seq.checked_sub(self.summary.dropped + 1)?;
        usize::try_from(offset)
            .ok()
            .filter(|&i| i < self.entries.len())
    }

    /// Appends a request that just arrived (in progress), giving it the next
    /// sequence number; drops the oldest finished entries past the bound.
    /// Borrowed: the provider's hot path journals every request, and owned
    /// strings for a `JournalEntry` would be five allocations thrown away here.
    pub(crate) fn push_arrival(&mut self, arrival: &Arrival<'_>) -> u64 {
        let seq = self.total() + 1;
        self.open.insert(seq);
        let compact = Compact::from_arrival(arrival, &mut self.strings);
        self.entries.push_back(compact);
        self.trim();
        seq
    }

    /// Appends `entry`, giving it the next sequence number; drops the oldest
    /// finished entries past the bound.
    pub(crate) fn push(&mut self, entry: JournalEntry) -> u64 {
        let seq = self.total() + 1;
        if entry.fate == ResponseFate::InProgress {
            self.open.insert(seq);
        }
        let compact = Compact::from_entry(entry, &mut self.strings);
        self.entries.push_back(compact);
        self.trim();
        seq
    }

    /// Drops finished entries from the front while over the bound; stops at
    /// the first one in progress (it finishes within the plan's caps).
    fn trim(&mut self) {
        while self.entries.len() > self.limit {
            let Some(front) = self.entries.front() else {
                return;
            };
            if front.fate == ResponseFate::InProgress {
                return;
            }
            let kind = front.kind.map_or("none", |k| k.name());
            *self.summary.by_kind.entry(kind.to_owned()).or_insert(0) += 1;
            *self
                .summary
                .by_fate
                .entry(fate_name(&front.fate).to_owned())
                .or_insert(0) += 1;
            if front.effect.is_some() {
                self.summary.committed += 1;
            }
            self.summary.dropped += 1;
            self.entries.pop_front();
        }
    }

    fn get_mut(&mut self, seq: u64) -> Option<&mut Compact> {
        let index = self.index_of(seq)?;
        self.entries.get_mut(index)
    }

    /// The fate of request `seq`; `None` when it was never journaled or was dropped.
    #[cfg(test)]
    pub(crate) fn fate(&self, seq: u64) -> Option<&ResponseFate> {
        self.entries.get(self.index_of(seq)?).map(|e| &e.fate)
    }

    /// True while request `seq`'s response has not ended.
    pub(crate) fn is_open(&self, seq: u64) -> bool {
        self.open.contains(&seq)
    }

    /// A create's canonical body, shared with the store's effect.
    pub(crate) fn set_fingerprint(&mut self, seq: u64, fingerprint: SharedStr) {
        if let Some(entry) = self.get_mut(seq) {
            entry.fingerprint = Some(fingerprint);
        }
    }

    /// The `Idempotency-Key` request `seq` was journaled with, shared.
    pub(crate) fn idempotency_key(&self, seq: u64) -> Option<SharedStr> {
        self.entries
            .get(self.index_of(seq)?)?
            .idempotency_key
            .clone()
    }

    /// The effect this request committed, shared with the store's id.
    pub(crate) fn set_effect(&mut self, seq: u64, id: SharedStr) {
        if let Some(entry) = self.get_mut(seq) {
            entry.effect = Some(id);
        }
    }

    /// Changes request `seq`'s entry through its boundary form: for the MCP
    /// endpoint, which learns what a request is only once its JSON-RPC body
    /// is read (rare next to `/v1`'s creates, so the round trip costs nothing
    /// that matters).
    pub(crate) fn update(&mut self, seq: u64, change: impl FnOnce(&mut JournalEntry)) {
        let Some(index) = self.index_of(seq) else {
            return;
        };
        let Some(compact) = self.entries.get(index) else {
            return;
        };
        let mut entry = compact.to_entry(seq);
        change(&mut entry);
        let open = entry.fate == ResponseFate::InProgress;
        let updated = Compact::from_entry(entry, &mut self.strings);
        if let Some(slot) = self.entries.get_mut(index) {
            *slot = updated;
        }
        if !open {
            self.open.remove(&seq);
        }
    }

    /// The response was an idempotent replay.
    pub(crate) fn set_replayed(&mut self, seq: u64) {
        if let Some(entry) = self.get_mut(seq) {
            entry.replayed = true;
        }
    }

    /// Requests whose response has not ended yet, in arrival order.
    pub(crate) fn in_progress(&self) -> impl Iterator<Item = u64> + '_ {
        self.open.iter().copied()
    }

    /// Records how the response ended; the first ending recorded wins, because
    /// the first one is what happened on the socket.
    pub(crate) fn finish(&mut self, seq: u64, fate: ResponseFate, real_end_ms: u64) {
        if !self.open.remove(&seq) {
            return;
        }
        if let Some(entry) = self.get_mut(seq) {
            entry.fate = fate;
            entry.real_end_ms = Some(crate::record::nonmax_u64(real_end_ms));
        }
        self.trim();
    }
}

/// The fate's name as the journal's JSON writes it.
fn fate_name(fate: &ResponseFate) -> &'static str {
    match fate {
        ResponseFate::InProgress => "in_progress",
        ResponseFate::Sent { .. } => "sent",
        ResponseFate::Dropped => "dropped",
        ResponseFate::Reset => "reset",
        ResponseFate::Stalled { .. } => "stalled",
        ResponseFate::Cancelled => "cancelled",
        ResponseFate::Truncated { .. } => "truncated",
        ResponseFate::Idle { .. } => "idle",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::RequestKind;

    fn entry(path: &str) -> JournalEntry {
        JournalEntry {
            seq: 0,
            at_ms: 1,
            real_start_ms: 2,
            real_end_ms: None,
            tenant: Some("sk_test_a".into()),
            method: "POST".into(),
            path: path.into(),
            query: Some("a=1".into()),
            kind: Some(RequestKind::Create),
            resource: Some("tickets".into()),
            idempotency_key: Some("k1".into()),
            fingerprint: None,
            fault: None,
            effect: None,
            replayed: false,
            step: Some(crate::record::nonmax_u32(3)),
            fate: ResponseFate::InProgress,
            rpc: None,
        }
    }

    #[test]
    fn an_entry_comes_out_as_it_went_in() {
        let mut journal = Journal::default();
        let seq = journal.push(entry("/v1/tickets"));
        journal.set_fingerprint(seq, SharedStr::from("{\"a\":1}"));
        journal.set_effect(seq, SharedStr::from("tkt_1"));
        journal.set_replayed(seq);
        journal.finish(
            seq,
            ResponseFate::Sent {
                status: 201,
                client_left: false,
            },
            9,
        );
        let mut expected = entry("/v1/tickets");
        expected.seq = 1;
        expected.fingerprint = Some("{\"a\":1}".into());
        expected.effect = Some("tkt_1".into());
        expected.replayed = true;
        expected.real_end_ms = Some(crate::record::nonmax_u64(9));
        expected.fate = ResponseFate::Sent {
            status: 201,
            client_left: false,
        };
        assert_eq!(journal.entries(), vec![expected]);
    }

    #[test]
    fn an_mcp_entry_keeps_its_json_rpc_side_through_an_update() {
        let mut journal = Journal::default();
        let mut first = entry("/mcp");
        first.kind = None;
        first.rpc = Some(Box::new(crate::record::RpcCall {
            method: "tools/call".to_owned(),
            tool: Some("create_ticket".to_owned()),
            id: Some(serde_json::json!(7)),
            fault: None,
            task: None,
            cancelled: None,
        }));
        let seq = journal.push(first.clone());
        journal.update(seq, |e| e.kind = Some(RequestKind::Create));
        assert!(journal.is_open(seq), "an update is not an ending");
        let mut expected = first;
        expected.seq = seq;
        expected.kind = Some(RequestKind::Create);
        assert_eq!(journal.entries(), vec![expected]);
    }

    #[test]
    fn past_the_bound_the_oldest_finished_entries_are_summarised_never_open_ones() {
        let mut journal = Journal::with_limit(2);
        let first = journal.push(entry("/v1/tickets"));
        let second = journal.push(entry("/v1/tickets"));
        journal.finish(second, ResponseFate::Dropped, 5);
        // Over the bound, but the oldest is still in progress: nothing goes.
        let third = journal.push(entry("/v1/tickets/tkt_1"));
        assert_eq!(journal.entries().len(), 3);
        assert_eq!(
            journal.in_progress().collect::<Vec<_>>(),
            vec![first, third]
        );

        journal.finish(
            first,
            ResponseFate::Sent {
                status: 201,
                client_left: false,
            },
            6,
        );
        assert_eq!(journal.dropped().dropped, 1);
        let seqs: Vec<u64> = journal.entries().iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![2, 3]);
        journal.push(entry("/v1/tickets"));
        let summary = journal.dropped();
        assert_eq!(summary.dropped, 2);
        assert_eq!(summary.by_kind.get("create"), Some(&2));
        assert_eq!(summary.by_fate.get("sent"), Some(&1));
        assert_eq!(summary.by_fate.get("dropped"), Some(&1));
        assert_eq!(journal.total(), 4);
        assert_eq!(journal.fate(1), None);
        assert!(journal.is_open(third));
    }
}

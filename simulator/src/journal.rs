//! The journal: every provider request, in arrival order, with how it ended.

use crate::record::{JournalEntry, ResponseFate};

/// Most requests one run journals; beyond it requests are refused with 503
/// (a long `lostreply serve` must not grow without bound).
pub const MAX_JOURNAL_ENTRIES: usize = 1_000_000;

/// The journal.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    entries: Vec<JournalEntry>,
}

impl Journal {
    pub(crate) fn entries(&self) -> &[JournalEntry] {
        &self.entries
    }

    pub(crate) fn is_full(&self) -> bool {
        self.entries.len() >= MAX_JOURNAL_ENTRIES
    }

    /// Appends `entry`, giving it the next sequence number.
    pub(crate) fn push(&mut self, mut entry: JournalEntry) -> u64 {
        let seq = self.entries.len() as u64 + 1;
        entry.seq = seq;
        self.entries.push(entry);
        seq
    }

    pub(crate) fn update(&mut self, seq: u64, change: impl FnOnce(&mut JournalEntry)) {
        let index = usize::try_from(seq.saturating_sub(1)).unwrap_or(usize::MAX);
        if let Some(entry) = self.entries.get_mut(index) {
            change(entry);
        }
    }

    /// Requests whose response has not ended yet. A scan of the whole journal:
    /// the harness asks between steps of runs that hold a few hundred requests.
    pub(crate) fn in_progress(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries
            .iter()
            .filter(|e| e.fate == ResponseFate::InProgress)
            .map(|e| e.seq)
    }

    /// Records how the response ended; the first ending recorded wins, because
    /// the first one is what happened on the socket.
    pub(crate) fn finish(&mut self, seq: u64, fate: ResponseFate, real_end_ms: u64) {
        self.update(seq, |entry| {
            if entry.fate == ResponseFate::InProgress {
                entry.fate = fate;
                entry.real_end_ms = Some(real_end_ms);
            }
        });
    }
}

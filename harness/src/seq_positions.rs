//! A journal entry's position from its `seq`: effects name the request that
//! made them by its seq (`request_seq`), and both the attribution and the
//! run's collection of its records go from an effect to that request.

use lostreply_simulator::fixed_map::{map_with_capacity, FixedMap};
use lostreply_simulator::JournalEntry;

/// A journal entry's position from its `seq`: arithmetic when the journal's
/// seqs run on by one (as the simulator numbers them), a map otherwise. A map
/// of a million seqs would be a million inserts and lookups for nothing.
pub(crate) enum SeqPositions {
    /// `seq - first` is the position.
    Contiguous { first: u64, len: usize },
    /// Seq to position (of a seq given twice, the last).
    Mapped(FixedMap<u64, usize>),
}

impl SeqPositions {
    pub(crate) fn new(journal: &[JournalEntry]) -> SeqPositions {
        let first = journal.first().map_or(0, |e| e.seq);
        let contiguous = journal
            .iter()
            .enumerate()
            .all(|(i, e)| u64::try_from(i).ok().and_then(|i| first.checked_add(i)) == Some(e.seq));
        if contiguous {
            SeqPositions::Contiguous {
                first,
                len: journal.len(),
            }
        } else {
            let mut map = map_with_capacity(journal.len());
            for (position, entry) in journal.iter().enumerate() {
                map.insert(entry.seq, position);
            }
            SeqPositions::Mapped(map)
        }
    }

    pub(crate) fn position(&self, seq: u64) -> Option<usize> {
        match self {
            SeqPositions::Contiguous { first, len } => seq
                .checked_sub(*first)
                .and_then(|offset| usize::try_from(offset).ok())
                .filter(|offset| offset < len),
            SeqPositions::Mapped(map) => map.get(&seq).copied(),
        }
    }
}

//! The simulator's records as the soak reads them at the end (the control
//! API's journal and ledger, the fields it compares), and the comparison:
//! the ledger and the journal agree entry for entry where both still hold
//! the entry, and in their counts where one has summarised it out.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

/// `GET /_lostreply/journal`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Journal {
    /// The entries still held, in `seq` order.
    pub data: Vec<Entry>,
    /// Entries summarised out; the first held has `seq` `dropped + 1`.
    pub dropped: u64,
    /// What they were.
    pub dropped_summary: Dropped,
}

/// The journal's summary of the entries it dropped.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Dropped {
    /// Counts by fate.
    pub by_fate: BTreeMap<String, u64>,
    /// Dropped entries that committed an effect.
    pub committed: u64,
}

/// One journal entry, the fields compared.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    /// Position, from 1.
    pub seq: u64,
    /// The caller, when its credential was valid.
    pub tenant: Option<String>,
    /// The request's key.
    pub idempotency_key: Option<String>,
    /// The effect it committed.
    pub effect: Option<String>,
    /// How its response ended (`in_progress` while it runs).
    pub fate: String,
}

/// `GET /_lostreply/ledger`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Ledger {
    /// The effects still held, in commit order.
    pub data: Vec<Effect>,
    /// Effects summarised out of the store.
    pub summarised: u64,
}

/// One effect, the fields compared.
#[derive(Debug, Clone, Deserialize)]
pub struct Effect {
    /// The object's id.
    pub id: String,
    /// Its owner.
    pub tenant: String,
    /// The key of the create that made it.
    pub idempotency_key: Option<String>,
    /// The journal entry of that create.
    pub request_seq: Option<u64>,
}

/// What the comparison found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agreement {
    /// Requests journaled, dropped ones included.
    pub journaled: u64,
    /// Effects by the journal (dropped entries' count included).
    pub committed_by_journal: u64,
    /// Effects by the ledger (summarised ones included).
    pub committed_by_ledger: u64,
    /// Pairs found on both sides, naming each other.
    pub matched: u64,
    /// Held journal entries whose effect the ledger no longer holds.
    pub journal_only: u64,
    /// Held effects whose request the journal no longer holds.
    pub ledger_only: u64,
    /// Entries and effects that name each other wrongly or name nothing.
    pub disagreements: u64,
    /// Keys (per tenant) with more than one effect, among held records.
    pub keys_with_two_effects: u64,
    /// Entries still `in_progress`.
    pub in_progress: u64,
    /// Requests by fate, dropped entries included.
    pub by_fate: BTreeMap<String, u64>,
    /// The first disagreement, as text.
    pub first: Option<String>,
}

impl Agreement {
    /// Both records tell the same story: the same number of effects, every
    /// pair both hold names each other, and what only one holds is no more
    /// than the other summarised out.
    pub fn holds(&self, journal_dropped_committed: u64, ledger_summarised: u64) -> bool {
        self.committed_by_journal == self.committed_by_ledger
            && self.disagreements == 0
            && self.journal_only <= ledger_summarised
            && self.ledger_only <= journal_dropped_committed
    }

    fn disagree(&mut self, text: String) {
        self.disagreements += 1;
        if self.first.is_none() {
            self.first = Some(text);
        }
    }
}

/// Compares the two records.
pub fn compare(journal: &Journal, ledger: &Ledger) -> Agreement {
    let mut found = Agreement {
        journaled: journal.dropped + journal.data.len() as u64,
        by_fate: journal.dropped_summary.by_fate.clone(),
        ..Agreement::default()
    };
    let by_id: HashMap<&str, &Effect> = ledger.data.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut journal_keys: HashMap<(&str, &str), u64> = HashMap::new();
    let mut held_committed = 0u64;
    for entry in &journal.data {
        *found.by_fate.entry(entry.fate.clone()).or_default() += 1;
        if entry.fate == "in_progress" {
            found.in_progress += 1;
        }
        let Some(effect_id) = &entry.effect else {
            continue;
        };
        held_committed += 1;
        if let (Some(tenant), Some(key)) = (&entry.tenant, &entry.idempotency_key) {
            *journal_keys.entry((tenant, key)).or_default() += 1;
        }
        match by_id.get(effect_id.as_str()) {
            Some(effect) if effect.request_seq == Some(entry.seq) => found.matched += 1,
            Some(effect) => found.disagree(format!(
                "journal entry {} committed {effect_id}, which the ledger says request {:?} made",
                entry.seq, effect.request_seq
            )),
            None => found.journal_only += 1,
        }
    }
    found.committed_by_journal = journal.dropped_summary.committed + held_committed;
    found.committed_by_ledger = ledger.summarised + ledger.data.len() as u64;
    for effect in &ledger.data {
        match effect.request_seq {
            Some(seq) if seq > journal.dropped => {
                let entry = seq
                    .checked_sub(journal.dropped + 1)
                    .and_then(|i| journal.data.get(usize::try_from(i).ok()?))
                    .filter(|e| e.seq == seq);
                match entry {
                    Some(e) if e.effect.as_deref() == Some(effect.id.as_str()) => {}
                    Some(e) => found.disagree(format!(
                        "effect {} names request {seq}, whose journal entry committed {:?}",
                        effect.id, e.effect
                    )),
                    None => found.disagree(format!(
                        "effect {} names request {seq}, which the journal does not hold",
                        effect.id
                    )),
                }
            }
            Some(_) => found.ledger_only += 1,
            None => found.disagree(format!("effect {} has no request", effect.id)),
        }
    }
    let mut ledger_keys: HashMap<(&str, &str), u64> = HashMap::new();
    for effect in &ledger.data {
        if let Some(key) = &effect.idempotency_key {
            *ledger_keys.entry((&effect.tenant, key)).or_default() += 1;
        }
    }
    let twice = |counts: &HashMap<(&str, &str), u64>| counts.values().filter(|&&n| n > 1).count();
    found.keys_with_two_effects = twice(&ledger_keys).max(twice(&journal_keys)) as u64;
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entry(seq: u64, effect: Option<&str>, key: &str) -> Entry {
        Entry {
            seq,
            tenant: Some("sk_test_a".to_owned()),
            idempotency_key: Some(key.to_owned()),
            effect: effect.map(str::to_owned),
            fate: "sent".to_owned(),
        }
    }

    fn effect(id: &str, seq: u64, key: &str) -> Effect {
        Effect {
            id: id.to_owned(),
            tenant: "sk_test_a".to_owned(),
            idempotency_key: Some(key.to_owned()),
            request_seq: Some(seq),
        }
    }

    #[test]
    fn records_that_name_each_other_agree() {
        let journal = Journal {
            data: vec![
                entry(1, Some("t1"), "k1"),
                entry(2, None, "k1"),
                entry(3, Some("t2"), "k2"),
            ],
            ..Journal::default()
        };
        let ledger = Ledger {
            data: vec![effect("t1", 1, "k1"), effect("t2", 3, "k2")],
            summarised: 0,
        };
        let found = compare(&journal, &ledger);
        assert_eq!(
            (
                found.matched,
                found.disagreements,
                found.keys_with_two_effects
            ),
            (2, 0, 0)
        );
        assert!(found.holds(0, 0));
    }

    #[test]
    fn a_second_effect_for_a_key_and_a_missing_effect_are_found() {
        let journal = Journal {
            data: vec![
                entry(1, Some("t1"), "k1"),
                entry(2, Some("t2"), "k1"),
                entry(3, Some("t3"), "k3"),
            ],
            ..Journal::default()
        };
        let ledger = Ledger {
            data: vec![effect("t1", 1, "k1"), effect("t2", 2, "k1")],
            summarised: 0,
        };
        let found = compare(&journal, &ledger);
        assert_eq!(found.keys_with_two_effects, 1);
        // t3 is in the journal only, and nothing was summarised out.
        assert_eq!(found.journal_only, 1);
        assert!(!found.holds(0, 0));
    }

    #[test]
    fn summarised_records_are_compared_by_their_counts() {
        // Two entries dropped (one committed t1); the ledger summarised t1 and t2.
        let journal = Journal {
            data: vec![entry(3, Some("t2"), "k2"), entry(4, Some("t3"), "k3")],
            dropped: 2,
            dropped_summary: Dropped {
                by_fate: BTreeMap::from([("sent".to_owned(), 2)]),
                committed: 1,
            },
        };
        let ledger = Ledger {
            data: vec![effect("t3", 4, "k3")],
            summarised: 2,
        };
        let found = compare(&journal, &ledger);
        assert_eq!(
            (found.committed_by_journal, found.committed_by_ledger),
            (3, 3)
        );
        assert_eq!(
            (found.matched, found.journal_only, found.ledger_only),
            (1, 1, 0)
        );
        assert!(found.holds(1, 2));
        assert_eq!(found.by_fate["sent"], 4);
    }
}

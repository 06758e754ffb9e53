//! The pure decisions behind the ladder: how long a key may be replayed,
//! which rungs can still give evidence, and when a person must be asked.

use jiff::{SignedDuration, Timestamp};
use lostreply_harness::protocol::ContractLookup;

use super::keys::KeyMode;

/// A list looks this far before the first send, so an object stamped by a
/// provider clock slightly behind ours is still on the page.
pub const LIST_SLACK_S: i64 = 60;

/// Climbs in a row without any evidence after which a person is asked even
/// though a rung is still there (a provider that stalls every lookup and
/// every replay forever would otherwise be polled forever).
pub const ESCALATE_AFTER_INCONCLUSIVE: u32 = 5;

/// True while the provider still remembers a key first used at
/// `first_sent_at`: `now < first_sent_at + retention_s`. Retention counts
/// from the first use, not the latest attempt, and the end itself is out:
/// at that instant the provider may already have forgotten.
pub fn key_retained(first_sent_at: Timestamp, now: Timestamp, retention_s: u64) -> bool {
    let Ok(seconds) = i64::try_from(retention_s) else {
        return true;
    };
    match first_sent_at.checked_add(SignedDuration::from_secs(seconds)) {
        Ok(expiry) => now < expiry,
        // Past the end of time: no clock reaches it.
        Err(_) => true,
    }
}

/// `created_gte` for a list: the first send minus [`LIST_SLACK_S`].
pub fn list_since(first_sent_at: Timestamp) -> Timestamp {
    first_sent_at
        .checked_sub(SignedDuration::from_secs(LIST_SLACK_S))
        .unwrap_or(Timestamp::MIN)
}

/// The rungs of the ladder that can still give evidence for one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rungs {
    /// A same-key replay the provider still deduplicates.
    pub replay: bool,
    /// Retrieve by the object id we already know.
    pub retrieve: bool,
    /// Search by `client_reference`.
    pub search: bool,
    /// List recent objects.
    pub list: bool,
}

impl Rungs {
    /// What the contract offers now. Retrieve needs an id, so it counts only
    /// once the object is known; a replay needs keys and a retained key.
    pub fn available(
        mode: KeyMode,
        key_retained: bool,
        lookup: ContractLookup,
        object_known: bool,
    ) -> Rungs {
        Rungs {
            replay: mode.has_keys() && key_retained,
            retrieve: lookup.retrieve && object_known,
            search: lookup.client_reference,
            list: lookup.list_recent,
        }
    }

    /// At least one lookup can run.
    pub fn any_lookup(self) -> bool {
        self.retrieve || self.search || self.list
    }

    /// At least one rung can run.
    pub fn any(self) -> bool {
        self.replay || self.any_lookup()
    }
}

/// Why a non-terminal operation must go to a person now, if it must: when
/// no rung can give evidence any more (that is the situation, whatever the
/// count), or after [`ESCALATE_AFTER_INCONCLUSIVE`] fruitless climbs.
pub fn escalation(terminal: bool, rungs: Rungs, inconclusive_climbs: u32) -> Option<String> {
    if terminal {
        None
    } else if !rungs.any() {
        Some(
            "no key replay and no lookup can tell what happened any more; a person must check"
                .to_owned(),
        )
    } else if inconclusive_climbs >= ESCALATE_AFTER_INCONCLUSIVE {
        Some(format!(
            "{inconclusive_climbs} attempts in a row found no evidence; a person must check"
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap_or(Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn retention_counts_from_the_first_use_and_excludes_its_end() {
        let first = at("2026-01-01T00:00:00Z");
        let day = 86_400;
        assert!(key_retained(first, first, day));
        assert!(key_retained(first, at("2026-01-01T23:59:59Z"), day));
        assert!(!key_retained(first, at("2026-01-02T00:00:00Z"), day));
        assert!(!key_retained(first, at("2026-01-02T01:00:00Z"), day));
        assert!(!key_retained(first, first, 0));
        assert!(key_retained(first, at("2100-01-01T00:00:00Z"), u64::MAX));
    }

    #[test]
    fn lists_reach_a_minute_before_the_first_send() {
        assert_eq!(
            list_since(at("2026-01-01T00:00:00Z")).to_string(),
            "2025-12-31T23:59:00Z"
        );
    }

    #[test]
    fn escalation_follows_the_situation_not_a_count() {
        let none = ContractLookup::NONE;
        let retrieve_only = none.with_retrieve(true);
        let search = none.with_client_reference(true);
        // No keys, no lookup: at once, on the first climb.
        let blind = Rungs::available(KeyMode::None, true, none, false);
        assert!(escalation(false, blind, 0).is_some());
        // Expired key, and retrieve without a known id does not count.
        let expired = Rungs::available(KeyMode::Stripe, false, retrieve_only, false);
        assert!(escalation(false, expired, 0).is_some());
        // A retained key, or any usable lookup, is still a way to find out.
        let retained = Rungs::available(KeyMode::Stripe, true, none, false);
        assert!(escalation(false, retained, 0).is_none());
        let known = Rungs::available(KeyMode::None, false, retrieve_only, true);
        assert!(escalation(false, known, 0).is_none());
        let searchable = Rungs::available(KeyMode::None, false, search, false);
        assert!(escalation(false, searchable, ESCALATE_AFTER_INCONCLUSIVE - 1).is_none());
        assert!(escalation(false, searchable, ESCALATE_AFTER_INCONCLUSIVE).is_some());
        // A terminal operation is never escalated.
        assert!(escalation(true, blind, 99).is_none());
        const { assert!(ESCALATE_AFTER_INCONCLUSIVE >= 3) };
    }
}

//! Create requests counted per (tenant, resource, fingerprint): the
//! `attempt` of every effect and journal reader.
//!
//! Bounded in two generations of at most `Limits::max_objects` counts each.
//! A count not yet held goes into the current generation, taking along its
//! count from the previous one if it is there; when the current generation
//! is full it becomes the previous one, and the previous one is forgotten.
//! So a count is forgotten (the next attempt of that body counts 1 again)
//! only once at least `max_objects` other bodies have been counted since
//! its last attempt, and at most twice that many are held. The retries the
//! count is there to see come soon after the first attempt, well inside a
//! generation (a million other bodies by default). Two generations rather than
//! a least-recently-used order: a count stays one hash-map entry with no
//! links, and the memory of a full generation is reused, never reallocated.

use lostreply_text::SharedStr;

use crate::fixed_map::FixedMap;

/// (tenant, resource, fingerprint), each shared: the tenant and resource
/// interned, the fingerprint the journal's and the object's own copy.
pub(crate) type AttemptKey = (SharedStr, SharedStr, SharedStr);

/// The counts. Only ever looked up, never iterated, so hash maps:
/// fingerprints of similar bodies share long prefixes, which made every
/// ordered-map comparison a long `memcmp` (13% of a create in the profile).
#[derive(Debug)]
pub(crate) struct Attempts {
    current: FixedMap<AttemptKey, u32>,
    previous: FixedMap<AttemptKey, u32>,
    generation: usize,
}

impl Attempts {
    /// Counts kept in generations of `generation` (at least 1).
    pub(crate) fn new(generation: usize) -> Attempts {
        Attempts {
            current: FixedMap::default(),
            previous: FixedMap::default(),
            generation: generation.max(1),
        }
    }

    /// Counts one more attempt of `key`; answers its count, from 1. A key
    /// new to the current generation is hashed twice (there and in the
    /// previous one), not three times: every create counts one.
    pub(crate) fn count(&mut self, key: AttemptKey) -> u32 {
        if self.current.len() >= self.generation && !self.current.contains_key(&key) {
            std::mem::swap(&mut self.current, &mut self.previous);
            self.current.clear();
        }
        let previous = &mut self.previous;
        let count = self
            .current
            .entry(key)
            .or_insert_with_key(|key| previous.remove(key).unwrap_or(0));
        *count = count.saturating_add(1);
        *count
    }

    /// How many counts are held (both generations).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(body: u32) -> AttemptKey {
        ("sk_test".into(), "tickets".into(), body.to_string().into())
    }

    #[test]
    fn a_count_lasts_until_a_generation_of_other_bodies_passes_it() {
        let mut attempts = Attempts::new(3);
        assert_eq!(attempts.count(key(0)), 1);
        assert_eq!(attempts.count(key(0)), 2);
        // Three other bodies: 0 moves to the previous generation, still counted.
        for body in 1..=3 {
            assert_eq!(attempts.count(key(body)), 1);
        }
        assert_eq!(attempts.count(key(0)), 3);
        // Body 1 was counted after 0's first attempts, and fewer than three
        // others since its own: still counted.
        assert_eq!(attempts.count(key(1)), 2);
        for body in 10..16 {
            attempts.count(key(body));
        }
        // Six other bodies since: both generations have turned.
        assert_eq!(attempts.count(key(0)), 1);
        assert!(attempts.len() <= 6);
    }

    #[test]
    fn at_most_two_generations_are_held() {
        let mut attempts = Attempts::new(100);
        for body in 0..10_000 {
            attempts.count(key(body));
            assert!(attempts.len() <= 200);
        }
    }
}

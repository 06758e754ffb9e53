//! Hash maps with a fixed seed, for the simulator's per-request lookups (the
//! attempt counts, the object index) and the harness's checks and report
//! (operations and objects by id): foldhash instead of std's randomly seeded
//! SipHash, which is a large share of both a create and the check of a
//! million-operation run.
//!
//! The seed is fixed, so a run's ids and behaviour never depend on the
//! process. No iteration over these maps reaches any output (they are looked
//! up, never walked into a report), so their order does not matter either.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use foldhash::fast::FixedState;

/// A `HashMap` with the fixed foldhash seed: for lookups, never for
/// iteration into output.
pub type FixedMap<K, V> = HashMap<K, V, FixedState>;

/// The hasher of every such map, for tables that hash their keys themselves.
/// It is `FixedState::default()`, the same state a `FixedMap::default()` has.
pub fn fixed_state() -> FixedState {
    FixedState::default()
}

/// An empty map with room for `capacity` entries.
pub fn map_with_capacity<K, V>(capacity: usize) -> FixedMap<K, V> {
    HashMap::with_capacity_and_hasher(capacity, fixed_state())
}

/// The fixed-seed hash of `value` (the same on every run of the same build).
pub fn fixed_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    fixed_state().hash_one(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_same_every_time() {
        let a: FixedMap<&str, u32> = map_with_capacity(1);
        let b: FixedMap<&str, u32> = map_with_capacity(1);
        assert_eq!(a.hasher().hash_one("op-1"), b.hasher().hash_one("op-1"));
        assert_eq!(fixed_hash("op-1"), a.hasher().hash_one("op-1"));
    }
}

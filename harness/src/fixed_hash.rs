//! Hash maps for the checks' and the report's lookups: foldhash with a fixed
//! seed instead of std's randomly seeded SipHash.
//!
//! Why: a million-operation run hashes each operation and object id several
//! times; SipHash was a large share of checking it. The seed is fixed so a run
//! behaves the same every time; no iteration over these maps may reach output
//! (they are looked up, never walked), so their order does not matter either.

use std::collections::HashMap;

use foldhash::fast::FixedState;

/// A hash map with a fixed-seed foldhash: for lookups, never for iteration into output.
pub(crate) type FixedMap<K, V> = HashMap<K, V, FixedState>;

/// The one seed (any constant would do: it only has to be the same every run).
const SEED: u64 = 0x6c6f_7374_7265_706c;

/// An empty map with room for `capacity` entries.
pub(crate) fn map_with_capacity<K, V>(capacity: usize) -> FixedMap<K, V> {
    HashMap::with_capacity_and_hasher(capacity, fixed_state())
}

/// The hasher of every such map (for tables that hash their keys themselves).
pub(crate) fn fixed_state() -> FixedState {
    FixedState::with_seed(SEED)
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn the_hash_is_the_same_every_time() {
        let a: FixedMap<&str, u32> = map_with_capacity(1);
        let b: FixedMap<&str, u32> = map_with_capacity(1);
        assert_eq!(a.hasher().hash_one("op-1"), b.hasher().hash_one("op-1"));
    }
}

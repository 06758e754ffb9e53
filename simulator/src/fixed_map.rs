//! Hash maps for what every request touches (the attempt counts, the object
//! index): foldhash instead of std's SipHash, which was about 2% of a create
//! in the profile. The seed is fixed, so a run's ids and behaviour never
//! depend on the process; no iteration over these maps reaches any output.

use std::collections::HashMap;

/// A `HashMap` with a fixed foldhash seed.
pub(crate) type FixedMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// A fixed-seed hash of `value` (stable for the life of the build).
pub(crate) fn fixed_hash<T: std::hash::Hash + ?Sized>(value: &T) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(value)
}

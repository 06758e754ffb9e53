//! A list's positions found by a string key of the item at each position.
//!
//! Why: the checks look operations up by id and effects by object id. As a
//! `HashMap<&str, usize>` each slot would hold the key's pointer and length
//! and a `usize` (25 bytes with its control byte, two slots per entry once sized
//! for a million): 50 MB per map at a million entries, while the list itself
//! already holds every key. Here a slot holds only the item's position as a
//! [`Pos`] (5 bytes), and the key is read from the item when a lookup meets a
//! slot with its hash.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, HashTable};
use lostreply_simulator::fixed_map::fixed_state;

use crate::position::{pos, Pos};

/// A hash table of positions in a list, by the key at each position, which
/// it reads through `key_at` and never stores: the core of [`ByKey`] and of
/// the attribution's groups by arguments (`check/group_keys.rs`).
#[derive(Clone)]
pub(crate) struct PositionTable {
    table: HashTable<Pos>,
    state: FixedState,
}

impl PositionTable {
    /// An empty table, sized up front for `capacity` positions: a million
    /// entries grown by doubling rehashed the table several times over.
    pub(crate) fn with_capacity(capacity: usize) -> PositionTable {
        PositionTable {
            table: HashTable::with_capacity(capacity),
            state: fixed_state(),
        }
    }

    /// How many positions it holds (one per key).
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// The hash a key is held under.
    pub(crate) fn hash(&self, key: &str) -> u64 {
        self.state.hash_one(key)
    }

    /// Holds `position` under its key, `key_at(position)`, unless a position
    /// with the same key is already held: then that one's slot is returned,
    /// for the caller to keep or to overwrite, and nothing is inserted. A
    /// position without a key is not held either.
    pub(crate) fn insert_or_held<'k>(
        &mut self,
        position: Pos,
        key_at: impl Fn(Pos) -> Option<&'k str>,
    ) -> Option<&mut Pos> {
        let key = key_at(position)?;
        let hash = self.hash(key);
        let state = self.state.clone();
        self.insert_hashed(
            position,
            hash,
            |p| key_at(p) == Some(key),
            |p| state.hash_one(key_at(p).unwrap_or_default()),
        )
    }

    /// [`PositionTable::insert_or_held`] for keys that are not kept but
    /// made again when needed: `hash` is the key's ([`PositionTable::hash`]),
    /// `same_key(p)` tells whether the position `p` held has it, and
    /// `hash_at(p)` is the hash of `p`'s key (asked only if the table grows
    /// beyond its capacity).
    pub(crate) fn insert_hashed(
        &mut self,
        position: Pos,
        hash: u64,
        mut same_key: impl FnMut(Pos) -> bool,
        hash_at: impl Fn(Pos) -> u64,
    ) -> Option<&mut Pos> {
        match self.table.entry(hash, |&p| same_key(p), |&p| hash_at(p)) {
            Entry::Occupied(slot) => Some(slot.into_mut()),
            Entry::Vacant(slot) => {
                slot.insert(position);
                None
            }
        }
    }

    /// The position held under `key`, if any.
    pub(crate) fn find<'k>(
        &self,
        key: &str,
        key_at: impl Fn(Pos) -> Option<&'k str>,
    ) -> Option<Pos> {
        self.find_hashed(self.hash(key), |p| key_at(p) == Some(key))
    }

    /// The position held under a key of hash `hash` for which `is_key` holds, if any.
    pub(crate) fn find_hashed(
        &self,
        hash: u64,
        mut is_key: impl FnMut(Pos) -> bool,
    ) -> Option<Pos> {
        self.table.find(hash, |&p| is_key(p)).copied()
    }
}

impl std::fmt::Debug for PositionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PositionTable")
            .field("positions", &self.len())
            .finish()
    }
}

/// Positions in `items`, by `key(item)`. Where two items have the same key
/// the later one is found, as inserting both into a map would leave it.
#[derive(Clone)]
pub(crate) struct ByKey<'o, T> {
    items: &'o [T],
    key: fn(&T) -> &str,
    positions: PositionTable,
}

impl<'o, T> ByKey<'o, T> {
    /// Every item of `items`, by its key.
    pub(crate) fn new(items: &'o [T], key: fn(&T) -> &str) -> ByKey<'o, T> {
        let mut positions = PositionTable::with_capacity(items.len());
        let key_at = |p: Pos| key_at(items, key, p);
        for position in 0..items.len() {
            let position = pos(position);
            // The later item of a key replaces the earlier, as in a map.
            if let Some(held) = positions.insert_or_held(position, key_at) {
                *held = position;
            }
        }
        ByKey {
            items,
            key,
            positions,
        }
    }

    /// The position of the item with this key, if one has it.
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        let (items, key_of) = (self.items, self.key);
        self.positions
            .find(key, |p| key_at(items, key_of, p))
            .map(|p| p as usize)
    }

    /// The item with this key and its position, if one has it.
    pub(crate) fn get(&self, key: &str) -> Option<(usize, &'o T)> {
        let position = self.position(key)?;
        let items: &'o [T] = self.items;
        Some((position, items.get(position)?))
    }
}

/// The key of the item at `position` in `items`, if there is one.
fn key_at<T>(items: &[T], key: fn(&T) -> &str, position: Pos) -> Option<&str> {
    items.get(position as usize).map(key)
}

impl<T> std::fmt::Debug for ByKey<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByKey")
            .field("items", &self.items.len())
            .field("keys", &self.positions.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &String) -> &str {
        s
    }

    #[test]
    fn each_key_finds_its_item_and_an_unknown_key_nothing() {
        let items: Vec<String> = (0..1000).map(|i| format!("op-{i}")).collect();
        let by_key = ByKey::new(&items, id);
        assert_eq!(by_key.positions.len(), 1000);
        for (position, item) in items.iter().enumerate() {
            assert_eq!(by_key.position(item), Some(position), "{item}");
            assert_eq!(by_key.get(item), Some((position, item)), "{item}");
        }
        assert_eq!(by_key.get("op-1000"), None);
        assert_eq!(by_key.position("op-1000"), None);
        assert_eq!(by_key.position(""), None);
    }

    #[test]
    fn a_repeated_key_finds_its_last_item_as_a_map_would() {
        let items: Vec<String> = ["a", "b", "a", "c", "a"].map(String::from).to_vec();
        let by_key = ByKey::new(&items, id);
        assert_eq!(by_key.positions.len(), 3);
        assert_eq!(by_key.position("a"), Some(4));
        assert_eq!(by_key.position("b"), Some(1));
        assert_eq!(by_key.position("c"), Some(3));
        let empty: Vec<String> = Vec::new();
        assert_eq!(ByKey::new(&empty, id).position("a"), None);
    }

    #[test]
    fn keys_made_again_when_needed_are_held_once_and_found_as_the_table_grows() {
        // Sized for nothing, so that holding a thousand keys grows the table
        // and rehashes through `hash_at`; the keys are made again on each
        // comparison, as the attribution's groups make them.
        let key_of = |p: Pos| format!("k-{}", p % 500);
        let mut table = PositionTable::with_capacity(0);
        let mut held_again = 0;
        for p in 0..1000 {
            let key = key_of(p);
            let hash = table.hash(&key);
            let held =
                table.insert_hashed(p, hash, |q| key_of(q) == key, |q| table_hash(&key_of(q)));
            if let Some(&mut first) = held {
                assert_eq!(first, p - 500);
                held_again += 1;
            }
        }
        assert_eq!((table.len(), held_again), (500, 500));
        for p in 0..500 {
            let key = key_of(p);
            assert_eq!(
                table.find_hashed(table.hash(&key), |q| key_of(q) == key),
                Some(p)
            );
        }
        let missing = "k-500";
        assert_eq!(
            table.find_hashed(table.hash(missing), |q| key_of(q) == missing),
            None
        );
    }

    /// The hash every table gives a key (their hasher's state is fixed).
    fn table_hash(key: &str) -> u64 {
        PositionTable::with_capacity(0).hash(key)
    }
}

//! A list's positions found by a string key of the item at each position.
//!
//! Why: the checks look operations up by id and effects by object id. As a
//! `HashMap<&str, usize>` each slot held the key's pointer and length and a
//! `usize` (25 bytes with its control byte, two slots per entry once sized
//! for a million): 50 MB per map at a million entries, while the list itself
//! already holds every key. Here a slot holds only the item's position as a
//! [`Pos`] (5 bytes), and the key is read from the item when a lookup meets a
//! slot with its hash.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, HashTable};

use crate::fixed_hash::fixed_state;
use crate::position::{pos, Pos};

/// Positions in `items`, by `key(item)`. Where two items have the same key
/// the later one is found, as inserting both into a map would leave it.
#[derive(Clone)]
pub(crate) struct ByKey<'o, T> {
    items: &'o [T],
    key: fn(&T) -> &str,
    table: HashTable<Pos>,
    state: FixedState,
}

impl<'o, T> ByKey<'o, T> {
    /// Every item of `items`, by its key.
    pub(crate) fn new(items: &'o [T], key: fn(&T) -> &str) -> ByKey<'o, T> {
        let mut by_key = ByKey {
            items,
            key,
            // Sized up front: a million entries grown by doubling rehashed the
            // table several times over.
            table: HashTable::with_capacity(items.len()),
            state: fixed_state(),
        };
        for position in 0..items.len() {
            by_key.insert(pos(position));
        }
        by_key
    }

    fn key_at(&self, position: Pos) -> Option<&'o str> {
        key_at(self.items, self.key, position)
    }

    fn insert(&mut self, position: Pos) {
        // The table is borrowed mutably below: its closures read the list
        // and the hasher through their own borrows, not through `self`.
        let (items, key_of, state) = (self.items, self.key, &self.state);
        let Some(key) = key_at(items, key_of, position) else {
            return;
        };
        let key_at = |p: Pos| key_at(items, key_of, p);
        let hash = state.hash_one(key);
        match self.table.entry(
            hash,
            |&p| key_at(p) == Some(key),
            |&p| state.hash_one(key_at(p).unwrap_or_default()),
        ) {
            Entry::Occupied(mut slot) => *slot.get_mut() = position,
            Entry::Vacant(slot) => {
                slot.insert(position);
            }
        }
    }

    /// The position of the item with this key, if one has it.
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        let hash = self.state.hash_one(key);
        self.table
            .find(hash, |&p| self.key_at(p) == Some(key))
            .map(|&p| p as usize)
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
            .field("keys", &self.table.len())
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
        assert_eq!(by_key.table.len(), 1000);
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
        assert_eq!(by_key.table.len(), 3);
        assert_eq!(by_key.position("a"), Some(4));
        assert_eq!(by_key.position("b"), Some(1));
        assert_eq!(by_key.position("c"), Some(3));
        let empty: Vec<String> = Vec::new();
        assert_eq!(ByKey::new(&empty, id).position("a"), None);
    }
}

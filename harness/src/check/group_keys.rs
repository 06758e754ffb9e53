//! The operations' group keys (resource, a space, canonical arguments) and
//! the groups they make: operations with the same key form one group,
//! numbered in the order of its first operation.
//!
//! Why a table of positions: as a `HashMap<&str, Pos>` each slot held the
//! key's pointer and length and the group (25 bytes with its control byte,
//! two slots per entry once sized for a million operations: some 50 bytes an
//! operation, at the attribution's peak, the highest of checking a large
//! run). The keys are written once into a text anyway; here a slot holds
//! only the position of its group's first operation (5 bytes), and the key
//! is read from the text when a lookup meets a slot with its hash: the
//! [`crate::by_key::PositionTable`] that [`crate::by_key::ByKey`] keeps ids in.

use lostreply_simulator::write_canonical_text;

use super::grouped::{pos, Pos, NONE};
use crate::by_key::PositionTable;
use crate::scenario::model::OperationSpec;
use crate::two_threads::both;

/// Some operations' keys written one after another, with the end of each.
struct KeyText {
    text: String,
    ends: Vec<usize>,
}

impl KeyText {
    fn of(operations: &[OperationSpec]) -> KeyText {
        let mut text = Vec::with_capacity(operations.len() * 48);
        let mut ends = Vec::with_capacity(operations.len());
        for op in operations {
            text.extend_from_slice(op.resource.as_bytes());
            // A resource name never holds a space ([a-z][a-z0-9_]*), so this cannot collide.
            text.push(b' ');
            write_canonical_text(&op.args.text(), &mut text);
            ends.push(text.len());
        }
        KeyText {
            // serde_json writes UTF-8 only, and resource names are text.
            text: String::from_utf8(text).unwrap_or_default(),
            ends,
        }
    }

    fn key(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)?;
        let start = match index.checked_sub(1) {
            Some(before) => *self.ends.get(before)?,
            None => 0,
        };
        self.text.get(start..end)
    }
}

/// Every operation's group, and the groups by key.
pub(super) struct GroupKeys {
    /// The keys of the first `split` operations, then of the rest (written
    /// on two threads on a large run).
    parts: [KeyText; 2],
    split: usize,
    /// Each group's first operation, by its key.
    firsts: PositionTable,
}

impl GroupKeys {
    /// The operations' keys (written in two halves, one per thread, when
    /// asked), each operation's group by its position, and how many groups
    /// there are. Groups are numbered from 0 in the order of their first
    /// operation.
    pub(super) fn build(
        operations: &[OperationSpec],
        two_threads: bool,
    ) -> (GroupKeys, Vec<Pos>, usize) {
        let split = if two_threads {
            operations.len() / 2
        } else {
            operations.len()
        };
        let (first, second) = operations.split_at(split);
        let (first, second) = both(two_threads, || KeyText::of(first), || KeyText::of(second));
        let mut keys = GroupKeys {
            parts: [first, second],
            split,
            firsts: PositionTable::with_capacity(operations.len()),
        };
        let mut op_group: Vec<Pos> = Vec::with_capacity(operations.len());
        let mut groups = 0;
        for position in 0..operations.len() {
            let group = match keys.earlier_or_insert(pos(position)) {
                // An earlier operation with this key: its group.
                Some(first) => op_group.get(first as usize).copied().unwrap_or(NONE),
                // The first of its key: a new group.
                None => {
                    groups += 1;
                    pos(groups - 1)
                }
            };
            op_group.push(group);
        }
        (keys, op_group, groups)
    }

    /// The first operation with the key of the operation at `position`, if
    /// an earlier one has it; `None` when it is the first, which it is
    /// recorded as then.
    fn earlier_or_insert(&mut self, position: Pos) -> Option<Pos> {
        let (parts, split) = (&self.parts, self.split);
        self.firsts
            .insert_or_held(position, |p| key_in(parts, split, p))
            .map(|first| *first)
    }

    /// The first operation whose key is `key`, if one has it.
    pub(super) fn first_with(&self, key: &str) -> Option<Pos> {
        let (parts, split) = (&self.parts, self.split);
        self.firsts.find(key, |p| key_in(parts, split, p))
    }
}

/// The key of the operation at `position`, in the parts written for the
/// operations before `split` and from it.
fn key_in(parts: &[KeyText; 2], split: usize, position: Pos) -> Option<&str> {
    let position = position as usize;
    match position.checked_sub(split) {
        None => parts[0].key(position),
        Some(in_second) => parts[1].key(in_second),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use lostreply_reports::model::{OperationFields, SharedJson};
    use serde_json::json;

    use super::*;

    fn op(id: &str, resource: &str, args: serde_json::Value) -> OperationSpec {
        OperationSpec::new(OperationFields {
            id: id.into(),
            resource: resource.into(),
            tool: None,
            args: SharedJson::new(&args),
        })
    }

    #[test]
    fn equal_keys_share_a_group_numbered_by_its_first_operation_on_one_thread_or_two() {
        let ops = vec![
            op("a", "tickets", json!({"t": 1, "n": 2})),
            op("b", "tickets", json!({"t": 2})),
            // The first one's arguments in another order: the same key.
            op("c", "tickets", json!({"n": 2, "t": 1})),
            // The same arguments in another collection: another group.
            op("d", "refunds", json!({"t": 1, "n": 2})),
            op("e", "tickets", json!({"t": 2})),
        ];
        for two_threads in [false, true] {
            let (keys, groups, count) = GroupKeys::build(&ops, two_threads);
            assert_eq!(groups, vec![0, 1, 0, 2, 1], "two threads: {two_threads}");
            assert_eq!(count, 3);
            assert_eq!(keys.first_with(r#"tickets {"n":2,"t":1}"#), Some(0));
            assert_eq!(keys.first_with(r#"tickets {"t":2}"#), Some(1));
            assert_eq!(keys.first_with(r#"refunds {"n":2,"t":1}"#), Some(3));
            assert_eq!(keys.first_with(r#"refunds {"t":2}"#), None);
            assert_eq!(keys.first_with(""), None);
        }
    }

    #[test]
    fn no_operations_make_no_groups() {
        let (keys, groups, count) = GroupKeys::build(&[], true);
        assert!(groups.is_empty());
        assert_eq!(count, 0);
        assert_eq!(keys.first_with("tickets {}"), None);
    }
}

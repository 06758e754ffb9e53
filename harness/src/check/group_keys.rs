//! The operations' group keys (resource, a space, canonical arguments) and
//! the groups they make: operations with the same key form one group,
//! numbered in the order of its first operation.
//!
//! Why a table of positions and no keys kept: as a `HashMap<&str, Pos>` each
//! slot would hold the key's pointer and length and the group (some 50 bytes
//! an operation at a million, at the attribution's peak, the highest of
//! checking a large run). Here a slot holds only the position of its group's
//! first operation (5 bytes, the [`crate::by_key::PositionTable`] that
//! [`crate::by_key::ByKey`] keeps ids in). Keeping the keys written out
//! would hold another 56 bytes an operation through the same peak, so a key
//! is written again, into a buffer the caller reuses, when a lookup meets a
//! slot with its hash: once per request that matches an
//! operation, a small cost beside parsing that request's body.

use lostreply_simulator::write_canonical_text;

use super::grouped::{pos, Pos, NONE};
use crate::by_key::PositionTable;
use crate::scenario::model::OperationSpec;
use crate::two_threads::both;

/// Writes the key of `op` into `key` (cleared first): its resource, a space,
/// its arguments' canonical text.
fn write_key(op: &OperationSpec, key: &mut Vec<u8>) {
    key.clear();
    key.extend_from_slice(op.resource.as_bytes());
    // A resource name never holds a space ([a-z][a-z0-9_]*), so this cannot collide.
    key.push(b' ');
    write_canonical_text(&op.args.text(), key);
}

/// Every operation's group, and the groups by key.
pub(super) struct GroupKeys<'o> {
    operations: &'o [OperationSpec],
    /// Each group's first operation, by its key.
    firsts: PositionTable,
}

impl<'o> GroupKeys<'o> {
    /// The operations' groups by key, each operation's group by its
    /// position, and how many groups there are. Groups are numbered from 0
    /// in the order of their first operation. The keys' hashes are computed
    /// first, in two halves on two threads when asked (writing the keys is
    /// most of the work), then held in order on this one.
    pub(super) fn build(
        operations: &'o [OperationSpec],
        two_threads: bool,
    ) -> (GroupKeys<'o>, Vec<Pos>, usize) {
        let mut keys = GroupKeys {
            operations,
            firsts: PositionTable::with_capacity(operations.len()),
        };
        let split = if two_threads {
            operations.len() / 2
        } else {
            operations.len()
        };
        let (first, second) = operations.split_at(split);
        let (mut hashes, rest) = both(two_threads, || keys.hashes(first), || keys.hashes(second));
        hashes.extend(rest);
        let mut op_group: Vec<Pos> = Vec::with_capacity(operations.len());
        let mut groups = 0;
        let (mut key, mut other) = (Vec::new(), Vec::new());
        for (position, &hash) in hashes.iter().enumerate() {
            // Written only if a held slot has this hash's tag: for distinct
            // keys, almost never.
            let mut written = false;
            let held = keys.firsts.insert_hashed(
                pos(position),
                hash,
                |p| {
                    if !written {
                        written = key_of(operations, pos(position), &mut key).is_some();
                    }
                    key_of(operations, p, &mut other) == Some(key.as_slice())
                },
                |p| hashes.get(p as usize).copied().unwrap_or_default(),
            );
            let group = match held {
                // An earlier operation with this key: its group.
                Some(first) => op_group.get(*first as usize).copied().unwrap_or(NONE),
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

    /// The hash of each operation's key, in order.
    fn hashes(&self, operations: &[OperationSpec]) -> Vec<u64> {
        let mut key = Vec::new();
        operations
            .iter()
            .map(|op| {
                write_key(op, &mut key);
                // Canonical JSON text is UTF-8, as resource names are.
                self.firsts
                    .hash(std::str::from_utf8(&key).unwrap_or_default())
            })
            .collect()
    }

    /// The first operation whose key is `key`, if one has it; `scratch` is
    /// where the operations' keys are written to be compared (reused).
    pub(super) fn first_with(&self, key: &str, scratch: &mut Vec<u8>) -> Option<Pos> {
        let operations = self.operations;
        self.firsts.find_hashed(self.firsts.hash(key), |p| {
            key_of(operations, p, scratch) == Some(key.as_bytes())
        })
    }
}

/// The key of the operation at `position`, written into `buffer`.
fn key_of<'b>(
    operations: &[OperationSpec],
    position: Pos,
    buffer: &'b mut Vec<u8>,
) -> Option<&'b [u8]> {
    write_key(operations.get(position as usize)?, buffer);
    Some(buffer.as_slice())
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
            assert_eq!(
                keys.first_with(r#"tickets {"n":2,"t":1}"#, &mut Vec::new()),
                Some(0)
            );
            assert_eq!(
                keys.first_with(r#"tickets {"t":2}"#, &mut Vec::new()),
                Some(1)
            );
            assert_eq!(
                keys.first_with(r#"refunds {"n":2,"t":1}"#, &mut Vec::new()),
                Some(3)
            );
            assert_eq!(keys.first_with(r#"refunds {"t":2}"#, &mut Vec::new()), None);
            assert_eq!(keys.first_with("", &mut Vec::new()), None);
        }
    }

    #[test]
    fn no_operations_make_no_groups() {
        let (keys, groups, count) = GroupKeys::build(&[], true);
        assert!(groups.is_empty());
        assert_eq!(count, 0);
        assert_eq!(keys.first_with("tickets {}", &mut Vec::new()), None);
    }
}

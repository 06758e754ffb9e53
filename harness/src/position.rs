//! Positions in a run's lists (calls, journal, ledger, operations) as `u32`.
//!
//! Why: the checks keep several positions per operation (groups, lookups by
//! id, which operation an effect is filed under); at a million operations
//! each `usize` list is 8 MB where a `u32` one is 4, and a lookup table's slot
//! 5 bytes instead of 9. A run's lists stay far below four billion: the
//! journal is bounded at a million entries, the ledger by its objects, the
//! calls by a scenario's steps.

/// A position in one of a run's lists, or a group number.
pub(crate) type Pos = u32;

/// Marks an item that belongs to no group, or no position at all.
pub(crate) const NONE: Pos = Pos::MAX;

/// `n` as a [`Pos`]: a position past `u32::MAX` (never reached, see the
/// module's note) saturates to [`NONE`], which names nothing, rather than
/// wrapping onto another item.
pub(crate) fn pos(n: usize) -> Pos {
    Pos::try_from(n).unwrap_or(NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_past_u32_names_nothing() {
        assert_eq!(pos(7), 7);
        assert_eq!(pos(u32::MAX as usize - 1), u32::MAX - 1);
        assert_eq!(pos(usize::MAX), NONE);
    }
}

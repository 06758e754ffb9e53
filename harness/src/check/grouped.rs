//! Positions sorted into groups by counting, one allocation for all groups.
//!
//! Why: a million-operation run has a million groups of one or two items each;
//! a `Vec` per group was a million small allocations to make and to free
//! (malloc and free were a sixth of checking it). Positions and groups are
//! `u32` ([`Pos`]): half the memory of `usize`, and a run's lists (a journal
//! bounded at a million entries, a ledger bounded by its objects, calls
//! bounded by a scenario's steps) stay far below four billion.

/// A position in one of a run's lists, or a group number.
pub(crate) type Pos = u32;

/// Marks an item that belongs to no group.
pub(crate) const NONE: Pos = Pos::MAX;

/// `n` as a [`Pos`]: a list of a run is never near `u32::MAX` long (see
/// the module's note), and a position past it saturates to [`NONE`], which
/// names nothing, rather than wrapping onto another item.
pub(crate) fn pos(n: usize) -> Pos {
    Pos::try_from(n).unwrap_or(NONE)
}

/// Items `0..n` grouped: group `g`'s items are `items[start[g]..start[g + 1]]`,
/// ascending.
#[derive(Debug, Clone, Default)]
pub(crate) struct Grouped {
    start: Vec<Pos>,
    items: Vec<Pos>,
}

impl Grouped {
    /// `group_of[i]` is item `i`'s group (below `groups`) or [`NONE`].
    pub(crate) fn new(group_of: &[Pos], groups: usize) -> Grouped {
        let mut start: Vec<Pos> = vec![0; groups + 1];
        for &g in group_of {
            if let Some(count) = start.get_mut((g as usize).wrapping_add(1)).filter(|_| g != NONE) {
                *count += 1;
            }
        }
        for g in 0..groups {
            start[g + 1] += start[g];
        }
        let mut next = start.clone();
        let mut items: Vec<Pos> = vec![0; start[groups] as usize];
        for (item, &g) in group_of.iter().enumerate() {
            if let Some(slot) = next.get_mut(g as usize).filter(|_| (g as usize) < groups) {
                items[*slot as usize] = pos(item);
                *slot += 1;
            }
        }
        Grouped { start, items }
    }

    /// Group `g`'s items, ascending (empty for a group that does not exist).
    pub(crate) fn of(&self, g: usize) -> &[Pos] {
        match (self.start.get(g), self.start.get(g.wrapping_add(1))) {
            (Some(&from), Some(&to)) => &self.items[from as usize..to as usize],
            _ => &[],
        }
    }

    /// How many groups.
    pub(crate) fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_land_in_their_group_in_order() {
        let grouped = Grouped::new(&[2, NONE, 0, 2, 0, 7], 3);
        assert_eq!(grouped.len(), 3);
        assert_eq!(grouped.of(0), &[2, 4]);
        assert_eq!(grouped.of(1), &[] as &[Pos]);
        assert_eq!(grouped.of(2), &[0, 3]);
        assert_eq!(grouped.of(3), &[] as &[Pos]);
        assert_eq!(grouped.of(NONE as usize), &[] as &[Pos]);
        assert_eq!(grouped.of(usize::MAX), &[] as &[Pos]);
        let empty = Grouped::new(&[], 0);
        assert_eq!(empty.len(), 0);
        assert_eq!(empty.of(0), &[] as &[Pos]);
    }

    #[test]
    fn a_position_past_u32_names_nothing() {
        assert_eq!(pos(7), 7);
        assert_eq!(pos(usize::MAX), NONE);
    }
}

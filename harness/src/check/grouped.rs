//! Positions sorted into groups by counting, one allocation for all groups.
//!
//! Why: a million-operation run has a million groups of one or two items each;
//! a `Vec` per group would be a million small allocations to make and to
//! free (a sixth of checking it). Positions and group
//! numbers are [`Pos`] (`u32`), half the memory of `usize`.

pub(crate) use crate::position::{pos, Pos, NONE};

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
            if let Some(count) = start
                .get_mut((g as usize).wrapping_add(1))
                .filter(|_| g != NONE)
            {
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

    /// Groups given list by list, `groups` of them (`capacity`: the items
    /// expected in all): group `g` holds the `g`th list, in its order, and
    /// an item may be in several. (Ascending as far as each list is.)
    pub(crate) fn from_lists<'a>(
        groups: usize,
        capacity: usize,
        mut list: impl FnMut(usize) -> &'a [Pos],
    ) -> Grouped {
        let mut start = Vec::with_capacity(groups + 1);
        let mut items = Vec::with_capacity(capacity);
        start.push(0);
        for g in 0..groups {
            items.extend_from_slice(list(g));
            start.push(pos(items.len()));
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

    /// Sorts each group's items by `key`, in place (a group's items stay
    /// its own; only their order changes).
    pub(crate) fn sort_each_by_key<K: Ord>(&mut self, mut key: impl FnMut(Pos) -> K) {
        for bounds in self.start.windows(2) {
            if let Some(items) = self.items.get_mut(bounds[0] as usize..bounds[1] as usize) {
                items.sort_by_key(|&item| key(item));
            }
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
    fn lists_kept_as_given_and_groups_sorted_in_place() {
        // An item may be in several lists, in the order each gives.
        let lists: [&[Pos]; 3] = [&[4, 1], &[], &[1]];
        let from_lists = Grouped::from_lists(3, 3, |g| lists[g]);
        assert_eq!(from_lists.len(), 3);
        assert_eq!(from_lists.of(0), &[4, 1]);
        assert_eq!(from_lists.of(1), &[] as &[Pos]);
        assert_eq!(from_lists.of(2), &[1]);
        assert_eq!(from_lists.of(3), &[] as &[Pos]);
        let mut descending = Grouped::new(&[2, NONE, 0, 2, 0, 7], 3);
        descending.sort_each_by_key(std::cmp::Reverse);
        assert_eq!(descending.of(0), &[4, 2]);
        assert_eq!(descending.of(1), &[] as &[Pos]);
        assert_eq!(descending.of(2), &[3, 0]);
    }
}

//! A list held inline up to `N` items, spilling into a `Vec` past them.
//!
//! Why: writing a run's report splits every call's request and reply into
//! members, a handful each; a `Vec` per object would be millions of
//! allocations to make and free at a million operations.

/// Up to `N` items inline, the rest in a `Vec`, in push order.
pub(crate) struct InlineList<T, const N: usize> {
    head: [T; N],
    len: usize,
    rest: Vec<T>,
}

impl<T, const N: usize> InlineList<T, N> {
    /// An empty list; `fill` makes the placeholders of the inline slots.
    pub(crate) fn new(fill: impl Fn() -> T) -> InlineList<T, N> {
        InlineList {
            head: std::array::from_fn(|_| fill()),
            len: 0,
            rest: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, item: T) {
        match self.head.get_mut(self.len) {
            Some(slot) => *slot = item,
            None => self.rest.push(item),
        }
        self.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.head[..self.len.min(N)].iter().chain(&self.rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_back_in_order_past_the_inline_slots() {
        for count in [0usize, 1, 3, 4, 9] {
            let mut list: InlineList<usize, 3> = InlineList::new(|| usize::MAX);
            for i in 0..count {
                list.push(i);
            }
            assert_eq!(list.len(), count);
            assert_eq!(
                list.iter().copied().collect::<Vec<_>>(),
                (0..count).collect::<Vec<_>>()
            );
        }
    }
}

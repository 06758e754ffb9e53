//! One shared copy of each repeated string (tenants, methods, collection
//! paths, resources), bounded: client-chosen strings must not grow it forever.

use std::collections::HashSet;

use lostreply_text::SharedStr;

/// Most distinct strings interned; past it a string gets a copy of its own,
/// as it would without interning (a client inventing resource names must not
/// grow the table without bound).
pub(crate) const MAX_INTERNED: usize = 4096;

/// The table.
///
/// Hashed with the fixed-seed foldhash of `fixed_map` rather than std's
/// SipHash: every request interns its method, tenant and collection while it
/// holds the state lock, and SipHash would be most of that. Only looked up, never
/// iterated.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    strings: HashSet<SharedStr, foldhash::fast::FixedState>,
}

impl Interner {
    /// The shared copy of `s`, made on first sight while there is room.
    pub(crate) fn intern(&mut self, s: &str) -> SharedStr {
        if let Some(shared) = self.strings.get(s) {
            return shared.clone();
        }
        let shared: SharedStr = SharedStr::from(s);
        if self.strings.len() < MAX_INTERNED {
            self.strings.insert(shared.clone());
        }
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_copy_until_the_table_is_full() {
        let mut strings = Interner::default();
        let a = strings.intern("sk_test_a");
        let b = strings.intern("sk_test_a");
        assert!(SharedStr::ptr_eq(&a, &b));
        for i in 0..MAX_INTERNED {
            strings.intern(&format!("r{i}"));
        }
        let c = strings.intern("late");
        let d = strings.intern("late");
        assert_eq!(c, d);
        assert!(!SharedStr::ptr_eq(&c, &d));
    }
}

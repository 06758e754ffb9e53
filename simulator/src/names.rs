//! Resource names and the ids derived from them.

use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// Longest resource name: `[a-z][a-z0-9_]{0,39}`.
pub const MAX_RESOURCE_NAME_BYTES: usize = 40;

/// Random characters after an id's prefix (62^24 ids: collisions are not a concern).
pub const ID_RANDOM_CHARS: usize = 24;

/// True when `name` matches `[a-z][a-z0-9_]{0,39}`.
pub fn is_valid_resource_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.first() {
        Some(first) if first.is_ascii_lowercase() => {}
        _ => return false,
    }
    bytes.len() <= MAX_RESOURCE_NAME_BYTES
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

/// The id prefix of a collection, without the `_`: the first letter of the
/// singular name followed by its last two consonants (`tickets` -> `tkt`,
/// `reviews` -> `rvw`, `charges` -> `crg`). Short names keep what they have
/// (`a1` -> `a`). Stable, so a resource always gets the same prefix.
pub fn id_prefix(resource: &str) -> String {
    let singular = resource
        .strip_suffix('s')
        .filter(|s| !s.is_empty())
        .unwrap_or(resource);
    let mut chars = singular.chars();
    let Some(first) = chars.next() else {
        return "obj".to_owned();
    };
    // The last two consonants, kept as they go by: this runs on every commit,
    // and collecting them first was two allocations per create.
    let mut tail: [Option<char>; 2] = [None, None];
    for c in chars.filter(|c| c.is_ascii_lowercase() && !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')) {
        tail = [tail[1], Some(c)];
    }
    let mut prefix = String::with_capacity(first.len_utf8() + 2);
    prefix.push(first);
    prefix.extend(tail.into_iter().flatten());
    prefix
}

/// `{prefix}_{24 random alphanumerics}` drawn from `rng`.
pub(crate) fn random_id(prefix: &str, rng: &mut ChaCha20Rng) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut id = String::with_capacity(prefix.len() + 1 + ID_RANDOM_CHARS);
    id.push_str(prefix);
    id.push('_');
    for _ in 0..ID_RANDOM_CHARS {
        let index = rng.random_range(0..ALPHABET.len());
        id.push(char::from(ALPHABET[index]));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_names_follow_the_pattern() {
        assert!(is_valid_resource_name("tickets"));
        assert!(is_valid_resource_name("a"));
        assert!(is_valid_resource_name("line_items2"));
        assert!(is_valid_resource_name(&"a".repeat(40)));
        assert!(!is_valid_resource_name(&"a".repeat(41)));
        assert!(!is_valid_resource_name(""));
        assert!(!is_valid_resource_name("Tickets"));
        assert!(!is_valid_resource_name("1tickets"));
        assert!(!is_valid_resource_name("_x"));
        assert!(!is_valid_resource_name("tick-ets"));
        assert!(!is_valid_resource_name("tické"));
    }

    #[test]
    fn prefixes_are_short_and_stable() {
        assert_eq!(id_prefix("tickets"), "tkt");
        assert_eq!(id_prefix("reviews"), "rvw");
        assert_eq!(id_prefix("charges"), "crg");
        assert_eq!(id_prefix("s"), "s");
        assert_eq!(id_prefix("a1"), "a");
        assert_eq!(id_prefix("email"), "eml");
    }
}

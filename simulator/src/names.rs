//! Resource names and the ids derived from them.

use lostreply_text::SharedStr;
use rand::RngCore;
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
    let mut prefix = String::with_capacity(3);
    push_id_prefix(resource, &mut prefix);
    prefix
}

/// Appends [`id_prefix`] of `resource` to `out`.
fn push_id_prefix(resource: &str, out: &mut String) {
    let singular = resource
        .strip_suffix('s')
        .filter(|s| !s.is_empty())
        .unwrap_or(resource);
    let mut chars = singular.chars();
    let Some(first) = chars.next() else {
        out.push_str("obj");
        return;
    };
    // The last two consonants, kept as they go by: this runs on every commit,
    // and collecting them first would be two allocations per create.
    let mut tail: [Option<char>; 2] = [None, None];
    for c in chars.filter(|c| c.is_ascii_lowercase() && !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')) {
        tail = [tail[1], Some(c)];
    }
    out.push(first);
    out.extend(tail.into_iter().flatten());
}

/// `{prefix}_{24 random alphanumerics}` drawn from `rng`.
pub(crate) fn random_id(prefix: &str, rng: &mut ChaCha20Rng) -> String {
    let mut id = String::with_capacity(prefix.len() + 1 + ID_RANDOM_CHARS);
    id.push_str(prefix);
    push_random_tail(rng, &mut id);
    id
}

/// A new object id of `resource`: `{id_prefix}_{24 random alphanumerics}`,
/// the same characters as `random_id(&id_prefix(resource), rng)` draws, made
/// as shared text in one allocation (the prefix and the `String` would be
/// two more on every create).
pub(crate) fn object_id(resource: &str, rng: &mut ChaCha20Rng) -> SharedStr {
    crate::scratch::shared_text(|id| {
        push_id_prefix(resource, id);
        push_random_tail(rng, id);
    })
}

/// A new object id of a declared collection: its prefix as the profile
/// writes it (`cus_`, `chatcmpl-`) and 24 random alphanumerics.
pub(crate) fn prefixed_id(prefix: &str, rng: &mut ChaCha20Rng) -> SharedStr {
    crate::scratch::shared_text(|id| {
        id.push_str(prefix);
        push_random_chars(rng, id);
    })
}

fn push_random_tail(rng: &mut ChaCha20Rng, id: &mut String) {
    id.push('_');
    push_random_chars(rng, id);
}

/// Appends [`ID_RANDOM_CHARS`] characters drawn uniformly from the 62
/// alphanumerics. Each 64-bit draw gives ten 6-bit indexes; the two of 64
/// that name no character are skipped (rejection keeps the draw uniform).
/// Three or four draws make an id, where a draw per character would be 24:
/// this runs on every create and every event.
fn push_random_chars(rng: &mut ChaCha20Rng, id: &mut String) {
    const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut pushed = 0;
    while pushed < ID_RANDOM_CHARS {
        let mut bits = rng.next_u64();
        for _ in 0..10 {
            let index = (bits & 0x3f) as usize;
            bits >>= 6;
            if let Some(&c) = ALPHABET.get(index) {
                id.push(char::from(c));
                pushed += 1;
                if pushed == ID_RANDOM_CHARS {
                    break;
                }
            }
        }
    }
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

    #[test]
    fn an_object_id_is_the_prefix_and_the_same_draws_as_a_random_id() {
        use rand::SeedableRng;
        for resource in ["tickets", "reviews", "s", "émails", "a1"] {
            let mut a = ChaCha20Rng::seed_from_u64(7);
            let mut b = ChaCha20Rng::seed_from_u64(7);
            for _ in 0..3 {
                let made = object_id(resource, &mut a);
                let expected = random_id(&id_prefix(resource), &mut b);
                assert_eq!(made.as_str(), expected, "{resource}");
            }
        }
    }

    #[test]
    fn id_characters_are_the_62_alphanumerics_drawn_evenly() {
        use rand::SeedableRng;
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..4000 {
            let id = random_id("x", &mut rng);
            let tail = id.strip_prefix("x_").unwrap_or_default();
            assert_eq!(tail.len(), ID_RANDOM_CHARS, "{id}");
            for c in tail.chars() {
                assert!(c.is_ascii_alphanumeric(), "{id}");
                *counts.entry(c).or_insert(0u32) += 1;
            }
        }
        // 96 000 characters: 1 548 of each expected; a fixed seed, so the
        // bounds (about six standard deviations) hold a skew, not luck.
        assert_eq!(counts.len(), 62);
        for (c, n) in counts {
            assert!((1300..=1800).contains(&n), "{c}: {n}");
        }
    }
}

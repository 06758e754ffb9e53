//! Compact JSON text laid out as the pretty writer lays out its tree, and the
//! word-at-a-time byte searches behind it and behind string escaping.

use super::out::Out;

/// What [`reindent`] does at a byte outside strings.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Part of a number or of `true`, `false`, `null`: copied.
    Plain,
    /// Opens a string, copied up to its closing quote.
    Quote,
    /// `{` or `[`.
    Open,
    /// `}` or `]`.
    Close,
    /// `,` between members or items.
    Comma,
    /// `:` after a member's name.
    Colon,
    /// Whitespace, dropped: the layout is written anew.
    Space,
}

/// The class of each byte outside strings.
static CLASS: [Class; 256] = {
    let mut table = [Class::Plain; 256];
    table[b'"' as usize] = Class::Quote;
    table[b'{' as usize] = Class::Open;
    table[b'[' as usize] = Class::Open;
    table[b'}' as usize] = Class::Close;
    table[b']' as usize] = Class::Close;
    table[b',' as usize] = Class::Comma;
    table[b':' as usize] = Class::Colon;
    table[b' ' as usize] = Class::Space;
    table[b'\t' as usize] = Class::Space;
    table[b'\n' as usize] = Class::Space;
    table[b'\r' as usize] = Class::Space;
    table
};

/// Appends the JSON text `json` to `out` as the pretty writer writes the
/// value it holds, at nesting depth `depth` (where the value starts: after
/// `": "` or an item's indent). Strings and scalars are copied as they are;
/// around them: a newline and the indent after `{`, `[` and `,`, `": "` after
/// a name, an empty object or array kept as `{}` or `[]`.
///
/// Returns the depth where the text ends: a value's text split between two
/// members (after a member's value, before the `,` that follows it) is laid
/// out whole by a second call from there.
///
/// Text that is not JSON never reaches here (see the module docs); it would
/// not make this panic either, only come out in some layout.
pub(super) fn reindent(out: &mut Out, json: &[u8], mut depth: usize) -> usize {
    // A first guess: the text plus a few indents.
    out.reserve(json.len() + 64);
    // Bytes from `copied` to `i` are still to be appended, as they are.
    let mut copied = 0;
    let mut i = 0;
    while let Some(&byte) = json.get(i) {
        match CLASS[usize::from(byte)] {
            Class::Plain => i += 1,
            Class::Quote => {
                i = string_end(json, i + 1);
                // Most strings are names: the colon is taken here, copied
                // with the name, without a turn of the loop.
                if json.get(i) == Some(&b':') {
                    out.extend_from(json, copied, i + 1);
                    out.push(b' ');
                    i += 1;
                    copied = i;
                }
            }
            Class::Open => {
                let after = skip_space(json, i + 1);
                let close = if byte == b'{' { b'}' } else { b']' };
                out.extend_from(json, copied, i + 1);
                if json.get(after) == Some(&close) {
                    // An empty container has no line break: its closing
                    // byte is copied with what follows.
                    copied = after;
                    i = after + 1;
                } else {
                    depth += 1;
                    out.newline_indent(depth);
                    i = after;
                    copied = i;
                }
            }
            Class::Close => {
                out.extend_from(json, copied, i);
                depth = depth.saturating_sub(1);
                out.newline_indent(depth);
                // The closing byte is copied with what follows.
                copied = i;
                i += 1;
            }
            Class::Comma => {
                out.extend_from(json, copied, i);
                out.indent_from(0, depth);
                i += 1;
                copied = i;
            }
            Class::Colon => {
                out.extend_from(json, copied, i);
                out.colon();
                i += 1;
                copied = i;
            }
            Class::Space => {
                out.extend_from(json, copied, i);
                i += 1;
                copied = i;
            }
        }
    }
    out.extend(json.get(copied..).unwrap_or_default());
    depth
}

/// The position after the string whose contents start at `start`: after its
/// closing quote, escaped characters skipped (or the end of the text).
#[inline]
pub(super) fn string_end(json: &[u8], start: usize) -> usize {
    let mut i = start;
    loop {
        // A word at a time up to the first quote or backslash.
        while let Some(word) = word_at(json, i) {
            let found = zero_bytes(word ^ splat(b'"')) | zero_bytes(word ^ splat(b'\\'));
            if found != 0 {
                i += (found.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match json.get(i) {
            None => return json.len(),
            Some(b'"') => return i + 1,
            Some(b'\\') => i += 2,
            Some(_) => i += 1,
        }
    }
}

/// The position of the first byte from `i` on that is not whitespace.
#[inline]
fn skip_space(json: &[u8], mut i: usize) -> usize {
    while json
        .get(i)
        .is_some_and(|&byte| CLASS[usize::from(byte)] == Class::Space)
    {
        i += 1;
    }
    i
}

/// True when the string `text` needs an escape in JSON: a quote, a backslash
/// or a control character (below 0x20), the bytes serde_json escapes.
/// Checked a word at a time; most strings of a report are short, so the last
/// word overlaps the one before it instead of a loop over the remaining bytes.
#[inline]
pub(super) fn needs_escape(text: &[u8]) -> bool {
    let n = text.len();
    if n < 8 {
        // Padded with a byte that needs no escape.
        let mut word = splat(b'a');
        for (k, &byte) in text.iter().enumerate() {
            word = (word & !(0xff << (8 * k))) | u64::from(byte) << (8 * k);
        }
        return escape_bytes(word) != 0;
    }
    let mut i = 0;
    while i + 8 < n {
        if word_at(text, i).is_some_and(|word| escape_bytes(word) != 0) {
            return true;
        }
        i += 8;
    }
    word_at(text, n - 8).is_some_and(|word| escape_bytes(word) != 0)
}

/// Non-zero when a byte of `word` needs an escape.
#[inline]
fn escape_bytes(word: u64) -> u64 {
    bytes_below(word, 0x20) | zero_bytes(word ^ splat(b'"')) | zero_bytes(word ^ splat(b'\\'))
}

/// The eight bytes at `i`, little-endian, if there are eight.
#[inline]
fn word_at(json: &[u8], i: usize) -> Option<u64> {
    let bytes: [u8; 8] = json.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// `byte` in each of a word's eight bytes.
const fn splat(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// Non-zero when a byte of `word` is zero; its lowest set bit is in the
/// first such byte (bits above it may be set wrongly, by a borrow).
#[inline]
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(splat(1)) & !word & splat(0x80)
}

/// Non-zero when a byte of `word` is below `n` (at most 0x80).
#[inline]
fn bytes_below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(splat(n)) & !word & splat(0x80)
}

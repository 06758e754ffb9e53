//! A create body that is a flat JSON object, read straight from its text.
//!
//! Why: most create bodies are a handful of names with strings, integers,
//! booleans or nulls. Parsed into a `serde_json::Value`, each costs a map
//! with a hash table, a `String` per name and string value, two hashed
//! removals, a sorted copy for the fingerprint and a serializer pass for the
//! arguments' text: about a sixth of a create's handling. Such a body's
//! text, though, already is what serde_json would write for each name and
//! value, so both the arguments' text and the canonical fingerprint can be
//! pasted from it.
//!
//! The reader takes only text whose every piece serde_json writes back
//! byte for byte: names and strings without escapes or control characters,
//! integers of at most 15 digits (not `-0`), `true`, `false`, `null`, JSON
//! whitespace between them, each name once, and a `client_reference` that is
//! a string within its limit. Anything else (nesting, `metadata`, a float,
//! an escape, a repeated name, text that is not JSON) gives `None`, and the
//! caller parses the body as a `Value`: the answers, the errors and the
//! ledger's text are the same either way.

use lostreply_text::SharedStr;

use crate::json_text::JsonText;
use crate::scratch;

/// The engine's reserved names this reader handles itself.
const CLIENT_REFERENCE: &str = "client_reference";
const METADATA: &str = "metadata";

/// Integers longer than this are left to serde_json, which reads a longer
/// one as a float past `u64`; 15 digits stay exact in any of its forms.
const MAX_INTEGER_DIGITS: usize = 15;

/// What a flat body gives: its canonical fingerprint, its arguments (the
/// members but the reference) and its reference.
pub(super) struct FlatBody {
    pub fingerprint: SharedStr,
    pub args: JsonText,
    pub client_reference: Option<SharedStr>,
}

/// A name and its value's JSON text, both slices of the body.
type Member<'a> = (&'a str, &'a str);

/// Reads `bytes` as a flat JSON object whose reference, if it has one, is a
/// string of at most `max_reference_bytes`; `None` when it is anything else
/// (see the module's comment).
pub(super) fn read(bytes: &[u8], max_reference_bytes: usize) -> Option<FlatBody> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut members = members(text)?;
    let at_reference = members
        .iter()
        .position(|(name, _)| *name == CLIENT_REFERENCE);
    let client_reference = match at_reference {
        Some(index) => Some(reference(members[index].1, max_reference_bytes)?),
        None => None,
    };
    if members.iter().any(|(name, _)| *name == METADATA) {
        return None;
    }
    let fingerprint = scratch::shared_str(|out| {
        let mut sorted = members.clone();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        write_object(&sorted, out);
    });
    // The arguments are the members without the reference, in the order a
    // `serde_json::Map` leaves them when the reference is removed from it:
    // the last member takes the removed one's place.
    if let Some(index) = at_reference {
        members.swap_remove(index);
    }
    let args = scratch::shared_str(|out| write_object(&members, out));
    Some(FlatBody {
        fingerprint,
        args: JsonText::from_compact(args),
        client_reference: client_reference.map(SharedStr::from),
    })
}

/// The reference's text when its value is a string within the limit.
fn reference(value: &str, max_bytes: usize) -> Option<&str> {
    let inner = value.strip_prefix('"')?.strip_suffix('"')?;
    (inner.len() <= max_bytes).then_some(inner)
}

fn write_object(members: &[Member<'_>], out: &mut Vec<u8>) {
    out.push(b'{');
    for (index, (name, value)) in members.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'}');
}

/// The members of a flat object that is the whole of `text`, in order.
fn members(text: &str) -> Option<Vec<Member<'_>>> {
    let mut cursor = Cursor { text, at: 0 };
    cursor.skip_whitespace();
    cursor.eat(b'{')?;
    cursor.skip_whitespace();
    let mut members: Vec<Member<'_>> = Vec::new();
    if cursor.eat(b'}').is_none() {
        loop {
            let name = cursor.string()?;
            let name = &name[1..name.len() - 1];
            cursor.skip_whitespace();
            cursor.eat(b':')?;
            cursor.skip_whitespace();
            let value = cursor.scalar()?;
            if members.iter().any(|(seen, _)| *seen == name) {
                return None;
            }
            members.push((name, value));
            cursor.skip_whitespace();
            if cursor.eat(b'}').is_some() {
                break;
            }
            cursor.eat(b',')?;
            cursor.skip_whitespace();
        }
    }
    cursor.skip_whitespace();
    (cursor.at == text.len()).then_some(members)
}

/// A position in the body's text. Every slice it hands out starts and ends
/// at an ASCII byte, so it is a whole `str`.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn take_from(&self, start: usize) -> &'a str {
        &self.text[start..self.at]
    }

    /// A string with its quotes, holding nothing serde_json would write
    /// otherwise (no escape, no control character).
    fn string(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        Some(self.take_from(start))
    }

    fn scalar(&mut self) -> Option<&'a str> {
        match self.peek()? {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => {
                let word = ["true", "false", "null"]
                    .into_iter()
                    .find(|word| self.text[self.at..].starts_with(word))?;
                self.at += word.len();
                Some(word)
            }
        }
    }

    /// An integer as serde_json writes it back: no leading zero, not `-0`,
    /// at most [`MAX_INTEGER_DIGITS`] digits. A fraction or an exponent after
    /// it is not a member's end, so the caller refuses it.
    fn integer(&mut self) -> Option<&'a str> {
        let start = self.at;
        let negative = self.eat(b'-').is_some();
        let first = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = &self.text[first..self.at];
        let well_formed = match digits.as_bytes() {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            _ => digits.len() <= MAX_INTEGER_DIGITS,
        };
        well_formed.then(|| self.take_from(start))
    }
}

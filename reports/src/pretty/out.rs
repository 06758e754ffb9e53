//! The writer's output buffer, built for many short pieces.
//!
//! Why not a `Vec<u8>` and `extend_from_slice`: a report is mostly short
//! pieces (an indent, a name, a number), and each variable-length append is a
//! call to `memcpy`, a sixth of the writer's time. Here the buffer is kept
//! initialized past its end, so a short piece is copied with fixed-size copies
//! the compiler inlines, which may write a few bytes beyond the piece that the
//! next piece overwrites; an indent is one fixed-size copy of a prepared line
//! start.

use std::io;

/// Bytes kept writable past the end of any reserved piece: the fixed-size
/// copies of short pieces and indents may write this far beyond it.
const SLACK: usize = 2 * INDENT_BYTES;

/// Indent levels written in one copy; deeper ones take more.
pub(super) const LEVELS: usize = 32;

/// A separator with the deepest one-copy indent: `,`, a newline, the spaces.
const INDENT_BYTES: usize = 2 + 2 * LEVELS;

/// `,` then a newline and `LEVELS` indents of two spaces, copied whole for
/// every separator and line break (the position advances by what is needed).
/// Padded so that a copy of `INDENT_BYTES` from its second byte is in range.
static COMMA_NEWLINE_INDENT: [u8; INDENT_BYTES + 1] = {
    let mut bytes = [b' '; INDENT_BYTES + 1];
    bytes[0] = b',';
    bytes[1] = b'\n';
    bytes
};

/// Pieces this long or shorter are copied without `memcpy`.
const SHORT: usize = 16;

/// An output buffer: `bytes[..pos]` is the output, and `bytes` is always at
/// least `SLACK` longer than any piece reserved.
#[derive(Debug)]
pub(super) struct Out {
    bytes: Vec<u8>,
    pos: usize,
}

impl Out {
    /// A buffer for about `capacity` bytes before it grows.
    pub(super) fn with_capacity(capacity: usize) -> Out {
        Out {
            bytes: vec![0; capacity + SLACK],
            pos: 0,
        }
    }

    /// The bytes written.
    pub(super) fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.pos).unwrap_or_default()
    }

    /// How many bytes are written.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.pos
    }

    /// Forgets the bytes written (once they are flushed).
    pub(super) fn clear(&mut self) {
        self.pos = 0;
    }

    /// Makes room for `n` more bytes, and the slack after them.
    #[inline]
    pub(super) fn reserve(&mut self, n: usize) {
        if self.bytes.len() - self.pos < n + SLACK {
            self.grow(n);
        }
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let wanted = (self.pos + n + SLACK).max(2 * self.bytes.len());
        self.bytes.resize(wanted, 0);
    }

    /// Appends one byte.
    #[inline]
    pub(super) fn push(&mut self, byte: u8) {
        self.reserve(1);
        self.bytes[self.pos] = byte;
        self.pos += 1;
    }

    /// Appends `piece`.
    #[inline]
    pub(super) fn extend(&mut self, piece: &[u8]) {
        self.reserve(piece.len());
        self.put(piece);
    }

    /// Appends `piece` where room is already reserved (with the slack).
    #[inline]
    fn put(&mut self, piece: &[u8]) {
        let n = piece.len();
        let at = self.pos;
        if n <= SHORT {
            copy_short(&mut self.bytes[at..at + SHORT], piece);
        } else {
            self.bytes[at..at + n].copy_from_slice(piece);
        }
        self.pos += n;
    }

    /// Appends `text[start..end]`. A short piece is copied with one
    /// fixed-size copy from `text` when `text` goes on far enough (what is
    /// copied past `end` is overwritten by the next piece).
    #[inline]
    pub(super) fn extend_from(&mut self, text: &[u8], start: usize, end: usize) {
        let n = end - start;
        if n <= SHORT {
            if let Some(window) = text.get(start..start + SHORT) {
                self.reserve(SHORT);
                let at = self.pos;
                self.bytes[at..at + SHORT].copy_from_slice(window);
                self.pos += n;
                return;
            }
        }
        self.extend(&text[start..end]);
    }

    /// Appends `"text"`: `text` quoted, already known to need no escape.
    #[inline]
    pub(super) fn quoted(&mut self, text: &[u8]) {
        self.reserve(text.len() + 2);
        self.bytes[self.pos] = b'"';
        self.pos += 1;
        self.put(text);
        self.bytes[self.pos] = b'"';
        self.pos += 1;
    }

    /// A newline and the indent of `depth` levels.
    #[inline]
    pub(super) fn newline_indent(&mut self, depth: usize) {
        self.indent_from(1, depth);
    }

    /// Before a member or an item: a newline (after a comma unless it is the
    /// first) and the indent of `depth` levels.
    #[inline]
    pub(super) fn separator(&mut self, first: bool, depth: usize) {
        self.indent_from(usize::from(first), depth);
    }

    /// After a member's name: `": "`.
    #[inline]
    pub(super) fn colon(&mut self) {
        self.reserve(2);
        self.bytes[self.pos..self.pos + 2].copy_from_slice(b": ");
        self.pos += 2;
    }

    /// `COMMA_NEWLINE_INDENT` from `start` (0: with the comma, 1: without)
    /// with `depth` levels of indent.
    #[inline]
    pub(super) fn indent_from(&mut self, start: usize, depth: usize) {
        if depth > LEVELS {
            return self.deep_indent_from(start, depth);
        }
        self.reserve(INDENT_BYTES);
        let n = 2 + 2 * depth - start;
        let at = self.pos;
        // The smallest fixed size that holds it: most indents are short.
        if n <= 16 {
            self.bytes[at..at + 16].copy_from_slice(&COMMA_NEWLINE_INDENT[start..start + 16]);
        } else if n <= 32 {
            self.bytes[at..at + 32].copy_from_slice(&COMMA_NEWLINE_INDENT[start..start + 32]);
        } else {
            self.bytes[at..at + INDENT_BYTES]
                .copy_from_slice(&COMMA_NEWLINE_INDENT[start..start + INDENT_BYTES]);
        }
        self.pos += n;
    }

    #[cold]
    fn deep_indent_from(&mut self, start: usize, depth: usize) {
        self.extend(&COMMA_NEWLINE_INDENT[start..INDENT_BYTES]);
        let mut left = depth - LEVELS;
        while left > 0 {
            let levels = left.min(LEVELS);
            self.extend(&COMMA_NEWLINE_INDENT[2..2 + 2 * levels]);
            left -= levels;
        }
    }
}

/// Copies `src` (at most `SHORT` bytes) to the start of `dst` (`SHORT`
/// bytes) with fixed-size copies, overlapping where it is not a power of two.
#[inline]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        // 1 to 3 bytes: the first, the middle and the last one.
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// For numbers written by serde_json's formatter and its string escaping.
impl io::Write for Out {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.extend(buf);
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.extend(buf);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

//! The JSON report's writer: the bytes of `serde_json::to_writer_pretty`,
//! made fast for reports of a million operations (3.5 GB of JSON).
//!
//! Why not serde_json's own writer: two costs dominated writing a report.
//! - Most bytes are calls' requests and replies and effects' arguments, kept
//!   as compact JSON text ([`SharedJson`](crate::shared_json::SharedJson)).
//!   Through a generic serializer that text would be parsed back and every
//!   token re-serialized. Here [`reindent`] lays the compact text out as the
//!   pretty writer lays out its tree, in one pass that copies it between
//!   structural characters.
//! - The rest is the model's own fields: serde_json writes each member name
//!   and string through a byte-at-a-time escape loop and a dozen small writes
//!   (a write per indent level). [`PrettySerializer`] checks a string for
//!   escapes a word at a time and writes into its own buffer ([`out`]) built
//!   for short pieces, which it flushes itself.
//!
//! What is left is mostly waiting for memory: the first bytes of each string
//! and shared text of the model, scattered over the heap.
//!
//! Exactness: the layout is serde_json's `PrettyFormatter` with a two-space
//! indent (a container with no element is `{}` or `[]`, otherwise each element
//! on its own line); numbers are written by serde_json's own formatter code and
//! any string that needs an escape by serde_json itself. The tests compare the
//! output with `serde_json::to_string_pretty` over many generated values.
//!
//! How a `SharedJson` knows it is written here and not by another serializer
//! (`serde_json::to_value`, `to_string_pretty`, another format), which must get
//! the calls of its tree: [`is_report_serializer`] compares the
//! serializer's type with this writer's. Only then does it hand its text over
//! ([`write_shared`]), through a newtype of a name private to this module and
//! with [`PENDING`] set; the serializer takes both or the value fails, so a
//! wrong guess would be an error, not a silently wrong report.
//!
//! The re-indentation is exact because the text is serde_json's own compact
//! writing of a `Value` (`SharedJson`'s constructors guarantee it): its tokens
//! are those the tree would write (strings escaped by the same rules, numbers
//! by the same code), so only the layout between tokens changes. Whitespace
//! outside strings is skipped anyway, so other valid JSON text is laid out
//! correctly too.

mod chunked;
mod handover;
mod out;
mod reindent;
mod serializer;
#[cfg(test)]
mod tests;

use std::io::{self, Write};

use lostreply_text::SharedStr;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};

use handover::{PENDING, PENDING_CHUNKED, SHARED_TOKEN, TAIL};
use serializer::PrettySerializer;

pub(crate) use chunked::serialize_chunked;
pub(crate) use serializer::is_report_serializer;

/// Writes `value` as `serde_json::to_writer_pretty` would, followed by a newline.
pub(crate) fn write_pretty<T: ?Sized + Serialize>(w: &mut dyn Write, value: &T) -> io::Result<()> {
    // A value left pending by a failed write must not be taken now.
    PENDING.set(false);
    PENDING_CHUNKED.set(false);
    let mut serializer = PrettySerializer::new(w);
    let written = value.serialize(&mut serializer);
    PENDING.set(false);
    written?;
    serializer.finish()
}

/// Writes `json`, compact JSON text, then `tail` (the rest of the same value's
/// text), through the report's serializer, which re-indents them. Call only when [`is_report_serializer::<S>`] holds; if the
/// serializer was not the report's after all, this fails.
pub(crate) fn write_shared<S: Serializer>(
    json: &str,
    tail: Option<&SharedStr>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    PENDING.set(true);
    TAIL.set(tail.cloned());
    let written = serializer.serialize_newtype_struct(SHARED_TOKEN, &SharedText(json));
    // Taken by the serializer; cleared in any case, so no tail outlives its value.
    TAIL.set(None);
    if PENDING.replace(false) {
        return Err(S::Error::custom(
            "a shared JSON value was not written by the report's serializer",
        ));
    }
    written
}

/// The text of a shared value, as one string for [`PrettySerializer`] to take.
struct SharedText<'a>(&'a str);

impl Serialize for SharedText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

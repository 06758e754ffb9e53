//! A long array of the report laid out on two threads: the report's largest
//! arrays (a million-operation run has two million calls, a million journal
//! entries and effects) are written in chunks, every other chunk by a second
//! thread into a buffer of its own, and pasted in order. The bytes are those
//! of writing the array on one thread: each chunk is written by this module's
//! serializer at the depth the array's items have, with the same separators.
//!
//! Why: writing the JSON is the largest single step of checking and
//! reporting a large run, and its items are independent. Both threads wait on
//! the same memory, so two write it in about a fifth less time, not half
//! (docs/benchmarks.md, "The JSON report's writer").
//!
//! How the array reaches the writer: [`serialize_chunked`] is the array's
//! `serialize_with`. Under any other serializer it is the plain sequence.
//! Under the report's writer (and long enough) it hands a [`Chunked`] over
//! through a newtype of a private name with [`PENDING_CHUNKED`] set, as
//! `write_shared` hands over shared text; the writer records its depth in
//! [`DEPTH`] and writes the `Chunked`, which opens a sequence of pasted
//! chunks ([`PASTED_TOKEN`], accepted only right after), each written
//! straight through to the sink. A wrong guess about the serializer is an
//! error, never a wrong report.

use std::sync::mpsc;

use serde::ser::{Error as _, SerializeTupleStruct};
use serde::{Serialize, Serializer};

use super::handover::{CHUNKED_TOKEN, DEPTH, PASTED_TOKEN, PENDING_CHUNKED};
use super::serializer::{is_report_serializer, PrettySerializer};

/// Arrays shorter than this are written on the caller's thread. Why: a
/// second thread's buffers and allocator pages cost some 10 MiB of peak
/// memory, a lot beside a report of 10 000 operations (under 40 MiB) that
/// takes tens of milliseconds to write anyway; from about 30 000 items the
/// time saved is worth it.
pub(super) const CHUNKED_FROM: usize = 32_768;

/// Items per chunk: about 400 KB of JSON for calls, so the few buffers in
/// flight stay small whatever the report's size (chunks of 1 024 items from
/// 4 096, each in a buffer of its own, added 18 MiB to the peak of writing
/// a report of 10 000 operations).
const CHUNK: usize = 256;

/// Chunks the second thread may have written ahead of the pasting.
const AHEAD: usize = 2;

/// Serializes `items` as a sequence; through the report's writer, a long one
/// is written in chunks on two threads (same bytes). For `serialize_with`.
pub(crate) fn serialize_chunked<T, S>(items: &[T], serializer: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + Sync,
    S: Serializer,
{
    serialize_in_chunks(items, CHUNK, CHUNKED_FROM, serializer)
}

/// [`serialize_chunked`] with its sizes given (the tests use small ones).
pub(super) fn serialize_in_chunks<T, S>(
    items: &[T],
    chunk: usize,
    from: usize,
    serializer: S,
) -> Result<S::Ok, S::Error>
where
    T: Serialize + Sync,
    S: Serializer,
{
    if items.len() < from.max(1) || !is_report_serializer::<S>() {
        return serializer.collect_seq(items);
    }
    PENDING_CHUNKED.set(true);
    let chunked = Chunked {
        items,
        chunk: chunk.max(1),
    };
    let written = serializer.serialize_newtype_struct(CHUNKED_TOKEN, &chunked);
    DEPTH.set(None);
    if PENDING_CHUNKED.replace(false) {
        return Err(S::Error::custom(
            "a chunked array was not written by the report's serializer",
        ));
    }
    written
}

/// The items of a long array, for the report's writer.
struct Chunked<'a, T> {
    items: &'a [T],
    chunk: usize,
}

impl<T: Serialize + Sync> Serialize for Chunked<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(depth) = DEPTH.take() else {
            return Err(S::Error::custom("a chunked array without its depth"));
        };
        // The items sit one level inside the array.
        let depth = depth + 1;
        let chunks = self.items.chunks(self.chunk);
        let mut pasted = serializer.serialize_tuple_struct(PASTED_TOKEN, chunks.len())?;
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::sync_channel::<Result<Vec<u8>, serde_json::Error>>(AHEAD);
            // Buffers pasted, handed back to be written again: the same few
            // serve the whole array, freed where they were made.
            let (back, returned) = mpsc::channel::<Vec<u8>>();
            // The odd chunks, in order, on the second thread; it stops when
            // the receiver is gone (the write failed).
            let odd = chunks.clone();
            scope.spawn(move || {
                for (index, chunk) in odd.enumerate().skip(1).step_by(2) {
                    let mut bytes = returned.try_recv().unwrap_or_default();
                    let written = write_chunk(chunk, depth, index == 0, &mut bytes);
                    if tx.send(written.map(|()| bytes)).is_err() {
                        return;
                    }
                }
            });
            let mut own = Vec::new();
            for (index, chunk) in chunks.enumerate() {
                if index % 2 == 0 {
                    write_chunk(chunk, depth, index == 0, &mut own).map_err(S::Error::custom)?;
                    pasted.serialize_field(&PastedText(&own))?;
                } else {
                    let Ok(bytes) = rx.recv() else {
                        return Err(S::Error::custom("the chunk writer stopped"));
                    };
                    let bytes = bytes.map_err(S::Error::custom)?;
                    pasted.serialize_field(&PastedText(&bytes))?;
                    // The writer may have ended: the buffer is then dropped here.
                    let _ = back.send(bytes);
                }
            }
            Ok(())
        })?;
        pasted.end()
    }
}

/// One chunk's items as the writer lays them out at `depth`, each after its
/// separator (the array's first item has no comma), into `bytes` (emptied first).
/// The error is the serializer's own, which the second thread hands over.
fn write_chunk<T: Serialize>(
    items: &[T],
    depth: usize,
    first_chunk: bool,
    bytes: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    bytes.clear();
    let mut ser = PrettySerializer::nested(bytes, depth);
    for (i, item) in items.iter().enumerate() {
        ser.separator(first_chunk && i == 0);
        item.serialize(&mut ser)?;
    }
    ser.finish_nested().map_err(serde_json::Error::io)
}

/// A chunk's text (written by this module's serializer, so UTF-8), for the
/// writer to paste as it is: handed over as bytes, which the pasted
/// sequence's fields take whole instead of as an array of numbers.
struct PastedText<'a>(&'a [u8]);

impl Serialize for PastedText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

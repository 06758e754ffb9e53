//! Text written into a buffer the thread keeps, then copied out once at its
//! exact size.
//!
//! Why: a response body, a fingerprint or a header written into a fresh
//! `Vec` costs the `Vec`, its growths, and (`Bytes::from` of a `Vec` with
//! room to spare) a second allocation for the shared handle; that way a
//! request makes about thirty allocations where bare hyper makes five, and
//! the allocator becomes the largest part of the simulator's own work under
//! load. Written here, the text costs one allocation: its copy.

use std::cell::RefCell;

use bytes::Bytes;
use lostreply_text::SharedStr;

/// A buffer that grew past this is given back rather than kept, so that one
/// large body does not stay resident in every worker thread.
const KEPT_CAPACITY: usize = 16 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `write` on the thread's empty buffer and returns what `done` makes
/// of the bytes written. Re-entered (a writer that writes through this
/// again), the inner call gets a fresh buffer of its own.
fn with_scratch<R>(write: impl FnOnce(&mut Vec<u8>), done: impl FnOnce(&[u8]) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            write(&mut buffer);
            let made = done(&buffer);
            if buffer.capacity() > KEPT_CAPACITY {
                *buffer = Vec::new();
            }
            made
        }
        Err(_) => {
            let mut buffer = Vec::new();
            write(&mut buffer);
            done(&buffer)
        }
    })
}

/// The bytes `write` writes, in one allocation of their size.
pub(crate) fn bytes(write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    with_scratch(write, Bytes::copy_from_slice)
}

/// The text `write` writes, shared, in one allocation. Bytes that are not
/// UTF-8 (no writer here makes them) are replaced, never a panic.
pub(crate) fn shared_str(write: impl FnOnce(&mut Vec<u8>)) -> SharedStr {
    with_scratch(write, |written| match std::str::from_utf8(written) {
        Ok(text) => SharedStr::from(text),
        Err(_) => SharedStr::from(String::from_utf8_lossy(written).as_ref()),
    })
}

/// [`shared_str`] for a writer of text: a `String` is UTF-8 already, so
/// the copy is made from it without checking the bytes again.
pub(crate) fn shared_text(write: impl FnOnce(&mut String)) -> SharedStr {
    let mut made = SharedStr::default();
    with_scratch(
        |out| {
            // `out` is empty here, so it is valid UTF-8 as it is; its room is kept.
            let mut text = String::from_utf8(std::mem::take(out)).unwrap_or_default();
            write(&mut text);
            made = SharedStr::from(text.as_str());
            *out = text.into_bytes();
        },
        |_| (),
    );
    made
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn each_call_starts_empty_and_gets_exactly_what_it_wrote() {
        let first = bytes(|out| out.extend_from_slice(b"a longer first text"));
        let second = bytes(|out| out.extend_from_slice(b"short"));
        assert_eq!(&first[..], b"a longer first text");
        assert_eq!(&second[..], b"short");
        assert_eq!(shared_str(|out| out.extend_from_slice(b"x")).as_str(), "x");
        assert_eq!(shared_text(|out| out.push_str("é, ü")).as_str(), "é, ü");
    }

    #[test]
    fn a_writer_that_writes_through_it_again_gets_its_own_buffer() {
        let outer = bytes(|out| {
            out.extend_from_slice(b"outer:");
            let inner = bytes(|inner| inner.extend_from_slice(b"inner"));
            out.extend_from_slice(&inner);
        });
        assert_eq!(&outer[..], b"outer:inner");
    }

    #[test]
    fn a_large_text_is_copied_whole_and_its_buffer_is_not_kept() {
        let big = bytes(|out| {
            for _ in 0..(2 * KEPT_CAPACITY) {
                let _ = out.write_all(b"z");
            }
        });
        assert_eq!(big.len(), 2 * KEPT_CAPACITY);
        SCRATCH.with(|cell| assert!(cell.borrow().capacity() <= KEPT_CAPACITY));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced() {
        assert_eq!(
            shared_str(|out| out.extend_from_slice(&[b'a', 0xff])).as_str(),
            "a\u{fffd}"
        );
    }
}

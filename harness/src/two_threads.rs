//! Checking and reporting a large run on two threads: the one threshold and
//! the one way to run two pieces of work side by side.
//!
//! Why: on a million operations the attribution, the checks, the report's
//! records and the JSON each take a second or more, and left alone each kept
//! one core busy while the other waited. On the small runs of a suite a
//! thread costs more than it saves, and `--jobs` already keeps the cores busy,
//! so below the threshold everything runs on the caller's thread. Either way
//! the result is the same.

/// Runs at or above this many records (operations, requests, effects or
/// calls, as each step counts what it walks) use two threads.
pub const FROM_RECORDS: usize = 50_000;

/// `a` and `b`, on two threads (`b` on the second) or one after the other.
/// A panic in either goes on as it would have without the thread.
pub(crate) fn both<A: Send, B: Send>(
    two_threads: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !two_threads {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let b = scope.spawn(b);
        let a = a();
        (a, joined(b.join()))
    })
}

/// A scoped thread's result; a panic in it goes on as it would have without the thread.
fn joined<T>(result: std::thread::Result<T>) -> T {
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

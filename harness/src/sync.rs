//! Small synchronisation helpers.

use std::sync::{Mutex, MutexGuard, PoisonError};

// Ignoring poison is right here: every mutex of the harness guards a record
// (calls, notes, errors, a crash gate's sender, the current adapter instance)
// that each critical section changes in one push, take or assignment, so a
// panic elsewhere never leaves it half-written. A panic in an adapter or a
// commit hook is reported as that call's failure; it must not turn the rest of
// the run, and its report, into a second panic.

/// Locks `mutex`, ignoring poisoning (see the module's comment for why).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes what `mutex` holds, ignoring poisoning, as [`lock`] does.
pub(crate) fn into_inner<T>(mutex: Mutex<T>) -> T {
    mutex.into_inner().unwrap_or_else(PoisonError::into_inner)
}

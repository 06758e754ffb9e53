//! Small synchronisation helpers: the only way the simulator and the harness
//! take a lock.
//!
//! Every helper ignores poisoning. In the simulator every critical section
//! leaves its data consistent before anything that could panic, and a
//! panicking request must not take the whole simulator down. In the harness
//! every mutex guards a record (calls, notes, errors, a crash gate's sender,
//! the current adapter instance) that each critical section changes in one
//! push, take or assignment, so a panic elsewhere never leaves it
//! half-written; a panic in an adapter or a commit hook is reported as that
//! call's failure and must not turn the rest of the run, and its report, into
//! a second panic.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, ignoring poisoning.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes what `mutex` holds, ignoring poisoning, as [`lock`] does.
pub fn into_inner<T>(mutex: Mutex<T>) -> T {
    mutex.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// Takes `rwlock` for reading, ignoring poisoning.
pub fn read<T>(rwlock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    rwlock.read().unwrap_or_else(PoisonError::into_inner)
}

/// Takes `rwlock` for writing, ignoring poisoning.
pub fn write<T>(rwlock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    rwlock.write().unwrap_or_else(PoisonError::into_inner)
}

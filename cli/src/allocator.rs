//! The `lostreply` binary's allocator (mimalloc), as a run uses it.
//!
//! Why: checking a large run frees a great deal of memory at a few points
//! (a million requests' fingerprints once the attribution is built, the
//! checks' index, the effects' own arguments), and what comes next
//! allocates other sizes, so nothing reuses it. mimalloc gives a freed page
//! back to the system only on a later allocator call after its purge delay,
//! which a phase of large tables may never make: without a collect, some
//! 100 MB of freed pages stay resident at a million operations' peak
//! (docs/benchmarks.md). A run calls [`give_back_after`] as
//! each phase of checking ends ([`lostreply_harness::phase`]).

use libmimalloc_sys::mi_collect;
use lostreply_harness::phase::PhaseEnd;

/// The run's phase hook: gives freed memory back after a phase that freed
/// much of a large run's.
pub fn give_back_after(end: PhaseEnd) {
    if end.freed_much {
        give_back_freed_memory();
    }
}

/// Gives the memory this thread's heap holds free, and the pages freed
/// whole, back to the system now (mimalloc's forced collect). Only binaries
/// whose allocator is mimalloc call it.
pub fn give_back_freed_memory() {
    // SAFETY: `mi_collect` takes no pointer and may be called at any time
    // from any thread; it only returns memory mimalloc holds free.
    #[allow(unsafe_code)]
    unsafe {
        mi_collect(true);
    }
}

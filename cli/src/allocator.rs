//! The `lostreply` binary's allocator (mimalloc), as a run uses it.
//!
//! Why: checking a large run frees a great deal of memory at one point (a
//! million requests' fingerprints, once the attribution is built), and
//! what comes next allocates other sizes, so nothing reuses it. mimalloc
//! gives a freed page back to the system only on a later allocator call
//! after its purge delay, which a phase of large tables may never make: at a
//! million operations the freed pages were still resident at the peak, some
//! 100 MB of it (docs/benchmarks.md). The harness calls this hook at that
//! point ([`lostreply_harness::suite::set_give_back_freed`]).

use libmimalloc_sys::mi_collect;

/// Gives the memory this thread's heap holds free, and the pages freed
/// whole, back to the system now (mimalloc's forced collect). Only the
/// binary sets it as the harness's hook, where mimalloc is the allocator.
pub fn give_back_freed_memory() {
    // SAFETY: `mi_collect` takes no pointer and may be called at any time
    // from any thread; it only returns memory mimalloc holds free.
    #[allow(unsafe_code)]
    unsafe {
        mi_collect(true);
    }
}

//! The steps of checking and reporting a run, as a hook sees them end.
//!
//! Why a hook: checking a large run frees a great deal of memory at a few
//! known points (a million requests' fingerprints once the attribution is
//! built, the checks' index, the effects' own copies of their arguments),
//! and what comes next allocates other sizes, so nothing reuses it. The
//! engine does not know the allocator; a binary that does (`lostreply run`
//! with mimalloc) gives that memory back when a phase ends with
//! [`PhaseEnd::freed_much`], and the bench counts each phase's memory.

/// A step of checking and reporting one scenario's observation, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// The attribution of requests and effects to operations is built.
    Attribution,
    /// The fingerprints only the attribution reads are freed.
    FingerprintsFreed,
    /// The checks' index is built.
    ChecksIndex,
    /// The invariants and the expectations are checked.
    Checks,
    /// The checks' index is freed.
    IndexFreed,
    /// What the report needs from the attribution is taken, and the
    /// attribution freed.
    ReportPrepared,
    /// The ledger's records are made and the effects' own copies of their
    /// arguments freed.
    LedgerRecords,
    /// The scenario's report is whole.
    Report,
}

impl Phase {
    /// The phase's name as the bench prints it.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Attribution => "attribution",
            Phase::FingerprintsFreed => "fingerprints freed",
            Phase::ChecksIndex => "checks' index",
            Phase::Checks => "checks",
            Phase::IndexFreed => "index freed",
            Phase::ReportPrepared => "report prepared",
            Phase::LedgerRecords => "ledger records",
            Phase::Report => "report",
        }
    }
}

/// A phase that has just ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PhaseEnd {
    /// Which phase.
    pub phase: Phase,
    /// True when the phase freed a large part of a large run's memory
    /// (from [`crate::two_threads::FROM_RECORDS`] records), which an
    /// allocator may give back to the system now.
    pub freed_much: bool,
}

impl PhaseEnd {
    /// A phase's end.
    pub fn new(phase: Phase, freed_much: bool) -> PhaseEnd {
        PhaseEnd { phase, freed_much }
    }
}

/// What a run calls as each phase of each scenario ends (from the thread
/// that checks it; scenarios run concurrently with `--jobs`).
pub type PhaseHook = fn(PhaseEnd);

//! The dimensions a design of the family varies along (what `execute` does
//! after an ambiguous answer, which rung comes first, how the lock is taken,
//! and the one flaw of a flawed design) and the correct designs' values. The
//! calls (`calls`, `ladder`) read a [`Design`]; the catalogue (`super`) names
//! them.

/// How one adapter of the family behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Design {
    /// What `execute` does after an ambiguous answer.
    pub execute: Execute,
    /// Which rung of the ladder comes first.
    pub order: Order,
    /// How a call that may change a record takes the operation's lock.
    pub lock: Locking,
    /// The deliberate mistake, if any.
    pub flaw: Flaw,
}

/// What `execute` does after its create came back ambiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execute {
    /// Climb the ladder at once: up to `replays` same-key replays, then lookups.
    Eager {
        /// Same-key replays `execute` may send at once.
        replays: u32,
    },
    /// Answer `unknown` and leave every further step to `reconcile`.
    Lazy,
}

/// Which evidence comes first while the key is still retained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Replay the key first; look up only when the replays stay ambiguous.
    ReplayFirst,
    /// Look up first; replay only when the lookups prove nothing.
    LookupFirst,
}

/// How the operation's lock is taken by the calls that may change a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locking {
    /// Wait for the lock and hold it from the first read to the last write.
    Blocking,
    /// Take the lock only if it is free; otherwise answer from the store at
    /// once and send nothing.
    Try,
}

/// The one deliberate mistake of a flawed design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// A correct design.
    None,
    /// A 409 "key in flight" is taken for a failure.
    InFlightIsFailure,
    /// No lock at all: racing calls interleave.
    Unlocked,
    /// Replays the key whatever its age.
    ReplaysExpiredKeys,
    /// A genuine event overwrites whatever the record says.
    LastWriterWins,
    /// Never asks a person.
    NeverEscalates,
    /// A refusal (400/401/404/413/429) of a create sent again after an
    /// ambiguous attempt is taken for the operation's failure.
    RefusedRetryIsFailure,
    /// An absence seen in the call whose create lost its answer is taken
    /// for proof, and the create is sent again whatever the key.
    SameCallAbsence,
    /// A genuine event that contradicts an operator's decision changes
    /// nothing: the operation is not raised for review again.
    IgnoresContradiction,
    /// A lookup that failed itself (an error status, a cut or lost answer)
    /// is taken for proof of absence, and the create is sent again.
    FailedLookupIsAbsence,
}

/// `eager`: replays at once after an ambiguous answer, key first, blocking lock.
pub const EAGER: Design = Design {
    execute: Execute::Eager { replays: 2 },
    order: Order::ReplayFirst,
    lock: Locking::Blocking,
    flaw: Flaw::None,
};

/// `lazy`: execute sends once; reconcile does the rest.
pub const LAZY: Design = Design {
    execute: Execute::Lazy,
    ..EAGER
};

/// `lookup-first`: looks for the object before it replays.
pub const LOOKUP_FIRST: Design = Design {
    execute: Execute::Eager { replays: 1 },
    order: Order::LookupFirst,
    ..EAGER
};

/// `try-lock`: lazy, and never waits for another worker.
pub const TRY_LOCK: Design = Design {
    lock: Locking::Try,
    ..LAZY
};

//! A family of adapters that share one kit and differ only in *design*: when
//! `execute` climbs the evidence ladder, which rung comes first, how the
//! operation lock is taken, and (for the flawed variants) one deliberate
//! mistake each. Every design is written against the public contracts
//! (docs/adapter-protocol.md, docs/provider-api.md), not against any one
//! scenario.
//!
//! Catalogue ([`design()`] finds one by name; `design <name> <call>` serves
//! one as a process):
//!
//! | name | execute | order | lock | flaw |
//! |---|---|---|---|---|
//! | `eager` | eager, 2 replays | replay first | blocking | none |
//! | `lazy` | lazy | replay first | blocking | none |
//! | `lookup-first` | eager, 1 replay | lookup first | blocking | none |
//! | `try-lock` | lazy | replay first | try | none |
//! | `flawed-in-flight-is-failure` | as `eager` | | | a 409 in flight is `failed` |
//! | `flawed-unlocked` | as `eager` | | | no lock |
//! | `flawed-replays-expired-keys` | as `eager` | | | replays whatever the key's age |
//! | `flawed-last-writer-wins` | as `eager` | | | a genuine event overwrites anything |
//! | `flawed-never-escalates` | as `eager` | | | never sets `needs_review` |
//! | `flawed-refused-retry-is-failure` | as `eager` | | | a refusal of a create sent again after an ambiguous attempt is `failed` |
//! | `flawed-same-call-absence` | as `eager` | | | an absence seen in the call whose create lost its answer is proof, and the create is sent again |
//! | `flawed-ignores-contradiction` | as `eager` | | | an event that contradicts an operator's decision changes nothing |
//! | `flawed-failed-lookup-is-absence` | as `eager` | | | a lookup that failed itself (error, cut, lost) is proof of absence, and the create is sent again |
//!
//! Decisions every design shares, where the contract leaves a choice:
//! - 429 is `unknown`, not `failed`, on any attempt: nothing ran, and the
//!   record says so, so the next climb sends the same request again
//!   (without a lookup when no earlier attempt is in doubt).
//! - A 409 "in flight" is `pending` (the provider has the request), and the
//!   climb stops there: anything else in the same call would race it.
//! - A refusal (400/401/404/413) is `failed` only when no earlier attempt
//!   is in doubt; after an ambiguous attempt (a same-key retry in `execute`,
//!   a replay in `reconcile`) it refuses that request only, says nothing
//!   about the earlier one, and ends the call's replays: the operation stays
//!   open and the next climb starts again.
//! - An absence seen in the very call whose create lost its answer leads to
//!   a resend only when that resend is a retained-key replay: an unkeyed
//!   re-create could overtake a create still on its way. The earlier create
//!   stays in doubt, so a refusal of that replay is not `failed` either.
//! - An operator's resolution is final; a genuine event that contradicts it
//!   later (an object alive where the person said `failed`, another live
//!   object beside the one they named, the named object or, when they named
//!   none, an object settled `failed`) keeps outcome and object and raises
//!   the operation for review again.
//! - `try-lock` applies to `execute` and `reconcile`; `webhook` and
//!   `resolve` send nothing and wait for the lock, so a genuine event or an
//!   operator's decision is never dropped for want of it.
//!
//! Map:
//! - [`design`](mod@design): the dimensions a design varies along, and the correct designs.
//! - [`record`]: what is stored about an operation, and the never-regress rule.
//! - [`store`]: one JSON file per operation, atomic replace, per-operation locks.
//! - [`keys`]: the operation's idempotency key and how each mode spells it.
//! - [`client`]: bounded HTTP requests, and how an answer was lost.
//! - [`classify`]: what a create answer or a lookup answer means (pure).
//! - [`rules`]: key retention, which rungs exist, when to escalate (pure).
//! - [`webhook`]: Standard Webhooks verification and event correlation (pure).
//! - [`ladder`]: climbing the evidence ladder for one operation.
//! - [`calls`]: the five protocol calls.

use std::path::Path;

use lostreply_harness::adapter::{Adapter, AdapterFactory, AdapterFailure};

pub mod calls;
pub mod classify;
pub mod client;
pub mod design;
pub mod keys;
pub mod ladder;
pub mod record;
pub mod rules;
pub mod store;
pub mod webhook;

pub use design::{Design, Execute, Flaw, Locking, Order, EAGER, LAZY, LOOKUP_FIRST, TRY_LOCK};

const CORRECT: [(&str, Design); 4] = [
    ("eager", EAGER),
    ("lazy", LAZY),
    ("lookup-first", LOOKUP_FIRST),
    ("try-lock", TRY_LOCK),
];

/// The flawed designs, by name: the one list every enumeration of them
/// (the catalogue, `design <name>`, `lostreply validate --prove`) reads.
const FLAWED: [(&str, Flaw); 9] = [
    ("flawed-in-flight-is-failure", Flaw::InFlightIsFailure),
    ("flawed-unlocked", Flaw::Unlocked),
    ("flawed-replays-expired-keys", Flaw::ReplaysExpiredKeys),
    ("flawed-last-writer-wins", Flaw::LastWriterWins),
    ("flawed-never-escalates", Flaw::NeverEscalates),
    (
        "flawed-refused-retry-is-failure",
        Flaw::RefusedRetryIsFailure,
    ),
    ("flawed-same-call-absence", Flaw::SameCallAbsence),
    ("flawed-ignores-contradiction", Flaw::IgnoresContradiction),
    (
        "flawed-failed-lookup-is-absence",
        Flaw::FailedLookupIsAbsence,
    ),
];

/// Builds adapters of one named design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesignFactory {
    /// The catalogue name (`eager`, `flawed-unlocked`, ...).
    pub name: &'static str,
    /// The design.
    pub design: Design,
}

impl AdapterFactory for DesignFactory {
    fn name(&self) -> String {
        self.name.to_owned()
    }

    fn build(&self, state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
        Ok(Box::new(calls::DesignAdapter::open(
            state_dir,
            self.design,
        )?))
    }
}

fn catalogue() -> impl Iterator<Item = DesignFactory> {
    let correct = CORRECT
        .into_iter()
        .map(|(name, design)| DesignFactory { name, design });
    // Each flawed design is `eager` with exactly one mistake, so a verdict
    // that differs from `eager`'s is that mistake's doing.
    let flawed = FLAWED.into_iter().map(|(name, flaw)| DesignFactory {
        name,
        design: Design { flaw, ..EAGER },
    });
    correct.chain(flawed)
}

fn boxed(factory: DesignFactory) -> Box<dyn AdapterFactory> {
    Box::new(factory)
}

/// The correct designs: `eager`, `lazy`, `lookup-first`, `try-lock`.
pub fn correct_designs() -> Vec<Box<dyn AdapterFactory>> {
    catalogue()
        .filter(|f| f.design.flaw == Flaw::None)
        .map(boxed)
        .collect()
}

/// The flawed designs, each `eager` with one deliberate mistake.
pub fn flawed_designs() -> Vec<Box<dyn AdapterFactory>> {
    catalogue()
        .filter(|f| f.design.flaw != Flaw::None)
        .map(boxed)
        .collect()
}

/// The design of that name, correct or flawed.
pub fn design(name: &str) -> Option<Box<dyn AdapterFactory>> {
    catalogue().find(|f| f.name == name).map(boxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_names_are_unique_and_found() {
        let names: Vec<String> = correct_designs()
            .iter()
            .chain(flawed_designs().iter())
            .map(|f| f.name())
            .collect();
        assert_eq!(names.len(), CORRECT.len() + FLAWED.len());
        assert_eq!(names.len(), 13);
        for name in &names {
            assert_eq!(
                design(name).map(|f| f.name()).as_deref(),
                Some(name.as_str())
            );
            assert_eq!(names.iter().filter(|n| *n == name).count(), 1);
        }
        assert!(design("reference").is_none());
    }

    #[test]
    fn each_flawed_design_is_eager_with_one_flaw() {
        for (_, flaw) in FLAWED {
            let factory = catalogue().find(|f| f.design.flaw == flaw);
            let design = factory.map(|f| f.design);
            assert_eq!(design, Some(Design { flaw, ..EAGER }));
        }
    }
}

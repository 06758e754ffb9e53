//! The grammar of situations, as proptest strategies: their value trees
//! generate a situation and shrink it (fewer operations, steps and faults,
//! smaller clock moves, earlier requests, plainer providers).
//!
//! Fair by construction: in every situation it makes, a correct adapter can
//! keep all seven invariants. The provider keeps its documented contract
//! (no known-bad idempotency mode); an answer that says "not done" (429) is
//! only sent before the commit, and an answer after the commit is a lost or
//! cut answer or a 5xx, which says nothing about the commit; every fault is
//! scoped to one step; the clock moves only between steps. What a correct
//! adapter may not be able to do is finish (it may stay `unknown` or ask a
//! person): explore judges truth, not completion.

use std::time::Duration;

use proptest::prelude::*;

use crate::situation::{At, Fault, Keys, Kind, Lookups, Provider, Response, Situation, Step};

/// Most operations in one situation.
pub const MAX_OPERATIONS: usize = 3;
/// Most steps in one situation.
pub const MAX_STEPS: usize = 6;
/// Most fault rules in one situation.
pub const MAX_FAULTS: usize = 3;

fn provider() -> impl Strategy<Value = Provider> {
    let keys = prop_oneof![Just(Keys::Stripe), Just(Keys::Ietf), Just(Keys::None)];
    let retention = prop_oneof![
        Just(Duration::from_secs(24 * 3600)),
        Just(Duration::from_secs(3600))
    ];
    let lookups = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(no_retrieve, no_search, no_list)| Lookups {
            retrieve: !no_retrieve,
            client_reference: !no_search,
            list_recent: !no_list,
        },
    );
    let settle = prop_oneof![
        4 => Just(None),
        1 => Just(Some(Duration::from_secs(60))),
    ];
    (keys, retention, lookups, settle).prop_map(|(keys, retention, lookups, settle_after)| {
        Provider {
            keys,
            retention,
            lookups,
            settle_after,
        }
    })
}

/// A step over operation `op` (taken modulo the operations there are).
fn step() -> impl Strategy<Value = Step> {
    let op = 0..MAX_OPERATIONS;
    prop_oneof![
        4 => op.clone().prop_map(Step::Execute),
        3 => op.clone().prop_map(Step::Reconcile),
        1 => op.clone().prop_map(Step::Status),
        1 => op.clone().prop_map(Step::ExecuteCrash),
        1 => op.prop_map(Step::RacingReconcilers),
        1 => prop_oneof![
            Just(Duration::from_secs(30 * 60)),
            Just(Duration::from_secs(2 * 3600)),
            Just(Duration::from_secs(25 * 3600)),
        ]
        .prop_map(Step::Advance),
    ]
}

/// What a fault does at `at`: only answers a correct adapter can read truly.
fn response(at: At) -> BoxedStrategy<Response> {
    match at {
        At::BeforeRead | At::BeforeCommit => prop_oneof![
            Just(Response::Drop),
            Just(Response::Reset),
            Just(Response::Status(503)),
            Just(Response::Status(429)),
            Just(Response::Status(500)),
        ]
        .boxed(),
        At::AfterCommit => prop_oneof![
            Just(Response::Drop),
            Just(Response::Reset),
            Just(Response::Status(500)),
            Just(Response::Partial(5)),
            Just(Response::Status(503)),
        ]
        .boxed(),
    }
}

fn fault() -> impl Strategy<Value = Fault> {
    let kind = prop_oneof![
        3 => Just(Kind::Create),
        1 => Just(Kind::Search),
        1 => Just(Kind::Retrieve),
        1 => Just(Kind::List),
    ];
    let at = prop_oneof![
        Just(At::AfterCommit),
        Just(At::BeforeCommit),
        Just(At::BeforeRead)
    ];
    let gather = prop_oneof![9 => Just(false), 1 => Just(true)];
    // The step is the one the fault is made for (`situation`).
    (Just(0u32), kind, 1..=2u32, at, gather).prop_flat_map(|(step, kind, nth, at, gather)| {
        response(at).prop_map(move |response| {
            let response = if gather && kind != Kind::Create {
                Response::Gather
            } else {
                response
            };
            let at = if response == Response::Gather {
                At::BeforeRead
            } else {
                at
            };
            Fault {
                step,
                kind,
                nth,
                at,
                response,
            }
        })
    })
}

/// Every situation the grammar makes. Each step carries its own fault rules,
/// so that shrinking a step away takes its faults with it and leaves the
/// others on the steps they were made for.
pub fn situation() -> impl Strategy<Value = Situation> {
    let amounts = prop::collection::vec(
        prop_oneof![Just(1200u32), Just(4200u32)],
        1..=MAX_OPERATIONS,
    );
    let step_with_faults = (step(), prop::collection::vec(fault(), 0..=1));
    let steps = prop::collection::vec(step_with_faults, 1..=MAX_STEPS);
    (provider(), amounts, steps).prop_map(|(provider, amounts, steps)| {
        let mut faults = Vec::new();
        for (number, (_, on_step)) in steps.iter().enumerate() {
            for fault in on_step {
                faults.push(Fault {
                    step: number as u32 + 1,
                    ..*fault
                });
            }
        }
        faults.truncate(MAX_FAULTS);
        normalized(Situation {
            provider,
            amounts,
            steps: steps.into_iter().map(|(step, _)| step).collect(),
            faults,
        })
    })
}

/// Steps about operations that exist, the clock moved only where the
/// provider remembers keys (elsewhere it proves nothing), and faults on
/// steps that exist: a gather only where two reconcilers race, a partial
/// answer only of something committed.
fn normalized(mut s: Situation) -> Situation {
    let ops = s.amounts.len();
    for step in &mut s.steps {
        *step = match *step {
            Step::Execute(op) => Step::Execute(op % ops),
            Step::ExecuteCrash(op) => Step::ExecuteCrash(op % ops),
            Step::Reconcile(op) => Step::Reconcile(op % ops),
            Step::Status(op) => Step::Status(op % ops),
            Step::RacingReconcilers(op) => Step::RacingReconcilers(op % ops),
            advance @ Step::Advance(_) => advance,
        };
    }
    let steps = s.steps.clone();
    let mut seen: Vec<Fault> = Vec::new();
    s.faults.retain(|f| {
        // A rule that an earlier one shadows would never apply.
        let shadowed = seen.iter().any(|e| {
            e.step == f.step
                && e.kind == f.kind
                && (e.nth == f.nth
                    || e.response == Response::Gather
                    || f.response == Response::Gather)
        });
        seen.push(*f);
        if shadowed {
            return false;
        }
        let Some(step) = steps.get(f.step as usize - 1) else {
            return false;
        };
        match f.response {
            Response::Gather => matches!(step, Step::RacingReconcilers(_)),
            _ => !matches!(step, Step::Advance(_)),
        }
    });
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    use super::*;

    /// Every situation the grammar makes reads back through the scenario
    /// reader: a generator bug would otherwise show as a skipped situation.
    #[test]
    fn every_generated_situation_is_a_valid_scenario() {
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let strategy = situation();
        for i in 0..2000 {
            let s = strategy.new_tree(&mut runner).unwrap().current();
            let yaml = s.to_yaml(&format!("explore-test-{i}"), &[]);
            if let Err(e) = lostreply_harness::scenario::parse(&yaml, "generated.yaml") {
                panic!("situation {i} is not a valid scenario: {e}\n{yaml}");
            }
        }
    }
}

//! What an exploration draws from (`--profile`, `--mcp`, `--tag`): the wire
//! its provider speaks and the tags every situation must carry. Tags are the
//! built-in library's words for what a situation holds, so that `--tag
//! webhooks` explores what `lostreply run --tag webhooks` runs, and a
//! finding's file carries them like a hand-written scenario.

use std::collections::BTreeSet;

use proptest::prelude::*;

use crate::grammar;
use crate::situation::Situation;

use crate::shape::Profile;
use crate::tag::Tag;

/// Where situations are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wire {
    /// The generic API (provider-api.md).
    #[default]
    Generic,
    /// A built-in provider profile's wire, for an adapter on that provider's SDK.
    Profile(Profile),
    /// Paid tools on the simulator's MCP server.
    Mcp,
}

/// The space explored: the wire, and the tags every situation carries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Space {
    /// The wire.
    pub wire: Wire,
    /// Tags every situation carries (none: every situation).
    pub tags: BTreeSet<Tag>,
}

impl Space {
    /// Whether a situation with `tags` belongs.
    pub fn admits(&self, tags: &BTreeSet<Tag>) -> bool {
        self.tags.is_subset(tags)
    }
}

/// Every situation on `wire` the grammar makes. Tags are not the
/// grammar's: the search draws again until a situation carries the ones
/// asked for, and shrinks only to situations that still carry them.
pub fn situation_on_wire(wire: Wire) -> BoxedStrategy<Situation> {
    match wire {
        Wire::Generic => grammar::situation().boxed(),
        Wire::Mcp => crate::mcp_grammar::situation().boxed(),
        Wire::Profile(profile) => {
            grammar::situation_on(prop::sample::select(profile.collections().to_vec())).boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    use super::*;
    use crate::situation::Pace;

    /// Every situation the grammar makes reads back through the scenario
    /// reader: a generator bug would otherwise show as a skipped situation.
    #[test]
    fn every_generated_situation_is_a_valid_scenario() {
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let wires = [Wire::Generic, Wire::Mcp]
            .into_iter()
            .chain(crate::shape::Profile::ALL.map(Wire::Profile));
        for wire in wires {
            let strategy = situation_on_wire(wire);
            let count = if wire == Wire::Generic { 2000 } else { 500 };
            for i in 0..count {
                let s = strategy.new_tree(&mut runner).unwrap().current();
                for pace in [Pace::Exploring, Pace::Reproducing] {
                    let yaml = s.to_yaml(&format!("explore-test-{i}"), &[], pace);
                    if let Err(e) = lostreply_harness::scenario::parse(&yaml, "generated.yaml") {
                        panic!("situation {i} on {wire:?} is not a valid scenario: {e}\n{yaml}");
                    }
                }
            }
        }
    }
}

//! The explore part's timings: `lostreply explore`'s search for a fixed
//! number of situations (seed 1, `--jobs` at once) on each wire it explores.
//! The generic wire and MCP run against the in-process reference; a provider
//! profile's wire needs a process adapter on that provider's SDK, so it runs
//! only when one is given.

use std::sync::Arc;

use serde_json::json;

use lostreply_explore::search::{explore, Budget, ExploreOptions, Explored};
use lostreply_explore::shape::Profile;
use lostreply_explore::space::{Space, Wire};
use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::suite::RunOptions;

use crate::figures::Out;
use crate::targets::ExploreRate;

/// A provider profile's wire timed against a process adapter on that
/// provider's SDK (`--explore-profile`, `--explore-adapter`).
#[derive(Debug, Clone)]
pub struct ExploreProfileRun {
    /// The profile situations are drawn on.
    pub profile: Profile,
    /// The adapter on its SDK, persistent.
    pub adapter: AdapterUnderTest,
    /// Situations timed.
    pub situations: u64,
}

/// One exploration to time: what it runs against, on which wire, how much.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The JSON figure's name (`explore`, `explore_mcp`, `explore_profile`).
    pub figure: &'static str,
    /// The adapter explored.
    pub adapter: AdapterUnderTest,
    /// The wire situations are drawn on.
    pub wire: Wire,
    /// Situations timed.
    pub situations: u64,
    /// Situations run at once.
    pub jobs: usize,
}

impl Exploration {
    /// The generic wire against the in-process reference.
    pub fn generic(situations: u64, jobs: usize) -> Exploration {
        Exploration {
            figure: "explore",
            adapter: reference(),
            wire: Wire::Generic,
            situations,
            jobs,
        }
    }

    /// Paid tools over the simulator's MCP server, against the in-process
    /// reference's MCP side.
    pub fn mcp(situations: u64, jobs: usize) -> Exploration {
        Exploration {
            figure: "explore_mcp",
            adapter: reference(),
            wire: Wire::Mcp,
            situations,
            jobs,
        }
    }

    /// A provider profile's wire against the adapter given for it.
    pub fn profile(run: &ExploreProfileRun, jobs: usize) -> Exploration {
        Exploration {
            figure: "explore_profile",
            adapter: run.adapter.clone(),
            wire: Wire::Profile(run.profile),
            situations: run.situations,
            jobs,
        }
    }

    /// Runs the search, prints its figure and text line, and returns its rate.
    pub async fn time(&self, out: &mut Out<'_>) -> ExploreRate {
        let options = ExploreOptions {
            run: RunOptions::new(self.adapter.clone()).seed(1),
            budget: Budget::Situations(self.situations),
            jobs: self.jobs,
            shard: None,
            space: Space {
                wire: self.wire,
                ..Space::default()
            },
        };
        let explored = explore(&options, |_| {}).await;
        let rate = ExploreRate {
            situations: explored.situations,
            elapsed: explored.elapsed,
            findings: explored.findings.len(),
        };
        self.report(&explored, &rate, out);
        rate
    }

    fn report(&self, explored: &Explored, rate: &ExploreRate, out: &mut Out<'_>) {
        out.figure(
            self.figure,
            json!({"adapter": self.adapter.display_name(), "wire": wire_name(self.wire),
                   "jobs": self.jobs, "situations": rate.situations,
                   "elapsed_ms": rate.elapsed.as_millis() as u64, "per_minute": rate.per_minute(),
                   "findings": rate.findings, "invalid": explored.invalid,
                   "adapter_errors": explored.adapter_errors, "infra_errors": explored.infra_errors}),
        );
        out.text(&format!(
            "{}: {} situations in {:.1} s against {}, {} at a time: {:.0} a minute, {} findings, \
             {} invalid, {} adapter errors, {} harness errors",
            self.command(),
            rate.situations,
            rate.elapsed.as_secs_f64(),
            self.against(),
            self.jobs,
            rate.per_minute(),
            rate.findings,
            explored.invalid,
            explored.adapter_errors,
            explored.infra_errors
        ));
    }

    /// The `lostreply` command line's words for the wire.
    fn command(&self) -> String {
        match self.wire {
            Wire::Generic => "explore".to_owned(),
            Wire::Mcp => "explore --mcp".to_owned(),
            Wire::Profile(p) => format!("explore --profile {}", p.name()),
        }
    }

    fn against(&self) -> String {
        match (&self.adapter, self.wire) {
            (AdapterUnderTest::InProcess(_), Wire::Mcp) => {
                "the in-process reference's MCP side".to_owned()
            }
            (AdapterUnderTest::InProcess(_), _) => "the in-process reference".to_owned(),
            (AdapterUnderTest::Persistent(c), _) => format!("{} (persistent)", c.display()),
            (AdapterUnderTest::Process(c), _) => c.display(),
        }
    }
}

/// Says the profile figure was not measured, and why: no flag names an
/// adapter on a provider's SDK, and the bundled adapters speak only the
/// generic API and MCP.
pub fn profile_skipped(out: &mut Out<'_>) {
    let profiles = Profile::ALL.map(Profile::name).join("|");
    let reason = format!(
        "it needs a process adapter on the provider's SDK: --explore-profile {profiles} \
         --explore-adapter 'CMD' (e.g. --explore-profile stripe --explore-adapter \
         'target/sdk-venv/bin/python examples/sdk-adapters/python/stripe_adapter.py')"
    );
    out.figure(
        "explore_profile",
        json!({"status": "skipped", "reason": reason}),
    );
    out.text(&format!("explore --profile: skipped: {reason}"));
}

/// The name the JSON figure gives the wire.
fn wire_name(wire: Wire) -> &'static str {
    match wire {
        Wire::Generic => "generic",
        Wire::Mcp => "mcp",
        Wire::Profile(p) => p.name(),
    }
}

fn reference() -> AdapterUnderTest {
    AdapterUnderTest::InProcess(Arc::new(lostreply_reference::ReferenceFactory))
}

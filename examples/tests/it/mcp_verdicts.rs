//! The MCP library's verdicts: the bundled reference adapter passes every
//! scenario tagged `mcp` on every seed and at any concurrency, and each naive
//! MCP caller (one flaw per shape, and the two recovery flaws in both designs
//! of recovery, examples/src/naive_mcp.rs) is caught, on every seed, by the
//! scenario named for it with the check named for it.

use std::sync::Arc;

use crate::common;
use lostreply_examples::naive_mcp::{naive_mcp_in, McpFlaw, Recovery};
use lostreply_harness::adapter::AdapterFactory;
use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::{Report, Verdict};

const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

/// The scenarios that judge escalation and recovery by the situation, run on
/// more seeds: a correct caller must pass them however its calls interleave.
const RECOVERY_SCENARIOS: [&str; 7] = [
    "mcp-retrieval-newest-is-not-ours",
    "mcp-keyed-replay-after-retention",
    "mcp-retrieval-empty-list",
    "mcp-retrieval-expired-id",
    "mcp-retrieval-identical-arguments",
    "mcp-retrieval-identical-arguments-both-lost",
    "mcp-keyed-identical-arguments-both-lost",
];

/// The scenarios that must catch a flaw, each with the check that must fire.
type CaughtBy = &'static [(&'static str, &'static str)];

/// Seeds for [`RECOVERY_SCENARIOS`].
const MANY_SEEDS: std::ops::RangeInclusive<u64> = 1..=20;

fn run(factory: Arc<dyn AdapterFactory>, scenarios: &[Scenario], seed: u64, jobs: usize) -> Report {
    let options = RunOptions::new(AdapterUnderTest::InProcess(factory))
        .seed(seed)
        .jobs(jobs);
    common::runtime().block_on(run_suite(scenarios, &options, |_| {}))
}

#[test]
fn the_library_has_every_shape() {
    let _alone = common::module_alone(module_path!());
    let library = common::mcp_library();
    for tag in [
        "mcp-shape-1",
        "mcp-shape-2",
        "mcp-shape-3",
        "mcp-shape-4",
        "retrieval",
        "progress",
        "cancel",
        "mcp-lost-response",
    ] {
        assert!(
            library.iter().any(|s| s.tags.iter().any(|t| t == tag)),
            "no MCP scenario tagged {tag}"
        );
    }
}

#[test]
fn the_reference_adapter_passes_every_mcp_scenario_on_every_seed() {
    let _alone = common::module_alone(module_path!());
    let library = common::mcp_library();
    let reference: Arc<dyn AdapterFactory> = Arc::new(lostreply_reference::ReferenceFactory);
    let mut problems = Vec::new();
    for seed in SEEDS {
        for jobs in [1, 4] {
            let report = run(reference.clone(), &library, seed, jobs);
            problems.extend(
                report
                    .scenarios
                    .iter()
                    .filter(|s| s.verdict != Verdict::Passed)
                    .map(|s| format!("seed {seed} jobs {jobs}: {}", common::explain(s))),
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reference_adapter_passes_the_recovery_scenarios_on_many_seeds() {
    let _alone = common::module_alone(module_path!());
    let scenarios: Vec<Scenario> = common::mcp_library()
        .into_iter()
        .filter(|s| RECOVERY_SCENARIOS.contains(&s.id.as_str()))
        .collect();
    assert_eq!(
        scenarios.len(),
        RECOVERY_SCENARIOS.len(),
        "every one is in the library"
    );
    let reference: Arc<dyn AdapterFactory> = Arc::new(lostreply_reference::ReferenceFactory);
    let mut problems = Vec::new();
    for seed in MANY_SEEDS {
        let report = run(reference.clone(), &scenarios, seed, 4);
        problems.extend(
            report
                .scenarios
                .iter()
                .filter(|s| s.verdict != Verdict::Passed)
                .map(|s| format!("seed {seed}: {}", common::explain(s))),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_naive_mcp_caller_is_caught_on_every_seed() {
    let _alone = common::module_alone(module_path!());
    let library = common::mcp_library();
    let on_reconcile = Recovery::OnReconcile;
    let cases: [(McpFlaw, Recovery, CaughtBy); 8] = [
        (
            McpFlaw::CallsAgainAfterAbort,
            on_reconcile,
            &[
                ("mcp-shape1-wall-clock-abort", "invariant 1"),
                ("mcp-progress-does-not-extend-wall-clock", "invariant 1"),
                ("mcp-lost-after-commit", "invariant 1"),
            ],
        ),
        (
            McpFlaw::ReadsTheWordTimeout,
            on_reconcile,
            &[("mcp-shape2-error-says-timeout", "invariant 1")],
        ),
        (
            McpFlaw::TaskIsFailure,
            on_reconcile,
            &[("mcp-shape3-task-completes", "invariant 3")],
        ),
        (
            McpFlaw::RetriesIdleAbort,
            on_reconcile,
            &[("mcp-shape4-idle-abort", "invariant 1")],
        ),
        (
            McpFlaw::TakesNewestRecent,
            on_reconcile,
            &[
                ("mcp-retrieval-newest-is-not-ours", "invariant 2"),
                ("mcp-retrieval-two-operations", "invariant 2"),
                ("mcp-retrieval-identical-arguments", "invariant 2"),
                ("mcp-retrieval-identical-arguments-both-lost", "invariant 2"),
                ("mcp-keyed-identical-arguments-both-lost", "invariant 2"),
            ],
        ),
        (
            McpFlaw::TakesNewestRecent,
            Recovery::AtOnce,
            &[
                ("mcp-retrieval-newest-is-not-ours", "invariant 2"),
                ("mcp-retrieval-identical-arguments", "invariant 2"),
                ("mcp-retrieval-identical-arguments-both-lost", "invariant 2"),
                ("mcp-keyed-identical-arguments-both-lost", "invariant 2"),
            ],
        ),
        (
            McpFlaw::ReplaysExpiredKey,
            on_reconcile,
            &[("mcp-keyed-replay-after-retention", "invariant 1")],
        ),
        (
            McpFlaw::ReplaysExpiredKey,
            Recovery::AtOnce,
            &[("mcp-keyed-replay-after-retention", "invariant 1")],
        ),
    ];
    let mut problems = Vec::new();
    for (flaw, recovery, caught_by) in cases {
        let factory = naive_mcp_in(flaw, recovery);
        let factory: Arc<dyn AdapterFactory> = Arc::new(lostreply_examples::naive::kit::Factory {
            name: factory.name,
            build: factory.build,
        });
        let scenarios: Vec<Scenario> = caught_by
            .iter()
            .map(|(id, _)| {
                library
                    .iter()
                    .find(|s| s.id == *id)
                    .unwrap_or_else(|| panic!("no MCP scenario {id}"))
                    .clone()
            })
            .collect();
        for seed in SEEDS {
            let report = run(factory.clone(), &scenarios, seed, 4);
            for (id, check) in caught_by {
                let Some(scenario) = report.scenarios.iter().find(|s| s.id == *id) else {
                    problems.push(format!("{flaw:?} ({recovery:?}): {id} did not run"));
                    continue;
                };
                let caught = scenario
                    .violations
                    .iter()
                    .any(|v| common::check_name(&v.check).starts_with(check));
                if scenario.verdict != Verdict::Violated || !caught {
                    problems.push(format!(
                        "{flaw:?} ({recovery:?}) seed {seed}: not caught by {check} on {id}: {}",
                        common::explain(scenario)
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

//! Two of the adapter's own MCP operations with identical arguments, lost
//! in ways the recent list alone cannot tell apart: each scenario in
//! reference/tests/scenarios/ (its header says the situation and what a
//! correct caller does), run against the reference adapter on several seeds
//! and with its calls overlapping other scenarios'.
//!
//! These stay beside the reference rather than in the built-in library:
//! the library's MCP scenarios are also run against the SDK example
//! adapters (examples/mcp-clients), which do not yet follow the rule.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::scenario::{self, model::Scenario};
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reference::ReferenceFactory;
use lostreply_reports::model::Verdict;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

fn scenarios() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| scenario::load(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

#[test]
fn neither_operation_claims_the_others_effect_on_any_seed() {
    let scenarios = scenarios();
    assert!(scenarios.len() >= 3, "the scenarios are found");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let adapter = AdapterUnderTest::InProcess(Arc::new(ReferenceFactory));
    let mut problems = Vec::new();
    for seed in SEEDS {
        let options = RunOptions::new(adapter.clone()).seed(seed).jobs(4);
        let report = runtime.block_on(run_suite(&scenarios, &options, |_| {}));
        for s in report
            .scenarios
            .iter()
            .filter(|s| s.verdict != Verdict::Passed)
        {
            let why: Vec<String> = s
                .violations
                .iter()
                .map(|v| format!("{:?}: {}", v.check, v.message))
                .chain(s.errors.iter().map(|e| format!("error: {}", e.message)))
                .collect();
            problems.push(format!("seed {seed}: {}: {}", s.id, why.join("; ")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

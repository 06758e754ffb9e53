//! Two of the adapter's own MCP operations with identical arguments, lost
//! in ways the recent list alone cannot tell apart: each scenario of the
//! built-in library named in [`IDS`] (its header says the situation and
//! what a correct caller does), run against the reference adapter on
//! several seeds and with its calls overlapping other scenarios'.

use std::sync::Arc;

use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reference::ReferenceFactory;
use lostreply_reports::model::Verdict;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

const IDS: [&str; 3] = [
    "mcp-retrieval-identical-arguments",
    "mcp-retrieval-identical-arguments-both-lost",
    "mcp-keyed-identical-arguments-both-lost",
];

fn scenarios() -> Vec<Scenario> {
    lostreply_harness::builtin::scenarios()
        .expect("the built-in library parses")
        .into_iter()
        .filter(|s| IDS.contains(&s.id.as_str()))
        .collect()
}

#[test]
fn neither_operation_claims_the_others_effect_on_any_seed() {
    let scenarios = scenarios();
    assert_eq!(scenarios.len(), IDS.len(), "every one is in the library");
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

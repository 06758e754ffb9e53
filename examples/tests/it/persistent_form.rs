//! The persistent form of the protocol means what the per-call form means: the
//! Python example adapter, run through every built-in scenario in both forms
//! with the same seed, gets the same verdicts, the same checks failed (none)
//! and the same final outcomes. It runs alone (`common::module_alone`), for
//! the reason python_adapter.rs gives.

use std::collections::BTreeMap;

use crate::common;
use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::{Report, Verdict};

/// Scenario id → (verdict, violated checks, final outcome kind per operation).
type Verdicts = BTreeMap<String, (Verdict, Vec<String>, Vec<String>)>;

fn verdicts(report: &Report) -> Verdicts {
    report
        .scenarios
        .iter()
        .map(|s| {
            let mut checks: Vec<String> = s
                .violations
                .iter()
                .map(|v| common::check_name(&v.check))
                .collect();
            checks.sort();
            checks.dedup();
            let finals = s
                .operations
                .iter()
                .map(|o| {
                    let outcome = o
                        .final_outcome
                        .as_ref()
                        .map_or_else(|| "none".to_owned(), |f| format!("{:?}", f.outcome));
                    format!("{}={outcome}", o.id)
                })
                .collect();
            (s.id.clone(), (s.verdict, checks, finals))
        })
        .collect()
}

#[test]
fn every_builtin_scenario_has_the_same_verdict_in_both_forms() {
    let _alone = common::module_alone(module_path!());
    let library = common::library();
    let rt = common::runtime();
    let per_call = common::python_adapter("replay-once");
    let AdapterUnderTest::Process(command) = per_call.clone() else {
        panic!("the Python adapter is a process adapter");
    };
    let persistent = AdapterUnderTest::Persistent(command);
    let mut reports = Vec::new();
    for adapter in [per_call, persistent] {
        let options = RunOptions::new(adapter).seed(1).jobs(2);
        reports.push(rt.block_on(run_suite(&library, &options, |_| {})));
    }
    let (per_call, persistent) = (&reports[0], &reports[1]);
    for report in [per_call, persistent] {
        let problems: Vec<String> = report
            .scenarios
            .iter()
            .filter(|s| s.verdict != Verdict::Passed)
            .map(common::explain)
            .collect();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
    assert_eq!(per_call.scenarios.len(), library.len());
    assert_eq!(verdicts(per_call), verdicts(persistent));
    // A failure must be reproducible in the form it happened in.
    assert!(persistent
        .scenarios
        .iter()
        .all(|s| s.reproduce.contains(" --persistent ")));
}

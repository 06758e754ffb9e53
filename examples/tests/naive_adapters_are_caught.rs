//! Each naive adapter is caught by the scenarios of the case named beside it in
//! scenarios.md, and by the rule this table names (an invariant or an expectation).

mod common;

use reports::model::Verdict;

/// case -> the check that must catch its naive adapter in at least one of that case's scenarios.
const CAUGHT_BY: [(u8, &str); 10] = [
    // Calls the timeout a failure: the step's report contradicts "no evidence either way".
    (1, "expect.after_step"),
    // Retries with a fresh key: two effects for one operation.
    (2, "invariant 1"),
    // Calls `processing` done: success claimed for an object that settles failed.
    (3, "invariant 3"),
    // Tags its retries: the second attempt carries other arguments.
    (4, "invariant 5"),
    // One key per action: the mismatch error taken for a success with no object.
    (5, "invariant 2"),
    // Trusts any webhook: a forged event changes its record.
    (6, "invariant 7"),
    // No lock: both racing reconcilers re-create.
    (7, "invariant 1"),
    // Key kept in memory: after the crash a new key creates again.
    (8, "invariant 1"),
    // Replays an expired key: the provider has forgotten it and creates again.
    (9, "invariant 1"),
    // Re-executes after the operator's resolution: a second object.
    (10, "invariant 1"),
];

#[test]
fn each_naive_adapter_is_caught_by_its_case() {
    let library = common::library();
    let mut failures = Vec::new();
    let mut account = String::new();
    for (case, factory) in lostreply_examples::naive_adapters() {
        let scenarios: Vec<_> = library
            .iter()
            .filter(|s| s.case == Some(case))
            .cloned()
            .collect();
        assert!(
            !scenarios.is_empty(),
            "no built-in scenario covers case {case}"
        );
        let report = common::run(&scenarios, common::in_process(factory), 1, 2);
        // The same verdicts, check for check, under another seed and full concurrency.
        if let Some(again) = lostreply_examples::naive_adapters()
            .into_iter()
            .find(|(c, _)| *c == case)
            .map(|(_, f)| f)
        {
            let other = common::run(&scenarios, common::in_process(again), 7, scenarios.len());
            assert_eq!(
                checks_by_scenario(&report),
                checks_by_scenario(&other),
                "case {case}: verdicts differ between seeds 1 and 7"
            );
        }
        let expected = CAUGHT_BY
            .iter()
            .find(|(c, _)| *c == case)
            .map(|(_, check)| *check)
            .unwrap_or("?");
        let caught_by: Vec<String> = report
            .scenarios
            .iter()
            .filter(|s| s.verdict == Verdict::Violated)
            .flat_map(|s| s.violations.iter().map(|v| common::check_name(&v.check)))
            .collect();
        account.push_str(&format!("\ncase {case}: caught by {caught_by:?}"));
        for s in &report.scenarios {
            account.push_str(&format!("\n  {}", common::explain(s)));
        }
        if !caught_by.iter().any(|c| c.starts_with(expected)) {
            failures.push(format!(
                "case {case}: naive adapter not caught by {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}\n{account}", failures.join("\n"));
    println!("{account}");
}

fn checks_by_scenario(report: &reports::model::Report) -> Vec<(String, Verdict, Vec<String>)> {
    report
        .scenarios
        .iter()
        .map(|s| {
            let mut checks: Vec<String> = s
                .violations
                .iter()
                .map(|v| common::check_name(&v.check))
                .collect();
            checks.dedup();
            (s.id.clone(), s.verdict, checks)
        })
        .collect()
}

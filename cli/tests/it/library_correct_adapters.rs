//! The built-in library against the bundled reference adapter, in process and
//! as a process: it passes every scenario, with identical verdicts whatever the
//! seed and the concurrency. Correct adapters of other designs, the Python
//! adapter and the flawed ones are in examples/tests/it/verdict_matrix.rs.

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::{Report, Verdict};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn library() -> Vec<Scenario> {
    // The library as a default run takes it: the MCP scenarios need an MCP adapter.
    let scenarios = lostreply_harness::scenario::select::default_library()
        .expect("the built-in library parses");
    assert!(
        scenarios.len() >= 10,
        "the library holds at least the ten cases"
    );
    scenarios
}

fn run(adapter: AdapterUnderTest, seed: u64, jobs: usize) -> Report {
    let options = RunOptions::new(adapter).seed(seed).jobs(jobs);
    runtime().block_on(run_suite(&library(), &options, |_| {}))
}

fn reference() -> AdapterUnderTest {
    AdapterUnderTest::InProcess(lostreply_cli::bundled::adapter("reference").expect("bundled"))
}

fn assert_all_pass(report: &Report) {
    let failed: Vec<String> = report
        .scenarios
        .iter()
        .filter(|s| s.verdict != Verdict::Passed)
        .map(|s| {
            let mut line = format!("{} [{:?}]", s.id, s.verdict);
            for v in &s.violations {
                line.push_str(&format!("\n    {:?}: {}", v.check, v.message));
            }
            for e in &s.errors {
                line.push_str(&format!("\n    error: {}", e.message));
            }
            line
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        report.adapter.name,
        failed.join("\n")
    );
}

fn verdicts(report: &Report) -> Vec<(String, Verdict, Vec<String>)> {
    report
        .scenarios
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                s.verdict,
                s.violations
                    .iter()
                    .map(|v| format!("{:?}", v.check))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn the_reference_adapter_passes_every_scenario_in_process() {
    assert_all_pass(&run(reference(), 1, 2));
}

#[test]
fn the_reference_adapter_passes_every_scenario_as_a_process() {
    let command = ProcessCommand::new(vec![
        env!("CARGO_BIN_EXE_lostreply").to_owned(),
        "adapter".to_owned(),
        "reference".to_owned(),
    ])
    .expect("command");
    assert_all_pass(&run(AdapterUnderTest::Process(command), 1, 2));
}

#[test]
fn verdicts_do_not_depend_on_the_seed_or_on_concurrency() {
    let baseline = verdicts(&run(reference(), 1, 1));
    for (seed, jobs) in [(2, 4), (3, 1), (0xdead_beef, 8)] {
        assert_eq!(
            verdicts(&run(reference(), seed, jobs)),
            baseline,
            "seed {seed}, jobs {jobs}"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_ledger() {
    let scenarios = library();
    let case2 = scenarios
        .iter()
        .find(|s| s.case == Some(2))
        .expect("a case-2 scenario")
        .clone();
    let options = RunOptions::new(reference()).seed(42).jobs(1);
    let rt = runtime();
    let a = rt.block_on(lostreply_harness::suite::run_scenario(&case2, &options));
    let b = rt.block_on(lostreply_harness::suite::run_scenario(&case2, &options));
    let ids = |r: &lostreply_reports::model::ScenarioReport| {
        r.ledger
            .iter()
            .map(|e| (e.id.clone(), e.idempotency_key.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&a), ids(&b));
    assert!(!ids(&a).is_empty());
    assert!(a.reproduce.contains("--seed 42"), "{}", a.reproduce);
}

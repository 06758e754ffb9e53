//! The Python example adapter, a correct adapter in another language speaking
//! the process protocol, passes its own unit tests and every built-in
//! scenario: its default strategy on 3 seeds, `eager` and `lazy` on one. It
//! runs alone (`common::module_alone`): its processes would otherwise compete
//! for the CPU with verdict_matrix's in-process runs, whose client timeouts a
//! starved machine could outlast.

use crate::common;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::Verdict;

#[test]
fn the_python_adapter_passes_every_scenario_in_each_strategy() {
    let _alone = common::module_alone(module_path!());
    let library = common::library();
    let rt = common::runtime();
    let mut problems = Vec::new();
    for (strategy, seed) in [
        ("replay-once", 1),
        ("replay-once", 2),
        ("replay-once", 3),
        ("eager", 1),
        ("lazy", 1),
    ] {
        let options = RunOptions::new(common::python_adapter(strategy))
            .seed(seed)
            .jobs(2);
        let report = rt.block_on(run_suite(&library, &options, |_| {}));
        problems.extend(
            report
                .scenarios
                .iter()
                .filter(|s| s.verdict != Verdict::Passed)
                .map(|s| format!("python {strategy} seed {seed}: {}", common::explain(s))),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_python_adapters_own_unit_tests_pass() {
    let _alone = common::module_alone(module_path!());
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/python");
    let out = std::process::Command::new(common::python_interpreter())
        .args(["-m", "unittest", "discover", "-s", dir, "-t", dir])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python unit tests failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

//! Shared by the tests that drive process adapters: the real interpreter,
//! whether a process is still alive, and one scenario run.

use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::suite::{run_scenario, RunOptions};
use lostreply_reports::model::ScenarioReport;

/// Runs `scenario` with `adapter` (seed 1) on a runtime of its own.
pub fn run_with(adapter: AdapterUnderTest, scenario: &Scenario) -> ScenarioReport {
    let options = RunOptions::new(adapter).seed(1).jobs(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run_scenario(scenario, &options))
}

/// The real interpreter behind `python3`: a version-manager shim (pyenv)
/// would add a shell start to every call.
pub fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// True while `pid` names a live (not zombie) process.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

//! Shared by the example tests: the library, a runtime, readable verdicts,
//! the real SDKs and MCP client libraries, and the rule that the test modules
//! run one at a time.

pub mod installed;
pub mod mcp_clients;
pub mod sdks;

use std::sync::{Condvar, Mutex, PoisonError};

use lostreply_harness::scenario::model::Scenario;
use lostreply_reports::model::{Check, ScenarioReport};

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The library as a default run takes it: these adapters speak HTTP, not MCP.
pub fn library() -> Vec<Scenario> {
    lostreply_harness::scenario::select::default_library().expect("the built-in library parses")
}

/// The built-in MCP scenarios.
pub fn mcp_library() -> Vec<Scenario> {
    lostreply_harness::builtin::scenarios()
        .expect("the built-in library parses")
        .into_iter()
        .filter(|s| s.tags.iter().any(|t| t == "mcp"))
        .collect()
}

pub fn check_name(check: &Check) -> String {
    match check {
        Check::Invariant(invariant) => {
            format!("invariant {} ({})", invariant.number(), invariant.name())
        }
        Check::Expectation { key } => format!("expect.{key}"),
        Check::Rule { rule } => format!("rule {}", rule.name()),
    }
}

/// A readable account of a scenario's verdict, for assertion messages.
pub fn explain(s: &ScenarioReport) -> String {
    let mut out = format!("{} [{:?}]", s.id, s.verdict);
    for v in &s.violations {
        out.push_str(&format!("\n    {}: {}", check_name(&v.check), v.message));
    }
    for e in &s.errors {
        out.push_str(&format!("\n    error (step {}): {}", e.step, e.message));
    }
    {
        // What the adapter said, call by call: enough to tell a flaw from a
        // slow machine without rerunning (a flaw that went uncaught included).
        for c in &s.calls {
            let said = c
                .reply
                .as_ref()
                .map_or_else(|| format!("{:?}", c.end), |r| r.to_string());
            out.push_str(&format!(
                "\n    call {} (step {}, {}, {}-{} ms): {said}",
                c.index, c.step, c.call, c.start_ms, c.end_ms
            ));
        }
    }
    out
}

/// The real interpreter behind `python3`: a version-manager shim (pyenv) costs a
/// shell start on every one of the hundreds of calls.
pub fn python_interpreter() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 -c failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The Python example adapter as a process adapter, in one of its strategies.
pub fn python_adapter(strategy: &str) -> lostreply_harness::driver::AdapterUnderTest {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/lostreply_adapter.py");
    let command = lostreply_harness::driver::ProcessCommand::new(vec![
        python_interpreter(),
        script.to_owned(),
        "--strategy".to_owned(),
        strategy.to_owned(),
    ])
    .expect("command");
    lostreply_harness::driver::AdapterUnderTest::Process(command)
}

/// A verdict-matrix cell: `pass`, or the checks broken (short names), and
/// `adapter error` when one happened.
pub fn matrix_cell(s: &ScenarioReport) -> String {
    if s.verdict == lostreply_reports::model::Verdict::Passed {
        return "pass".to_owned();
    }
    let mut checks: Vec<String> = s
        .violations
        .iter()
        .map(|v| short_check(&check_name(&v.check)))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !s.errors.is_empty() {
        checks.push("adapter error".to_owned());
    }
    checks.join(", ")
}

/// `invariant 1 (at-most-once)` → `inv 1`.
pub fn short_check(check: &str) -> String {
    match check.strip_prefix("invariant ") {
        Some(rest) => format!("inv {}", rest.split(' ').next().unwrap_or(rest)),
        None => check.to_owned(),
    }
}

/// The module whose tests are running, and how many of them.
static RUNNING: Mutex<(Option<&'static str>, usize)> = Mutex::new((None, 0));
static DONE: Condvar = Condvar::new();

/// Held by a test while it runs: the tests of one module run in parallel with
/// each other, never with another module's. Most of these tests judge timing
/// (timeouts, stalls, races with a bound) on a machine that must not be
/// starved, and some run hundreds of suite runs or interpreter processes, so
/// each module keeps the machine to itself, as it would in a binary of its own.
#[derive(Debug)]
pub struct ModuleAlone(());

/// Waits until no other module's test runs. libtest starts tests in name
/// order, so a module's tests come together and the wait is for the previous
/// module's last ones.
pub fn module_alone(module: &'static str) -> ModuleAlone {
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    while running.0.is_some_and(|m| m != module) {
        running = DONE.wait(running).unwrap_or_else(PoisonError::into_inner);
    }
    running.0 = Some(module);
    running.1 += 1;
    ModuleAlone(())
}

impl Drop for ModuleAlone {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.1 -= 1;
        if running.1 == 0 {
            running.0 = None;
            DONE.notify_all();
        }
    }
}

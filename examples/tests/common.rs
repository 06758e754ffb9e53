//! Shared by the example tests: run a set of scenarios against an adapter.
#![allow(dead_code)]

use std::sync::Arc;

use harness::adapter::AdapterFactory;
use harness::driver::{AdapterUnderTest, ProcessCommand};
use harness::run::{run_suite, RunOptions};
use harness::scenario::model::Scenario;
use reports::model::{Check, Report, ScenarioReport};

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

pub fn library() -> Vec<Scenario> {
    harness::builtin::scenarios().expect("the built-in library parses")
}

pub fn in_process(factory: Box<dyn AdapterFactory>) -> AdapterUnderTest {
    AdapterUnderTest::InProcess(Arc::from(factory))
}

pub fn reference() -> AdapterUnderTest {
    AdapterUnderTest::InProcess(harness::builtin::adapter("reference").expect("bundled"))
}

/// The Python adapter, run with the machine's python3.
pub fn python() -> AdapterUnderTest {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/lostreply_adapter.py");
    AdapterUnderTest::Process(
        ProcessCommand::from_argv(vec!["python3".to_owned(), script.to_owned()]).expect("command"),
    )
}

/// The reference adapter as a process: this workspace's `lostreply adapter reference`.
pub fn reference_process() -> AdapterUnderTest {
    let bin = env!("CARGO_BIN_EXE_naive");
    // The naive binary's directory also holds the `lostreply` binary when the whole workspace is built.
    let lostreply = std::path::Path::new(bin).with_file_name("lostreply");
    AdapterUnderTest::Process(
        ProcessCommand::from_argv(vec![
            lostreply.display().to_string(),
            "adapter".to_owned(),
            "reference".to_owned(),
        ])
        .expect("command"),
    )
}

pub fn run(scenarios: &[Scenario], adapter: AdapterUnderTest, seed: u64, jobs: usize) -> Report {
    let options = RunOptions {
        adapter,
        seed,
        jobs,
        command_prefix: "lostreply run".to_owned(),
    };
    runtime().block_on(run_suite(scenarios, &options, |_| {}))
}

pub fn check_name(check: &Check) -> String {
    match check {
        Check::Invariant { number, name } => format!("invariant {number} ({name})"),
        Check::Expectation { key } => format!("expect.{key}"),
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
    out
}

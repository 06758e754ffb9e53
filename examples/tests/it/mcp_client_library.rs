//! The example adapters written on the two real MCP client libraries
//! (examples/mcp-clients/{python/adapter.py,node/adapter.mjs}) through the
//! built-in MCP library, one process per call: the correct adapter of each SDK
//! passes every scenario tagged `mcp`; the naive variant (`--naive`: calls the
//! tool again on the SDK's timeout error) is caught by the wall-clock abort.
//! It runs alone (`common::module_alone`): interpreter start-ups would
//! otherwise compete for the CPU with the in-process runs of other modules.

use crate::common;
use crate::common::mcp_clients::{command, Sdk};
use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::{Report, Verdict};

fn script(sdk: Sdk) -> &'static str {
    match sdk {
        Sdk::Python => "adapter.py",
        Sdk::Node => "adapter.mjs",
    }
}

fn run(argv: Vec<String>, ids: Option<&[&str]>) -> Report {
    let library: Vec<_> = common::mcp_library()
        .into_iter()
        .filter(|s| ids.is_none_or(|ids| ids.contains(&s.id.as_str())))
        .collect();
    let options = RunOptions::new(AdapterUnderTest::Process(
        ProcessCommand::new(argv).expect("command"),
    ))
    .seed(1)
    .jobs(2);
    common::runtime().block_on(run_suite(&library, &options, |_| {}))
}

#[test]
#[cfg_attr(
    any(lostreply_no_mcp_python, lostreply_no_mcp_node),
    ignore = "needs both MCP client libraries: npm ci --prefix examples/mcp-clients/node; python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
fn each_sdks_correct_adapter_passes_the_mcp_library() {
    let _alone = common::module_alone(module_path!());
    let mut problems = Vec::new();
    for sdk in [Sdk::Python, Sdk::Node] {
        let argv = command(sdk, script(sdk));
        let report = run(argv, None);
        problems.extend(
            report
                .scenarios
                .iter()
                .filter(|s| s.verdict != Verdict::Passed)
                .map(|s| format!("{}: {}", sdk.name(), common::explain(s))),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
#[cfg_attr(
    any(lostreply_no_mcp_python, lostreply_no_mcp_node),
    ignore = "needs both MCP client libraries: npm ci --prefix examples/mcp-clients/node; python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt"
)]
fn each_sdks_naive_adapter_is_caught_calling_again_after_its_timeout() {
    let _alone = common::module_alone(module_path!());
    let mut problems = Vec::new();
    for sdk in [Sdk::Python, Sdk::Node] {
        let mut argv = command(sdk, script(sdk));
        argv.push("--naive".to_owned());
        let id = "mcp-shape1-wall-clock-abort";
        let report = run(argv, Some(&[id]));
        let caught = report.scenarios.iter().any(|s| {
            s.verdict == Verdict::Violated
                && s.violations
                    .iter()
                    .any(|v| common::check_name(&v.check).starts_with("invariant 1"))
        });
        if !caught {
            problems.push(format!(
                "{}: not caught by invariant 1 on {id}: {}",
                sdk.name(),
                report
                    .scenarios
                    .iter()
                    .map(common::explain)
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

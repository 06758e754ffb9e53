//! The process form of the adapter protocol at its edges: a crash kills the
//! adapter's whole process group (a wrapper's children die too), and reply
//! fields the protocol does not define are ignored and named, not an error.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::path::Path;
use std::time::Duration;
use support::{alive, python};

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::suite::{run_scenario, RunOptions};
use lostreply_reports::model::{CallEnd, Verdict};

/// An adapter that behaves like a wrapper script: `execute` starts a helper
/// process (which records its pid and then idles), then sends the create.
/// Every other call answers `unknown`; `status` adds a field of its own.
fn wrapper_adapter(dir: &Path) -> String {
    let pid_file = dir.join("helper.pid");
    let script = format!(
        r#"
import json, os, subprocess, sys, time, urllib.request
PID_FILE = {pid:?}
HELPER = ("import os, sys, time; p = sys.argv[1]; "
          "open(p + '.tmp', 'w').write(str(os.getpid())); "
          "os.rename(p + '.tmp', p); time.sleep(60)")
request = json.load(sys.stdin)
call = sys.argv[1]
if call == "execute":
    helper = subprocess.Popen([sys.executable, "-c", HELPER, PID_FILE])
    while not os.path.exists(PID_FILE):
        time.sleep(0.01)
    op = request["operation"]
    provider = request["provider"]
    create = urllib.request.Request(
        provider["base_url"] + "/v1/" + op["resource"],
        data=json.dumps(op["args"]).encode(),
        headers={{"Authorization": "Bearer " + provider["credential"],
                 "Content-Type": "application/json"}})
    urllib.request.urlopen(create, timeout=5).read()
    reply = {{"operation_id": op["id"], "outcome": "unknown", "evidence": "sent"}}
else:
    reply = {{"operation_id": request["operation_id"], "outcome": "unknown",
             "evidence": "nothing known"}}
    if call == "status":
        reply["debug_trace"] = "an adapter's own note"
print(json.dumps(reply))
"#,
        pid = pid_file.display().to_string()
    );
    let path = dir.join("wrapper_adapter.py");
    std::fs::write(&path, script).unwrap();
    path.display().to_string()
}

const SCENARIO: &str = "\
version: 1
id: crash-behind-a-wrapper
title: A crash kills what the adapter started, too
client_timeout: 2s
operations:
  - {id: op-1, resource: tickets, args: {title: t}}
steps:
  - {execute: op-1, crash: after_commit}
  - status: op-1
";

#[test]
fn a_crash_kills_the_adapters_whole_process_group_and_extra_reply_fields_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let script = wrapper_adapter(dir.path());
    let scenario =
        lostreply_harness::scenario::parse(SCENARIO, "crash-behind-a-wrapper.yaml").unwrap();
    let options = RunOptions {
        adapter: AdapterUnderTest::Process(
            ProcessCommand::from_argv(vec![python(), script]).unwrap(),
        ),
        seed: 1,
        jobs: 1,
        command_prefix: "lostreply run".to_owned(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let report = rt.block_on(run_scenario(&scenario, &options));

    // The crash happened, and the helper the adapter started died with it.
    assert_eq!(report.calls[0].end, CallEnd::Crashed, "{:#?}", report.calls);
    let pid: u32 = std::fs::read_to_string(dir.path().join("helper.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Reaping an orphan is init's work and may take a moment: wait for the
    // condition, bounded, rather than for a time.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!alive(pid), "the helper (pid {pid}) outlived the crash");

    // A reply field outside the protocol is not an adapter error; the step says so.
    assert_ne!(
        report.verdict,
        Verdict::AdapterError,
        "{:#?}",
        report.errors
    );
    let status_step = &report.steps[1];
    assert!(
        status_step.label.contains("ignored: debug_trace"),
        "{}",
        status_step.label
    );
}

//! The process form of the adapter protocol at its edges: a crash kills the
//! adapter's whole process group (a wrapper's children die too), reply
//! fields the protocol does not define are ignored and named, not an error,
//! and the report holds each request exactly as the adapter read it.

use crate::support::{alive, python, run_with};
use std::path::Path;
use std::time::Duration;

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_reports::model::{CallEnd, Verdict};

/// The create an adapter's `execute` sends (Python, for the scripts below).
const PY_CREATE: &str = r#"
def create(request):
    op, provider = request["operation"], request["provider"]
    sent = urllib.request.Request(
        provider["base_url"] + "/v1/" + op["resource"],
        data=json.dumps(op["args"]).encode(),
        headers={"Authorization": "Bearer " + provider["credential"],
                 "Content-Type": "application/json"})
    urllib.request.urlopen(sent, timeout=5).read()
"#;

/// An adapter that behaves like a wrapper script: `execute` starts a helper
/// process (which records its pid and then idles), then sends the create.
/// Every other call answers `unknown`; `status` adds a field of its own.
fn wrapper_adapter(dir: &Path) -> String {
    let pid_file = dir.join("helper.pid");
    let script = format!(
        r#"
import json, os, subprocess, sys, time, urllib.request
{create}
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
    create(request)
    reply = {{"operation_id": request["operation"]["id"], "outcome": "unknown", "evidence": "sent"}}
else:
    reply = {{"operation_id": request["operation_id"], "outcome": "unknown",
             "evidence": "nothing known"}}
    if call == "status":
        reply["debug_trace"] = "an adapter's own note"
print(json.dumps(reply))
"#,
        pid = pid_file.display().to_string(),
        create = PY_CREATE,
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
    let adapter = AdapterUnderTest::Process(ProcessCommand::new(vec![python(), script]).unwrap());
    let report = run_with(adapter, &scenario);

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
        status_step.label.text().contains("ignored: debug_trace"),
        "{}",
        status_step.label
    );
}

/// An adapter that appends each request it reads, as it read it, to a file,
/// creates on `execute` and answers `unknown` to everything else.
fn recording_adapter(dir: &Path) -> (String, std::path::PathBuf) {
    let log = dir.join("requests.jsonl");
    let script = format!(
        r#"
import json, sys, urllib.request
{create}
raw = sys.stdin.read()
with open({log:?}, "a") as f:
    f.write(json.dumps(json.loads(raw)) + "\n")
request = json.loads(raw)
op_id = request.get("operation_id") or request["operation"]["id"]
if sys.argv[1] == "execute":
    create(request)
print(json.dumps({{"operation_id": op_id, "outcome": "unknown", "evidence": "nothing known"}}))
"#,
        log = log.display().to_string(),
        create = PY_CREATE,
    );
    let path = dir.join("recording_adapter.py");
    std::fs::write(&path, script).unwrap();
    (path.display().to_string(), log)
}

#[test]
fn the_report_holds_each_request_exactly_as_the_adapter_read_it() {
    // The clock moves between calls, so the fields every request repeats
    // change on the way (the observation shares them while they stay the same).
    let scenario = lostreply_harness::scenario::parse(
        "\
version: 1
id: requests-as-read
title: Every request is recorded as sent
client_timeout: 2s
operations:
  - {id: op-1, resource: tickets, args: {title: t, n: 1, nested: {b: [1, 2], a: null}}}
  - {id: op-2, resource: tickets, args: {}}
steps:
  - execute: op-1
  - status: op-1
  - advance: 1h
  - reconcile: op-1
  - execute: op-2
  - {resolve: op-2, outcome: failed, provider_ref: null, evidence: \"checked by hand\"}
",
        "requests-as-read.yaml",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (script, log) = recording_adapter(dir.path());
    let adapter = AdapterUnderTest::Process(ProcessCommand::new(vec![python(), script]).unwrap());
    let report = run_with(adapter, &scenario);

    let read: Vec<serde_json::Value> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Five steps' calls and the final sweep's two, one process each, in order.
    assert_eq!(read.len(), 7, "{read:#?}");
    assert_eq!(report.calls.len(), read.len(), "{:#?}", report.calls);
    for (call, read) in report.calls.iter().zip(&read) {
        assert_eq!(&call.request.to_value(), read, "call {}", call.index);
        // And the JSON report writes it as that value.
        let written: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&call.request).unwrap()).unwrap();
        assert_eq!(&written, read, "call {}", call.index);
    }
    assert_ne!(read[1]["now"], read[3]["now"], "the clock moved");
}

//! The persistent form of the adapter protocol at its edges: a reply that is
//! not JSON, a hang past the deadline, an exit and a crash end a call exactly
//! as they do in the per-call form (same `CallEnd`, same text), and each of
//! them retires the process, so the next call runs in a fresh one; a
//! `parallel` step runs its calls in separate processes; and no process
//! outlives its scenario run.

use crate::support;

use crate::support::{alive, python};
use std::collections::BTreeSet;
use std::path::Path;

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_reports::model::{CallEnd, ScenarioReport};

/// Speaks both forms. Per (call, operation): `status op-2` prints garbage,
/// `reconcile op-2` hangs, `reconcile op-1` exits 3, `execute` sends the
/// create; everything else answers `unknown` with the process id as evidence.
const SCRIPT: &str = r#"
import json, os, sys, time, urllib.request
PIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve.pids")

def answer(call, request):
    op = request.get("operation_id") or request["operation"]["id"]
    if (call, op) == ("status", "op-2"):
        return "this is not json"
    if (call, op) == ("reconcile", "op-2"):
        time.sleep(60)
    if (call, op) == ("reconcile", "op-1"):
        print("giving up", file=sys.stderr, flush=True)
        sys.exit(3)
    if call == "execute":
        provider = request["provider"]
        create = urllib.request.Request(
            provider["base_url"] + "/v1/" + request["operation"]["resource"],
            data=json.dumps(request["operation"]["args"]).encode(),
            headers={"Authorization": "Bearer " + provider["credential"],
                     "Content-Type": "application/json"})
        urllib.request.urlopen(create, timeout=5).read()
    print(f"{call} {op}", file=sys.stderr, flush=True)
    return json.dumps({"operation_id": op, "outcome": "unknown", "provider_ref": None,
                       "needs_review": False, "evidence": f"pid {os.getpid()}"})

if sys.argv[1] == "serve":
    with open(PIDS, "a") as pids:
        pids.write(f"{os.getpid()}\n")
    for line in sys.stdin:
        message = json.loads(line)
        print(answer(message["call"], message["request"]), flush=True)
else:
    print(answer(sys.argv[1], json.load(sys.stdin)))
"#;

const SCENARIO: &str = "\
version: 1
id: persistent-edges
title: Every way a call can end, in both forms
client_timeout: 500ms
call_deadline: 1500ms
operations:
  - {id: op-1, resource: tickets, args: {title: t}}
  - {id: op-2, resource: tickets, args: {title: u}}
steps:
  - status: op-1
  - status: op-1
  - {execute: op-1, crash: after_commit}
  - status: op-1
  - status: op-2
  - status: op-1
  - reconcile: op-2
  - status: op-1
  - reconcile: op-1
  - status: op-1
  - parallel: [{status: op-1}, {status: op-1}]
";

fn run(adapter: AdapterUnderTest) -> ScenarioReport {
    let scenario = lostreply_harness::scenario::parse(SCENARIO, "persistent-edges.yaml").unwrap();
    support::run_with(adapter, &scenario)
}

fn pid(report: &ScenarioReport, index: usize) -> String {
    let reply = report.calls[index].reply.as_ref();
    let evidence = reply.and_then(|r| r.get("evidence"));
    let evidence = evidence.as_ref().and_then(|e| e.as_str());
    evidence
        .unwrap_or_else(|| panic!("call {index}: {:#?}", report.calls[index]))
        .to_owned()
}

#[test]
fn every_call_ends_as_in_the_per_call_form_and_a_failed_process_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("both_forms.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let command = ProcessCommand::new(vec![python(), path(&script)]).unwrap();
    let per_call = run(AdapterUnderTest::Process(command.clone()));
    let persistent = run(AdapterUnderTest::Persistent(command));

    let ends = |r: &ScenarioReport| r.calls.iter().map(|c| c.end.clone()).collect::<Vec<_>>();
    assert_eq!(
        ends(&per_call),
        ends(&persistent),
        "{:#?}",
        persistent.calls
    );
    let ends = ends(&persistent);
    assert_eq!(ends[2], CallEnd::Crashed);
    assert!(
        matches!(&ends[4], CallEnd::BadReply { message } if message.starts_with("stdout is not one JSON value")),
        "{:?}",
        ends[4]
    );
    assert_eq!(ends[6], CallEnd::Deadline { deadline_ms: 1500 });
    assert_eq!(ends[8], CallEnd::Exited { code: Some(3) });
    assert_eq!(per_call.verdict, persistent.verdict);
    assert!(
        persistent.reproduce.contains("--persistent"),
        "{}",
        persistent.reproduce
    );

    // Stderr is kept per call, as per call.
    assert_eq!(persistent.calls[0].stderr.trim(), "status op-1");
    assert!(
        persistent.calls[8].stderr.contains("giving up"),
        "{:?}",
        persistent.calls[8].stderr
    );

    // One process answers calls in a row; each failure retires it.
    let pids = |indices: &[usize]| {
        indices
            .iter()
            .map(|&i| pid(&persistent, i))
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(pids(&[0, 1]).len(), 1, "two calls in a row, one process");
    for (before, after) in [(1, 3), (3, 5), (5, 7), (7, 9)] {
        assert_ne!(
            pid(&persistent, before),
            pid(&persistent, after),
            "calls {before} and {after}"
        );
    }
    // A parallel step: two processes at once.
    assert_eq!(pids(&[10, 11]).len(), 2, "{:#?}", &persistent.calls[10..]);

    // Every `serve` process started is dead once the run is over (the idle
    // ones are killed with the session). Reaping may take a moment: wait for
    // the condition, bounded.
    let started: Vec<u32> = std::fs::read_to_string(dir.path().join("serve.pids"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    // One at first, then one after each of the four retirements, and a second lane.
    assert_eq!(started.len(), 6, "{started:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while started.iter().any(|&p| alive(p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let living: Vec<u32> = started.into_iter().filter(|&p| alive(p)).collect();
    assert!(
        living.is_empty(),
        "serve processes outlived the run: {living:?}"
    );
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

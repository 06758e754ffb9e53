//! The benchmark's building blocks at tiny sizes, so they cannot rot. Nothing
//! here asserts a timing: counts, fates and ledgers only.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use lostreply_bench::client::{self, Wire};
use lostreply_bench::cost::{self, Ending, Phase};
use lostreply_bench::figures::Out;
use lostreply_bench::load::{run_point, run_target, LoadSpec, Path};
use lostreply_bench::servers::{Behaviour, RunningServer, ServerKind};
use lostreply_bench::suite::{self, Config, Part};
use lostreply_bench::synthetic::SyntheticSpec;

/// Bounded by rounds, not by time: the window is only a safety bound.
fn rounds(connections: usize, max_rounds: u64) -> LoadSpec {
    LoadSpec {
        connections,
        warmup: Duration::ZERO,
        measure: Duration::from_secs(60),
        max_rounds: Some(max_rounds),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ok_path_runs_against_every_server() {
    for kind in [
        ServerKind::Simulator,
        ServerKind::BareHyper,
        ServerKind::Wiremock,
    ] {
        let server = RunningServer::start(kind, Behaviour::Ok).await.unwrap();
        let p = run_point(server.addr, Path::Ok, rounds(2, 5)).await;
        // Two connections, five rounds each, a create and a retrieve per round.
        assert_eq!(
            (p.counted, p.sent, p.errors),
            (20, 20, 0),
            "{kind:?}: {:?}",
            p.first_error
        );
        assert_eq!(p.latency.count, 20);
        if kind == ServerKind::Simulator {
            assert_eq!(server.effects(), Some(10));
        }
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ok_path_runs_on_the_stripe_wire() {
    let server = RunningServer::simulator(Wire::Stripe, Behaviour::Ok)
        .await
        .unwrap();
    let p = run_target(server.target(), Path::Ok, rounds(2, 5)).await;
    assert_eq!(
        (p.counted, p.sent, p.errors),
        (20, 20, 0),
        "{:?}",
        p.first_error
    );
    assert_eq!(server.effects(), Some(10));
    // What the load loop reads: a Stripe customer, answered 200, retrievable.
    let target = server.target();
    let (mut sender, _task) = client::connect(server.addr).await.unwrap();
    let (status, body) = client::create(&mut sender, &target, 7).await.unwrap();
    assert_eq!(status, 200, "{body:?}");
    let object: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let id = client::object_id(&body).unwrap();
    assert!(id.starts_with("cus_"), "{object}");
    assert_eq!(object["object"], "customer");
    assert_eq!(object["email"], "bench7@x.io");
    assert_eq!(object["metadata"]["operation_id"], "op-7");
    let (status, found) = client::retrieve(&mut sender, &target, &id).await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(client::object_id(&found).as_deref(), Some(id.as_str()));
    drop(sender);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_responses_are_seen_by_the_client_and_committed_in_the_ledger() {
    for (behaviour, path) in [
        (Behaviour::DropAfterCommit, Path::Closed),
        (Behaviour::ResetAfterCommit, Path::Reset),
    ] {
        for kind in [ServerKind::Simulator, ServerKind::BareHyper] {
            let server = RunningServer::start(kind, behaviour).await.unwrap();
            let p = run_point(server.addr, path, rounds(2, 5)).await;
            assert_eq!(
                (p.counted, p.sent, p.errors),
                (10, 10, 0),
                "{kind:?} {behaviour:?}: {:?}",
                p.first_error
            );
            let seen = match path {
                Path::Closed => (p.closed_seen, p.reset_seen),
                Path::Reset | Path::Ok => (p.reset_seen, p.closed_seen),
            };
            assert_eq!(seen, (10, 0), "{kind:?} {behaviour:?}");
            if kind == ServerKind::Simulator {
                assert_eq!(server.effects(), Some(10));
                let (dropped, reset, sent) = server.journal_fates().unwrap();
                match behaviour {
                    Behaviour::DropAfterCommit => assert_eq!((dropped, reset, sent), (10, 0, 0)),
                    Behaviour::ResetAfterCommit | Behaviour::Ok => {
                        assert_eq!((dropped, reset, sent), (0, 10, 0))
                    }
                }
            }
            server.shutdown().await;
        }
    }
    assert!(
        RunningServer::start(ServerKind::Wiremock, Behaviour::DropAfterCommit)
            .await
            .is_err()
    );
}

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lostreply-bench-cost"))
}

#[tokio::test]
async fn cost_children_report_every_step() {
    let spec = SyntheticSpec {
        operations: 40,
        duplicate_every: 10,
    };
    let check = cost::measure(&exe(), Phase::Check, spec, Duration::from_secs(120)).await;
    assert_eq!(check.ending, Ending::Completed);
    let names: Vec<&str> = check.steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(names, ["build", "attribution", "check"]);
    let violations = check
        .step("check")
        .unwrap()
        .extra
        .get("violations")
        .cloned();
    assert_eq!(violations, Some(serde_json::json!(2 * spec.duplicates())));

    let report = cost::measure(&exe(), Phase::Report, spec, Duration::from_secs(120)).await;
    assert_eq!(report.ending, Ending::Completed);
    let bytes = report
        .step("json")
        .unwrap()
        .extra
        .get("bytes")
        .and_then(|b| b.as_u64())
        .unwrap();
    assert!(bytes > 1000, "{bytes}");

    let pipeline = cost::measure(&exe(), Phase::Pipeline, spec, Duration::from_secs(120)).await;
    assert_eq!(pipeline.ending, Ending::Completed);
    let names: Vec<&str> = pipeline.steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(names, ["build", "pipeline"]);
    let step = pipeline.step("pipeline").unwrap();
    let count = |field: &str| step.extra.get(field).and_then(|v| v.as_u64());
    assert_eq!(count("violations"), Some(2 * spec.duplicates() as u64));
    assert_eq!(count("violations"), count("expected_violations"));
    assert!(count("bytes").unwrap() > 1000);
    assert!(count("peak_total_kib").unwrap() >= step.peak_kib);
}

#[tokio::test]
async fn the_suite_writes_figures_and_targets() {
    let config = Config {
        parts: BTreeSet::from([Part::Profile, Part::Check, Part::Serve, Part::Explore]),
        connections: vec![1],
        warmup: Duration::ZERO,
        measure: Duration::from_millis(10),
        sizes: vec![30, 60],
        duplicate_every: 10,
        cost_budget: Duration::from_secs(120),
        cost_bin: exe(),
        case_runs: 1,
        python_runs: 1,
        jobs: 1,
        scenario_dir: None,
        python_adapter: PathBuf::from("/nonexistent/adapter.py"),
        lostreply_bin: PathBuf::from("/nonexistent/lostreply"),
        serve_creates: vec![10],
        explore_situations: 20,
        explore_mcp_situations: 10,
        explore_profile: None,
        soak_duration: Duration::from_secs(1),
        soak_webhooks: lostreply_bench::soak::Webhooks::Off,
    };
    let mut buffer = Vec::new();
    let lines = {
        let mut out = Out::new(Box::new(&mut buffer));
        assert!(suite::run(&config, &mut out).await);
        out.lines().to_vec()
    };
    let count = |bench: &str| lines.iter().filter(|l| l["bench"] == bench).count();
    // Two sizes; three steps of check, three of report, two of pipeline.
    assert_eq!(count("cost"), 16);
    // One connection count: a point per wire, and their ratio.
    assert_eq!((count("profile_path"), count("profile_ratio")), (2, 1));
    for line in lines.iter().filter(|l| l["bench"] == "profile_path") {
        assert_eq!(line["errors"], 0, "{line}");
    }
    // Twenty situations against the reference: nothing found.
    let explore = lines
        .iter()
        .find(|l| l["bench"] == "explore")
        .expect("explore figure");
    assert_eq!(
        (&explore["situations"], &explore["findings"]),
        (&20.into(), &0.into())
    );
    // Ten MCP situations against the reference's MCP side: nothing found,
    // none refused or failed.
    let mcp = lines
        .iter()
        .find(|l| l["bench"] == "explore_mcp")
        .expect("explore_mcp figure");
    let counts = [
        "situations",
        "findings",
        "invalid",
        "adapter_errors",
        "infra_errors",
    ]
    .map(|field| mcp[field].as_u64());
    assert_eq!(counts, [10, 0, 0, 0, 0].map(Some), "{mcp}");
    // No adapter on a provider's SDK given: the profile figure says why it is missing.
    let profile = lines
        .iter()
        .find(|l| l["bench"] == "explore_profile")
        .expect("explore_profile figure");
    assert_eq!(profile["status"], "skipped");
    // Every target is listed, whatever parts ran: those of parts that did not
    // run are "not measured".
    let names: Vec<&str> = lines
        .iter()
        .filter(|l| l["bench"] == "target")
        .filter_map(|l| l["target"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "ok_16_vs_bare",
            "ok_64_vs_bare",
            "ok_1_vs_wiremock",
            "ok_16_vs_wiremock",
            "ok_64_vs_wiremock",
            "ok_16_p99",
            "stripe_ok_1_vs_generic",
            "stripe_ok_16_vs_generic",
            "stripe_ok_64_vs_generic",
            "drop_1_vs_bare",
            "drop_16_vs_bare",
            "drop_64_vs_bare",
            "reset_1_vs_bare",
            "reset_16_vs_bare",
            "reset_64_vs_bare",
            "faults_exact",
            "check_report_1m_time",
            "check_report_1m_memory",
            "check_report_exponent",
            "cases_in_process",
            "cases_python_persistent",
            "serve_idle_rss",
            "serve_bytes_per_request",
            "serve_keeps_serving",
            "explore_per_minute",
            "explore_mcp_per_minute",
        ]
    );
    assert_eq!(count("machine"), 1);
    // A missing binary is reported, not a panic.
    let serve = lines.iter().find(|l| l["bench"] == "serve_memory").unwrap();
    assert_eq!(serve["status"], "failed");
    // The targets judge the pipeline: measured below 1M, so not judged.
    let target = |name: &str| {
        lines
            .iter()
            .find(|l| l["bench"] == "target" && l["target"] == name)
            .unwrap()
    };
    assert_eq!(
        target("check_report_1m_time")["met"],
        serde_json::Value::Null
    );
    assert_eq!(
        target("check_report_1m_memory")["met"],
        serde_json::Value::Null
    );
    // Parts that did not run judge nothing.
    for name in ["ok_16_vs_bare", "faults_exact", "cases_python_persistent"] {
        assert_eq!(target(name)["met"], serde_json::Value::Null, "{name}");
    }
    // The serve part ran and failed (no binary): nothing measured, nothing met.
    assert_eq!(
        target("serve_keeps_serving")["met"],
        serde_json::Value::Null
    );
    // The profile part ran at 1 connection only: that point is judged, the others are not.
    assert!(target("stripe_ok_1_vs_generic")["value"].is_number());
    assert_eq!(
        target("stripe_ok_16_vs_generic")["met"],
        serde_json::Value::Null
    );
    // Two sizes of the pipeline finished: their growth is judged.
    assert!(target("check_report_exponent")["value"].is_number());
    let text = String::from_utf8(buffer).unwrap();
    assert!(text.contains("== targets"), "{text}");
    assert!(text.contains("phase pipeline"), "{text}");
    assert!(
        text.contains("explore --profile: skipped: it needs a process adapter"),
        "{text}"
    );
}

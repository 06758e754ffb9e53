//! `--mcp-simulator` as a library: the fake MCP server well-behaved passes
//! every finding; each `Defect` fails exactly its own finding while every
//! other finding still passes (table-driven over `Defect::ALL`). Real
//! loopback sockets; nothing sleeps.

use std::collections::{BTreeMap, BTreeSet};

use lostreply_certify::mcp::{self, simulator};
use lostreply_certify::report::Certification;
use lostreply_certify::verdict::Verdict;
use lostreply_certify::Config;
use lostreply_simulator::mcp::Defect;

async fn run(defects: &[Defect], seed: u64) -> (Certification, lostreply_simulator::Simulator) {
    let set: BTreeSet<Defect> = defects.iter().copied().collect();
    let sim = simulator::start(&set, seed)
        .await
        .expect("simulator starts");
    let url = sim.mcp_url().expect("the MCP face is on");
    let contract = simulator::contract(&url).expect("shipped contract");
    let config = Config {
        only: Vec::new(),
        budget: None,
        seed,
        reproduce: format!("lostreply certify --mcp-simulator --seed {seed}"),
    };
    let report = mcp::certify(contract, &config)
        .await
        .expect("certification runs");
    (report, sim)
}

fn verdicts(c: &Certification) -> BTreeMap<String, Verdict> {
    c.probes
        .iter()
        .map(|p| (p.name.clone(), p.verdict))
        .collect()
}

fn explain(c: &Certification) -> String {
    let mut out = Vec::new();
    let _ = lostreply_certify::write::write_terminal(&mut out, c);
    String::from_utf8_lossy(&out).into_owned()
}

/// The finding each defect must fail, and the verdict it fails with.
fn finding_of(defect: Defect) -> (&'static str, Verdict) {
    match defect {
        Defect::ResultWithoutId => ("id_in_every_result", Verdict::Fail),
        Defect::TimeoutAsParameter => ("timeout_is_client_setting", Verdict::Fail),
        Defect::RetrievalNotReadOnly => ("retrieval_read_only", Verdict::Fail),
        Defect::NotYoursDistinct => ("not_yours_like_unknown", Verdict::HardFail),
        Defect::EmptyListIsError => ("empty_list_is_normal", Verdict::Fail),
        Defect::KeyInArguments => ("credentials_host_side", Verdict::Fail),
        Defect::PayloadMismatch => ("retrieve_matches_original", Verdict::Fail),
    }
}

#[tokio::test]
async fn well_behaved_passes_every_finding_and_makes_one_paid_call() {
    let (report, sim) = run(&[], 7).await;
    let text = explain(&report);
    for (name, verdict) in verdicts(&report) {
        assert_eq!(verdict, Verdict::Pass, "{name}\n{text}");
    }
    assert_eq!(report.probes.len(), mcp::FINDINGS.len());
    assert_eq!(report.exit_code(), 0);
    assert!(report.requests_sent <= report.budget, "{text}");
    // One paid call, so one effect: certification never calls again.
    let paid: Vec<_> = sim
        .journal()
        .into_iter()
        .filter(|e| e.rpc.as_ref().and_then(|r| r.tool.as_deref()) == Some("create_ticket"))
        .collect();
    assert_eq!(paid.len(), 1, "{paid:?}");
    assert_eq!(sim.ledger_len(), 1);
    // Evidence never carries a credential.
    let json = serde_json::to_string(&report).expect("serialises");
    assert!(!json.contains("sk_test_"), "{json}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_exactly_its_finding() {
    let runs = futures::future::join_all(Defect::ALL.iter().map(|d| async move {
        let (report, sim) = run(&[*d], 11).await;
        sim.shutdown().await;
        (*d, report)
    }))
    .await;
    for (defect, report) in runs {
        let (finding, verdict) = finding_of(defect);
        let text = explain(&report);
        for (name, got) in verdicts(&report) {
            let want = if name == finding {
                verdict
            } else {
                Verdict::Pass
            };
            assert_eq!(
                got,
                want,
                "defect {}: finding {name}\n{text}",
                defect.name()
            );
        }
        assert_eq!(report.exit_code(), 1, "{}", defect.name());
    }
}

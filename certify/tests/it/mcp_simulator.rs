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
        Defect::ListShowsOtherTenants => ("list_is_per_tenant", Verdict::HardFail),
        // The echo alone is masked; what it adds about another tenant is not.
        Defect::NotYoursEchoLeaks => ("not_yours_like_unknown", Verdict::HardFail),
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
        // The failing finding shows why: exchanges or the quoted listing.
        let failing = report
            .probes
            .iter()
            .find(|p| p.name == finding)
            .expect("reported");
        assert!(
            failing.evidence.len() >= 2,
            "defect {}: {:?}",
            defect.name(),
            failing.evidence
        );
        assert_eq!(report.exit_code(), 1, "{}", defect.name());
    }
}

#[tokio::test]
async fn the_gate_allows_the_contract_s_paid_tool_once_and_nothing_else() {
    use lostreply_certify::mcp::session::{Refused, Session, Wire};
    let sim = simulator::start(&BTreeSet::new(), 3).await.expect("starts");
    let contract = simulator::contract(&sim.mcp_url().expect("url")).expect("contract");
    let client = lostreply_certify::client::Client::new(
        &contract.origin,
        contract.timeout,
        contract.max_response_bytes,
        contract.budget,
        contract.rate_per_s,
    )
    .expect("client");
    let wire = Wire::new(&contract, client);
    let mut s = Session::new(&wire, contract.primary.clone());
    let (init, _) = s.initialize("init").await;
    assert_eq!(init.expect("answers").status, 200);
    let none = serde_json::Map::new();
    let (other, evidence) = s.tool("not allowed", "create_charge", &none, None).await;
    assert!(matches!(other, Err(Refused::NotAllowed(_))), "{other:?}");
    assert!(evidence.is_none(), "nothing was sent");
    let (first, _) = s.tool("allowed", "create_ticket", &none, None).await;
    assert!(first.is_ok(), "{first:?}");
    let (second, _) = s.tool("again", "create_ticket", &none, None).await;
    assert!(matches!(second, Err(Refused::PaidSpent(_))), "{second:?}");
    let (list, _) = s
        .tool("retrieval", "list_recent_operations", &none, None)
        .await;
    assert!(list.is_ok());
    assert_eq!(sim.ledger_len(), 1, "one paid call reached the server");
    sim.shutdown().await;
}

#[tokio::test]
async fn a_small_budget_stops_findings_without_exceeding_it() {
    let sim = simulator::start(&BTreeSet::new(), 4).await.expect("starts");
    let contract = simulator::contract(&sim.mcp_url().expect("url")).expect("contract");
    let config = Config {
        only: Vec::new(),
        budget: Some(5),
        seed: 4,
        reproduce: String::new(),
    };
    let report = mcp::certify(contract, &config).await.expect("runs");
    assert_eq!(report.budget, 5);
    assert!(report.requests_sent <= 5, "{}", report.requests_sent);
    assert_eq!(report.exit_code(), 3, "{}", explain(&report));
    assert!(report
        .probes
        .iter()
        .any(|p| p.verdict == Verdict::Error && p.summary.contains("budget")));
    sim.shutdown().await;
}

//! The fake MCP server shaped like the real servers certification meets:
//! errors raised as an SDK server raises them (an unknown tool, an id echoed
//! in "not found"), no retrieval tools at all or no get tool, and `--mcp URL` against a
//! server whose tenants already have operations. Each finding must be blamed
//! where the check failed, and a check that cannot compare ends skipped.
//! Real loopback sockets; nothing sleeps.

use std::collections::{BTreeMap, BTreeSet};

use lostreply_certify::mcp::contract::{quick, McpContract, PaidCall};
use lostreply_certify::mcp::session::{Session, Wire};
use lostreply_certify::mcp::{self, simulator};
use lostreply_certify::report::Certification;
use lostreply_certify::verdict::Verdict;
use lostreply_certify::Config;
use lostreply_simulator::mcp::{Defect, ErrorStyle};
use lostreply_simulator::{ServeOptions, Simulator};

fn config(seed: u64) -> Config {
    Config {
        only: Vec::new(),
        budget: None,
        seed,
        reproduce: String::new(),
    }
}

/// A fresh fake server: the worked example's plan with `defects`, changed by `shape`.
async fn start(
    defects: &[Defect],
    shape: impl FnOnce(&mut lostreply_simulator::mcp::McpPlan),
) -> Simulator {
    let set: BTreeSet<Defect> = defects.iter().copied().collect();
    let mut plan = simulator::plan(&set, 21);
    if let Some(mcp) = plan.mcp.as_mut() {
        shape(mcp);
    }
    Simulator::start(plan, ServeOptions::default())
        .await
        .expect("simulator starts")
}

/// Certifies `sim` with the worked example's contract (one paid call, the clock).
async fn certify_example(sim: &Simulator) -> Certification {
    let contract = simulator::contract(&sim.mcp_url().expect("MCP face")).expect("contract");
    mcp::certify(contract, &config(21)).await.expect("runs")
}

/// The contract of `--mcp URL` with both tenants' credentials (no paid call, no clock).
fn url_contract(sim: &Simulator) -> McpContract {
    let env = |name: &str| match name {
        "LOSTREPLY_MCP_CREDENTIAL" => Some("sk_test_a".to_owned()),
        "LOSTREPLY_MCP_SECOND_CREDENTIAL" => Some("sk_test_b".to_owned()),
        _ => None,
    };
    quick(&sim.mcp_url().expect("MCP face"), &env).expect("contract")
}

/// One `create_ticket` by `tenant`, as its own agent would make it.
async fn agent_call(sim: &Simulator, tenant: &str) {
    let mut contract = url_contract(sim);
    contract.paid = Some(PaidCall {
        tool: "create_ticket".to_owned(),
        arguments: serde_json::Map::new(),
    });
    let client = lostreply_certify::client::Client::new(
        &contract.origin,
        contract.timeout,
        contract.max_response_bytes,
        10,
        1000,
    )
    .expect("client");
    let wire = Wire::new(&contract, client);
    let mut agent = Session::new(&wire, Some(tenant.to_owned()));
    let (init, _) = agent.initialize("agent").await;
    assert_eq!(init.expect("initialize").status, 200);
    let args = serde_json::Map::from_iter([("title".to_owned(), serde_json::json!(tenant))]);
    let (made, _) = agent
        .tool("agent's call", "create_ticket", &args, None)
        .await;
    assert!(!made.expect("the call answers").is_tool_error());
}

fn verdicts(c: &Certification) -> BTreeMap<String, Verdict> {
    c.probes
        .iter()
        .map(|p| (p.name.clone(), p.verdict))
        .collect()
}

fn summary<'c>(c: &'c Certification, name: &str) -> &'c str {
    c.probes
        .iter()
        .find(|p| p.name == name)
        .map_or("", |p| p.summary.as_str())
}

fn explain(c: &Certification) -> String {
    let mut out = Vec::new();
    let _ = lostreply_certify::write::write_terminal(&mut out, c);
    String::from_utf8_lossy(&out).into_owned()
}

/// Every finding as `want` says, the others `Pass`.
fn assert_verdicts(c: &Certification, want: &[(&str, Verdict)]) {
    let text = explain(c);
    for (name, got) in verdicts(c) {
        let expected = want
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Verdict::Pass, |(_, v)| *v);
        assert_eq!(got, expected, "finding {name}\n{text}");
    }
}

#[tokio::test]
async fn an_sdk_server_echoing_the_asked_id_passes_with_the_echo_masked() {
    let sim = start(&[], |mcp| mcp.errors = ErrorStyle::Sdk).await;
    let report = certify_example(&sim).await;
    assert_verdicts(&report, &[]);
    assert_eq!(report.exit_code(), 0);
    for finding in ["not_yours_like_unknown", "expired_like_unknown"] {
        let said = summary(&report, finding);
        assert!(said.contains("is masked"), "{finding}: {said}");
        // The raw answers did differ: each echoed its own id.
        let bodies: Vec<&str> = report
            .probes
            .iter()
            .find(|p| p.name == finding)
            .into_iter()
            .flat_map(|p| &p.evidence)
            .filter_map(|e| match e {
                lostreply_certify::verdict::Evidence::Exchange { body, .. }
                    if body.contains("not found") =>
                {
                    Some(body.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(bodies.len(), 2, "{finding}: {bodies:?}");
        assert_ne!(bodies[0], bodies[1], "{finding}");
    }
    sim.shutdown().await;
}

#[tokio::test]
async fn an_echo_that_also_tells_another_tenant_s_data_is_still_a_hard_failure() {
    let sim = start(&[Defect::NotYoursEchoLeaks], |_| {}).await;
    let report = certify_example(&sim).await;
    assert_verdicts(&report, &[("not_yours_like_unknown", Verdict::HardFail)]);
    assert!(
        summary(&report, "not_yours_like_unknown").contains("even with each one's own id masked"),
        "{}",
        explain(&report)
    );
    assert_eq!(report.exit_code(), 1);
    sim.shutdown().await;
}

#[tokio::test]
async fn without_retrieval_tools_reachability_and_read_only_fail_and_the_rest_is_skipped() {
    // The same verdicts whether the unknown tool would be a JSON-RPC error or
    // a tool error result: certification does not call an unlisted tool.
    for style in [ErrorStyle::Spec, ErrorStyle::Sdk] {
        let sim = start(&[], |mcp| {
            mcp.errors = style;
            mcp.retrieval.enabled = false;
        })
        .await;
        let report = certify_example(&sim).await;
        assert_verdicts(
            &report,
            &[
                ("retrieval_reachable", Verdict::Fail),
                ("retrieval_read_only", Verdict::Fail),
                ("empty_list_is_normal", Verdict::Skipped),
                ("retrieve_matches_original", Verdict::Skipped),
                ("not_yours_rule_written", Verdict::Skipped),
                ("retention_declared", Verdict::Skipped),
                ("credentials_host_side", Verdict::Skipped),
                ("not_yours_like_unknown", Verdict::Skipped),
                ("list_is_per_tenant", Verdict::Skipped),
                ("expired_like_unknown", Verdict::Skipped),
            ],
        );
        assert!(
            summary(&report, "retrieval_reachable").contains("lists no `list_recent_operations`"),
            "{style:?}\n{}",
            explain(&report)
        );
        // The paid tool, never called, is judged by its listing like the others.
        let ids = summary(&report, "id_in_every_result");
        assert!(ids.contains("create_ticket: the description says"), "{ids}");
        assert_eq!(report.exit_code(), 1);
        assert_eq!(sim.ledger_len(), 0, "no paid call without a way to recover");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn an_unlisted_get_tool_fails_read_only_and_skips_what_retrieves_by_id() {
    // Were it called, an unknown tool would answer the same to every tenant
    // and every id: a comparison of nothing, which must not pass.
    for style in [ErrorStyle::Spec, ErrorStyle::Sdk] {
        let sim = start(&[], |mcp| mcp.errors = style).await;
        let mut contract =
            simulator::contract(&sim.mcp_url().expect("MCP face")).expect("contract");
        contract.retrieval.get = "fetch_operation".to_owned();
        let report = mcp::certify(contract, &config(21)).await.expect("runs");
        assert_verdicts(
            &report,
            &[
                ("retrieval_read_only", Verdict::Fail),
                ("not_yours_rule_written", Verdict::Skipped),
                ("retrieve_matches_original", Verdict::Skipped),
                ("not_yours_like_unknown", Verdict::Skipped),
                ("expired_like_unknown", Verdict::Skipped),
            ],
        );
        for finding in ["retrieve_matches_original", "not_yours_like_unknown"] {
            let said = summary(&report, finding);
            assert!(
                said.contains("lists no `fetch_operation`"),
                "{finding}: {said}"
            );
        }
        let asked = sim
            .journal()
            .into_iter()
            .filter(|e| e.rpc.as_ref().and_then(|r| r.tool.as_deref()) == Some("fetch_operation"))
            .count();
        assert_eq!(asked, 0, "an unlisted tool is never called");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn url_mode_cannot_compare_a_payload_so_it_says_skipped_and_why() {
    let sim = start(&[], |_| {}).await;
    agent_call(&sim, "sk_test_a").await;
    agent_call(&sim, "sk_test_b").await;
    let report = mcp::certify(url_contract(&sim), &config(5))
        .await
        .expect("runs");
    assert_verdicts(
        &report,
        &[
            ("retrieve_matches_original", Verdict::Skipped),
            ("empty_list_is_normal", Verdict::Skipped),
            ("expired_like_unknown", Verdict::Skipped),
        ],
    );
    let said = summary(&report, "retrieve_matches_original");
    assert!(
        said.contains("not compared") && said.contains("no paid call"),
        "{said}"
    );
    assert!(
        summary(&report, "list_is_per_tenant").contains("shows none of the primary's"),
        "{}",
        explain(&report)
    );
    assert_eq!(report.exit_code(), 0);
    assert_eq!(sim.ledger_len(), 2, "certification made no paid call");
    sim.shutdown().await;
}

#[tokio::test]
async fn url_mode_finds_another_tenant_s_list_showing_mine() {
    let sim = start(&[Defect::ListShowsOtherTenants], |_| {}).await;
    agent_call(&sim, "sk_test_a").await;
    let report = mcp::certify(url_contract(&sim), &config(5))
        .await
        .expect("runs");
    assert_verdicts(
        &report,
        &[
            ("retrieve_matches_original", Verdict::Skipped),
            // Both lists hold the one operation: neither is empty.
            ("empty_list_is_normal", Verdict::Skipped),
            ("list_is_per_tenant", Verdict::HardFail),
            ("expired_like_unknown", Verdict::Skipped),
        ],
    );
    assert_eq!(report.exit_code(), 1);
    sim.shutdown().await;
}

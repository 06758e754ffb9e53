//! The worked example on Stripe's wire (`--simulator MODE --profile stripe`):
//! every mode gets the verdicts it gets on the generic API, probe for probe,
//! because the flaws live in the idempotency engine and a profile changes
//! only the wire; the requests are Stripe's; and Stripe's own search and list
//! count effects as the ledger does.

use std::collections::BTreeMap;

use lostreply_certify::report::Certification;
use lostreply_certify::simulator::{self, Wire};
use lostreply_certify::verdict::{Evidence, Verdict};
use lostreply_certify::{certify, contract, Config};
use lostreply_simulator::IdempotencyMode;

fn config(seed: u64, only: &[&str]) -> Config {
    Config {
        only: only.iter().map(|s| (*s).to_owned()).collect(),
        budget: None,
        seed,
        reproduce: format!("lostreply certify --seed {seed}"),
    }
}

async fn run(wire: Wire, mode: IdempotencyMode, seed: u64) -> Certification {
    let sim = simulator::start(wire, mode, seed)
        .await
        .expect("simulator starts");
    let contract = simulator::contract(wire, mode, &sim.base_url()).expect("shipped contract");
    let report = certify(contract, &config(seed, &[]))
        .await
        .expect("certification runs");
    sim.shutdown().await;
    report
}

fn verdicts(c: &Certification) -> BTreeMap<String, Verdict> {
    c.probes
        .iter()
        .map(|p| (p.name.clone(), p.verdict))
        .collect()
}

fn terminal(c: &Certification) -> String {
    let mut out = Vec::new();
    lostreply_certify::write::write_terminal(&mut out, c).expect("writes");
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mode_gets_the_same_verdicts_on_both_wires() {
    let runs = futures::future::join_all(IdempotencyMode::ALL.iter().flat_map(|&mode| {
        Wire::ALL
            .into_iter()
            .map(move |wire| async move { (mode, wire, run(wire, mode, 1).await) })
    }))
    .await;
    let mut by_mode: BTreeMap<&str, BTreeMap<&str, &Certification>> = BTreeMap::new();
    for (mode, wire, c) in &runs {
        by_mode
            .entry(mode.name())
            .or_default()
            .insert(wire.name(), c);
    }
    let mut problems = Vec::new();
    for (mode, wires) in &by_mode {
        let (generic, stripe) = (wires["generic"], wires["stripe"]);
        if verdicts(generic) != verdicts(stripe) {
            problems.push(format!(
                "{mode}: the wires disagree\n== generic\n{}\n== stripe\n{}",
                terminal(generic),
                terminal(stripe)
            ));
        }
        if stripe.probes.iter().any(|p| p.verdict == Verdict::Error) {
            problems.push(format!(
                "{mode}: a probe could not conclude on Stripe's wire\n{}",
                terminal(stripe)
            ));
        }
        let passes = *mode == "stripe" || *mode == "ietf";
        if passes != (stripe.exit_code() == 0) {
            problems.push(format!(
                "{mode}: exit {} on Stripe's wire\n{}",
                stripe.exit_code(),
                terminal(stripe)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn the_probes_speak_stripes_wire() {
    let c = run(Wire::Stripe, IdempotencyMode::Stripe, 2).await;
    let baseline = c
        .probes
        .iter()
        .find(|p| p.name == "baseline")
        .expect("baseline ran");
    let Some(Evidence::Exchange {
        request,
        outcome,
        body,
        ..
    }) = baseline.evidence.first()
    else {
        panic!("baseline starts with its create: {:?}", baseline.evidence);
    };
    assert!(request.starts_with("POST /v1/customers name="), "{request}");
    assert!(
        request.contains("&metadata%5Bcertify_marker%5D=lrm_"),
        "{request}"
    );
    assert!(outcome.starts_with("200 "), "{outcome}");
    assert!(
        body.starts_with("{\"id\":\"cus_") && body.contains("\"object\":\"customer\""),
        "{body}"
    );
    assert_eq!(
        c.contract_source,
        "certify/contracts/simulator-stripe-profile.yaml"
    );
}

/// The probes whose creates all go to `/v1/customers`: the others create
/// payment intents and refunds, which a customer search or list never shows.
const CUSTOMER_PROBES: [&str; 9] = [
    "baseline",
    "sequential_replay",
    "replay_fidelity",
    "lost_response",
    "key_reuse_other_args",
    "key_reuse_reordered_args",
    "cross_tenant",
    "key_validation",
    "retention",
];

/// The shipped contract without the ledger (and, for `list`, without the
/// search), so that effects are counted as a vendor's own read-back counts them.
fn without_ledger(readback: &str) -> String {
    simulator::STRIPE_WIRE_CONTRACT
        .lines()
        .filter(|line| {
            let line = line.trim_start();
            !(line.starts_with("ground_truth:")
                || readback == "list" && line.starts_with("search:"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn stripes_search_and_list_count_effects() {
    for (seed, readback) in [(3, "search"), (4, "list")] {
        let sim = simulator::start(Wire::Stripe, IdempotencyMode::Stripe, seed)
            .await
            .expect("simulator starts");
        let base = sim.base_url();
        let contract = contract::parse(&without_ledger(readback), "stripe-wire.yaml", &|name| {
            (name == "LOSTREPLY_CERTIFY_BASE_URL").then(|| base.clone())
        })
        .expect("the contract parses");
        let c = certify(contract, &config(seed, &CUSTOMER_PROBES))
            .await
            .expect("certification runs");
        sim.shutdown().await;
        assert_eq!(c.exit_code(), 0, "{readback}:\n{}", terminal(&c));
        let methods: Vec<&str> = c
            .probes
            .iter()
            .flat_map(|p| &p.evidence)
            .filter_map(|e| match e {
                Evidence::Count { method, .. } => Some(method.as_str()),
                _ => None,
            })
            .collect();
        assert!(!methods.is_empty(), "{readback}: nothing was counted");
        assert!(
            methods.iter().all(|m| *m == readback),
            "{readback}: {methods:?}"
        );
    }
}

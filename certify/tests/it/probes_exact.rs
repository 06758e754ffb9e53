//! The probes' judgements where the simulator has no mode to show them: keys
//! derived from the seed (a second run never meets the first's records), a
//! rejection retried with the same body, an error after the commit, and the
//! declarations real middlewares need (fingerprint, key scope, errors replayed
//! by status, `accepts_any`, a counting read-back). Each against the tiny
//! middleware in `fake_middleware.rs`, with switches set both ways; the
//! in-flight declaration `{waits, then}` against the simulator, whose
//! duplicates in flight are refused with 409.

use lostreply_certify::report::{Certification, ProbeResult};
use lostreply_certify::verdict::Verdict;
use lostreply_certify::{certify, contract, Config};

use crate::fake_middleware::{start, Behaviour, Fp};

/// A contract for the fake middleware, with `declares` lines added.
fn contract_text(base_url: &str, declares: &str, ground_truth: &str) -> String {
    format!(
        r#"version: 1
name: the fake middleware
target:
  base_url: "{base_url}"
  allowed_hosts: [127.0.0.1]
auth:
  primary: tenant_a
  second_tenant: tenant_b
create:
  path: /v1/items
  body: {{title: "certification {{marker}}", amount: 1200, client_reference: "{{marker}}"}}
  vary: amount
  success: [201]
  other_path: /v1/others
  rejected:
    body: {{title: "too large", amount: 1000000, client_reference: "{{marker}}"}}
    status: [400, 422]
  error_after_commit: {{path: /v1/fails, status: [500]}}
key:
  syntax: token
readback:
  ground_truth: {ground_truth}
declares:
  retention: 24h
  missing_key: processed
{declares}
limits:
  budget: 100
  rate_per_s: 1000
"#
    )
}

const LEDGER: &str = "{path: /ledger, marker_at: /client_reference, auth: false}";

async fn run(b: Behaviour, declares: &str, probe: &str, seed: u64) -> ProbeResult {
    let server = start(b).await;
    run_on(&server.base_url, declares, LEDGER, probe, seed).await
}

async fn run_on(base: &str, declares: &str, gt: &str, probe: &str, seed: u64) -> ProbeResult {
    let text = contract_text(base, declares, gt);
    let contract = contract::parse(&text, "fake.yaml", &|_| None)
        .unwrap_or_else(|e| panic!("the test contract is valid: {e}\n{text}"));
    let config = Config {
        only: vec![probe.to_owned()],
        budget: None,
        seed,
        reproduce: String::new(),
    };
    let report: Certification = certify(contract, &config).await.expect("runs");
    report
        .probes
        .into_iter()
        .find(|p| p.name == probe)
        .expect("the probe ran")
}

fn trail(p: &ProbeResult) -> String {
    let lines: Vec<String> = p
        .evidence
        .iter()
        .map(lostreply_certify::write::evidence_line)
        .collect();
    format!(
        "{} {}: {}\n{}",
        p.name,
        p.verdict.name(),
        p.summary,
        lines.join("\n")
    )
}

#[tokio::test]
async fn a_second_run_does_not_meet_the_first_runs_malformed_key() {
    // Mismatches answer 400, the status declared for malformed keys: a key
    // shared by both runs would be answered 400 in the second and pass.
    let b = Behaviour {
        mismatch_status: 400,
        ..Behaviour::default()
    };
    let server = start(b).await;
    for seed in [1, 2] {
        let p = run_on(&server.base_url, "", LEDGER, "key_validation", seed).await;
        assert_eq!(p.verdict, Verdict::Fail, "seed {seed}: {}", trail(&p));
        assert!(
            p.summary.contains("malformed key: answered 201"),
            "seed {seed}: {}",
            trail(&p)
        );
    }
}

#[tokio::test]
async fn accepts_any_checks_only_that_odd_keys_cause_no_duplicate() {
    let p = run(
        Behaviour::default(),
        "  key_validation: accepts_any",
        "key_validation",
        1,
    )
    .await;
    assert_eq!(p.verdict, Verdict::Pass, "{}", trail(&p));
    assert!(p.summary.contains("no duplicate"), "{}", trail(&p));
}

/// One case of the rejection matrix: the server's switches, the declaration,
/// the verdict, and words the finding must hold.
async fn rejection_case(b: Behaviour, declares: &str, verdict: Verdict, words: &str) {
    let p = run(b, declares, "rejected_not_poisoned", 3).await;
    assert_eq!(p.verdict, verdict, "{b:?} {declares}: {}", trail(&p));
    assert!(p.summary.contains(words), "{b:?} {declares}: {}", trail(&p));
}

#[tokio::test]
async fn a_saved_rejection_is_judged_by_the_same_request_whatever_the_statuses() {
    let saves = |rejection_status| Behaviour {
        rejection_status,
        saves_errors: true,
        ..Behaviour::default()
    };
    // Rejection and mismatch statuses equal, then different: the same body
    // gets the saved rejection, so the mismatch status plays no part.
    for status in [422, 400] {
        let declares = format!("  errors_replayed: [{status}]");
        rejection_case(
            saves(status),
            &declares,
            Verdict::Pass,
            "got the saved rejection",
        )
        .await;
    }
    // Saved, but declared not saved: the valid request meets the mismatch status.
    rejection_case(
        saves(422),
        "",
        Verdict::Fail,
        "the declared mismatch status",
    )
    .await;
}

#[tokio::test]
async fn a_rejection_answered_afresh_is_not_taken_for_a_replay() {
    let fresh = Behaviour::default();
    rejection_case(
        fresh,
        "  errors_replayed: [422]",
        Verdict::Fail,
        "answered afresh",
    )
    .await;
    rejection_case(
        fresh,
        "  errors_replayed: false",
        Verdict::Pass,
        "answered 201",
    )
    .await;
    // Declared saved, but the retry runs (the rejection was transient): a
    // failed declaration, not a duplicate (the retry made the one effect).
    let transient = Behaviour {
        rejects_once: true,
        ..Behaviour::default()
    };
    let p = run(
        transient,
        "  errors_replayed: [422]",
        "rejected_not_poisoned",
        3,
    )
    .await;
    assert_eq!(p.verdict, Verdict::Fail, "{}", trail(&p));
    assert!(p.summary.contains("answered 201"), "{}", trail(&p));
}

#[tokio::test]
async fn an_error_after_the_commit_must_not_release_the_key() {
    let keeps = run(Behaviour::default(), "", "error_after_commit", 4).await;
    assert_eq!(keeps.verdict, Verdict::Pass, "{}", trail(&keeps));
    let releases = Behaviour {
        releases_on_5xx: true,
        ..Behaviour::default()
    };
    let p = run(releases, "", "error_after_commit", 4).await;
    assert_eq!(p.verdict, Verdict::HardFail, "{}", trail(&p));
    assert!(p.summary.contains("2 effects"), "{}", trail(&p));
}

#[tokio::test]
async fn the_fingerprint_decides_what_other_arguments_are() {
    let cases = [
        (Fp::Canonical, "", "key_reuse_reordered_args", Verdict::Pass),
        (Fp::Raw, "", "key_reuse_reordered_args", Verdict::Fail),
        (
            Fp::Raw,
            "  fingerprint: raw_bytes",
            "key_reuse_reordered_args",
            Verdict::Pass,
        ),
        (
            Fp::Canonical,
            "  fingerprint: raw_bytes",
            "key_reuse_reordered_args",
            Verdict::Fail,
        ),
        (Fp::Off, "", "key_reuse_other_args", Verdict::Fail),
        (
            Fp::Off,
            "  fingerprint: none",
            "key_reuse_other_args",
            Verdict::Pass,
        ),
        (
            Fp::Canonical,
            "  fingerprint: none",
            "key_reuse_other_args",
            Verdict::Fail,
        ),
        // The changed body runs under the used key: other arguments that ran
        // where a mismatch is declared; a duplicate where the key alone names the work.
        (Fp::InKey, "", "key_reuse_other_args", Verdict::Fail),
        (
            Fp::InKey,
            "  fingerprint: none",
            "key_reuse_other_args",
            Verdict::HardFail,
        ),
    ];
    for (fingerprint, declares, probe, verdict) in cases {
        let b = Behaviour {
            fingerprint,
            ..Behaviour::default()
        };
        let p = run(b, declares, probe, 5).await;
        assert_eq!(
            p.verdict,
            verdict,
            "{fingerprint:?} {declares:?}: {}",
            trail(&p)
        );
    }
}

#[tokio::test]
async fn the_key_scope_decides_the_scope_probes_and_a_leak_stays_a_leak() {
    // One store for every caller and path, as the fake middleware keeps.
    let cases = [
        ("", "other_endpoint", Verdict::Fail),
        ("  key_scope: per_tenant", "other_endpoint", Verdict::Pass),
        ("  key_scope: global", "other_endpoint", Verdict::Pass),
        ("", "cross_tenant", Verdict::HardFail),
        ("  key_scope: global", "cross_tenant", Verdict::HardFail),
    ];
    for (declares, probe, verdict) in cases {
        let p = run(Behaviour::default(), declares, probe, 6).await;
        assert_eq!(p.verdict, verdict, "{declares:?}: {}", trail(&p));
    }
}

#[tokio::test]
async fn a_ground_truth_that_counts_is_read_as_a_count() {
    let server = start(Behaviour::default()).await;
    let count = "{path: \"/count?marker={marker}\", count_at: /effects, auth: false}";
    let p = run_on(&server.base_url, "", count, "baseline", 7).await;
    assert_eq!(p.verdict, Verdict::Pass, "{}", trail(&p));
    let releases = start(Behaviour {
        releases_on_5xx: true,
        ..Behaviour::default()
    })
    .await;
    let p = run_on(&releases.base_url, "", count, "error_after_commit", 7).await;
    assert_eq!(p.verdict, Verdict::HardFail, "{}", trail(&p));
}

/// The stripe simulator answers a duplicate in flight with 409 at once.
async fn in_flight_against_the_simulator(declared: &str, seed: u64) -> ProbeResult {
    use lostreply_certify::simulator::{self, Wire};
    use lostreply_simulator::IdempotencyMode;
    let sim = simulator::start(Wire::Generic, IdempotencyMode::Stripe, seed)
        .await
        .expect("simulator starts");
    let text = simulator::STRIPE_CONTRACT.replacen(
        "  in_flight: {status: [409]}",
        &format!("  in_flight: {declared}"),
        1,
    );
    let base = sim.base_url();
    let contract = contract::parse(&text, "stripe.yaml", &|name| {
        (name == "LOSTREPLY_CERTIFY_BASE_URL").then(|| base.clone())
    })
    .expect("valid");
    let config = Config {
        only: vec!["in_flight".to_owned()],
        budget: None,
        seed,
        reproduce: String::new(),
    };
    let report = certify(contract, &config).await.expect("runs");
    sim.shutdown().await;
    report
        .probes
        .into_iter()
        .find(|p| p.name == "in_flight")
        .expect("ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_then_allows_the_refusal_after_the_wait_and_waits_does_not() {
    let p = in_flight_against_the_simulator("{waits: 15s, then: [409]}", 8).await;
    assert_eq!(p.verdict, Verdict::Pass, "{}", trail(&p));
    let p = in_flight_against_the_simulator("waits", 8).await;
    assert_eq!(p.verdict, Verdict::Fail, "{}", trail(&p));
    assert!(p.summary.contains("declared waits"), "{}", trail(&p));
}

#[tokio::test]
async fn the_declared_retention_is_reported_as_written() {
    // 24h, written so in the contract, and the sample's default, 1s.
    let p = run(Behaviour::default(), "", "retention", 9).await;
    assert_eq!(p.verdict, Verdict::Pass, "{}", trail(&p));
    assert!(
        trail(&p).contains("declared retention 24h sampled at 1s"),
        "{}",
        trail(&p)
    );
}

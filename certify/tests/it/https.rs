//! certify over HTTPS, on real loopback sockets: the simulator behind a
//! TLS-terminating proxy whose certificate a CA made in the test signs. With
//! that CA trusted the verdicts are those of plain HTTP (the racy mode's
//! barrier included); without it, or with a certificate for another name or
//! past its date, every probe ends `error` naming the host and the reason.

use std::collections::BTreeMap;

use lostreply_certify::contract;
use lostreply_certify::mcp;
use lostreply_certify::report::Certification;
use lostreply_certify::simulator::{self, Wire};
use lostreply_certify::tls::{Trust, TrustError};
use lostreply_certify::verdict::Verdict;
use lostreply_certify::{certify, certify_trusting, Config};
use lostreply_simulator::{IdempotencyMode, Simulator};

use super::tls_server::{Ca, TlsProxy, Validity};

fn config(seed: u64, only: &[&str]) -> Config {
    Config {
        only: only.iter().map(|s| (*s).to_owned()).collect(),
        budget: None,
        seed,
        reproduce: format!("lostreply certify --seed {seed}"),
    }
}

fn verdicts(c: &Certification) -> BTreeMap<String, Verdict> {
    c.probes
        .iter()
        .map(|p| (p.name.clone(), p.verdict))
        .collect()
}

fn explain(c: &Certification) -> String {
    c.probes
        .iter()
        .map(|p| format!("{} {:?}: {}", p.name, p.verdict, p.summary))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn sim(mode: IdempotencyMode, seed: u64) -> Simulator {
    simulator::start(Wire::Generic, mode, seed)
        .await
        .expect("simulator starts")
}

/// The worked example's contract for `mode`, pointed at `base_url`.
fn contract_at(mode: IdempotencyMode, base_url: &str) -> contract::Contract {
    simulator::contract(Wire::Generic, mode, base_url).expect("shipped contract")
}

/// A simulator behind TLS with a certificate for `names`, and a trust in `ca`.
async fn behind_tls(
    mode: IdempotencyMode,
    seed: u64,
    names: &[&str],
    validity: Validity,
) -> (Simulator, TlsProxy, Trust, tempfile::TempDir) {
    let ca = Ca::new("lostreply test CA");
    let dir = tempfile::tempdir().expect("tempdir");
    let trust = Trust::ca_file(&ca.write_pem(dir.path())).expect("the CA file is usable");
    let sim = sim(mode, seed).await;
    let proxy = TlsProxy::start(ca.server_cert(names, validity), sim.local_addr()).await;
    (sim, proxy, trust, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_ca_trusted_https_gets_the_verdicts_of_plain_http() {
    for (mode, failing) in [
        (IdempotencyMode::Stripe, None),
        (IdempotencyMode::Racy, Some("concurrent_duplicates")),
    ] {
        let (tls_sim, proxy, trust, _dir) =
            behind_tls(mode, 7, &["127.0.0.1"], Validity::Current).await;
        let over_tls =
            certify_trusting(contract_at(mode, &proxy.origin()), &config(7, &[]), &trust)
                .await
                .expect("runs");
        let plain_sim = sim(mode, 7).await;
        let plain = certify(contract_at(mode, &plain_sim.base_url()), &config(7, &[]))
            .await
            .expect("runs");
        assert_eq!(
            verdicts(&over_tls),
            verdicts(&plain),
            "{mode:?} over TLS:\n{}\nplain:\n{}",
            explain(&over_tls),
            explain(&plain)
        );
        assert!(over_tls.base_url.starts_with("https://127.0.0.1:"));
        assert!(over_tls.totals().pass >= 10, "{}", explain(&over_tls));
        match failing {
            None => assert_eq!(over_tls.exit_code(), 0, "{}", explain(&over_tls)),
            // The barrier holds each request's last byte back over TLS too:
            // the racy engine sees them together and makes duplicates.
            Some(name) => assert_eq!(
                verdicts(&over_tls).get(name),
                Some(&Verdict::HardFail),
                "{}",
                explain(&over_tls)
            ),
        }
        assert!(
            tls_sim.ledger_len() > 0,
            "the effects went through the proxy"
        );
        tls_sim.shutdown().await;
        plain_sim.shutdown().await;
    }
}

/// Runs the baseline probe over the proxy and returns its one-line summary.
async fn baseline_summary(proxy: &TlsProxy, trust: &Trust) -> (Certification, String) {
    let contract = contract_at(IdempotencyMode::Stripe, &proxy.origin());
    let report = certify_trusting(contract, &config(3, &["baseline"]), trust)
        .await
        .expect("runs");
    let summary = report
        .probes
        .iter()
        .find(|p| p.name == "baseline")
        .map(|p| p.summary.clone())
        .unwrap_or_default();
    (report, summary)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_ca_every_probe_names_the_host_and_an_unknown_issuer() {
    let (sim, proxy, _trust, _dir) = behind_tls(
        IdempotencyMode::Stripe,
        3,
        &["127.0.0.1"],
        Validity::Current,
    )
    .await;
    let contract = contract_at(IdempotencyMode::Stripe, &proxy.origin());
    let report = certify_trusting(contract, &config(3, &[]), &Trust::System)
        .await
        .expect("runs");
    assert_eq!(report.exit_code(), 3, "{}", explain(&report));
    for p in &report.probes {
        assert_eq!(p.verdict, Verdict::Error, "{}", explain(&report));
        assert!(
            p.summary
                .contains(&format!("TLS with {}: unknown issuer", proxy.host())),
            "{}: {}",
            p.name,
            p.summary
        );
    }
    assert_eq!(sim.ledger_len(), 0, "no request got through");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_name_is_a_name_mismatch() {
    let (sim, proxy, trust, _dir) = behind_tls(
        IdempotencyMode::Stripe,
        3,
        &["example.invalid"],
        Validity::Current,
    )
    .await;
    let (report, summary) = baseline_summary(&proxy, &trust).await;
    assert_eq!(report.exit_code(), 3, "{}", explain(&report));
    assert!(
        summary.contains(&format!(
            "TLS with {}: name mismatch: the certificate is not valid for 127.0.0.1",
            proxy.host()
        )),
        "{summary}"
    );
    assert!(summary.contains("(it names example.invalid)"), "{summary}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_certificate_is_reported_expired() {
    let (sim, proxy, trust, _dir) = behind_tls(
        IdempotencyMode::Stripe,
        3,
        &["127.0.0.1"],
        Validity::Expired,
    )
    .await;
    let (report, summary) = baseline_summary(&proxy, &trust).await;
    assert_eq!(report.exit_code(), 3, "{}", explain(&report));
    assert!(
        summary.contains(&format!(
            "TLS with {}: the certificate has expired",
            proxy.host()
        )),
        "{summary}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_behind_an_https_url_is_named_so() {
    let sim = sim(IdempotencyMode::Stripe, 3).await;
    let origin = sim.base_url().replacen("http://", "https://", 1);
    let contract = contract_at(IdempotencyMode::Stripe, &origin);
    let report = certify_trusting(contract, &config(3, &["baseline"]), &Trust::System)
        .await
        .expect("runs");
    assert_eq!(report.exit_code(), 3, "{}", explain(&report));
    assert!(
        report.probes[0]
            .summary
            .contains("handshake failure: the server does not speak TLS"),
        "{}",
        explain(&report)
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_https_passes_every_finding() {
    let ca = Ca::new("lostreply test CA");
    let dir = tempfile::tempdir().expect("tempdir");
    let trust = Trust::ca_file(&ca.write_pem(dir.path())).expect("the CA file is usable");
    let sim = mcp::simulator::start(&Default::default(), 9)
        .await
        .expect("simulator starts");
    let cert = ca.server_cert(&["127.0.0.1"], Validity::Current);
    let proxy = TlsProxy::start(cert, sim.local_addr()).await;
    let url = format!("{}/mcp", proxy.origin());
    let contract = mcp::simulator::contract(&url).expect("shipped contract");
    let report = mcp::certify_trusting(contract, &config(9, &[]), &trust)
        .await
        .expect("runs");
    assert_eq!(report.exit_code(), 0, "{}", explain(&report));
    assert!(
        report.probes.iter().all(|p| p.verdict == Verdict::Pass),
        "{}",
        explain(&report)
    );
    assert_eq!(report.base_url, url);
    sim.shutdown().await;
}

#[test]
fn an_https_url_is_held_to_the_allowlist() {
    let text = simulator::STRIPE_CONTRACT;
    let env = |name: &str| {
        (name == "LOSTREPLY_CERTIFY_BASE_URL").then(|| "https://198.51.100.7:443".to_owned())
    };
    let err = contract::parse(text, "c.yaml", &env)
        .expect_err("a host outside the allowlist")
        .to_string();
    assert!(err.contains("not in target.allowed_hosts"), "{err}");
    let env = |name: &str| {
        (name == "LOSTREPLY_CERTIFY_BASE_URL").then(|| "https://127.0.0.1:8443".to_owned())
    };
    assert!(contract::parse(text, "c.yaml", &env).is_ok());
}

#[test]
fn a_ca_file_must_hold_certificates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.pem");
    assert!(matches!(
        Trust::ca_file(&missing),
        Err(TrustError::Read { .. })
    ));
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").expect("written");
    let err = Trust::ca_file(&empty).expect_err("no certificate");
    assert!(
        err.to_string().contains("no PEM certificate in the file"),
        "{err}"
    );
    let ca = Ca::new("lostreply test CA");
    assert!(Trust::ca_file(&ca.write_pem(dir.path())).is_ok());
}

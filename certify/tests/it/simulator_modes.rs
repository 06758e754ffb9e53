//! The worked example: every simulator mode certified with the shipped
//! contract. `stripe` and `ietf` pass every probe; `none` and each known-bad
//! mode fail, each on the probe its flaw breaks; 20 runs give the same verdicts.

use std::collections::BTreeMap;

use lostreply_certify::report::Certification;
use lostreply_certify::verdict::Verdict;
use lostreply_certify::{certify, simulator, Config};
use lostreply_simulator::IdempotencyMode;

async fn run(mode: IdempotencyMode, seed: u64) -> Certification {
    let sim = simulator::start(simulator::Wire::Generic, mode, seed)
        .await
        .expect("simulator starts");
    let contract = simulator::contract(simulator::Wire::Generic, mode, &sim.base_url())
        .expect("shipped contract");
    let config = Config {
        only: Vec::new(),
        budget: None,
        seed,
        reproduce: format!(
            "lostreply certify --simulator {} --seed {seed}",
            mode.name()
        ),
    };
    let report = certify(contract, &config)
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

fn failed(c: &Certification) -> Vec<String> {
    c.failed().into_iter().map(str::to_owned).collect()
}

/// The probe each mode's flaw must break (it may break others too).
fn must_fail(mode: IdempotencyMode) -> Option<&'static str> {
    match mode {
        IdempotencyMode::Stripe | IdempotencyMode::Ietf => None,
        IdempotencyMode::None => Some("sequential_replay"),
        IdempotencyMode::FingerprintInKey => Some("key_reuse_other_args"),
        IdempotencyMode::NoFingerprint => Some("key_reuse_other_args"),
        IdempotencyMode::Racy => Some("concurrent_duplicates"),
        IdempotencyMode::GlobalScope => Some("cross_tenant"),
        IdempotencyMode::StuckInFlight => Some("rejected_not_poisoned"),
        IdempotencyMode::ReleaseOnError => Some("error_after_commit"),
    }
}

/// The error-after-commit probe in each mode: the scenario's `certify_fails`
/// commits, then answers 500. Every mode that keeps keys keeps the committed
/// result for the retry; `release_on_error` releases the key on the 500 and
/// `none` keeps no key, so the retry runs again.
fn error_after_commit(mode: IdempotencyMode) -> Verdict {
    match mode {
        IdempotencyMode::None | IdempotencyMode::ReleaseOnError => Verdict::HardFail,
        IdempotencyMode::Stripe
        | IdempotencyMode::Ietf
        | IdempotencyMode::FingerprintInKey
        | IdempotencyMode::NoFingerprint
        | IdempotencyMode::Racy
        | IdempotencyMode::GlobalScope
        | IdempotencyMode::StuckInFlight => Verdict::Pass,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mode_gets_its_verdict() {
    let runs = futures::future::join_all(
        IdempotencyMode::ALL
            .iter()
            .map(|&mode| async move { (mode, run(mode, 1).await) }),
    )
    .await;
    let mut text = Vec::new();
    for (mode, c) in &runs {
        let mut out = Vec::new();
        lostreply_certify::write::write_terminal(&mut out, c).expect("writes");
        text.push(format!(
            "== {}\n{}",
            mode.name(),
            String::from_utf8_lossy(&out)
        ));
    }
    let text = text.join("\n");
    for (mode, c) in &runs {
        let errors: Vec<_> = c
            .probes
            .iter()
            .filter(|p| p.verdict == Verdict::Error)
            .map(|p| &p.name)
            .collect();
        assert!(
            errors.is_empty(),
            "{}: probes could not conclude: {errors:?}\n{text}",
            mode.name()
        );
        assert_eq!(
            verdicts(c).get("error_after_commit"),
            Some(&error_after_commit(*mode)),
            "{}: error_after_commit\n{text}",
            mode.name()
        );
        match must_fail(*mode) {
            None => assert_eq!(
                c.exit_code(),
                0,
                "{} must pass every probe\n{text}",
                mode.name()
            ),
            Some(probe) => {
                assert_eq!(c.exit_code(), 1, "{} must fail\n{text}", mode.name());
                assert!(
                    failed(c).iter().any(|p| p == probe),
                    "{} must fail {probe}; failed {:?}\n{text}",
                    mode.name(),
                    failed(c)
                );
            }
        }
    }
    println!("{text}");
}

/// Certifications in flight at once in the stability test: enough to load the
/// machine (each holds 16 barrier connections and 2 s slow requests), bounded
/// so that a starved 2-core machine still gets each probe its window.
const AT_ONCE: usize = 20;

/// The verdict of every probe, with its summary and evidence when it differs.
fn differences(mode: &str, seed: u64, reference: &Certification, c: &Certification) -> String {
    let mut out = Vec::new();
    for (p, r) in c.probes.iter().zip(&reference.probes) {
        if p.verdict == r.verdict {
            continue;
        }
        let evidence = |x: &lostreply_certify::report::ProbeResult| {
            x.evidence
                .iter()
                .map(|e| format!("      | {}", lostreply_certify::write::evidence_line(e)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        out.push(format!(
            "{mode}: probe {} is {} on seed {seed} but {} on seed 1\n  seed {seed}: {}\n{}\n  seed 1: {}\n{}",
            p.name,
            p.verdict.name(),
            r.verdict.name(),
            p.summary,
            evidence(p),
            r.summary,
            evidence(r),
        ));
    }
    out.join("\n")
}

/// Every mode, 20 seeds, [`AT_ONCE`] certifications at a time: the verdicts never change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_runs_give_the_same_verdicts() {
    use futures::StreamExt as _;
    let jobs: Vec<(IdempotencyMode, u64)> = IdempotencyMode::ALL
        .iter()
        .flat_map(|&mode| (1..=20u64).map(move |seed| (mode, seed)))
        .collect();
    let mut runs: Vec<(IdempotencyMode, u64, Certification)> = futures::stream::iter(
        jobs.into_iter()
            .map(|(mode, seed)| async move { (mode, seed, run(mode, seed).await) }),
    )
    .buffer_unordered(AT_ONCE)
    .collect()
    .await;
    runs.sort_by_key(|(mode, seed, _)| (mode.name(), *seed));
    let mut first: BTreeMap<&str, &Certification> = BTreeMap::new();
    let mut problems = Vec::new();
    for (mode, seed, c) in &runs {
        let reference = *first.entry(mode.name()).or_insert(c);
        if verdicts(c) != verdicts(reference) {
            problems.push(differences(mode.name(), *seed, reference, c));
        }
        if let Some(probe) = must_fail(*mode) {
            if !failed(c).iter().any(|p| p == probe) {
                problems.push(format!("{} seed {seed} must fail {probe}", mode.name()));
            }
        } else if c.exit_code() != 0 {
            problems.push(format!(
                "{} seed {seed}: exit {}, failed {:?}",
                mode.name(),
                c.exit_code(),
                failed(c)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

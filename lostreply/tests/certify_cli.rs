//! `lostreply certify` end to end: exit codes, located contract errors, the
//! simulator worked example, and `lostreply serve` with the shipped contract.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn certify(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .arg("certify")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repo())
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn simulator_stripe_passes_every_probe_and_writes_reports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_s = dir.path().display().to_string();
    let (code, out, err) = certify(
        &[
            "--simulator",
            "stripe",
            "--seed",
            "5",
            "--report-dir",
            &dir_s,
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("13 passed, 0 failed"), "{out}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("certify.json")).expect("json written"),
    )
    .expect("json parses");
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["probes"].as_array().map(Vec::len), Some(13));
    let xml = std::fs::read_to_string(dir.path().join("certify.xml")).expect("junit written");
    assert_eq!(xml.matches("<testcase").count(), 13, "{xml}");
    assert!(dir.path().join("certify.md").exists());
    let html = std::fs::read_to_string(dir.path().join("certify.html")).expect("html written");
    assert_eq!(
        html.matches("<tr class=\"probe pass\"").count(),
        13,
        "{html}"
    );
    assert!(
        html.contains("lostreply certify --simulator stripe --seed 5"),
        "{html}"
    );
}

#[test]
fn simulator_racy_fails_naming_the_probe() {
    let (code, out, err) = certify(&["--simulator", "racy", "--seed", "5"], &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    let line = out
        .lines()
        .find(|l| l.contains("concurrent_duplicates"))
        .unwrap_or_default();
    assert!(line.starts_with("HARD"), "{out}");
    assert!(
        out.contains("reproduce: lostreply certify --simulator racy --seed 5"),
        "{out}"
    );
}

#[test]
fn bad_usage_and_bad_contracts_exit_2_with_located_errors() {
    let (code, _, err) = certify(&["--simulator", "pirate"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown mode"), "{err}");
    let (code, _, err) = certify(&["--simulator", "stripe", "--only", "nope"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown probe"), "{err}");
    let (code, _, _) = certify(&[], &[]);
    assert_eq!(code, 2);

    let dir = tempfile::tempdir().expect("tempdir");
    let shipped = std::fs::read_to_string(repo().join("certify/contracts/simulator-stripe.yaml"))
        .expect("shipped contract");
    let cases = [
        (
            "mismatch_status: [400]",
            "mismatch_status: [700]",
            "not an HTTP status",
        ),
        ("  syntax: token", "  syntax: bearer", "key.syntax is token"),
        ("  vary: amount", "  vary: colour", "no top-level field"),
        ("  timeout: 5s", "  timeout: 5", "duration"),
        (
            "  rate_per_s: 500",
            "  rate_per_s: 500\n  surprise: 1",
            "unknown field",
        ),
    ];
    for (from, to, expected) in cases {
        let path = dir.path().join("vendor.yaml");
        std::fs::write(&path, shipped.replace(from, to)).expect("write");
        let p = path.display().to_string();
        let (code, _, err) = certify(&["--contract", &p], &[]);
        assert_eq!(code, 2, "{to}: {err}");
        let line = shipped
            .lines()
            .position(|l| l.contains(from.lines().next().unwrap_or(from).trim()))
            .map_or(0, |i| i + 1);
        assert!(err.contains(expected), "{to}: {err}");
        assert!(err.starts_with(&format!("{p}:")), "{to}: {err}");
        if from.contains('\n') || to.contains('\n') {
            continue;
        }
        assert!(
            err.contains(&format!("{p}:{line}:")),
            "{to}: expected line {line}: {err}"
        );
    }
    // A base URL outside the allowlist is refused before any request.
    let path = dir.path().join("vendor.yaml");
    std::fs::write(&path, &shipped).expect("write");
    let p = path.display().to_string();
    let (code, _, err) = certify(
        &["--contract", &p],
        &[("LOSTREPLY_CERTIFY_BASE_URL", "http://198.51.100.7:80")],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not in target.allowed_hosts"), "{err}");
}

#[test]
fn unreachable_endpoint_exits_3() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}");
    let (code, out, err) = certify(
        &[
            "--contract",
            "certify/contracts/simulator-stripe.yaml",
            "--only",
            "baseline",
        ],
        &[("LOSTREPLY_CERTIFY_BASE_URL", &url)],
    );
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(out.contains("ERROR baseline"), "{out}");
}

#[test]
fn serve_with_the_shipped_contract_gets_the_same_verdicts() {
    for (mode, expected_code, failing) in [
        ("stripe", 0, None),
        ("ietf", 0, None),
        ("global_scope", 1, Some("cross_tenant")),
    ] {
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--idempotency",
                mode,
                "--scenario",
                "certify/contracts/simulator.scenario.yaml",
            ])
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("banner");
        let banner: serde_json::Value = serde_json::from_str(&first).expect("banner is JSON");
        let url = banner["base_url"].as_str().expect("base_url").to_owned();
        let contract = if mode == "ietf" {
            "certify/contracts/simulator-ietf.yaml"
        } else {
            "certify/contracts/simulator-stripe.yaml"
        };
        // stripe is certified twice against the same `serve`: the contract's
        // `readback.reset` restores the `nth: 1` rejection before each run.
        let seeds: &[&str] = if mode == "stripe" {
            &["9", "10"]
        } else {
            &["9"]
        };
        let runs: Vec<_> = seeds
            .iter()
            .map(|seed| {
                certify(
                    &["--contract", contract, "--seed", seed],
                    &[("LOSTREPLY_CERTIFY_BASE_URL", &url)],
                )
            })
            .collect();
        let _ = child.kill();
        let _ = child.wait();
        for (seed, (code, out, err)) in seeds.iter().zip(&runs) {
            assert_eq!(
                *code, expected_code,
                "{mode}, certification with seed {seed}: {out}\n{err}"
            );
            if let Some(probe) = failing {
                assert!(
                    out.lines()
                        .any(|l| l.contains(probe)
                            && (l.starts_with("FAIL") || l.starts_with("HARD"))),
                    "{mode}: {out}"
                );
            }
        }
    }
}

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
    assert!(out.contains("14 passed, 0 failed"), "{out}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("certify.json")).expect("json written"),
    )
    .expect("json parses");
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["probes"].as_array().map(Vec::len), Some(14));
    let xml = std::fs::read_to_string(dir.path().join("certify.xml")).expect("junit written");
    assert_eq!(xml.matches("<testcase").count(), 14, "{xml}");
    assert!(dir.path().join("certify.md").exists());
    let html = std::fs::read_to_string(dir.path().join("certify.html")).expect("html written");
    assert_eq!(
        html.matches("<tr class=\"probe pass\"").count(),
        14,
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
    assert!(err.contains("invalid value 'pirate'"), "{err}");
    let (code, _, err) = certify(&["--simulator", "stripe", "--only", "nope"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid value 'nope'"), "{err}");
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
        (
            "  syntax: token",
            "  syntax: bearer",
            "expected one of token, sf_string, body_field",
        ),
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
    // A missing field is located at the mapping that lacks it, not its last key.
    std::fs::write(&path, shipped.replace("  retention: 24h\n", "")).expect("write");
    let (code, _, err) = certify(&["--contract", &p], &[]);
    assert_eq!(code, 2, "{err}");
    let line = shipped
        .lines()
        .position(|l| l == "declares:")
        .map_or(0, |i| i + 1);
    assert!(
        err.contains(&format!("{p}:{line}:1: missing field `retention`")),
        "{err}"
    );
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
    const GENERIC: &str = "certify/contracts/simulator.scenario.yaml";
    const STRIPE_WIRE: &str = "certify/contracts/simulator-stripe-profile.scenario.yaml";
    for (mode, scenario, contract, expected_code, failing) in [
        (
            "stripe",
            GENERIC,
            "certify/contracts/simulator-stripe.yaml",
            0,
            None,
        ),
        (
            "ietf",
            GENERIC,
            "certify/contracts/simulator-ietf.yaml",
            0,
            None,
        ),
        (
            "global_scope",
            GENERIC,
            "certify/contracts/simulator-stripe.yaml",
            1,
            Some("cross_tenant"),
        ),
        (
            "stripe",
            STRIPE_WIRE,
            "certify/contracts/simulator-stripe-profile.yaml",
            0,
            None,
        ),
    ] {
        let mut child = Command::new(BIN)
            .args(["serve", "--idempotency", mode, "--scenario", scenario])
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

// Stripe's wire: `--simulator MODE --profile stripe`.

/// Certifies `--simulator MODE` with `extra` arguments and gives the exit
/// code, the terminal text and the JSON report.
fn certify_json(mode: &str, extra: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_s = dir.path().display().to_string();
    let mut args = vec![
        "--simulator",
        mode,
        "--report-dir",
        &dir_s,
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = certify(&args, &[]);
    let text = std::fs::read_to_string(dir.path().join("certify.json"))
        .unwrap_or_else(|e| panic!("{mode} {extra:?}: no JSON report ({e}): {out}\n{err}"));
    let json = serde_json::from_str(&text).expect("the report is JSON");
    (code, out, json)
}

/// Each probe's verdict in a JSON report, in order.
fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["probes"]
        .as_array()
        .map(|probes| {
            probes
                .iter()
                .map(|p| {
                    let text = |field: &str| p[field].as_str().unwrap_or_default().to_owned();
                    (text("name"), text("verdict"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn simulator_stripe_on_stripes_wire_passes_every_probe() {
    let (code, out, json) = certify_json("stripe", &["--profile", "stripe", "--seed", "5"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("14 passed, 0 failed"), "{out}");
    assert_eq!(
        json["contract_source"], "certify/contracts/simulator-stripe-profile.yaml",
        "{out}"
    );
    assert_eq!(
        json["reproduce"],
        "lostreply certify --simulator stripe --profile stripe --seed 5"
    );
    let create = &json["probes"][0]["evidence"][0];
    let request = create["request"].as_str().unwrap_or_default();
    assert!(request.starts_with("POST /v1/customers name="), "{create}");
    assert!(
        create["body"]
            .as_str()
            .is_some_and(|b| b.contains("\"object\":\"customer\"")),
        "{create}"
    );
}

#[test]
fn known_bad_modes_fail_the_same_probes_on_both_wires() {
    let cases = [
        ("fingerprint_in_key", "key_reuse_other_args"),
        ("global_scope", "cross_tenant"),
        ("racy", "concurrent_duplicates"),
    ];
    std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(mode, own)| {
                let generic = scope.spawn(move || certify_json(mode, &["--seed", "6"]));
                let stripe = scope
                    .spawn(move || certify_json(mode, &["--profile", "stripe", "--seed", "6"]));
                (mode, own, generic, stripe)
            })
            .collect();
        for (mode, own, generic, stripe) in runs {
            let (g_code, g_out, g_json) = generic.join().expect("the generic run");
            let (s_code, s_out, s_json) = stripe.join().expect("the Stripe-wire run");
            assert_eq!((g_code, s_code), (1, 1), "{mode}\n{g_out}\n{s_out}");
            assert_eq!(
                verdicts(&g_json),
                verdicts(&s_json),
                "{mode}: the wires disagree\n{g_out}\n{s_out}"
            );
            let own_line = s_out.lines().find(|l| l.contains(own)).unwrap_or_default();
            assert!(
                own_line.starts_with("FAIL") || own_line.starts_with("HARD"),
                "{mode} must fail {own} on Stripe's wire: {s_out}"
            );
        }
    });
}

#[test]
fn profiles_without_a_worked_example_exit_2() {
    let (code, _, err) = certify(&["--simulator", "stripe", "--profile", "nosuch"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("generic, stripe, openai, anthropic"), "{err}");
    for profile in ["openai", "anthropic", "profiles/stripe.yaml"] {
        let (code, out, err) = certify(&["--simulator", "stripe", "--profile", profile], &[]);
        assert_eq!(code, 2, "{profile}: {out}\n{err}");
        assert!(
            err.contains(&format!(
                "--profile {profile} is not supported with --simulator (one of generic, stripe)"
            )),
            "{profile}: {err}"
        );
    }
    let (code, _, err) = certify(
        &[
            "--contract",
            "certify/contracts/simulator-stripe-profile.yaml",
            "--profile",
            "stripe",
        ],
        &[],
    );
    assert_eq!(code, 2, "--profile needs --simulator: {err}");
}

// MCP servers: `--mcp-simulator`, `--mcp URL`, `kind: mcp` contracts.

/// A fake MCP server in this process (the binary certifies it over loopback).
async fn mcp_server(
    defects: &[lostreply_simulator::mcp::Defect],
) -> lostreply_simulator::Simulator {
    let set = defects.iter().copied().collect();
    lostreply_certify::mcp::simulator::start(&set, 1)
        .await
        .expect("the fake MCP server starts")
}

/// Runs the binary without blocking the runtime that serves the fake server.
async fn certify_async(args: Vec<String>, env: Vec<(String, String)>) -> (i32, String, String) {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        certify(&args, &env)
    })
    .await
    .expect("the binary runs")
}

fn paid_calls(sim: &lostreply_simulator::Simulator) -> usize {
    sim.journal()
        .iter()
        .filter(|e| {
            e.rpc
                .as_ref()
                .and_then(|r| r.tool.as_deref())
                .is_some_and(|t| t.starts_with("create_"))
        })
        .count()
}

#[test]
fn mcp_simulator_passes_every_finding_and_writes_reports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_s = dir.path().display().to_string();
    let (code, out, err) = certify(
        &["--mcp-simulator", "--seed", "5", "--report-dir", &dir_s],
        &[],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("14 passed, 0 failed"), "{out}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("certify.json")).expect("json written"),
    )
    .expect("json parses");
    assert_eq!(json["probes"].as_array().map(Vec::len), Some(14));
    assert_eq!(json["probes"][0]["name"], "initialize");
    let xml = std::fs::read_to_string(dir.path().join("certify.xml")).expect("junit written");
    assert_eq!(xml.matches("<testcase").count(), 14, "{xml}");
    let html = std::fs::read_to_string(dir.path().join("certify.html")).expect("html written");
    assert!(html.contains("lostreply certify --mcp-simulator --seed 5"));
    assert!(dir.path().join("certify.md").exists());
}

#[test]
fn mcp_simulator_with_a_defect_fails_its_finding() {
    let (code, out, err) = certify(
        &[
            "--mcp-simulator",
            "--mcp-defect",
            "not_yours_distinct",
            "--seed",
            "5",
        ],
        &[],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    let line = out
        .lines()
        .find(|l| l.contains("not_yours_like_unknown"))
        .unwrap_or_default();
    assert!(line.starts_with("HARD"), "{out}");
    assert!(out.contains("13 passed"), "{out}");
    assert!(
        out.contains(
            "reproduce: lostreply certify --mcp-simulator --mcp-defect not_yours_distinct --seed 5"
        ),
        "{out}"
    );
}

#[test]
fn mcp_usage_and_contract_errors_exit_2() {
    for (args, expected) in [
        (vec!["--mcp-defect", "key_in_arguments"], "--mcp-simulator"),
        (
            vec!["--mcp-simulator", "--mcp-defect", "pirate"],
            "invalid value 'pirate'",
        ),
        (
            vec!["--mcp", "ftp://example.com/mcp"],
            "expected http://host:port/path",
        ),
        (
            vec!["--mcp", "http://127.0.0.1:1/mcp", "--contract", "x.yaml"],
            "cannot be used with",
        ),
        (
            vec!["--mcp-simulator", "--simulator", "stripe"],
            "cannot be used with",
        ),
        (vec!["--mcp-simulator", "--only", "initialize"], "--only"),
        (
            vec![
                "--mcp-simulator",
                "--contract",
                "certify/contracts/simulator-stripe.yaml",
            ],
            "kind: mcp",
        ),
    ] {
        let (code, out, err) = certify(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {out}\n{err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let shipped = std::fs::read_to_string(repo().join("certify/contracts/simulator-mcp.yaml"))
        .expect("shipped contract");
    let cases = [
        (
            "  tool: create_ticket",
            "  tool: create ticket",
            "not a tool name",
        ),
        ("  budget: 40", "  budget: 0", "budget from 1"),
        (
            "  id_at: /operation_id",
            "  id_at: operation_id",
            "JSON pointer",
        ),
        ("  timeout: 5s", "  timeout: 5", "duration"),
        (
            "  items_at: /operations",
            "  items_at: /operations\n  surprise: 1",
            "unknown field",
        ),
        (
            "  get: get_operation",
            "  get: create_ticket",
            "cannot be a retrieval tool",
        ),
    ];
    for (from, to, expected) in cases {
        let path = dir.path().join("mcp.yaml");
        std::fs::write(&path, shipped.replace(from, to)).expect("write");
        let p = path.display().to_string();
        let (code, _, err) = certify(&["--contract", &p], &[]);
        assert_eq!(code, 2, "{to}: {err}");
        assert!(err.contains(expected), "{to}: {err}");
        assert!(err.starts_with(&format!("{p}:")), "{to}: {err}");
        if to.contains('\n') || expected == "cannot be a retrieval tool" {
            continue;
        }
        let line = shipped
            .lines()
            .position(|l| l.contains(from.trim()))
            .map_or(0, |i| i + 1);
        assert!(
            err.contains(&format!("{p}:{line}:")),
            "{to}: expected line {line}: {err}"
        );
    }
    // A URL outside the allowlist is refused before any request.
    let (code, _, err) = certify(
        &["--contract", "certify/contracts/simulator-mcp.yaml"],
        &[("LOSTREPLY_CERTIFY_MCP_URL", "http://198.51.100.7:80/mcp")],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not in target.allowed_hosts"), "{err}");
}

#[test]
fn certify_help_documents_mcp() {
    let out = Command::new(BIN)
        .args(["certify", "--help"])
        .output()
        .expect("the binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--mcp <URL>",
        "--mcp-simulator",
        "--mcp-defect",
        "--ca-cert <FILE>",
        "MCP servers",
        "TLS failure",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let findings = lostreply_certify::mcp::names();
    assert!(
        text.contains(&format!("Findings ({}):", findings.len())),
        "{text}"
    );
    for name in findings {
        assert!(text.contains(name), "finding {name}: {text}");
    }
    let defects = lostreply_simulator::mcp::Defect::ALL;
    assert!(
        text.contains(&format!("Defects ({}):", defects.len())),
        "{text}"
    );
    for defect in defects {
        assert!(
            text.contains(defect.name()),
            "defect {}: {text}",
            defect.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_ca_cert_passes_and_without_it_exits_3_naming_the_reason() {
    use super::tls_server::{Ca, TlsProxy, Validity};
    use lostreply_certify::simulator::{self, Wire};
    let ca = Ca::new("lostreply test CA");
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_file = ca.write_pem(dir.path()).display().to_string();
    let sim = simulator::start(
        Wire::Generic,
        lostreply_simulator::IdempotencyMode::Stripe,
        1,
    )
    .await
    .expect("simulator starts");
    let cert = ca.server_cert(&["127.0.0.1"], Validity::Current);
    let proxy = TlsProxy::start(cert, sim.local_addr()).await;
    let env = vec![("LOSTREPLY_CERTIFY_BASE_URL".to_owned(), proxy.origin())];
    let contract = "certify/contracts/simulator-stripe.yaml";
    let args = |extra: &[&str]| -> Vec<String> {
        ["--contract", contract]
            .iter()
            .chain(extra)
            .map(|a| (*a).to_owned())
            .collect()
    };
    let (code, out, err) =
        certify_async(args(&["--ca-cert", &ca_file, "--seed", "5"]), env.clone()).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("14 passed, 0 failed"), "{out}");
    let (code, out, err) =
        certify_async(args(&["--only", "baseline", "--seed", "6"]), env.clone()).await;
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(out.contains("ERROR baseline"), "{out}");
    assert!(
        out.contains(&format!(
            "TLS with {}: unknown issuer: the certificate chains to none of the system's roots",
            proxy.host()
        )),
        "{out}"
    );
    // Another CA's file replaces the system's roots, and is named as what is trusted.
    let other_dir = tempfile::tempdir().expect("tempdir");
    let other = Ca::new("another CA").write_pem(other_dir.path());
    let other = other.display().to_string();
    let (code, out, err) = certify_async(
        args(&["--only", "baseline", "--seed", "7", "--ca-cert", &other]),
        env,
    )
    .await;
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(
        out.contains(&format!(
            "TLS with {}: unknown issuer: the certificate chains to none of the CAs of --ca-cert {other}",
            proxy.host()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "reproduce: lostreply certify --contract {contract} --ca-cert {other}"
        )),
        "{out}"
    );
    sim.shutdown().await;
}

#[test]
fn no_trusted_roots_for_an_https_target_exits_3() {
    // The system's store is read from these when set: pointed at nothing, it
    // holds no root, and certification cannot start (nothing is sent).
    let dir = tempfile::tempdir().expect("tempdir");
    let nowhere = dir.path().join("none").display().to_string();
    let (code, out, err) = certify(
        &["--mcp", "https://127.0.0.1:1/mcp"],
        &[("SSL_CERT_FILE", &nowhere), ("SSL_CERT_DIR", &nowhere)],
    );
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(
        err.contains("TLS with 127.0.0.1:1: no trusted roots on this system"),
        "{err}"
    );
}

#[test]
fn an_unusable_ca_cert_file_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.pem").display().to_string();
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello\n").expect("written");
    let not_pem = not_pem.display().to_string();
    for (file, why) in [
        (&missing, "cannot read it"),
        (&not_pem, "no PEM certificate in the file"),
    ] {
        let (code, _, err) = certify(&["--mcp-simulator", "--ca-cert", file], &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("--ca-cert {file}: {why}")), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_url_certifies_a_live_server_without_a_paid_call() {
    let sim = mcp_server(&[]).await;
    let url = sim.mcp_url().expect("mcp url");
    let env = vec![
        (
            "LOSTREPLY_MCP_CREDENTIAL".to_owned(),
            "sk_test_a".to_owned(),
        ),
        (
            "LOSTREPLY_MCP_SECOND_CREDENTIAL".to_owned(),
            "sk_test_b".to_owned(),
        ),
    ];
    let (code, out, err) = certify_async(
        vec!["--mcp".into(), url.clone(), "--seed".into(), "3".into()],
        env.clone(),
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(paid_calls(&sim), 0, "--mcp never calls a paid tool");
    assert!(out.contains("PASS  id_in_every_result"), "{out}");
    // Nothing to retrieve on a fresh server, no paid call allowed: said so.
    assert!(out.contains("skip  retrieve_matches_original"), "{out}");
    assert!(out.contains("skip  expired_like_unknown"), "{out}");
    assert!(!out.contains("sk_test_"), "{out}");

    // Once the tenant has an operation (made here, as its agent would), --mcp
    // retrieves the oldest listed id and asks the second tenant about it.
    {
        use lostreply_certify::mcp::contract::{quick, PaidCall};
        use lostreply_certify::mcp::session::{Session, Wire};
        let mut contract = quick(&url, &|_| None).expect("contract");
        contract.paid = Some(PaidCall {
            tool: "create_ticket".to_owned(),
            arguments: serde_json::Map::new(),
        });
        let client = lostreply_certify::client::Client::new(
            &contract.origin,
            std::time::Duration::from_secs(5),
            1 << 20,
            10,
            1000,
        )
        .expect("client");
        let wire = Wire::new(&contract, client);
        let mut agent = Session::new(&wire, Some("sk_test_a".to_owned()));
        let (init, _) = agent.initialize("agent").await;
        assert_eq!(init.expect("initialize").status, 200);
        let args = serde_json::Map::from_iter([("title".to_owned(), serde_json::json!("agent's"))]);
        let (made, _) = agent
            .tool("agent's call", "create_ticket", &args, None)
            .await;
        assert!(!made.expect("the call answers").is_tool_error());
    }
    let (code, out, err) =
        certify_async(vec!["--mcp".into(), url, "--seed".into(), "3".into()], env).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(paid_calls(&sim), 1, "only the agent's own call");
    // The original result is unknown without a paid call: nothing compared, said so.
    assert!(out.contains("skip  retrieve_matches_original"), "{out}");
    assert!(out.contains("not compared"), "{out}");
    assert!(out.contains("PASS  list_is_per_tenant"), "{out}");
    assert!(out.contains("PASS  not_yours_like_unknown"), "{out}");
    assert!(out.contains("PASS  empty_list_is_normal"), "{out}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_url_without_credentials_reports_retrieval_unreachable() {
    let sim = mcp_server(&[]).await;
    let url = sim.mcp_url().expect("mcp url");
    let (code, out, err) = certify_async(vec!["--mcp".into(), url], Vec::new()).await;
    // The fake server refuses a request without a bearer credential: initialize fails.
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("FAIL  initialize"), "{out}");
    assert!(out.contains("ERROR retrieval_reachable"), "{out}");
    sim.shutdown().await;
}

#[test]
fn mcp_url_unreachable_exits_3() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, out, err) = certify(&["--mcp", &url], &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(out.contains("ERROR initialize"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_contract_file_certifies_a_served_fake_server() {
    use lostreply_simulator::mcp::Defect;
    let sim = mcp_server(&[Defect::PayloadMismatch]).await;
    let url = sim.mcp_url().expect("mcp url");
    let (code, out, err) = certify_async(
        vec![
            "--contract".into(),
            "certify/contracts/simulator-mcp.yaml".into(),
            "--budget".into(),
            "30".into(),
        ],
        vec![("LOSTREPLY_CERTIFY_MCP_URL".to_owned(), url)],
    )
    .await;
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("FAIL  retrieve_matches_original"), "{out}");
    assert!(out.contains("13 passed, 1 failed"), "{out}");
    assert_eq!(paid_calls(&sim), 1, "the contract allows one call per run");
    sim.shutdown().await;
}

#[test]
fn serve_mcp_with_the_shipped_mcp_contract_gets_the_same_verdicts() {
    // JSON answers here (the worked example's are SSE): both forms are read.
    // And errors as the official SDKs raise them: a correct server either way.
    for (errors, defect, expected_code, failing) in [
        ("spec", None, 0, None),
        ("sdk", None, 0, None),
        (
            "spec",
            Some("empty_list_is_error"),
            1,
            Some(("FAIL", "empty_list_is_normal", "13 passed, 1 failed")),
        ),
        (
            "sdk",
            Some("not_yours_echo_leaks"),
            1,
            Some((
                "HARD",
                "not_yours_like_unknown",
                "13 passed, 0 failed, 1 hard",
            )),
        ),
    ] {
        let mut args = vec![
            "serve",
            "--mcp",
            "--mcp-answer",
            "json",
            "--mcp-errors",
            errors,
        ];
        if let Some(d) = defect {
            args.extend(["--mcp-defect", d]);
        }
        let mut child = Command::new(BIN)
            .args(&args)
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
        let url = banner["mcp_url"].as_str().expect("mcp_url").to_owned();
        let dir = tempfile::tempdir().expect("tempdir");
        let dir_s = dir.path().display().to_string();
        let (code, out, err) = certify(
            &[
                "--contract",
                "certify/contracts/simulator-mcp.yaml",
                "--seed",
                "9",
                "--report-dir",
                &dir_s,
                "--format",
                "json",
            ],
            &[("LOSTREPLY_CERTIFY_MCP_URL", &url)],
        );
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(code, expected_code, "{defect:?}: {out}\n{err}");
        let json = std::fs::read_to_string(dir.path().join("certify.json")).expect("json");
        assert!(json.contains("200 application/json"), "{json}");
        if let Some((verdict, finding, summary)) = failing {
            assert!(
                out.lines()
                    .any(|l| l.contains(finding) && l.starts_with(verdict)),
                "{defect:?}: {out}"
            );
            assert!(out.contains(summary), "{out}");
        } else {
            assert!(out.contains("14 passed, 0 failed"), "{out}");
        }
    }
}

//! `lostreply run --upstream` end to end through the binary, with
//! `lostreply serve` as the real service behind the proxy (the shipped
//! simulator contract, whose clock endpoint lets `advance` steps run): every
//! bundled correct design passes the lost-response cases a proxy can stage,
//! a naive adapter is caught, the cases it cannot stage are named, a second
//! run with the same seed is refused rather than judged on the first run's
//! objects, and every bad input has its documented exit code.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

/// A process ended when the test ends (pass or panic).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn contract() -> PathBuf {
    repository().join("certify/contracts/simulator-stripe.yaml")
}

/// `lostreply serve` with the scenario the shipped contract names, and its base URL.
fn serve() -> (Running, String) {
    let scenario = repository().join("certify/contracts/simulator.scenario.yaml");
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg("--scenario")
        .arg(scenario)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("lostreply serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a banner");
    let banner: serde_json::Value = serde_json::from_str(&first).expect("a JSON banner");
    let url = banner["base_url"].as_str().expect("base_url").to_owned();
    (running, url)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("run")
        .args(args)
        .output()
        .expect("lostreply run")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The lost-response cases through the proxy with `adapter`; the JSON report.
fn cases(url: &str, adapter: &str, seed: &str, dir: &Path) -> (Output, serde_json::Value) {
    let contract = contract();
    let out = run(&[
        "--upstream",
        url,
        "--contract",
        contract.to_str().expect("utf-8"),
        "--builtin",
        adapter,
        "--seed",
        seed,
        "--tag",
        "lost-response",
        "--report-dir",
        dir.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    let text = std::fs::read_to_string(dir.join("lostreply.json")).unwrap_or_else(|e| {
        panic!(
            "{adapter}: no JSON report ({e}); exit {:?}, stderr {}",
            out.status.code(),
            stderr(&out)
        )
    });
    (out, serde_json::from_str(&text).expect("a JSON report"))
}

fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or_default().to_owned(),
                s["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn correct_designs_pass_in_front_of_a_real_service_and_a_naive_one_is_caught() {
    let (_serve, url) = serve();
    for (n, adapter) in ["reference", "eager", "lazy", "lookup-first", "try-lock"]
        .into_iter()
        .enumerate()
    {
        let dir = tempfile::tempdir().expect("a directory");
        let (out, report) = cases(&url, adapter, &format!("{}", 40 + n), dir.path());
        let verdicts = verdicts(&report);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{adapter}: {verdicts:?} {}",
            stderr(&out)
        );
        assert!(verdicts.len() >= 12, "{adapter}: {verdicts:?}");
        assert!(
            verdicts.iter().all(|(_, v)| v == "passed"),
            "{adapter}: {verdicts:?}"
        );
        let said = stderr(&out);
        for left_out in [
            "case06-webhook-around-reconcile",
            "case07-racing-reconcilers",
        ] {
            assert!(said.contains(&format!("left out {left_out}")), "{said}");
        }
        let reproduce = report["scenarios"][0]["reproduce"]
            .as_str()
            .unwrap_or_default();
        assert!(
            reproduce.starts_with("lostreply run --upstream ") && reproduce.contains(adapter),
            "{reproduce}"
        );
    }
    let dir = tempfile::tempdir().expect("a directory");
    let (out, report) = cases(&url, "naive-02-fresh-key-per-attempt", "50", dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = report.to_string();
    assert!(text.contains("at-most-once"), "{text}");
    assert!(text.contains("same-key-same-args"), "{text}");
}

#[test]
fn a_seed_whose_markers_the_service_already_holds_is_refused() {
    let (_serve, url) = serve();
    let case = repository().join("scenarios/case02-lost-after-commit.yaml");
    let contract = contract();
    let args = [
        "--upstream",
        url.as_str(),
        "--contract",
        contract.to_str().expect("utf-8"),
        "--seed",
        "7",
        case.to_str().expect("utf-8"),
    ];
    let first = run(&args);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let again = run(&args);
    assert_eq!(again.status.code(), Some(3), "{}", stderr(&again));
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(said.contains("already holds"), "{said}");
    assert!(said.contains("another --seed"), "{said}");
}

#[test]
fn bad_input_has_its_exit_code() {
    let contract = contract();
    let contract = contract.to_str().expect("utf-8");
    // Nothing listens on a port just released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let closed = format!("http://127.0.0.1:{port}");
    let out = run(&["--upstream", &closed, "--contract", contract]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("127.0.0.1:{port}")),
        "{}",
        stderr(&out)
    );

    let dir = tempfile::tempdir().expect("a directory");
    let broken = dir.path().join("contract.yaml");
    let text = std::fs::read_to_string(contract).expect("the contract");
    std::fs::write(
        &broken,
        text.replace("success: [201]", "success: [two hundred]"),
    )
    .expect("written");
    let out = run(&[
        "--upstream",
        &closed,
        "--contract",
        broken.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("contract.yaml:"), "{}", stderr(&out));

    let (_serve, url) = serve();
    let webhooks = repository().join("scenarios/case06-webhook-around-reconcile.yaml");
    let out = run(&[
        "--upstream",
        &url,
        "--contract",
        contract,
        webhooks.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("left out case06-webhook-around-reconcile"));
    assert!(stderr(&out).contains("none of the selected scenarios"));

    let out = run(&["--contract", contract]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(&[
        "--upstream",
        "http://127.0.0.1:1/v1",
        "--contract",
        contract,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

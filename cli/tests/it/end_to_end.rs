//! The `lostreply` binary end to end: exit codes, messages, reports, `serve`,
//! and how process adapters that misbehave are reported.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

fn lostreply(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("lostreply runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A one-operation scenario whose create succeeds without faults.
const SIMPLE: &str = "version: 1
id: simple
title: One create, nothing lost
provider:
  idempotency: {mode: stripe}
operations:
  - {id: op-1, resource: tickets, args: {title: hello}}
steps:
  - execute: op-1
expect:
  final: {op-1: [succeeded]}
call_deadline: 2s
";

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write");
    path
}

/// A Python process adapter whose behaviour is `body` (it sees `req` and `call`).
fn python_adapter(dir: &Path, name: &str, body: &str) -> String {
    let script = format!(
        "import json, sys, time\ncall = sys.argv[1]\nreq = json.load(sys.stdin)\nop = req.get('operation_id') or req.get('operation', {{}}).get('id')\n{body}\n"
    );
    let path = write(dir, name, &script);
    format!("python3 {}", path.display())
}

#[test]
fn a_correct_run_exits_0_and_writes_every_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = write(dir.path(), "simple.yaml", SIMPLE);
    let reports = dir.path().join("out");
    let out = lostreply(&[
        "run",
        "--report-dir",
        reports.to_str().expect("utf8"),
        scenario.to_str().expect("utf8"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("1 passed"),
        "{}",
        text(&out.stdout)
    );
    for ext in ["json", "xml", "md", "html"] {
        let path = reports.join(format!("lostreply.{ext}"));
        assert!(path.is_file(), "{} missing", path.display());
    }
    let json = std::fs::read_to_string(reports.join("lostreply.json")).expect("json");
    let report = lostreply_reports::read_json(&json).expect("the JSON report reads back");
    assert_eq!(report.scenarios.len(), 1);
    assert_eq!(
        report.scenarios[0].verdict,
        lostreply_reports::model::Verdict::Passed
    );
}

#[test]
fn a_scenario_error_exits_2_naming_file_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let undeclared = write(
        dir.path(),
        "undeclared.yaml",
        &SIMPLE.replace("  - execute: op-1", "  - execute: op-9"),
    );
    let unknown_key = write(
        dir.path(),
        "unknown.yaml",
        &SIMPLE.replace("call_deadline: 2s", "call_deadline: 2s\ncolour: blue"),
    );
    for (file, position) in [(&undeclared, ":9:14:"), (&unknown_key, ":13:1:")] {
        for command in ["validate", "run"] {
            let out = lostreply(&[command, file.to_str().expect("utf8")]);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command}: {}",
                text(&out.stderr)
            );
            let err = text(&out.stderr);
            assert!(
                err.contains(&format!("{}{position}", file.display())),
                "{command}: expected {position} in {err}"
            );
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["run", "--jobs", "0"],
        vec!["run", "--builtin", "nonexistent"],
        vec!["run", "--format", "pdf"],
        vec!["run", "--tag", "no-such-tag"],
        vec!["run", "/nonexistent/path.yaml"],
        vec!["frobnicate"],
        vec!["serve", "--idempotency", "sometimes"],
        vec!["serve", "--retention", "forever"],
    ] {
        let out = lostreply(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(!text(&out.stderr).trim().is_empty(), "{args:?} says why");
    }
}

#[test]
fn a_lying_adapter_exits_1_with_the_reproduce_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = write(dir.path(), "simple.yaml", SIMPLE);
    // Claims success without ever calling the provider: invariant 2.
    let adapter = python_adapter(
        dir.path(),
        "liar.py",
        "print(json.dumps({'operation_id': op, 'outcome': 'succeeded', 'provider_ref': 'tkt_made_up', 'needs_review': False, 'evidence': 'trust me'}))",
    );
    let out = lostreply(&[
        "run",
        "--adapter",
        &adapter,
        "--seed",
        "9",
        scenario.to_str().expect("utf8"),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("invariant 2"), "{stdout}");
    assert!(stdout.contains("tkt_made_up"), "{stdout}");
    assert!(
        stdout.contains("--seed 9") && stdout.contains("liar.py") && stdout.contains("simple.yaml"),
        "reproduce command: {stdout}"
    );
}

#[test]
fn the_persistent_form_is_opted_into_and_reproduced_with_its_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = write(dir.path(), "simple.yaml", SIMPLE);
    // The liar of the test above, speaking the persistent form only.
    let script = write(
        dir.path(),
        "serve_liar.py",
        "import json, sys\nassert sys.argv[1] == 'serve'\nfor line in sys.stdin:\n    req = json.loads(line)['request']\n    op = req.get('operation_id') or req['operation']['id']\n    print(json.dumps({'operation_id': op, 'outcome': 'succeeded', 'provider_ref': 'tkt_made_up', 'needs_review': False, 'evidence': 'trust me'}), flush=True)\n",
    );
    let adapter = format!("python3 {}", script.display());
    let out = lostreply(&[
        "run",
        "--adapter",
        &adapter,
        "--persistent",
        scenario.to_str().expect("utf8"),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("invariant 2"), "{stdout}");
    assert!(
        stdout.contains("serve_liar.py' --persistent --seed 1"),
        "reproduce command: {stdout}"
    );

    // Without a process adapter there is nothing to keep up.
    let out = lostreply(&["run", "--persistent", scenario.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn adapter_errors_exit_3_and_say_which() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = write(dir.path(), "simple.yaml", SIMPLE);
    let cases = [
        (
            "exits.py",
            "sys.stderr.write('boom: database locked\\n'); sys.exit(7)",
            "exited with code 7",
            Some("boom: database locked"),
        ),
        (
            "garbage.py",
            "print('this is not json')",
            "not one JSON value",
            None,
        ),
        ("array.py", "print('[1, 2]')", "not an object", None),
        (
            "shape.py",
            "print(json.dumps({'operation_id': op, 'outcome': 'maybe'}))",
            "does not follow the protocol",
            None,
        ),
        ("sleeps.py", "time.sleep(30)", "deadline", None),
    ];
    for (name, body, expected, stderr) in cases {
        let adapter = python_adapter(dir.path(), name, body);
        let out = lostreply(&[
            "run",
            "--adapter",
            &adapter,
            scenario.to_str().expect("utf8"),
        ]);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{name}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(
            stdout.contains(expected),
            "{name}: expected {expected:?} in\n{stdout}"
        );
        if let Some(s) = stderr {
            assert!(
                stdout.contains(s),
                "{name}: the adapter's stderr is shown\n{stdout}"
            );
        }
    }
}

#[test]
fn a_missing_adapter_program_is_an_adapter_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = write(dir.path(), "simple.yaml", SIMPLE);
    let out = lostreply(&[
        "run",
        "--adapter",
        "/nonexistent/adapter --flag",
        scenario.to_str().expect("utf8"),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("cannot start"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn schema_prints_a_json_schema() {
    let out = lostreply(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(schema.get("$schema").is_some(), "{schema}");
}

#[test]
fn list_shows_the_ten_cases() {
    let out = lostreply(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    for case in 1..=10 {
        assert!(
            stdout.contains(&format!("case {case:>2}")),
            "case {case} listed:\n{stdout}"
        );
    }
}

/// An MCP scenario (tagged `mcp`: opt-in).
const MCP_SCENARIO: &str = "version: 1
id: mcp-one
title: One paid tool call
tags: [mcp]
mcp:
  client: {profile: typescript-sdk, scale: 0.001}
operations:
  - {id: op-1, tool: create_ticket, args: {title: hello}}
steps:
  - execute: op-1
";

#[test]
fn mcp_scenarios_are_opt_in_and_list_shows_them_marked() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "simple.yaml", SIMPLE);
    let mcp = write(dir.path(), "mcp.yaml", MCP_SCENARIO);
    let dir_arg = dir.path().to_str().expect("utf8");

    let out = lostreply(&["list", dir_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].contains("simple") && !lines[0].contains("left out"),
        "{stdout}"
    );
    assert!(lines[1].contains("mcp-one"), "{stdout}");
    assert!(lines[1].contains("[mcp]"), "{stdout}");
    assert!(lines[1].ends_with("(left out: --tag mcp)"), "{stdout}");
    assert!(
        text(&out.stderr).contains("--tag mcp takes them"),
        "{}",
        text(&out.stderr)
    );

    let out = lostreply(&["list", "--tag", "mcp", dir_arg]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("mcp-one") && !stdout.contains("left out"),
        "{stdout}"
    );

    // A file named by itself is taken: the user asked for it.
    let out = lostreply(&["list", mcp.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("mcp-one"));
    assert!(!text(&out.stdout).contains("left out"));

    // A directory of MCP scenarios only, without --tag mcp: nothing to run, said so.
    let only = tempfile::tempdir().expect("tempdir");
    write(only.path(), "mcp.yaml", MCP_SCENARIO);
    let out = lostreply(&["run", only.path().to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--tag mcp"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn serve_announces_itself_in_json_and_stops_on_sigterm() {
    let mut child = Command::new(BIN)
        .args(["serve", "--idempotency", "stripe", "--retention", "2h"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a first line").expect("utf8");
    let banner: serde_json::Value = serde_json::from_str(&first).expect("the first line is JSON");
    let base_url = banner["base_url"].as_str().expect("base_url").to_owned();
    let control_url = banner["control_url"]
        .as_str()
        .expect("control_url")
        .to_owned();
    assert!(base_url.starts_with("http://127.0.0.1:"), "{base_url}");
    assert_eq!(banner["credentials"][0], "sk_test_a");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = reqwest::Client::new();
        let health = client
            .get(format!("{control_url}/health"))
            .send()
            .await
            .expect("health answers");
        assert!(health.status().is_success());
        let created = client
            .post(format!("{base_url}/v1/tickets"))
            .bearer_auth("sk_test_a")
            .header("Idempotency-Key", "k1")
            .json(&serde_json::json!({"title": "by hand"}))
            .send()
            .await
            .expect("create answers");
        assert_eq!(created.status().as_u16(), 201);
    });

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = child.wait().expect("serve exits");
    assert_eq!(exit.code(), Some(0), "clean shutdown on SIGTERM");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("stopped")), "{rest:?}");
    let _ = std::io::stdout().flush();
}

#[test]
fn serve_with_mcp_announces_the_mcp_endpoint_in_its_first_line() {
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--mcp",
            "--mcp-defect",
            "result_without_id",
            "--mcp-answer",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a first line").expect("utf8");
    let banner: serde_json::Value = serde_json::from_str(&first).expect("the first line is JSON");
    let base_url = banner["base_url"].as_str().expect("base_url").to_owned();
    assert_eq!(banner["mcp_url"], format!("{base_url}/mcp"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let answer = reqwest::Client::new()
            .post(format!("{base_url}/mcp"))
            .bearer_auth("sk_test_a")
            .header("accept", "application/json, text/event-stream")
            .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}))
            .send()
            .await
            .expect("initialize answers");
        assert_eq!(answer.status().as_u16(), 200);
        assert!(answer.headers().contains_key("mcp-session-id"));
        let text = answer.text().await.expect("a body");
        assert!(text.contains("2025-06-18"), "{text}");
    });
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert_eq!(child.wait().expect("serve exits").code(), Some(0));
    let bad = Command::new(BIN)
        .args(["serve", "--mcp", "--mcp-defect", "nonsense"])
        .output()
        .expect("serve runs");
    assert_eq!(bad.status.code(), Some(2));
}

/// `--mcp --scenario F` serves F's own MCP face: its fault rules are counted
/// in the banner and strike (this file's rule refuses every `create_ticket`
/// with a 422 tool error before the commit); the flags still apply on top.
#[test]
fn serve_with_mcp_and_a_scenario_serves_the_scenarios_mcp_faults() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/mcp-shape2-rejected-by-status.yaml");
    let mut child = Command::new(BIN)
        .args(["serve", "--mcp", "--mcp-answer", "json", "--scenario"])
        .arg(&scenario)
        .args(["--read-timeout", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a first line").expect("utf8");
    let banner: serde_json::Value = serde_json::from_str(&first).expect("the first line is JSON");
    let base_url = banner["base_url"].as_str().expect("base_url").to_owned();
    let mcp_url = banner["mcp_url"].as_str().expect("mcp_url").to_owned();
    let mut said = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("utf8");
        let last = line.contains("stop with");
        said.push(line);
        if last {
            break;
        }
    }
    assert!(
        said.iter().any(|l| l.trim() == "MCP fault rules: 1"),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|l| l.trim().starts_with("read timeout: 2s")),
        "{said:?}"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (called, ledger) = rt.block_on(async {
        let http = reqwest::Client::new();
        let post = |body: serde_json::Value, session: Option<&str>| {
            let mut request = http
                .post(&mcp_url)
                .bearer_auth("sk_test_a")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-06-18")
                .json(&body);
            if let Some(session) = session {
                request = request.header("mcp-session-id", session);
            }
            request.send()
        };
        let init = post(
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
            None,
        )
        .await
        .expect("initialize answers");
        assert_eq!(init.status().as_u16(), 200);
        let session = init
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session")
            .to_owned();
        let initialized = post(
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}),
            Some(&session),
        )
        .await
        .expect("initialized answers");
        assert_eq!(initialized.status().as_u16(), 202);
        let called = post(
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create_ticket", "arguments": {"title": "Refund review", "amount": 1200}}}),
            Some(&session),
        )
        .await
        .expect("tools/call answers");
        let called: serde_json::Value = called.json().await.expect("a JSON answer");
        let ledger: serde_json::Value = http
            .get(format!("{base_url}/_lostreply/ledger"))
            .send()
            .await
            .expect("the ledger answers")
            .json()
            .await
            .expect("JSON");
        (called, ledger)
    });
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert_eq!(child.wait().expect("serve exits").code(), Some(0));
    assert_eq!(called["result"]["isError"], true, "{called}");
    assert!(called.to_string().contains("422"), "{called}");
    assert_eq!(ledger["data"], serde_json::json!([]), "{ledger}");
}

#[test]
fn serve_refuses_a_read_timeout_of_zero_or_nonsense() {
    for value in ["0s", "soon", "10m"] {
        let out = lostreply(&["serve", "--read-timeout", value]);
        assert_eq!(out.status.code(), Some(2), "{value}");
        assert!(
            text(&out.stderr).contains("--read-timeout"),
            "{value}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn serve_with_a_profile_speaks_its_wire() {
    let mut child = Command::new(BIN)
        .args(["serve", "--profile", "stripe"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a first line").expect("utf8");
    let banner: serde_json::Value = serde_json::from_str(&first).expect("the first line is JSON");
    assert_eq!(banner["profile"], "stripe");
    let base_url = banner["base_url"].as_str().expect("base_url").to_owned();
    assert!(base_url.starts_with("http://127.0.0.1:"), "{base_url}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let created = reqwest::Client::new()
            .post(format!("{base_url}/v1/customers"))
            .bearer_auth("sk_test_a")
            .header("Idempotency-Key", "k1")
            .form(&[("name", "Jenny Rosen"), ("metadata[order_id]", "6735")])
            .send()
            .await
            .expect("create answers");
        assert_eq!(created.status().as_u16(), 200);
        let replayed = created
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap_or_default().to_owned());
        let customer: serde_json::Value = created.json().await.expect("a JSON object");
        assert_eq!(customer["object"], "customer", "{customer}");
        assert!(
            customer["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("cus_")),
            "{customer}"
        );
        assert_eq!(customer["name"], "Jenny Rosen", "{customer}");
        // Keys are the profile's default: a first create is no replay.
        assert_eq!(replayed, None);
    });
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert_eq!(child.wait().expect("serve exits").code(), Some(0));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        rest.iter().any(|l| l.contains("idempotency: stripe")),
        "the profile's keys apply when --idempotency is not given: {rest:?}"
    );
}

#[test]
fn serve_with_an_unknown_profile_exits_2_naming_the_known_ones() {
    let out = lostreply(&["serve", "--profile", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("nosuch") && stderr.contains("generic, stripe, openai, anthropic"),
        "{stderr}"
    );
}

#[test]
fn certify_takes_no_profile_but_generic_and_stripe() {
    let out = lostreply(&["certify", "--simulator", "stripe", "--profile", "openai"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "certify's worked examples speak the generic API and Stripe's; --profile openai is not supported with --simulator (one of generic, stripe)"
        ),
        "{}",
        text(&out.stderr)
    );
}

/// A supervisor that reads the banner and stops the server at once must find
/// the signal handlers installed: they are in place before the first line.
#[test]
fn serve_stops_cleanly_on_sigterm_sent_right_after_its_first_line() {
    for _ in 0..5 {
        let mut child = Command::new(BIN)
            .args(["serve"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let _banner = lines.next().expect("a first line").expect("utf8");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let exit = child.wait().expect("serve exits");
        assert_eq!(exit.code(), Some(0), "clean shutdown, not death by SIGTERM");
    }
}

/// An operator's resolution that the ledger contradicts is the person's
/// word: the reference adapter applies it, passes, and the report lists the
/// contradiction as a finding (with the resolve call and the effect), in
/// JSON and in the terminal summary, and the operation in the backlog.
#[test]
fn a_resolution_against_the_ledger_passes_and_is_reported_as_a_finding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let reports = dir.path().join("out");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/extra-operator-failed-against-ledger.yaml");
    let out = lostreply(&[
        "run",
        "--format",
        "json",
        "--report-dir",
        reports.to_str().expect("utf8"),
        scenario.to_str().expect("utf8"),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("resolution-contradicts-ledger, op-1: the operator resolved failed (no provider_ref), but the provider holds tkt_"),
        "{stdout}"
    );
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(reports.join("lostreply.json")).expect("the JSON report"),
    )
    .expect("JSON");
    let scenario = &json["scenarios"][0];
    assert_eq!(scenario["verdict"], "passed");
    let findings = scenario["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["kind"], "resolution-contradicts-ledger");
    let kinds: Vec<&str> = findings[0]["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["call", "effect"]);
    let fin = &scenario["operations"][0]["final_outcome"];
    assert_eq!(
        (&fin["outcome"], &fin["needs_review"]),
        (&"failed".into(), &true.into())
    );
}

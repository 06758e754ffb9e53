//! A third-party implementation certified: express-idempotency 1.0.6 (npm)
//! with its in-memory adapter, behind the tiny Express app in
//! `tests/thirdparty/express/`, held to `tests/thirdparty/express.yaml`. Every
//! probe's verdict is asserted, on two runs against the same process, so the
//! findings (explained in docs/certify.md) are stable.
//!
//! Needs node and `npm ci --prefix certify/tests/thirdparty/express` (.ci/run
//! does both). Without them the build marks the test ignored, with the reason
//! (certify/build.rs), unless `LOSTREPLY_REQUIRE_NODE=1` (CI sets it): then it
//! runs, and their absence fails it.

pub(crate) mod node;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use lostreply_certify::verdict::Verdict;
use lostreply_certify::{certify, contract, Config};

/// How long node may take to print its base URL.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The node binary, failing the test when it or the app's packages are
/// missing: the build ignores this test when it found them missing
/// (cfg `lostreply_no_node`), unless `LOSTREPLY_REQUIRE_NODE=1`.
fn node() -> PathBuf {
    node::find_node()
        .unwrap_or_else(|why| panic!("this test needs node and express-idempotency: {why}"))
}

/// The app's process, ended when the test ends (pass or panic).
struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the app on 127.0.0.1:0 and reads its base URL from stdout's first line.
fn start(node: &Path) -> (App, String) {
    let mut child = Command::new(node)
        .arg("app.js")
        .arg("0")
        .current_dir(node::app_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node starts");
    let stdout = child.stdout.take().expect("stdout");
    let app = App(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(START_TIMEOUT)
        .expect("the app prints its base URL within 20 s");
    let url = line.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "the app's first line is its base URL, got {line:?}"
    );
    (app, url)
}

/// Every probe's verdict, as explained finding by finding in docs/certify.md.
const EXPECTED: [(&str, Verdict); 14] = [
    ("baseline", Verdict::Pass),
    ("sequential_replay", Verdict::Pass),
    ("replay_fidelity", Verdict::Pass),
    ("lost_response", Verdict::Pass),
    ("concurrent_duplicates", Verdict::Pass),
    ("key_reuse_other_args", Verdict::Pass),
    ("key_reuse_reordered_args", Verdict::Pass),
    ("in_flight", Verdict::Pass),
    // One key store for the whole app (key_scope: global): the key on another
    // route is a misuse (417), as the README's intent check says.
    ("other_endpoint", Verdict::Pass),
    // Keys are not scoped by caller: tenant 2 is replayed tenant 1's order,
    // a leak whatever the declared scope.
    ("cross_tenant", Verdict::HardFail),
    ("rejected_not_poisoned", Verdict::Pass),
    // The app has no route that fails after its commit.
    ("error_after_commit", Verdict::HardFail),
    // accepts_any: a key with spaces and a 256-byte key are keys, replayed.
    ("key_validation", Verdict::Pass),
    ("retention", Verdict::Pass),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_node,
    ignore = "needs node and express-idempotency: apt-get install nodejs npm && npm ci --prefix certify/tests/thirdparty/express"
)]
async fn express_idempotency_findings_are_stable() {
    let node = node();
    let (_app, url) = start(&node);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/thirdparty/express.yaml");
    let text = std::fs::read_to_string(&path).expect("the contract is there");
    for seed in [1u64, 2] {
        let base = url.clone();
        let contract = contract::parse(&text, "certify/tests/thirdparty/express.yaml", &move |n| {
            (n == "LOSTREPLY_CERTIFY_BASE_URL").then(|| base.clone())
        })
        .expect("the contract is valid");
        let config = Config {
            only: Vec::new(),
            budget: None,
            seed,
            reproduce: format!("(test) seed {seed}"),
        };
        let report = certify(contract, &config)
            .await
            .expect("certification runs");
        let mut terminal = Vec::new();
        lostreply_certify::write::write_terminal(&mut terminal, &report).expect("writes");
        let terminal = String::from_utf8_lossy(&terminal);
        let got: Vec<(&str, Verdict)> = report
            .probes
            .iter()
            .map(|p| (p.name.as_str(), p.verdict))
            .collect();
        assert_eq!(got, EXPECTED, "seed {seed}:\n{terminal}");
        assert_eq!(report.exit_code(), 1, "seed {seed}");
    }
}

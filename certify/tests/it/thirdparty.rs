//! What the tests certifying real third-party middlewares share: an app
//! started on 127.0.0.1:0 whose first line on stdout is its base URL, and a
//! certification run twice (two seeds, one process) whose every verdict is
//! asserted against a table, so the findings documented in docs/certify.md
//! are stable.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use lostreply_certify::verdict::Verdict;
use lostreply_certify::{certify, contract, Config};

/// How long an app may take to print its base URL.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The app's process, ended when the test ends (pass or panic).
pub struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the app and reads its base URL from stdout's first line: the app
/// prints it once its socket listens, so no poll or sleep is needed.
pub fn start(mut command: Command) -> (App, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} starts: {e}"));
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
        .expect("the app prints its base URL within 30 s");
    let url = line.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "the app's first line is its base URL, got {line:?}"
    );
    (app, url)
}

/// Certifies the app at `url` with the contract at `contract_path` (relative
/// to the crate) on seeds 1 and 2, asserting every probe's verdict and the
/// exit code each time.
pub async fn assert_findings(
    contract_path: &str,
    url: &str,
    expected: &[(&str, Verdict)],
    exit_code: i32,
) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(contract_path);
    let text = std::fs::read_to_string(&path).expect("the contract is there");
    let source = format!("certify/{contract_path}");
    for seed in [1u64, 2] {
        let base = url.to_owned();
        let contract = contract::parse(&text, &source, &move |n| {
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
        assert_eq!(got, expected, "seed {seed}:\n{terminal}");
        assert_eq!(report.exit_code(), exit_code, "seed {seed}:\n{terminal}");
    }
}

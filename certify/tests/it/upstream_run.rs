//! `lostreply run --upstream` in front of real third-party middlewares on
//! loopback (express-idempotency under node, fastapi-idempotency-key in the
//! venv): the library's lost-response scenarios, aimed at the apps' `orders`,
//! run through a proxy of their own against two adapters written from the
//! public docs and driven as processes. The Python example adapter passes
//! every one; a naive one (examples of every flaw in one script,
//! tests/upstream/naive_adapter.py) is caught by the read-back: duplicates,
//! failures with an effect, changed keys. Without node or the venv the build
//! marks each test ignored with the reason (certify/build.rs), unless
//! `LOSTREPLY_REQUIRE_NODE=1` or `LOSTREPLY_REQUIRE_THIRDPARTY_PYTHON=1`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lostreply_certify::tls::Trust;
use lostreply_certify::upstream::{self, fit, Upstream, UpstreamRun};
use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::scenario::model::Scenario;
use lostreply_reports::model::{Check, Invariant, Report, Verdict};

use crate::proxy_thirdparty::{contract_for, start_express};
use crate::thirdparty_python::start_app;

/// Library scenarios whose situations a proxy stages without a clock: lost
/// and late answers, a 500 and cut answers after the commit, a crash at the
/// commit, retries of retries, a key reused with other arguments.
const LIBRARY: [&str; 9] = [
    "case01-timeout-before-receipt.yaml",
    "case02-lost-after-commit.yaml",
    "case02-timeout-after-commit.yaml",
    "case05-key-collision-different-arguments.yaml",
    "case08-crash-after-remote-success.yaml",
    "extra-500-after-commit.yaml",
    "extra-idle-after-commit.yaml",
    "extra-retries-of-retries.yaml",
    "extra-truncated-after-commit.yaml",
];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The library's files with their operations aimed at the apps' `orders`,
/// written to `dir` and read as a user's own files are.
fn scenarios_on_orders(dir: &Path) -> Vec<Scenario> {
    LIBRARY
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(repository().join("scenarios").join(file))
                .expect("a library file");
            let path = dir.join(file);
            std::fs::write(&path, text.replace("tickets", "orders")).expect("written");
            let scenario = lostreply_harness::scenario::load(&path).expect("still valid");
            assert_eq!(
                fit::unfit(&scenario, fit::Clock::Absent),
                None,
                "{file} fits"
            );
            scenario
        })
        .collect()
}

fn python_adapter(script: &Path) -> AdapterUnderTest {
    let line = format!("python3 {}", script.display());
    AdapterUnderTest::Process(ProcessCommand::parse(&line).expect("a command line"))
}

async fn judged(url: &str, contract: &str, adapter: AdapterUnderTest, seed: u64) -> Report {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scenarios = scenarios_on_orders(dir.path());
    let target = Upstream {
        url: url.to_owned(),
        contract: contract_for(contract, url),
        trust: Trust::System,
    };
    let run = UpstreamRun {
        adapter,
        seed,
        command_prefix: "lostreply run --upstream".to_owned(),
    };
    upstream::run(&scenarios, &target, &run, |_| {})
        .await
        .expect("the upstream is reachable")
}

/// Every scenario passed; the failures are printed whole when one did not.
fn assert_all_pass(report: &Report) {
    for s in &report.scenarios {
        assert_eq!(
            s.verdict,
            Verdict::Passed,
            "{}: violations {:#?}, errors {:#?}",
            s.id,
            s.violations,
            s.errors
        );
    }
    assert_eq!(report.scenarios.len(), LIBRARY.len());
}

/// The invariants the report says were broken, over every scenario.
fn broken(report: &Report) -> BTreeSet<Invariant> {
    report
        .scenarios
        .iter()
        .flat_map(|s| &s.violations)
        .filter_map(|v| match v.check {
            Check::Invariant(invariant) => Some(invariant),
            _ => None,
        })
        .collect()
}

/// The naive adapter is caught where its flaws show: a second object for one
/// operation, a failure reported over a committed effect, keys that differ
/// between attempts; the scenarios it passes are those where no answer is
/// lost before it reads one.
fn assert_naive_caught(report: &Report) {
    let found = broken(report);
    for invariant in [
        Invariant::AtMostOnce,
        Invariant::NoFailureWithEffect,
        Invariant::SameKeySameArgs,
    ] {
        assert!(found.contains(&invariant), "{invariant:?} among {found:?}");
    }
    let violated = report
        .scenarios
        .iter()
        .filter(|s| s.verdict == Verdict::Violated)
        .count();
    assert!(
        violated >= 6,
        "{violated} of {} violated",
        report.scenarios.len()
    );
}

async fn both_adapters(url: &str, contract: &str) {
    let correct = python_adapter(&repository().join("examples/python/lostreply_adapter.py"));
    assert_all_pass(&judged(url, contract, correct, 11).await);
    let naive = python_adapter(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstream/naive_adapter.py"),
    );
    assert_naive_caught(&judged(url, contract, naive, 12).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_node,
    ignore = "needs node and express-idempotency: apt-get install nodejs npm && npm ci --prefix certify/tests/thirdparty/express"
)]
async fn the_library_in_front_of_express_idempotency() {
    let (_app, url) = start_express();
    both_adapters(&url, "tests/thirdparty/express.yaml").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_thirdparty_python,
    ignore = "needs the Python middlewares: python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt"
)]
async fn the_library_in_front_of_fastapi_idempotency_key() {
    let (_app, url) = start_app("fastapi_idempotency_key_app.py", &[]);
    both_adapters(&url, "tests/thirdparty/fastapi-idempotency-key.yaml").await;
}

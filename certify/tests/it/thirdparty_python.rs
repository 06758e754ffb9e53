//! The Python idempotency middlewares' apps, started from the venv that
//! `.ci/run` installs (certify/tests/thirdparty/python/requirements.txt).
//! Without the venv the build marks their tests ignored, with the reason
//! (certify/build.rs), unless `LOSTREPLY_REQUIRE_THIRDPARTY_PYTHON=1` (CI
//! sets it): then they run, and its absence fails them.

mod venv;

use std::process::Command;

use crate::thirdparty::{start, App};

/// Starts `script` (in certify/tests/thirdparty/python/) on 127.0.0.1:0 with
/// `args` after the port, failing the test when the venv is missing.
pub fn start_app(script: &str, args: &[&str]) -> (App, String) {
    let python = venv::find_python()
        .unwrap_or_else(|why| panic!("this test needs the Python middlewares: {why}"));
    let mut command = Command::new(python);
    command
        .arg(script)
        .arg("0")
        .args(args)
        .current_dir(venv::apps_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    start(command)
}

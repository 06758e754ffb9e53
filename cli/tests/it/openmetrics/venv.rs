//! The OpenMetrics parser's venv, as `.ci/run` installs it. Standard library
//! only: cli/build.rs includes this file as well, and ignores the OpenMetrics
//! tests when the parser is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv holding Prometheus's Python client.
pub fn venv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/metrics-venv")
}

/// The venv's Python, when it imports the parser; else why not.
pub fn parser_python() -> Result<PathBuf, String> {
    let python = venv().join("bin/python");
    let found = python.is_file()
        && Command::new(&python)
            .args(["-c", "import prometheus_client.openmetrics.parser"])
            .status()
            .is_ok_and(|s| s.success());
    if found {
        return Ok(python);
    }
    Err(format!(
        "{} with prometheus_client is not installed (python3 -m venv target/metrics-venv && target/metrics-venv/bin/pip install -r cli/tests/openmetrics/requirements.txt)",
        python.display()
    ))
}

//! The real provider SDKs (stripe-python, openai-python, anthropic-python in
//! `target/sdk-venv`; stripe-node and openai-node under
//! examples/sdk-adapters/node), found or reported absent: a test that needs
//! one skips with a visible message when it is not installed, unless
//! `LOSTREPLY_REQUIRE_SDKS=1` (which `.ci/run` sets) makes its absence a failure.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};

/// Which runtime an SDK adapter runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// The venv with the pinned Python SDKs.
    Python,
    /// Node with the pinned npm SDKs.
    Node,
}

impl Runtime {
    fn name(self) -> &'static str {
        match self {
            Runtime::Python => "python",
            Runtime::Node => "node",
        }
    }
}

pub fn adapters_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk-adapters")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ has a parent")
        .to_path_buf()
}

/// The venv's interpreter (`LOSTREPLY_SDK_PYTHON` overrides it), when the SDKs import there.
fn python() -> Result<String, String> {
    let interpreter = std::env::var_os("LOSTREPLY_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/sdk-venv/bin/python"));
    let install = "python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt";
    if !interpreter.exists() {
        return Err(format!("{} not found ({install})", interpreter.display()));
    }
    let out = std::process::Command::new(&interpreter)
        .args(["-c", "import stripe, openai, anthropic"])
        .output()
        .map_err(|e| format!("{} does not run: {e}", interpreter.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} cannot import the SDKs ({install}): {}",
            interpreter.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(interpreter.to_string_lossy().into_owned())
}

fn node() -> Result<String, String> {
    let modules = adapters_dir().join("node/node_modules");
    for package in ["stripe", "openai"] {
        if !modules.join(package).join("package.json").exists() {
            return Err(format!(
                "{} has no {package} (npm ci --prefix examples/sdk-adapters/node)",
                modules.display()
            ));
        }
    }
    Ok("node".to_owned())
}

/// The argv that runs `script` (a file under examples/sdk-adapters/<runtime>/)
/// on `runtime`; `None`, after saying why, when the SDKs are absent and not required.
pub fn argv_or_skip(runtime: Runtime, script: &str, test: &str) -> Option<Vec<String>> {
    let interpreter = match runtime {
        Runtime::Python => python(),
        Runtime::Node => node(),
    };
    match interpreter {
        Ok(interpreter) => Some(vec![
            interpreter,
            adapters_dir()
                .join(runtime.name())
                .join(script)
                .to_string_lossy()
                .into_owned(),
        ]),
        Err(why) => {
            if std::env::var("LOSTREPLY_REQUIRE_SDKS").as_deref() == Ok("1") {
                panic!(
                    "{test}: the {} SDKs are required (LOSTREPLY_REQUIRE_SDKS=1) but absent: {why}",
                    runtime.name()
                );
            }
            eprintln!(
                "SKIPPED {test}: the {} SDKs are not installed: {why}",
                runtime.name()
            );
            None
        }
    }
}

/// An SDK adapter as a process adapter.
pub fn adapter(argv: Vec<String>) -> AdapterUnderTest {
    AdapterUnderTest::Process(ProcessCommand::from_argv(argv).expect("an adapter command"))
}

//! The two real MCP client libraries, as `.ci/run` installs them: the Python
//! SDK (`mcp` 2.x, in the venv `target/mcp-venv`) and the TypeScript SDK
//! (`@modelcontextprotocol/sdk` 1.x, under `examples/mcp-clients/node`). A test
//! that needs one skips with a message when it is absent, and fails instead
//! when `LOSTREPLY_REQUIRE_MCP_CLIENTS=1` (as in CI).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

/// Longest a driver or adapter process may run: a bound, never a measurement.
const PROCESS_BOUND: Duration = Duration::from_secs(60);

/// A real MCP client library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    /// `mcp` on PyPI, 2.x.
    Python,
    /// `@modelcontextprotocol/sdk` on npm, 1.x.
    Node,
}

impl Sdk {
    pub fn name(self) -> &'static str {
        match self {
            Sdk::Python => "python mcp",
            Sdk::Node => "typescript @modelcontextprotocol/sdk",
        }
    }
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ has a parent")
        .to_path_buf()
}

pub fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-clients")
}

/// The venv's interpreter (`LOSTREPLY_MCP_PYTHON` overrides it), when `mcp` is installed there.
fn python() -> Result<PathBuf, String> {
    let interpreter = std::env::var_os("LOSTREPLY_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/mcp-venv/bin/python"));
    if !interpreter.exists() {
        return Err(format!(
            "{} not found (python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt)",
            interpreter.display()
        ));
    }
    let out = std::process::Command::new(&interpreter)
        .args([
            "-c",
            "import mcp, importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output()
        .map_err(|e| format!("{} does not run: {e}", interpreter.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} cannot import mcp: {}",
            interpreter.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(interpreter)
}

fn node() -> Result<PathBuf, String> {
    let sdk = clients_dir().join("node/node_modules/@modelcontextprotocol/sdk/package.json");
    if !sdk.exists() {
        return Err(format!(
            "{} not found (npm ci --prefix examples/mcp-clients/node)",
            sdk.display()
        ));
    }
    let out = std::process::Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("node does not run: {e}"))?;
    if !out.status.success() {
        return Err("node --version failed".to_owned());
    }
    Ok(PathBuf::from("node"))
}

/// The argv that runs `script` (a path under examples/mcp-clients/<sdk>/) with
/// `sdk`'s interpreter; `None` (after saying why) when the library is absent
/// and not required.
pub fn command_or_skip(sdk: Sdk, script: &str, test: &str) -> Option<Vec<String>> {
    let (interpreter, dir) = match sdk {
        Sdk::Python => (python(), "python"),
        Sdk::Node => (node(), "node"),
    };
    match interpreter {
        Ok(interpreter) => Some(vec![
            interpreter.to_string_lossy().into_owned(),
            clients_dir()
                .join(dir)
                .join(script)
                .to_string_lossy()
                .into_owned(),
        ]),
        Err(why) => {
            if std::env::var("LOSTREPLY_REQUIRE_MCP_CLIENTS").as_deref() == Ok("1") {
                panic!("{test}: the {} client is required (LOSTREPLY_REQUIRE_MCP_CLIENTS=1) but absent: {why}", sdk.name());
            }
            eprintln!(
                "SKIPPED {test}: the {} client is not installed: {why}",
                sdk.name()
            );
            None
        }
    }
}

/// Runs `argv` with `input` on stdin and returns its one JSON line, failing on anything else.
pub async fn run_json(argv: &[String], input: &Value) -> Value {
    let mut child = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{argv:?} does not start: {e}"));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(input.to_string().as_bytes())
        .await
        .expect("write stdin");
    drop(stdin);
    let out = tokio::time::timeout(PROCESS_BOUND, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{argv:?} still running after {PROCESS_BOUND:?}"))
        .expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{argv:?} exited {:?}\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{argv:?} printed no JSON ({e}):\n{stdout}\nstderr: {stderr}"))
}

//! The two real MCP client libraries, as `.ci/run` installs them: the Python
//! SDK (`mcp` 2.x, in the venv `target/mcp-venv`) and the TypeScript SDK
//! (`@modelcontextprotocol/sdk` 1.x, under `examples/mcp-clients/node`). A test
//! that needs one is ignored, with the reason, when the build finds it missing
//! (examples/build.rs), unless `LOSTREPLY_REQUIRE_MCP_CLIENTS=1` (as in CI):
//! then it runs, and a missing library fails it.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::installed;

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

/// The argv that runs `script` (a path under examples/mcp-clients/<sdk>/) with
/// `sdk`'s interpreter. A test that calls this is ignored when the build found
/// the library missing (cfgs `lostreply_no_mcp_python`, `lostreply_no_mcp_node`),
/// so a library missing here went away after the build, or the test was run
/// with `--ignored`: either way it fails.
pub fn command(sdk: Sdk, script: &str) -> Vec<String> {
    let (interpreter, dir) = match sdk {
        Sdk::Python => (installed::mcp_python(), "python"),
        Sdk::Node => (installed::mcp_node(), "node"),
    };
    let interpreter = interpreter.unwrap_or_else(|why| {
        panic!(
            "this test needs the {} MCP client library, which is not installed: {why}",
            sdk.name()
        )
    });
    vec![
        interpreter.to_string_lossy().into_owned(),
        installed::mcp_clients_dir()
            .join(dir)
            .join(script)
            .to_string_lossy()
            .into_owned(),
    ]
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

//! Whether the real SDKs and MCP client libraries are installed, as `.ci/run`
//! installs them: each interpreter found and able to import what the tests
//! use, or why not. Standard library only: examples/build.rs includes this
//! file as well, and ignores the tests whose libraries are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ has a parent")
        .to_path_buf()
}

/// The provider SDK adapters and drivers, per runtime (`python`, `node`).
pub fn sdk_adapters_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk-adapters")
}

/// The MCP client library adapters and drivers, per runtime.
pub fn mcp_clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-clients")
}

/// The venv holding the provider SDKs for Python.
pub fn sdk_venv() -> PathBuf {
    workspace_root().join("target/sdk-venv")
}

/// The venv holding the MCP client library for Python.
pub fn mcp_venv() -> PathBuf {
    workspace_root().join("target/mcp-venv")
}

/// The files `npm ci` installs that the Node SDK tests need.
pub fn sdk_node_markers() -> Vec<PathBuf> {
    let modules = sdk_adapters_dir().join("node/node_modules");
    ["stripe", "openai"]
        .map(|package| modules.join(package).join("package.json"))
        .into()
}

/// The file `npm ci` installs that the Node MCP client tests need.
pub fn mcp_node_marker() -> PathBuf {
    mcp_clients_dir().join("node/node_modules/@modelcontextprotocol/sdk/package.json")
}

/// The venv's interpreter (`LOSTREPLY_SDK_PYTHON` overrides it), when the
/// Python SDKs import there.
pub fn sdk_python() -> Result<PathBuf, String> {
    let interpreter = std::env::var_os("LOSTREPLY_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| sdk_venv().join("bin/python"));
    let install = "python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt";
    if !interpreter.exists() {
        return Err(format!("{} not found ({install})", interpreter.display()));
    }
    let out = Command::new(&interpreter)
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
    Ok(interpreter)
}

/// `node`, when it runs and the Node SDKs are installed.
pub fn sdk_node() -> Result<PathBuf, String> {
    for marker in sdk_node_markers() {
        if !marker.exists() {
            return Err(format!(
                "{} not found (npm ci --prefix examples/sdk-adapters/node)",
                marker.display()
            ));
        }
    }
    node()
}

/// The venv's interpreter (`LOSTREPLY_MCP_PYTHON` overrides it), when `mcp`
/// is installed there.
pub fn mcp_python() -> Result<PathBuf, String> {
    let interpreter = std::env::var_os("LOSTREPLY_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| mcp_venv().join("bin/python"));
    if !interpreter.exists() {
        return Err(format!(
            "{} not found (python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r examples/mcp-clients/python/requirements.txt)",
            interpreter.display()
        ));
    }
    let out = Command::new(&interpreter)
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

/// `node`, when it runs and the TypeScript MCP SDK is installed.
pub fn mcp_node() -> Result<PathBuf, String> {
    let sdk = mcp_node_marker();
    if !sdk.exists() {
        return Err(format!(
            "{} not found (npm ci --prefix examples/mcp-clients/node)",
            sdk.display()
        ));
    }
    node()
}

fn node() -> Result<PathBuf, String> {
    let out = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("node does not run: {e}"))?;
    if !out.status.success() {
        return Err("node --version failed".to_owned());
    }
    Ok(PathBuf::from("node"))
}

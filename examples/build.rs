//! Marks the tests that need the real provider SDKs or MCP client libraries
//! as ignored when the build finds them missing, so that `cargo test` lists
//! them as ignored with the reason rather than passing them unrun. One cfg per
//! library and runtime: `lostreply_no_sdk_python`, `lostreply_no_sdk_node`,
//! `lostreply_no_mcp_python`, `lostreply_no_mcp_node`. `LOSTREPLY_REQUIRE_SDKS=1`
//! and `LOSTREPLY_REQUIRE_MCP_CLIENTS=1` (CI) keep the tests running, and a
//! missing library then fails them. The cfgs are for the tests only.

use std::path::{Path, PathBuf};

#[path = "tests/it/common/installed.rs"]
mod installed;

fn main() {
    for var in [
        "LOSTREPLY_REQUIRE_SDKS",
        "LOSTREPLY_SDK_PYTHON",
        "LOSTREPLY_REQUIRE_MCP_CLIENTS",
        "LOSTREPLY_MCP_PYTHON",
        "PATH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    watch_program(Path::new("node"));

    let sdks = required("LOSTREPLY_REQUIRE_SDKS");
    let sdk_python = installed::sdk_python();
    watch_venv(&sdk_python, "LOSTREPLY_SDK_PYTHON", &installed::sdk_venv());
    mark("lostreply_no_sdk_python", sdk_python.is_err() && !sdks);
    let sdk_node = installed::sdk_node();
    let markers = installed::sdk_node_markers();
    watch_node_project(&markers, &installed::sdk_adapters_dir().join("node"));
    mark("lostreply_no_sdk_node", sdk_node.is_err() && !sdks);

    let clients = required("LOSTREPLY_REQUIRE_MCP_CLIENTS");
    let mcp_python = installed::mcp_python();
    watch_venv(&mcp_python, "LOSTREPLY_MCP_PYTHON", &installed::mcp_venv());
    mark("lostreply_no_mcp_python", mcp_python.is_err() && !clients);
    let mcp_node = installed::mcp_node();
    let marker = installed::mcp_node_marker();
    watch_node_project(&[marker], &installed::mcp_clients_dir().join("node"));
    mark("lostreply_no_mcp_node", mcp_node.is_err() && !clients);
}

fn required(switch: &str) -> bool {
    std::env::var(switch).is_ok_and(|v| v == "1")
}

fn mark(cfg: &str, missing: bool) {
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    if missing {
        println!("cargo::rustc-cfg={cfg}");
    }
}

/// A working venv is watched by its interpreter; a missing or incomplete one
/// by its directory, which `pip install` changes. A missing venv's directory
/// is made, empty (`python3 -m venv` fills an existing empty directory): the
/// only other path that would change is target/, which every build changes.
fn watch_venv(found: &Result<PathBuf, String>, override_var: &str, venv: &Path) {
    match found {
        Ok(interpreter) => watch(interpreter),
        Err(_) if std::env::var_os(override_var).is_some() => watch(Path::new(
            &std::env::var_os(override_var).unwrap_or_default(),
        )),
        Err(_) => {
            let _ = std::fs::create_dir_all(venv);
            watch(venv);
        }
    }
}

/// The files `npm ci` installs when they are there, else the project's
/// directory, where node_modules will appear.
fn watch_node_project(markers: &[PathBuf], project: &Path) {
    if markers.iter().all(|m| m.is_file()) {
        markers.iter().for_each(|m| watch(m));
    } else {
        watch(project);
    }
}

/// Watches where a program is, or would appear when installed: the file
/// itself when it is on PATH, else every directory of PATH (and /usr/bin).
fn watch_program(program: &Path) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if let Some(found) = dirs.iter().map(|d| d.join(program)).find(|p| p.is_file()) {
        watch(&found);
        return;
    }
    dirs.push(PathBuf::from("/usr/bin"));
    dirs.sort();
    dirs.dedup();
    for dir in dirs.iter().filter(|d| d.is_absolute()) {
        watch(dir);
    }
}

/// Cargo re-runs a build script whose watched path is missing on every build
/// (rebuilding the crate each time), and scans a watched directory
/// recursively: only existing paths are watched, and no large tree.
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo::rerun-if-changed={}", path.display());
    }
}

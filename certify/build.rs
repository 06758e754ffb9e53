//! Marks the tests that need a third-party tool as ignored when the build
//! finds it missing, so that `cargo test` lists them as ignored with the
//! reason rather than passing them unrun: headless Chromium (cfg
//! `lostreply_no_browser`), node with the Express app's packages (cfg
//! `lostreply_no_node`) and with the NestJS app's (cfg `lostreply_no_nest`),
//! and the venv of the Python middlewares (cfg
//! `lostreply_no_thirdparty_python`). `LOSTREPLY_REQUIRE_BROWSER=1`,
//! `LOSTREPLY_REQUIRE_NODE=1` (both node apps) and
//! `LOSTREPLY_REQUIRE_THIRDPARTY_PYTHON=1` (CI) keep them running, and a
//! missing tool then fails them. The cfgs are for the tests only.

use std::path::{Path, PathBuf};

#[path = "../reports/tests/it/common/chromium.rs"]
mod chromium;
#[path = "tests/it/thirdparty_nest/nest.rs"]
mod nest;
#[path = "tests/it/thirdparty_express/node.rs"]
mod node;
// The tests also use where the apps live; the build only looks for the venv.
#[allow(dead_code)]
#[path = "tests/it/thirdparty_python/venv.rs"]
mod venv;

fn main() {
    for var in [
        "LOSTREPLY_REQUIRE_BROWSER",
        "LOSTREPLY_CHROMIUM",
        "LOSTREPLY_REQUIRE_NODE",
        "LOSTREPLY_NODE",
        "LOSTREPLY_REQUIRE_THIRDPARTY_PYTHON",
        "LOSTREPLY_THIRDPARTY_PYTHON",
        "PATH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }

    println!("cargo::rustc-check-cfg=cfg(lostreply_no_browser)");
    let browser = chromium::find_chromium();
    watch_program(browser.as_deref().unwrap_or(Path::new("chromium")));
    if browser.is_none() && !required("LOSTREPLY_REQUIRE_BROWSER") {
        println!("cargo::rustc-cfg=lostreply_no_browser");
    }

    println!("cargo::rustc-check-cfg=cfg(lostreply_no_node)");
    let node =
        std::env::var_os("LOSTREPLY_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    watch_program(&node);
    let marker = node::installed_marker();
    watch(if marker.is_file() {
        marker
    } else {
        node::app_dir()
    });
    if node::find_node().is_err() && !required("LOSTREPLY_REQUIRE_NODE") {
        println!("cargo::rustc-cfg=lostreply_no_node");
    }

    println!("cargo::rustc-check-cfg=cfg(lostreply_no_nest)");
    let marker = nest::installed_marker();
    watch(if marker.is_file() {
        marker
    } else {
        nest::app_dir()
    });
    if nest::find_node().is_err() && !required("LOSTREPLY_REQUIRE_NODE") {
        println!("cargo::rustc-cfg=lostreply_no_nest");
    }

    println!("cargo::rustc-check-cfg=cfg(lostreply_no_thirdparty_python)");
    let python = venv::find_python();
    watch_venv(&python);
    if python.is_err() && !required("LOSTREPLY_REQUIRE_THIRDPARTY_PYTHON") {
        println!("cargo::rustc-cfg=lostreply_no_thirdparty_python");
    }
}

/// A working venv is watched by its interpreter; a missing or incomplete one
/// by its directory, which `pip install` changes. A missing venv's directory
/// is made, empty (`python3 -m venv` fills an existing empty directory): the
/// only other path that would change is target/, which every build changes.
fn watch_venv(found: &Result<PathBuf, String>) {
    match found {
        Ok(python) => watch(python.clone()),
        Err(_) => match std::env::var_os("LOSTREPLY_THIRDPARTY_PYTHON") {
            Some(python) => watch(PathBuf::from(python)),
            None => {
                let venv = venv::venv();
                let _ = std::fs::create_dir_all(&venv);
                watch(venv);
            }
        },
    }
}

fn required(switch: &str) -> bool {
    std::env::var(switch).is_ok_and(|v| v == "1")
}

/// Watches where a program is, or would appear when installed: the file
/// itself when it exists, else every directory of PATH (and /usr/bin).
fn watch_program(program: &Path) {
    if program.components().count() > 1 {
        watch(program.to_path_buf());
        return;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if let Some(found) = dirs.iter().map(|d| d.join(program)).find(|p| p.is_file()) {
        watch(found);
        return;
    }
    dirs.push(PathBuf::from("/usr/bin"));
    dirs.sort();
    dirs.dedup();
    for dir in dirs.into_iter().filter(|d| d.is_absolute()) {
        watch(dir);
    }
}

/// Cargo re-runs a build script whose watched path is missing on every build
/// (rebuilding the crate each time), and scans a watched directory
/// recursively: only existing paths are watched, and no large tree.
fn watch(path: PathBuf) {
    if path.exists() {
        println!("cargo::rerun-if-changed={}", path.display());
    }
}

//! Marks the tests that need headless Chromium as ignored when the build finds
//! none (cfg `lostreply_no_browser`), so that `cargo test` lists them as
//! ignored with the reason rather than passing them unrun. With
//! `LOSTREPLY_REQUIRE_BROWSER=1` (CI) it never does: the tests run, and a
//! missing browser fails them. The cfg is for the tests only.

use std::path::{Path, PathBuf};

#[path = "tests/it/common/chromium.rs"]
mod chromium;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(lostreply_no_browser)");
    for var in ["LOSTREPLY_REQUIRE_BROWSER", "LOSTREPLY_CHROMIUM", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let found = chromium::find_chromium();
    // Watched paths must exist (cargo re-runs a script whose watched path is
    // missing on every build) and are scanned recursively: the browser once
    // found, else the directories an installed one would appear in.
    match &found {
        Some(path) if path.exists() => watch(path),
        Some(_) => {}
        None => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
            dirs.push(PathBuf::from("/usr/bin"));
            dirs.sort();
            dirs.dedup();
            for dir in dirs.iter().filter(|d| d.is_absolute() && d.is_dir()) {
                watch(dir);
            }
        }
    }
    let required = std::env::var("LOSTREPLY_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    if found.is_none() && !required {
        println!("cargo::rustc-cfg=lostreply_no_browser");
    }
}

fn watch(path: &Path) {
    println!("cargo::rerun-if-changed={}", path.display());
}

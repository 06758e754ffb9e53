//! Marks the tests that need the OpenMetrics parser (Prometheus's Python
//! client, in target/metrics-venv) as ignored when the build finds it missing
//! (cfg `lostreply_no_openmetrics`), so that `cargo test` lists them as
//! ignored with the reason rather than passing them unrun. With
//! `LOSTREPLY_REQUIRE_OPENMETRICS=1` (CI) it never does: the tests run, and a
//! missing parser fails them. The cfg is for the tests only.

#[path = "tests/it/openmetrics/venv.rs"]
mod venv;

fn main() {
    println!("cargo::rerun-if-env-changed=LOSTREPLY_REQUIRE_OPENMETRICS");
    println!("cargo::rustc-check-cfg=cfg(lostreply_no_openmetrics)");
    let found = venv::parser_python();
    // Watched paths must exist (cargo re-runs a script whose watched path is
    // missing on every build) and are scanned recursively: a working venv is
    // watched by its interpreter, an incomplete one by its directory, which
    // `pip install` changes. A missing venv's directory is made, empty
    // (`python3 -m venv` fills an existing empty directory): the only other
    // path that would change is target/, which every build changes.
    let watched = match &found {
        Ok(python) => python.clone(),
        Err(_) => {
            let venv = venv::venv();
            let _ = std::fs::create_dir_all(&venv);
            venv
        }
    };
    if watched.exists() {
        println!("cargo::rerun-if-changed={}", watched.display());
    }
    let required = std::env::var("LOSTREPLY_REQUIRE_OPENMETRICS").is_ok_and(|v| v == "1");
    if found.is_err() && !required {
        println!("cargo::rustc-cfg=lostreply_no_openmetrics");
    }
}

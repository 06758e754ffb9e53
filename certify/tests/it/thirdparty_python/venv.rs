//! The venv holding the Python idempotency middlewares the third-party tests
//! certify, as `.ci/run` installs it. Standard library only: certify/build.rs
//! includes this file as well, and ignores those tests when it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The apps in front of the middlewares, and their requirements file.
pub fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/thirdparty/python")
}

/// The venv the requirements file is installed in.
pub fn venv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/thirdparty-venv")
}

/// What installs the venv, for reasons and messages.
pub const INSTALL: &str = "python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt";

/// The venv's Python (`LOSTREPLY_THIRDPARTY_PYTHON` overrides it), when it
/// imports both middlewares and the server; else why not.
pub fn find_python() -> Result<PathBuf, String> {
    let python = std::env::var_os("LOSTREPLY_THIRDPARTY_PYTHON")
        .map_or_else(|| venv().join("bin/python"), PathBuf::from);
    if !python.is_file() {
        return Err(format!("{} not found ({INSTALL})", python.display()));
    }
    let imports = "import fastapi, uvicorn, fastapi_idempotency_key, fastapi_idempotency";
    let out = Command::new(&python)
        .args(["-c", imports])
        .output()
        .map_err(|e| format!("{} does not run: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} cannot import the middlewares ({INSTALL}): {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(python)
}

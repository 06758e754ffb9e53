//! Node and the Express app's packages, as the third-party test needs them.
//! Standard library only: certify/build.rs includes this file as well, and
//! ignores the test when they are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Express app in front of express-idempotency.
pub fn app_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/thirdparty/express")
}

/// The file `npm ci` installs that the test needs.
pub fn installed_marker() -> PathBuf {
    app_dir().join("node_modules/express-idempotency/package.json")
}

/// `LOSTREPLY_NODE`, else `node` on PATH, when it runs and the app's packages
/// are installed; else why not.
pub fn find_node() -> Result<PathBuf, &'static str> {
    let candidate =
        std::env::var_os("LOSTREPLY_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let runs = Command::new(&candidate)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        return Err("no node on PATH (set LOSTREPLY_NODE or install Debian's nodejs)");
    }
    if !installed_marker().is_file() {
        return Err("express-idempotency is not installed (run `npm ci --prefix certify/tests/thirdparty/express`)");
    }
    Ok(candidate)
}

//! Node and the NestJS app's packages, as the test certifying
//! @node-idempotency/nestjs needs them. Standard library only:
//! certify/build.rs includes this file as well, and ignores the test when
//! they are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The NestJS app in front of @node-idempotency/nestjs.
pub fn app_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/thirdparty/nest")
}

/// The file `npm ci` installs that the test needs.
pub fn installed_marker() -> PathBuf {
    app_dir().join("node_modules/@node-idempotency/nestjs/package.json")
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
        return Err("@node-idempotency/nestjs is not installed (run `npm ci --prefix certify/tests/thirdparty/nest`)");
    }
    Ok(candidate)
}

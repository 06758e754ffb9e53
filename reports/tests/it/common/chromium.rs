//! Where the HTML tests find headless Chromium. Standard library only: the
//! build scripts of reports and certify include this file as well, and ignore
//! the browser tests when it finds no browser.

use std::env;
use std::path::{Path, PathBuf};

/// `LOSTREPLY_CHROMIUM`, else /usr/bin/chromium, else `chromium` or
/// `chromium-browser` on PATH.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = env::var_os("LOSTREPLY_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    if Path::new("/usr/bin/chromium").is_file() {
        return Some(PathBuf::from("/usr/bin/chromium"));
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

//! Shared by the tests that drive process adapters: the real interpreter, and
//! whether a process is still alive.
#![allow(dead_code, clippy::unwrap_used)]

/// The real interpreter behind `python3`: a version-manager shim (pyenv)
/// would add a shell start to every call.
pub fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// True while `pid` names a live (not zombie) process.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

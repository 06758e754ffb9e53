//! Resident memory of `lostreply serve`: the release binary started as a user
//! starts it, its `VmRSS` read idle (right after its banner) and again at each
//! checkpoint of a growing load of creates (the curve: flat memory per request
//! shows as a straight line of slope ≤ the per-request target), then stopped
//! with SIGTERM as a user stops it.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::load::{run_point, LoadSpec, Path as LoadPath, PointResult};
use crate::procfs::{self, Memory};
use crate::Error;

/// Longest wait for the banner, and for the exit after SIGTERM.
const START_STOP_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest one leg of the load may take (a million creates take about 40 s
/// on 2 cores).
const LOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// Client connections for the load.
const LOAD_CONNECTIONS: usize = 16;

/// What `lostreply serve` used.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeMemory {
    /// Right after its banner.
    pub idle: Memory,
    /// After each leg of the load, in order.
    pub checkpoints: Vec<Checkpoint>,
    /// How it exited after SIGTERM (`None`: it had to be killed).
    pub exit_code: Option<i32>,
}

impl ServeMemory {
    /// Resident memory above idle per request at a checkpoint: two requests
    /// per create (the create and its retrieve).
    pub fn bytes_per_request(&self, at: &Checkpoint) -> f64 {
        at.memory.rss_kib.saturating_sub(self.idle.rss_kib) as f64 * 1024.0
            / (2 * at.creates.max(1)) as f64
    }
}

/// Resident memory after a number of creates.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Creates so far (each followed by a retrieve of what it created).
    pub creates: u64,
    /// Memory then.
    pub memory: Memory,
    /// The figures of the leg that led here (both requests of a round counted).
    pub load: PointResult,
}

/// A `lostreply serve` started as a user starts it, its banner read.
#[derive(Debug)]
pub struct Started {
    /// The process (killed if dropped).
    pub child: tokio::process::Child,
    /// Its process id, for `/proc/<pid>/status`.
    pub pid: u32,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Reads the rest of its stdout, so that a full pipe never blocks it.
    pub drain: tokio::task::JoinHandle<()>,
}

/// Starts `binary serve --port 0` with `extra` arguments and reads its
/// banner; `stderr` says where its standard error goes.
pub async fn start(binary: &Path, extra: &[String], stderr: Stdio) -> Result<Started, Error> {
    if !binary.is_file() {
        return Err(Error::Unsupported(format!(
            "no lostreply binary at {} (build it first: cargo build --release -p lostreply-cli)",
            binary.display()
        )));
    }
    let mut child = tokio::process::Command::new(binary)
        .args(["serve", "--port", "0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Error::Io(format!("starting {} serve", binary.display()), e))?;
    let pid = child
        .id()
        .ok_or_else(|| Error::Unsupported("lostreply serve exited at once".to_owned()))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::Unsupported("lostreply serve has no stdout".to_owned()))?;
    let mut lines = BufReader::new(stdout).lines();
    let banner = match tokio::time::timeout(START_STOP_TIMEOUT, lines.next_line()).await {
        Ok(Ok(Some(line))) => line,
        Ok(Ok(None)) => {
            return Err(Error::Unsupported(
                "lostreply serve closed stdout before its banner".to_owned(),
            ))
        }
        Ok(Err(e)) => return Err(Error::Io("reading the banner".to_owned(), e)),
        Err(_) => {
            return Err(Error::Unsupported(format!(
                "no banner from lostreply serve within {START_STOP_TIMEOUT:?}"
            )))
        }
    };
    let addr = banner_addr(&banner)
        .ok_or_else(|| Error::Unsupported(format!("unreadable banner: {banner}")))?;
    let drain = tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Started {
        child,
        pid,
        addr,
        drain,
    })
}

/// Starts `binary serve`, loads it up to each of `checkpoints` creates in
/// turn (cumulative, ascending) reading its memory at each, stops it.
pub async fn measure(binary: &Path, checkpoints: &[u64]) -> Result<ServeMemory, Error> {
    let Started {
        mut child,
        pid,
        addr,
        drain,
    } = start(binary, &[], Stdio::inherit()).await?;
    let idle = procfs::memory(Some(pid))
        .ok_or_else(|| Error::Unsupported(format!("cannot read /proc/{pid}/status")))?;
    let mut done = 0u64;
    let mut reached = Vec::with_capacity(checkpoints.len());
    for &target in checkpoints {
        let per_connection = target
            .saturating_sub(done)
            .div_ceil(LOAD_CONNECTIONS as u64);
        if per_connection == 0 {
            continue;
        }
        let spec = LoadSpec {
            connections: LOAD_CONNECTIONS,
            warmup: Duration::ZERO,
            measure: LOAD_TIMEOUT,
            max_rounds: Some(per_connection),
        };
        let load = run_point(addr, LoadPath::Ok, spec).await;
        done += per_connection * LOAD_CONNECTIONS as u64;
        let memory = procfs::memory(Some(pid))
            .ok_or_else(|| Error::Unsupported(format!("cannot read /proc/{pid}/status")))?;
        reached.push(Checkpoint {
            creates: done,
            memory,
            load,
        });
    }

    let exit_code = stop(&mut child, pid).await;
    drain.abort();
    Ok(ServeMemory {
        idle,
        checkpoints: reached,
        exit_code,
    })
}

/// SIGTERM through `kill(1)` (the workspace forbids the `unsafe` a direct
/// `kill(2)` needs), then a bounded wait; SIGKILL if it does not exit.
pub async fn stop(child: &mut tokio::process::Child, pid: u32) -> Option<i32> {
    let sent = tokio::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .await;
    if sent.is_ok_and(|s| s.success()) {
        if let Ok(Ok(status)) = tokio::time::timeout(START_STOP_TIMEOUT, child.wait()).await {
            return status.code();
        }
    }
    let _ = child.start_kill();
    let _ = tokio::time::timeout(START_STOP_TIMEOUT, child.wait()).await;
    None
}

/// The listening address in `lostreply serve`'s first line (`{"base_url":"http://127.0.0.1:PORT",...}`).
pub fn banner_addr(line: &str) -> Option<SocketAddr> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    value
        .get("base_url")?
        .as_str()?
        .strip_prefix("http://")?
        .trim_end_matches('/')
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_names_the_address() {
        let line = r#"{"base_url":"http://127.0.0.1:41234","control_url":"http://127.0.0.1:41234/_lostreply","credentials":["sk_test_a"]}"#;
        assert_eq!(
            banner_addr(line),
            Some(SocketAddr::from(([127, 0, 0, 1], 41234)))
        );
        assert_eq!(banner_addr("lostreply simulator listening"), None);
    }
}

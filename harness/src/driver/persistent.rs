//! The persistent form (opt-in): `<command...> serve` stays up for the scenario
//! run and answers one JSON line per request line. It must mean what the
//! per-call form means, so a process is retired exactly where a per-call
//! process would have died: a crash (SIGKILL to its group), a deadline, a bad
//! reply, an exit. The next call then starts a fresh one.
//!
//! Concurrency keeps the per-call meaning too: each process handles one call
//! at a time, and a call takes an idle process or starts one, so a `parallel`
//! step of k calls runs in k processes at once.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lostreply_reports::model::CallEnd;
use lostreply_simulator::sync::lock;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::output::{
    bad_reply, crash_signal, exited, parse_reply, past_deadline, tail_text, CallOutput,
    STDERR_KEEP_BYTES, STDOUT_LIMIT_BYTES,
};
use super::process::{kill_group, ProcessCommand};
use crate::protocol::CallName;

/// The extra argument that asks an adapter for the persistent form.
pub const SERVE_ARG: &str = "serve";

/// The most stderr a live process may have buffered between two calls; older
/// bytes are dropped (the tail is what a report shows).
const STDERR_BUFFER_BYTES: usize = 8 * STDERR_KEEP_BYTES;

/// The most 1 ms waits for the stderr reader to take what an adapter wrote
/// before its reply (it is in the pipe by then: the wait ends when it is taken).
const STDERR_SETTLE_POLLS: usize = 20;

/// How long a retired process's stderr may take to reach its end of file; a
/// grandchild could hold the pipe open.
const STDERR_DRAIN_WAIT: Duration = Duration::from_secs(1);

/// One scenario run's persistent processes: the idle ones wait here.
pub(super) struct Pool {
    command: ProcessCommand,
    state_dir: PathBuf,
    idle: Mutex<Vec<Worker>>,
}

impl Pool {
    pub(super) fn new(command: ProcessCommand, state_dir: &Path) -> Pool {
        Pool {
            command,
            state_dir: state_dir.to_path_buf(),
            idle: Mutex::new(Vec::new()),
        }
    }

    pub(super) async fn call(
        &self,
        name: CallName,
        request: &serde_json::Value,
        deadline: Duration,
        crash: Option<oneshot::Receiver<()>>,
    ) -> CallOutput {
        let idle = lock(&self.idle).pop();
        let mut worker = match idle {
            Some(worker) => worker,
            None => match Worker::start(&self.command, &self.state_dir) {
                Ok(worker) => worker,
                Err(e) => {
                    return CallOutput::failed(format!(
                        "cannot start `{} {SERVE_ARG}`: {e}",
                        self.command.display()
                    ))
                }
            },
        };
        let mut line = serde_json::json!({ "call": name.as_str(), "request": request })
            .to_string()
            .into_bytes();
        line.push(b'\n');
        let crash = crash_signal(crash);
        let ended = tokio::select! {
            ended = worker.exchange(&line) => ended,
            _ = tokio::time::sleep(deadline) => Exchanged::Deadline,
            _ = crash => Exchanged::Crashed,
        };
        let (end, reply, keep) = match ended {
            Exchanged::Line(out) => match parse_reply(&out) {
                Ok(reply) => (CallEnd::Replied, Some(reply), true),
                // The stream can no longer be trusted to be in step: retire it.
                Err(reason) => (bad_reply(&reason), None, false),
            },
            Exchanged::Exited { status, out } => {
                let (end, reply) = exited(&status, &out);
                (end, reply, false)
            }
            Exchanged::Deadline => (past_deadline(deadline), None, false),
            Exchanged::Crashed => (CallEnd::Crashed, None, false),
        };
        let stderr = if keep {
            let stderr = worker.stderr_so_far().await;
            lock(&self.idle).push(worker);
            stderr
        } else {
            worker.retire().await
        };
        CallOutput { reply, end, stderr }
    }
}

enum Exchanged {
    /// One line (newline included) came back; the process lives on.
    Line(Vec<u8>),
    /// Stdout ended: the process exited, with what it printed last.
    Exited {
        status: std::io::Result<ExitStatus>,
        out: Vec<u8>,
    },
    Deadline,
    Crashed,
}

/// One live `serve` process.
struct Worker {
    child: Child,
    leader: Option<u32>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// A second descriptor of the stderr pipe, to ask how much is still unread.
    #[cfg(unix)]
    stderr_probe: Option<std::os::fd::OwnedFd>,
}

impl Worker {
    fn start(command: &ProcessCommand, state_dir: &Path) -> std::io::Result<Worker> {
        let mut child = command.command(SERVE_ARG, state_dir).spawn()?;
        let leader = child.id();
        let (Some(stdin), Some(stdout), Some(mut stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(leader);
            return Err(std::io::Error::other("child pipes missing"));
        };
        #[cfg(unix)]
        let stderr_probe = rustix::io::dup(&stderr_pipe).ok();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        // Read stderr all the time, so that a chatty adapter never blocks on a
        // full pipe between calls; each call takes what arrived since the last.
        let stderr_reader = tokio::spawn(async move {
            let mut chunk = vec![0u8; 8192];
            while let Ok(n) = stderr_pipe.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                let mut buf = lock(&sink);
                buf.extend_from_slice(&chunk[..n]);
                let excess = buf.len().saturating_sub(STDERR_BUFFER_BYTES);
                buf.drain(..excess);
            }
        });
        Ok(Worker {
            child,
            leader,
            stdin,
            stdout: BufReader::new(stdout),
            stderr,
            stderr_reader: Some(stderr_reader),
            #[cfg(unix)]
            stderr_probe,
        })
    }

    /// Writes the request line and reads one reply line (bounded).
    async fn exchange(&mut self, line: &[u8]) -> Exchanged {
        let Worker {
            child,
            stdin,
            stdout,
            ..
        } = self;
        // Write while reading: an adapter that answers before reading all of a
        // long line must not deadlock us on a full pipe.
        let writer = async {
            // A process that died already shows as the end of its stdout below.
            let _ = stdin.write_all(line).await;
            let _ = stdin.flush().await;
        };
        let reader = async {
            let mut out = Vec::new();
            let _ = (&mut *stdout)
                .take(STDOUT_LIMIT_BYTES as u64 + 1)
                .read_until(b'\n', &mut out)
                .await;
            out
        };
        let ((), out) = tokio::join!(writer, reader);
        if out.last() == Some(&b'\n') || out.len() > STDOUT_LIMIT_BYTES {
            return Exchanged::Line(out);
        }
        Exchanged::Exited {
            status: child.wait().await,
            out,
        }
    }

    /// The stderr written since the last call, for a call that replied. Bytes
    /// written just before the reply may still be in the pipe: let the reader
    /// move them first (bounded).
    async fn stderr_so_far(&self) -> String {
        for _ in 0..STDERR_SETTLE_POLLS {
            if !self.stderr_unread() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The reader appends in the same poll that read the bytes: one yield covers it.
        tokio::task::yield_now().await;
        tail_text(&std::mem::take(&mut *lock(&self.stderr)), STDERR_KEEP_BYTES)
    }

    /// True while the stderr pipe holds bytes the reader has not taken.
    fn stderr_unread(&self) -> bool {
        #[cfg(unix)]
        {
            self.stderr_probe
                .as_ref()
                .is_some_and(|fd| rustix::io::ioctl_fionread(fd).is_ok_and(|n| n > 0))
        }
        #[cfg(not(unix))]
        false
    }

    /// SIGKILL to the whole group, reap, and keep what it said on stderr.
    async fn retire(mut self) -> String {
        kill_group(self.leader);
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        // Reaped: its pid may be reused, so `drop` must not signal that group again.
        self.leader = None;
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(STDERR_DRAIN_WAIT, reader).await;
        }
        tail_text(&std::mem::take(&mut *lock(&self.stderr)), STDERR_KEEP_BYTES)
    }
}

impl Drop for Worker {
    /// The end of the scenario run (the pool dropped with its session), or a
    /// retired worker: nothing the adapter started outlives it.
    fn drop(&mut self) {
        kill_group(self.leader);
        let _ = self.child.start_kill();
        if let Some(reader) = self.stderr_reader.take() {
            reader.abort();
        }
    }
}

//! One process per call: `<command...> <call>`, the request on stdin, the reply
//! on stdout. A crash is SIGKILL, as in production.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use lostreply_reports::model::CallEnd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

use super::output::{
    crash_signal, exited, past_deadline, tail_text, CallOutput, STDERR_KEEP_BYTES,
    STDOUT_LIMIT_BYTES,
};
use crate::protocol::{CallName, PROTOCOL_VERSION};

/// A process adapter's command line (program and arguments), split like a shell would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessCommand {
    argv: Vec<String>,
}

/// Why a process adapter's command line is not a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The line's quotes do not pair up.
    #[error("cannot split adapter command {line:?}: unbalanced quotes")]
    UnbalancedQuotes {
        /// The line as given.
        line: String,
    },
    /// No program to run.
    #[error("the adapter command is empty")]
    Empty,
}

impl ProcessCommand {
    /// Splits `python3 adapter.py --flag` into words. Errors on an empty line or unbalanced quotes.
    pub fn parse(line: &str) -> Result<ProcessCommand, CommandError> {
        let argv = shlex::split(line).ok_or_else(|| CommandError::UnbalancedQuotes {
            line: line.to_owned(),
        })?;
        ProcessCommand::new(argv)
    }

    /// From already split words.
    pub fn new(argv: Vec<String>) -> Result<ProcessCommand, CommandError> {
        if argv.is_empty() {
            return Err(CommandError::Empty);
        }
        Ok(ProcessCommand { argv })
    }

    /// The command as one pasteable line.
    pub fn display(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }

    /// `<command...> <last>` with the protocol's environment and piped stdio, in
    /// a process group of its own: a crash must kill whatever the adapter
    /// started too (a wrapper script's child would otherwise live on and finish
    /// the work the crash was meant to interrupt).
    pub(super) fn command(&self, last: &str, state_dir: &Path) -> Command {
        let mut command = Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .arg(last)
            .env(crate::serve_call::STATE_DIR_ENV, state_dir)
            .env("LOSTREPLY_PROTOCOL", PROTOCOL_VERSION.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        command
    }

    pub(super) async fn call(
        &self,
        name: CallName,
        request: &serde_json::Value,
        state_dir: &Path,
        deadline: Duration,
        crash: Option<oneshot::Receiver<()>>,
    ) -> CallOutput {
        let mut child = match self.command(name.as_str(), state_dir).spawn() {
            Ok(child) => child,
            Err(e) => return CallOutput::failed(format!("cannot start `{}`: {e}", self.display())),
        };
        let leader = child.id();
        // Pipes are taken once; all three exist because they were requested above.
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return CallOutput::failed("child pipes missing".to_owned());
        };
        let io = exchange(stdin, stdout, stderr, request.to_string().into_bytes());
        let crash = crash_signal(crash);

        tokio::pin!(io);
        let ended = tokio::select! {
            (out, err) = &mut io => {
                let status = child.wait().await;
                // One process per call: nothing the adapter started outlives it.
                kill_group(leader);
                Ended::Finished { status, out, err }
            }
            _ = tokio::time::sleep(deadline) => Ended::Deadline,
            _ = crash => Ended::Crashed,
        };
        match ended {
            Ended::Finished { status, out, err } => {
                let (end, reply) = exited(&status, &out);
                CallOutput {
                    reply,
                    end,
                    stderr: tail_text(&err, STDERR_KEEP_BYTES),
                }
            }
            Ended::Deadline | Ended::Crashed => {
                // SIGKILL to the whole group, then reap, so that no process of
                // the adapter's outlives the call.
                kill_group(leader);
                let _ = child.start_kill();
                let _ = child.wait().await;
                // The pipes close with the child; keep what it said on stderr. Bounded,
                // because a grandchild could hold them open.
                let stderr = match tokio::time::timeout(Duration::from_secs(1), &mut io).await {
                    Ok((_, err)) => tail_text(&err, STDERR_KEEP_BYTES),
                    Err(_) => String::new(),
                };
                let end = if matches!(ended, Ended::Deadline) {
                    past_deadline(deadline)
                } else {
                    CallEnd::Crashed
                };
                CallOutput {
                    reply: None,
                    end,
                    stderr,
                }
            }
        }
    }
}

/// Writes `body` to the child's stdin while reading its stdout and stderr,
/// each bounded, until all three pipes are done; what came on stdout and
/// stderr. Writing and reading at once: a child that answers before reading
/// everything must not deadlock us on a full pipe.
async fn exchange(
    mut stdin: ChildStdin,
    mut stdout: ChildStdout,
    mut stderr: ChildStderr,
    body: Vec<u8>,
) -> (Vec<u8>, Vec<u8>) {
    let writer = async move {
        // A child that exits without reading its stdin is its business, not an error here.
        let _ = stdin.write_all(&body).await;
        let _ = stdin.shutdown().await;
    };
    let out_reader = async move {
        let mut buf = Vec::new();
        let _ = (&mut stdout)
            .take(STDOUT_LIMIT_BYTES as u64 + 1)
            .read_to_end(&mut buf)
            .await;
        buf
    };
    let err_reader = async move {
        let mut buf = Vec::new();
        // Bounded: an adapter that floods stderr cannot exhaust memory.
        let _ = (&mut stderr)
            .take(8 * STDERR_KEEP_BYTES as u64)
            .read_to_end(&mut buf)
            .await;
        buf
    };
    let ((), out, err) = tokio::join!(writer, out_reader, err_reader);
    (out, err)
}

/// SIGKILL to the process group that `leader` (the child) leads, see `call`.
pub(super) fn kill_group(leader: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = leader
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        // ESRCH (nothing left in the group) is the usual, fine answer.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = leader;
}

enum Ended {
    Finished {
        status: std::io::Result<std::process::ExitStatus>,
        out: Vec<u8>,
        err: Vec<u8>,
    },
    Deadline,
    Crashed,
}

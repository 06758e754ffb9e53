//! Drives the adapter under test, whichever form it takes: a Rust trait object
//! in this process, one process per call speaking JSON (adapter-protocol.md),
//! or, opted into, the same JSON one line per call to long-lived processes.
//!
//! Both forms answer the same question, "what did this call reply, or how did it
//! end?", so the runner never needs to know which one it is talking to.

mod in_process;
mod persistent;
mod process;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lostreply_reports::model::CallEnd;
use tokio::sync::oneshot;

use crate::adapter::AdapterFactory;
use crate::protocol::CallName;

pub use persistent::SERVE_ARG;
pub use process::ProcessCommand;

/// The most stderr kept per call (the tail is kept: errors come last).
pub const STDERR_KEEP_BYTES: usize = 16 * 1024;
/// The most stdout read per call; a larger reply is a bad reply.
pub const STDOUT_LIMIT_BYTES: usize = 1024 * 1024;

/// The code under test.
#[derive(Clone)]
pub enum AdapterUnderTest {
    /// A Rust adapter in this process.
    InProcess(Arc<dyn AdapterFactory>),
    /// A command run once per call with the call name appended.
    Process(ProcessCommand),
    /// The same command run as `<command...> serve`: long-lived processes that
    /// answer one JSON line per call, retired where a per-call process would die.
    Persistent(ProcessCommand),
}

impl std::fmt::Debug for AdapterUnderTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display_name())
    }
}

impl AdapterUnderTest {
    /// `builtin:reference`, or the command line.
    pub fn display_name(&self) -> String {
        match self {
            AdapterUnderTest::InProcess(f) => format!("builtin:{}", f.name()),
            AdapterUnderTest::Process(c) | AdapterUnderTest::Persistent(c) => c.display(),
        }
    }

    /// The report's notion of how it is driven.
    pub fn kind(&self) -> lostreply_reports::model::AdapterKind {
        match self {
            AdapterUnderTest::InProcess(_) => lostreply_reports::model::AdapterKind::InProcess,
            AdapterUnderTest::Process(_) | AdapterUnderTest::Persistent(_) => {
                lostreply_reports::model::AdapterKind::Process
            }
        }
    }

    /// The flags that select this adapter again on the command line.
    pub fn cli_flags(&self) -> String {
        match self {
            AdapterUnderTest::InProcess(f) => format!("--builtin {}", f.name()),
            AdapterUnderTest::Process(c) => format!("--adapter {}", shell_quote(&c.display())),
            AdapterUnderTest::Persistent(c) => {
                format!("--adapter {} --persistent", shell_quote(&c.display()))
            }
        }
    }

    /// Starts a session over a fresh state directory.
    pub fn session(&self, state_dir: &Path) -> Result<Session, String> {
        let form = match self {
            AdapterUnderTest::InProcess(factory) => {
                Form::InProcess(in_process::Instance::build(factory.clone(), state_dir)?)
            }
            AdapterUnderTest::Process(command) => Form::Process(command.clone()),
            AdapterUnderTest::Persistent(command) => {
                Form::Persistent(persistent::Pool::new(command.clone(), state_dir))
            }
        };
        Ok(Session {
            state_dir: state_dir.to_path_buf(),
            form,
        })
    }
}

/// Quotes a string for a POSIX shell, so that a printed command can be pasted.
pub fn shell_quote(s: &str) -> String {
    shlex::try_quote(s)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| format!("'{s}'"))
}

enum Form {
    InProcess(in_process::Instance),
    Process(ProcessCommand),
    /// Dropped with the session at the end of the scenario run, killing every process.
    Persistent(persistent::Pool),
}

/// One scenario run's view of the adapter: its state directory and, in process,
/// its current instance.
pub struct Session {
    state_dir: PathBuf,
    form: Form,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("state_dir", &self.state_dir)
            .finish_non_exhaustive()
    }
}

/// What one call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The reply, when a well-formed JSON object came back.
    pub reply: Option<serde_json::Value>,
    /// How it ended.
    pub end: CallEnd,
    /// The tail of its stderr.
    pub stderr: String,
}

impl Session {
    /// Makes one call. `crash` fires when the harness wants the call killed
    /// (a `crash` step); the call then ends as [`CallEnd::Crashed`] and, in
    /// process, a fresh instance replaces the old one, as after a SIGKILL.
    pub async fn call(
        &self,
        name: CallName,
        request: &serde_json::Value,
        deadline: Duration,
        crash: Option<oneshot::Receiver<()>>,
    ) -> CallOutput {
        match &self.form {
            Form::InProcess(instance) => instance.call(name, request, deadline, crash).await,
            Form::Process(command) => {
                command
                    .call(name, request, &self.state_dir, deadline, crash)
                    .await
            }
            Form::Persistent(pool) => pool.call(name, request, deadline, crash).await,
        }
    }

    /// After a crash: a fresh instance over the same state directory (in process).
    /// A process adapter needs nothing: every call is a new process anyway, and
    /// a persistent one already retired the killed process (the next call starts one).
    pub fn rebuild(&self) -> Result<(), String> {
        match &self.form {
            Form::InProcess(instance) => instance.rebuild(&self.state_dir),
            Form::Process(_) | Form::Persistent(_) => Ok(()),
        }
    }
}

/// Keeps the last `limit` bytes of `bytes` as text, cut at a character boundary.
pub(crate) fn tail_text(bytes: &[u8], limit: usize) -> String {
    let start = bytes.len().saturating_sub(limit);
    let text = String::from_utf8_lossy(&bytes[start..]);
    if start > 0 {
        format!("[… {start} bytes cut …]{text}")
    } else {
        text.into_owned()
    }
}

/// Checks that a reply is a JSON object, as the protocol demands.
pub(crate) fn parse_reply(stdout: &[u8]) -> Result<serde_json::Value, String> {
    if stdout.len() > STDOUT_LIMIT_BYTES {
        return Err(format!(
            "stdout is {} bytes, over the {STDOUT_LIMIT_BYTES}-byte limit",
            stdout.len()
        ));
    }
    let text = std::str::from_utf8(stdout).map_err(|e| format!("stdout is not UTF-8: {e}"))?;
    if text.trim().is_empty() {
        return Err("stdout is empty: the protocol wants one JSON object".to_owned());
    }
    let value: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("stdout is not one JSON value: {e}"))?;
    if !value.is_object() {
        return Err("stdout is JSON but not an object".to_owned());
    }
    Ok(value)
}

/// Resolves when the harness fires the crash signal; never, without one (or when
/// the sender is dropped: the crash point was not reached).
pub(crate) async fn crash_signal(crash: Option<oneshot::Receiver<()>>) {
    if let Some(rx) = crash {
        if rx.await.is_ok() {
            return;
        }
    }
    std::future::pending::<()>().await
}

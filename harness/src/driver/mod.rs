//! Drives the adapter under test, whichever form it takes: a Rust trait object
//! in this process, one process per call speaking JSON (adapter-protocol.md),
//! or, opted into, the same JSON one line per call to long-lived processes.
//!
//! Both forms answer the same question, "what did this call reply, or how did it
//! end?", so the runner never needs to know which one it is talking to.

mod in_process;
mod output;
mod persistent;
mod process;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::adapter::{AdapterFactory, AdapterFailure};
use crate::protocol::CallName;

pub use output::{CallOutput, STDERR_KEEP_BYTES, STDOUT_LIMIT_BYTES};
pub use persistent::SERVE_ARG;
pub use process::{CommandError, ProcessCommand};

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
    /// A process adapter from its command line as a user types it: run once
    /// per call, or `persistent`ly as `<command...> serve`. Every front end
    /// that takes `--adapter` reads it here, so they split it alike.
    pub fn from_command_line(
        line: &str,
        persistent: bool,
    ) -> Result<AdapterUnderTest, CommandError> {
        let command = ProcessCommand::parse(line)?;
        Ok(if persistent {
            AdapterUnderTest::Persistent(command)
        } else {
            AdapterUnderTest::Process(command)
        })
    }

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
    pub fn session(&self, state_dir: &Path) -> Result<Session, AdapterFailure> {
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

impl Session {
    /// Makes one call. `crash` fires when the harness wants the call killed
    /// (a `crash` step); the call then ends as
    /// [`CallEnd::Crashed`](lostreply_reports::model::CallEnd::Crashed) and, in
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
    pub fn rebuild(&self) -> Result<(), AdapterFailure> {
        match &self.form {
            Form::InProcess(instance) => instance.rebuild(&self.state_dir),
            Form::Process(_) | Form::Persistent(_) => Ok(()),
        }
    }
}

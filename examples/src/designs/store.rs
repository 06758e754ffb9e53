//! The durable store: one JSON record per operation under the state
//! directory, replaced atomically, and one lock file per operation.
//!
//! Nothing here is cached in memory: every call reads the file, because the
//! next call may be another process, or this one after a crash.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use lostreply_harness::adapter::AdapterFailure;

use super::record::{OpId, Record};

/// How a call takes the operation's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// Wait until it is free.
    Wait,
    /// Take it only if nobody holds it.
    IfFree,
    /// Do not lock (only the flawed `unlocked` design does this).
    Skip,
}

/// The operation's lock, held until dropped. The kernel releases an OS file
/// lock when its holder dies, so a crash never leaves an operation locked.
#[derive(Debug)]
pub struct OpLock {
    _file: Option<File>,
}

/// The result of asking for the lock.
#[derive(Debug)]
pub enum Locked {
    /// This call holds it.
    Held(OpLock),
    /// Another worker holds it (only with [`Take::IfFree`]).
    Busy,
}

/// A stored record that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// The store under one state directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// Opens (creating) `<state_dir>/ops`.
    pub fn open(state_dir: &Path) -> Result<Store, AdapterFailure> {
        let dir = state_dir.join("ops");
        fs::create_dir_all(&dir)
            .map_err(|e| AdapterFailure::new(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Store { dir })
    }

    fn record_path(&self, id: &OpId) -> PathBuf {
        self.dir.join(format!("{}.json", id.as_str()))
    }

    /// The stored record, `None` when there is none.
    pub fn load(&self, id: &OpId) -> Result<Option<Record>, Unreadable> {
        let path = self.record_path(id);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Unreadable(format!("cannot read {}: {e}", path.display()))),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Unreadable(format!("{} is not a record: {e}", path.display())))
    }

    /// Replaces the record: a temporary file, synced, renamed over it, and
    /// the directory synced, so a reader (or the process after a crash) sees
    /// the old record or the new one, never a mix. The synced writes run off
    /// the async threads: they take milliseconds on a real disk, time in
    /// which those threads serve other calls' requests and answers.
    pub async fn save(&self, id: &OpId, record: &Record) -> Result<(), AdapterFailure> {
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        let bytes = serde_json::to_vec_pretty(record)
            .map_err(|e| AdapterFailure::new(format!("cannot encode the record: {e}")))?;
        let tmp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            id.as_str(),
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        ));
        let (dir, path) = (self.dir.clone(), self.record_path(id));
        tokio::task::spawn_blocking(move || replace_synced(&dir, &path, &tmp, &bytes))
            .await
            .map_err(|e| AdapterFailure::new(format!("save task ended: {e}")))?
    }

    /// Takes the operation's lock as asked.
    pub async fn lock(&self, id: &OpId, take: Take) -> Result<Locked, AdapterFailure> {
        if take == Take::Skip {
            return Ok(Locked::Held(OpLock { _file: None }));
        }
        let path = self.dir.join(format!("{}.lock", id.as_str()));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| AdapterFailure::new(format!("cannot open {}: {e}", path.display())))?;
        let failed =
            |e: std::io::Error| AdapterFailure::new(format!("cannot lock {}: {e}", path.display()));
        match take {
            // Off the async thread: another task of this very process may
            // hold the lock and need this thread to finish and release it.
            Take::Wait => {
                let file = tokio::task::spawn_blocking(move || file.lock().map(|()| file))
                    .await
                    .map_err(|e| AdapterFailure::new(format!("lock task ended: {e}")))?
                    .map_err(failed)?;
                Ok(Locked::Held(OpLock { _file: Some(file) }))
            }
            Take::IfFree => match file.try_lock() {
                Ok(()) => Ok(Locked::Held(OpLock { _file: Some(file) })),
                Err(TryLockError::WouldBlock) => Ok(Locked::Busy),
                Err(TryLockError::Error(e)) => Err(failed(e)),
            },
            Take::Skip => Ok(Locked::Held(OpLock { _file: None })),
        }
    }
}

/// Writes `bytes` to `tmp`, syncs it, renames it over `path` and syncs `dir`.
fn replace_synced(dir: &Path, path: &Path, tmp: &Path, bytes: &[u8]) -> Result<(), AdapterFailure> {
    let failed = |what: &str, e: std::io::Error| {
        AdapterFailure::new(format!("cannot {what} {}: {e}", path.display()))
    };
    let written =
        File::create(tmp).and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
    if let Err(e) = written {
        let _ = fs::remove_file(tmp);
        return Err(failed("write", e));
    }
    if let Err(e) = fs::rename(tmp, path) {
        let _ = fs::remove_file(tmp);
        return Err(failed("replace", e));
    }
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| failed("sync the directory of", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lostreply_harness::protocol::Operation;
    use serde_json::Map;

    fn fixture() -> Option<(tempfile::TempDir, Store, OpId, Record)> {
        let dir = tempfile::tempdir().ok()?;
        let store = Store::open(dir.path()).ok()?;
        let id = OpId::parse("op-1").ok()?;
        let operation = Operation::new("op-1", "create", "tickets", Map::new());
        let record = Record::intent(&id, &operation, jiff::Timestamp::UNIX_EPOCH);
        Some((dir, store, id, record))
    }

    #[tokio::test]
    async fn a_saved_record_reads_back_whole() {
        let Some((_dir, store, id, record)) = fixture() else {
            panic!("fixture");
        };
        assert_eq!(store.load(&id), Ok(None));
        assert!(store.save(&id, &record).await.is_ok());
        assert_eq!(store.load(&id), Ok(Some(record)));
    }

    #[tokio::test]
    async fn a_held_lock_makes_try_busy_until_released() {
        let Some((_dir, store, id, _)) = fixture() else {
            panic!("fixture");
        };
        let held = store.lock(&id, Take::Wait).await;
        assert!(matches!(held, Ok(Locked::Held(_))));
        assert!(matches!(
            store.lock(&id, Take::IfFree).await,
            Ok(Locked::Busy)
        ));
        drop(held);
        assert!(matches!(
            store.lock(&id, Take::IfFree).await,
            Ok(Locked::Held(_))
        ));
    }
}

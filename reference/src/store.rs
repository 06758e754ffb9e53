//! The reference adapter's durable store: one JSON record per operation under
//! `ops/`, replaced atomically, and one lock file per operation.
//!
//! Everything here is blocking file I/O. Callers on the tokio runtime run it
//! through `spawn_blocking` (the lock above all: a second holder waits for as
//! long as the first one keeps working).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use lostreply_harness::protocol::{Operation, OutcomeKind, OutcomeReply};

/// Most webhook ids remembered per operation. Forgetting the oldest is safe:
/// applying an event never regresses a record, so a re-applied event is a no-op.
pub const MAX_EVENTS_SEEN: usize = 256;

/// Largest record file the store will read back (a record is small; anything
/// larger is not ours).
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// An operation id the store refuses: it would not be a safe file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operation id {0:?} is not 1 to 64 characters of [A-Za-z0-9_.-]")]
pub struct InvalidOpId(pub String);

/// A validated operation id: safe to use as a file name (no separators, not `.` or `..`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpId(String);

impl OpId {
    /// Accepts `[A-Za-z0-9_.-]{1,64}` except `.` and `..`.
    pub fn parse(id: &str) -> Result<OpId, InvalidOpId> {
        let well_formed = !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            && id != "."
            && id != "..";
        if well_formed {
            Ok(OpId(id.to_owned()))
        } else {
            Err(InvalidOpId(id.to_owned()))
        }
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Everything the adapter knows about one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRecord {
    /// The operation as first executed; every create attempt sends exactly these args.
    pub operation: Operation,
    /// The idempotency key, fixed for the life of the operation.
    pub key: String,
    /// Sent as `client_reference` and searched for.
    pub client_reference: String,
    /// Simulator time (RFC 3339) at which the first create was about to be sent.
    pub first_sent_at: String,
    /// What the adapter currently claims.
    pub outcome: OutcomeKind,
    /// The provider object, once known.
    pub provider_ref: Option<String>,
    /// Automation stopped: a person must decide.
    pub needs_review: bool,
    /// What the current outcome rests on.
    pub evidence: String,
    /// Reconciles in a row that found no evidence.
    pub inconclusive: u32,
    /// Webhook ids already applied or ignored (oldest first, bounded).
    pub events_seen: Vec<String>,
    /// For a paid MCP tool call: what the adapter knows of the call itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpState>,
    /// The outcome is an operator's decision: final, and raised for review
    /// again (never changed) when later evidence contradicts it.
    #[serde(default)]
    pub resolved_by_person: bool,
}

/// What a paid MCP tool call's record adds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpState {
    /// The `tools/call` may have left: from here on it is never sent again
    /// (saved before it leaves, so a crash cannot hide it).
    pub sent: bool,
    /// The background task the call became, if it did.
    pub task_id: Option<String>,
    /// The ids `list_recent_operations` answered just before the call: none
    /// of them can be ours. `None`: no list was taken.
    pub baseline: Option<Vec<String>>,
}

impl OpRecord {
    /// True for `succeeded` and `failed`, which never change again.
    pub fn is_terminal(&self) -> bool {
        match self.outcome {
            OutcomeKind::Succeeded | OutcomeKind::Failed => true,
            OutcomeKind::Pending | OutcomeKind::Unknown => false,
        }
    }

    /// The protocol reply for this record.
    pub fn reply(&self) -> OutcomeReply {
        OutcomeReply::new(
            self.operation.id.as_str(),
            self.outcome,
            self.evidence.as_str(),
        )
        .with_provider_ref(self.provider_ref.as_deref().map(Into::into))
        .with_needs_review(self.needs_review)
    }

    /// Remembers a webhook id, forgetting the oldest beyond [`MAX_EVENTS_SEEN`].
    pub fn remember_event(&mut self, webhook_id: &str) {
        self.events_seen.push(webhook_id.to_owned());
        if self.events_seen.len() > MAX_EVENTS_SEEN {
            let excess = self.events_seen.len() - MAX_EVENTS_SEEN;
            self.events_seen.drain(..excess);
        }
    }
}

/// A store failure: unexpected local I/O or a record that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file operation failed.
    #[error("store: cannot {action} {path}: {source}")]
    Io {
        /// What was attempted.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A record file exists but is not a record.
    #[error("store: {path} is not a valid record: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

/// An exclusive hold on one operation; released when dropped (closing the file
/// releases the flock, also when a crashed task's future is dropped).
#[derive(Debug)]
pub struct OpLock {
    _file: File,
}

/// The store over one state directory.
#[derive(Debug, Clone)]
pub struct Store {
    ops_dir: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store under `state_dir`.
    pub fn open(state_dir: &Path) -> Result<Store, StoreError> {
        let ops_dir = state_dir.join("ops");
        fs::create_dir_all(&ops_dir).map_err(io_err("create directory", &ops_dir))?;
        Ok(Store { ops_dir })
    }

    fn record_path(&self, id: &OpId) -> PathBuf {
        self.ops_dir.join(format!("{}.json", id.as_str()))
    }

    /// Blocks until this process holds the operation's exclusive lock.
    pub fn lock(&self, id: &OpId) -> Result<OpLock, StoreError> {
        let path = self.ops_dir.join(format!("{}.lock", id.as_str()));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err("open lock file", &path))?;
        file.lock().map_err(io_err("lock", &path))?;
        Ok(OpLock { _file: file })
    }

    /// The operation's record, `None` when the store has never seen it.
    pub fn load(&self, id: &OpId) -> Result<Option<OpRecord>, StoreError> {
        let path = self.record_path(id);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("open", &path)(e)),
        };
        let len = file.metadata().map_err(io_err("stat", &path))?.len();
        if len > MAX_RECORD_BYTES {
            return Err(StoreError::Corrupt {
                path,
                reason: format!("{len} bytes, more than the {MAX_RECORD_BYTES} a record may have"),
            });
        }
        let bytes = fs::read(&path).map_err(io_err("read", &path))?;
        let record: OpRecord = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if record.operation.id != id.as_str() {
            return Err(StoreError::Corrupt {
                path,
                reason: format!("it holds operation {:?}", record.operation.id),
            });
        }
        Ok(Some(record))
    }

    /// Every record in the store, in no particular order. A temporary file
    /// (a save a crash interrupted) and a lock file are not records; a record
    /// file that does not parse is an error, as [`Store::load`] makes it.
    /// Records are read one at a time, each replaced only by an atomic
    /// rename, so each is one whole save, though not all from one instant.
    pub fn records(&self) -> Result<Vec<OpRecord>, StoreError> {
        let entries = fs::read_dir(&self.ops_dir).map_err(io_err("list", &self.ops_dir))?;
        let mut records = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err("list", &self.ops_dir))?;
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            let id = OpId::parse(id).map_err(|e| StoreError::Corrupt {
                path: entry.path(),
                reason: e.to_string(),
            })?;
            // A record removed since the listing is simply not there any more.
            if let Some(record) = self.load(&id)? {
                records.push(record);
            }
        }
        Ok(records)
    }

    /// Replaces the record atomically: a reader (or a crash) sees the old record
    /// or the new one, never a mix. Write a temporary file, fsync it, rename it
    /// over the record, fsync the directory so the rename itself is durable.
    pub fn save(&self, record: &OpRecord) -> Result<(), StoreError> {
        let id = OpId::parse(&record.operation.id).map_err(|e| StoreError::Corrupt {
            path: self.ops_dir.clone(),
            reason: e.to_string(),
        })?;
        let path = self.record_path(&id);
        let tmp = self.ops_dir.join(format!("{}.json.tmp", id.as_str()));
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| StoreError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let mut file = File::create(&tmp).map_err(io_err("create", &tmp))?;
        file.write_all(&bytes).map_err(io_err("write", &tmp))?;
        file.sync_all().map_err(io_err("fsync", &tmp))?;
        drop(file);
        fs::rename(&tmp, &path).map_err(io_err("rename into place", &path))?;
        let dir = File::open(&self.ops_dir).map_err(io_err("open directory", &self.ops_dir))?;
        dir.sync_all()
            .map_err(io_err("fsync directory", &self.ops_dir))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    fn record(id: &str) -> OpRecord {
        let mut args = serde_json::Map::new();
        args.insert("title".into(), "Purchase review".into());
        OpRecord {
            operation: Operation::new(id, "create", "tickets", args),
            key: format!("lr-{id}"),
            client_reference: id.into(),
            first_sent_at: "2026-01-01T00:00:00Z".into(),
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: false,
            evidence: "create about to be sent".into(),
            inconclusive: 0,
            events_seen: vec![],
            mcp: None,
            resolved_by_person: false,
        }
    }

    #[test]
    fn op_ids_that_are_not_plain_file_names_are_refused() {
        for good in ["op-1", "a", "A.b_c-9", &"x".repeat(64)] {
            assert!(OpId::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "op 1",
            "é",
            &"x".repeat(65),
        ] {
            assert!(OpId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn records_round_trip_and_absent_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let id = OpId::parse("op-1").unwrap();
        assert_eq!(store.load(&id).unwrap(), None);
        let mut rec = record("op-1");
        store.save(&rec).unwrap();
        assert_eq!(store.load(&id).unwrap(), Some(rec.clone()));
        rec.outcome = OutcomeKind::Succeeded;
        rec.provider_ref = Some("tkt_1".into());
        rec.remember_event("evt_1");
        store.save(&rec).unwrap();
        assert_eq!(store.load(&id).unwrap(), Some(rec));
    }

    #[test]
    fn save_replaces_atomically_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let id = OpId::parse("op-1").unwrap();
        // A stale temporary file from a crash mid-write must not be read as the
        // record, and the next save must replace it.
        fs::write(dir.path().join("ops/op-1.json.tmp"), b"{half a rec").unwrap();
        assert_eq!(store.load(&id).unwrap(), None);
        store.save(&record("op-1")).unwrap();
        let names: Vec<String> = fs::read_dir(dir.path().join("ops"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["op-1.json".to_owned()]);
        assert!(store.load(&id).unwrap().is_some());
    }

    #[test]
    fn a_corrupt_record_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        fs::write(dir.path().join("ops/op-1.json"), b"not json").unwrap();
        let err = store.load(&OpId::parse("op-1").unwrap()).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        // A record stored under another operation's name is refused too.
        store.save(&record("op-2")).unwrap();
        fs::rename(
            dir.path().join("ops/op-2.json"),
            dir.path().join("ops/op-1.json"),
        )
        .unwrap();
        let err = store.load(&OpId::parse("op-1").unwrap()).unwrap_err();
        assert!(err.to_string().contains("op-2"), "{err}");
    }

    #[test]
    fn records_are_every_saved_record_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.records().unwrap(), vec![]);
        store.save(&record("op-1")).unwrap();
        store.save(&record("op-2")).unwrap();
        let _lock = store.lock(&OpId::parse("op-3").unwrap()).unwrap();
        fs::write(dir.path().join("ops/op-4.json.tmp"), b"{half a rec").unwrap();
        let mut ids: Vec<String> = store
            .records()
            .unwrap()
            .into_iter()
            .map(|r| r.operation.id)
            .collect();
        ids.sort();
        assert_eq!(ids, vec!["op-1".to_owned(), "op-2".to_owned()]);
        fs::write(dir.path().join("ops/op-5.json"), b"not json").unwrap();
        let err = store.records().unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    }

    #[test]
    fn the_lock_excludes_a_second_holder_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let id = OpId::parse("op-1").unwrap();
        let first = store.lock(&id).unwrap();

        // A second open file description of the same lock file (as another
        // process or another adapter instance would have) must not get it.
        let lock_path = dir.path().join("ops/op-1.lock");
        let probe = OpenOptions::new().write(true).open(&lock_path).unwrap();
        assert!(matches!(
            probe.try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));

        // A blocking second holder gets it only once the first is released.
        let (tx, rx) = mpsc::channel();
        let store2 = store.clone();
        let waiter = std::thread::spawn(move || {
            let held = store2.lock(&OpId::parse("op-1").unwrap()).unwrap();
            tx.send(()).unwrap();
            drop(held);
        });
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(200)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "the second holder got the lock while the first still held it"
        );
        drop(first);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("second holder never got the lock");
        waiter.join().unwrap();
        // Other operations have their own locks.
        let _other = store.lock(&OpId::parse("op-2").unwrap()).unwrap();
        assert!(probe.try_lock().is_ok());
    }
}

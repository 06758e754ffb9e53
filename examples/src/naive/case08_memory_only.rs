//! Case 8 (worker crash after remote success, before the local update).
//!
//! FLAW: it keeps its operations, and the idempotency key it minted for each,
//! in a map in memory, and means to "persist later". Everything it does while
//! the worker lives is right (one key per operation, retry with the same key).
//! A crash after the provider committed loses the key and the intent: a fresh
//! worker has no record of the operation, and executing it again mints a new
//! key, so the provider creates it a second time. The case-8 scenario catches
//! it: a crash right after the commit, then the operation is never reported
//! done (or it is done twice).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{Common, ExecuteRequest, OperationRequest, OutcomeReply};

use super::kit::{self, Entry, Factory, Http, Naive, Records, Stored};

/// Keeps its intent only in memory.
#[derive(Debug, Default)]
pub struct MemoryOnly {
    operations: Mutex<HashMap<String, Entry>>,
}

/// Its factory.
pub const FACTORY: Factory = Factory::of::<MemoryOnly>("naive-08-memory-only");

impl Stored for MemoryOnly {
    /// The state directory is ignored: that is the flaw.
    fn open(_state_dir: &Path) -> Result<Self, AdapterFailure> {
        Ok(MemoryOnly::default())
    }

    fn records(&self) -> &dyn Records {
        self
    }
}

impl Records for MemoryOnly {
    fn get(&self, op_id: &str) -> Result<Option<Entry>, AdapterFailure> {
        let map = self
            .operations
            .lock()
            .map_err(|_| AdapterFailure::new("memory poisoned"))?;
        Ok(map.get(op_id).cloned())
    }

    fn put(&self, entry: &Entry) -> Result<(), AdapterFailure> {
        let mut map = self
            .operations
            .lock()
            .map_err(|_| AdapterFailure::new("memory poisoned"))?;
        map.insert(entry.op_id.clone(), entry.clone());
        Ok(())
    }
}

impl MemoryOnly {
    async fn send(
        &self,
        mut entry: Entry,
        common: &Common,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let http = Http::new(common)?;
        let header = common.provider.contract.idempotency.header.as_str();
        let key = entry.key.clone().unwrap_or_default();
        kit::send_create(&http, &mut entry, Some((header, &key)), 2).await;
        self.keep(&entry)
    }
}

#[async_trait]
impl Naive for MemoryOnly {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.get(&request.operation.id)? {
            Some(entry) if kit::is_final(entry.outcome) => return Ok(entry.reply()),
            Some(entry) => entry,
            None => {
                let mut entry = Entry::new(&request.operation);
                // The flaw: this key exists nowhere but in this process.
                entry.key = Some(kit::fresh_key(&request.operation.id));
                self.put(&entry)?;
                entry
            }
        };
        self.send(entry, &request.common).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        match self.unsettled(&request.operation_id)? {
            Ok(entry) => self.send(entry, &request.common).await,
            Err(reply) => Ok(reply),
        }
    }
}

//! Case 9 (key retention expires while the outcome is unknown).
//!
//! FLAW: it does almost everything right (durable intent, one key per
//! operation, same body every time) but believes an idempotency key protects
//! it forever: reconcile always replays the create with the stored key, however
//! long ago the key was first used. Once the provider's retention has passed,
//! the provider has forgotten the key and the replay is new work. The case-9
//! scenario catches it: after the clock moves past retention, reconcile
//! creates a second effect (it should have looked the object up instead).

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{Common, ExecuteRequest, OperationRequest, OutcomeReply};

use super::kit::{self, Entry, FileStore, Http, Naive, Records};

/// Replays expired keys.
#[derive(Debug)]
pub struct EternalKeys {
    store: FileStore,
}

kit::file_backed!(EternalKeys, "naive-09-eternal-keys");

impl EternalKeys {
    async fn replay(
        &self,
        mut entry: Entry,
        common: &Common,
        tries: u32,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let http = Http::new(common)?;
        let header = common.provider.contract.idempotency.header.as_str();
        let key = entry.key.clone().unwrap_or_default();
        // The flaw: no look at how old the key is.
        kit::send_create(&http, &mut entry, Some((header, &key)), tries).await;
        self.store.keep(&entry)
    }
}

#[async_trait]
impl Naive for EternalKeys {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.get(&request.operation.id)? {
            Some(entry) if kit::is_final(entry.outcome) => return Ok(entry.reply()),
            Some(entry) => entry,
            None => self.store.record_intent(&request.operation)?,
        };
        self.replay(entry, &request.common, 2).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let mut entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        if let Some(id) = entry.provider_ref.clone() {
            let http = Http::new(&request.common)?;
            if kit::retrieve(&http, &mut entry, &id).await.is_some() {
                self.store.put(&entry)?;
            }
            return Ok(entry.reply());
        }
        // "The key makes the replay safe."
        self.replay(entry, &request.common, 1).await
    }
}

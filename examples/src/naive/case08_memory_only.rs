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
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};

use super::kit::{self, Entry, Factory, Http};

/// Keeps its intent only in memory.
#[derive(Debug, Default)]
pub struct MemoryOnly {
    operations: Mutex<HashMap<String, Entry>>,
}

/// Its factory. The state directory is ignored: that is the flaw.
pub const FACTORY: Factory = Factory {
    name: "naive-08-memory-only",
    build: |_dir: &Path| Ok(Box::new(MemoryOnly::default())),
};

impl MemoryOnly {
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

    async fn send(
        &self,
        mut entry: Entry,
        common: &Common,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let http = Http::new(common)?;
        let header = common.provider.contract.idempotency.header.as_str();
        let key = entry.key.clone().unwrap_or_default();
        let body = kit::create_body(&entry.args, &entry.op_id);
        for _ in 0..2 {
            entry.attempts += 1;
            let answer = http
                .post(&entry.resource, &body, Some((header, &key)))
                .await;
            let (outcome, provider_ref, evidence) = kit::read_create(&answer);
            entry.set(outcome, provider_ref, evidence);
            if answer.is_ok() {
                break;
            }
        }
        self.put(&entry)?;
        Ok(entry.reply())
    }
}

#[async_trait]
impl Adapter for MemoryOnly {
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
        match self.get(&request.operation_id)? {
            Some(entry) if !kit::is_final(entry.outcome) => self.send(entry, &request.common).await,
            Some(entry) => Ok(entry.reply()),
            None => Ok(kit::no_record(&request.operation_id)),
        }
    }

    async fn webhook(&self, _request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        Ok(kit::webhooks_not_used())
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        let Some(mut entry) = self.get(&request.operation_id)? else {
            return Ok(kit::no_record(&request.operation_id));
        };
        if !kit::is_final(entry.outcome) {
            let resolution = &request.resolution;
            entry.set(
                resolution.outcome,
                resolution.provider_ref.clone(),
                format!("operator: {}", resolution.evidence),
            );
            self.put(&entry)?;
        }
        Ok(entry.reply())
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        Ok(match self.get(&request.operation_id)? {
            Some(entry) => entry.reply(),
            None => kit::no_record(&request.operation_id),
        })
    }
}

//! Case 9 (key retention expires while the outcome is unknown).
//!
//! FLAW: it does almost everything right (durable intent, one key per
//! operation, same body every time) but believes an idempotency key protects
//! it forever: reconcile always replays the create with the stored key, however
//! long ago the key was first used. Once the provider's retention has passed,
//! the provider has forgotten the key and the replay is new work. The case-9
//! scenario catches it: after the clock moves past retention, reconcile
//! creates a second effect (it should have looked the object up instead).

use std::path::Path;

use async_trait::async_trait;
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};

use super::kit::{self, Entry, Factory, FileStore, Http};

/// Replays expired keys.
#[derive(Debug)]
pub struct EternalKeys {
    store: FileStore,
}

/// Its factory.
pub const FACTORY: Factory = Factory {
    name: "naive-09-eternal-keys",
    build: |dir: &Path| {
        Ok(Box::new(EternalKeys {
            store: FileStore::open(dir)?,
        }))
    },
};

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
        let body = kit::create_body(&entry.args, &entry.op_id);
        for _ in 0..tries {
            entry.attempts += 1;
            // The flaw: no look at how old the key is.
            let answer = http
                .post(&entry.resource, &body, Some((header, &key)))
                .await;
            let (outcome, provider_ref, evidence) = kit::read_create(&answer);
            entry.set(outcome, provider_ref, evidence);
            if answer.is_ok() {
                break;
            }
        }
        self.store.put(&entry)?;
        Ok(entry.reply())
    }
}

#[async_trait]
impl Adapter for EternalKeys {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.get(&request.operation.id)? {
            Some(entry) if kit::is_final(entry.outcome) => return Ok(entry.reply()),
            Some(entry) => entry,
            None => {
                let mut entry = Entry::new(&request.operation);
                entry.key = Some(format!("lr-{}", request.operation.id));
                self.store.put(&entry)?;
                entry
            }
        };
        self.replay(entry, &request.common, 2).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let Some(mut entry) = self.store.get(&request.operation_id)? else {
            return Ok(kit::no_record(&request.operation_id));
        };
        if kit::is_final(entry.outcome) {
            return Ok(entry.reply());
        }
        if let Some(id) = entry.provider_ref.clone() {
            let http = Http::new(&request.common)?;
            if let Ok(resp) = http.get(&format!("/v1/{}/{id}", entry.resource)).await {
                if resp.ok() {
                    entry.set(
                        kit::outcome_of(resp.object_status()),
                        Some(id),
                        "retrieved".to_owned(),
                    );
                    self.store.put(&entry)?;
                }
            }
            return Ok(entry.reply());
        }
        // "The key makes the replay safe."
        self.replay(entry, &request.common, 1).await
    }

    async fn webhook(&self, _request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        Ok(kit::webhooks_not_used())
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.store.resolve(&request)
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.store.status(&request)
    }
}

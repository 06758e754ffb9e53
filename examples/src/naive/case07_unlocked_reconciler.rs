//! Case 7 (two reconcilers racing on one operation).
//!
//! FLAW: the algorithm is the right one (durable intent, search by
//! `client_reference`, re-create only when the search proves absence), but its
//! store has no lock, so check-then-create is not atomic. Two reconcilers that
//! start together both search, both find nothing, and both create. The case-7
//! scenario catches it on a provider without keys (so nothing else dedupes):
//! two effects for one operation.

use std::path::Path;

use async_trait::async_trait;
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};
use serde_json::Value;

use super::kit::{self, Entry, Factory, FileStore, Http};

/// Reconciles without a lock.
#[derive(Debug)]
pub struct UnlockedReconciler {
    store: FileStore,
}

/// Its factory.
pub const FACTORY: Factory = Factory {
    name: "naive-07-unlocked-reconciler",
    build: |dir: &Path| {
        Ok(Box::new(UnlockedReconciler {
            store: FileStore::open(dir)?,
        }))
    },
};

impl UnlockedReconciler {
    async fn create(
        &self,
        mut entry: Entry,
        common: &Common,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let http = Http::new(common)?;
        let contract = &common.provider.contract;
        let key = entry
            .key
            .clone()
            .filter(|_| contract.idempotency.mode != "none");
        let header = contract.idempotency.header.as_str();
        entry.attempts += 1;
        let answer = http
            .post(
                &entry.resource,
                &kit::create_body(&entry.args, &entry.op_id),
                key.as_deref().map(|k| (header, k)),
            )
            .await;
        let (outcome, provider_ref, evidence) = kit::read_create(&answer);
        entry.set(outcome, provider_ref, evidence);
        self.store.put(&entry)?;
        Ok(entry.reply())
    }
}

#[async_trait]
impl Adapter for UnlockedReconciler {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        if let Some(entry) = self.store.get(&request.operation.id)? {
            return Ok(entry.reply());
        }
        let mut entry = Entry::new(&request.operation);
        entry.key = Some(format!("lr-{}", request.operation.id));
        self.store.put(&entry)?;
        self.create(entry, &request.common).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        // The flaw: nothing stops a second reconciler between this read and the create.
        let Some(mut entry) = self.store.get(&request.operation_id)? else {
            return Ok(kit::no_record(&request.operation_id));
        };
        if kit::is_final(entry.outcome) {
            return Ok(entry.reply());
        }
        let http = Http::new(&request.common)?;
        if let Some(id) = entry.provider_ref.clone() {
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
        match http
            .get(&format!(
                "/v1/{}?client_reference={}",
                entry.resource, entry.op_id
            ))
            .await
        {
            Ok(resp) if resp.status == 200 => match kit::find_ours(&resp, &entry.op_id) {
                Some(object) => {
                    let status = object.get("status").and_then(Value::as_str).unwrap_or("");
                    let id = object.get("id").and_then(Value::as_str).map(str::to_owned);
                    entry.set(kit::outcome_of(status), id, "found by search".to_owned());
                    self.store.put(&entry)?;
                    Ok(entry.reply())
                }
                None => self.create(entry, &request.common).await,
            },
            Ok(resp) => {
                entry.evidence = format!("search failed: {}", resp.status);
                Ok(entry.reply())
            }
            Err(error) => {
                entry.evidence = format!("search failed: {error}");
                Ok(entry.reply())
            }
        }
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

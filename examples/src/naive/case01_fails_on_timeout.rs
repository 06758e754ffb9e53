//! Case 1 (timeout before the provider receives the request).
//!
//! FLAW: any error on the way to the provider is written down as `failed`,
//! including a timeout that proves nothing, and a failed operation is never
//! looked at again. The case-1 scenario catches it: the request never arrived,
//! so a retry (or a reconcile) would have finished the work, but this adapter
//! reports a failure with no evidence and never finishes the operation.

use std::path::Path;

use async_trait::async_trait;
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};

use super::kit::{self, Entry, Factory, FileStore, Http};

/// Reports `failed` on a timeout.
#[derive(Debug)]
pub struct FailsOnTimeout {
    store: FileStore,
}

/// Its factory.
pub const FACTORY: Factory = Factory {
    name: "naive-01-fails-on-timeout",
    build: |dir: &Path| {
        Ok(Box::new(FailsOnTimeout {
            store: FileStore::open(dir)?,
        }))
    },
};

#[async_trait]
impl Adapter for FailsOnTimeout {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let op = &request.operation;
        if let Some(entry) = self.store.get(&op.id)? {
            return Ok(entry.reply());
        }
        let contract = &request.common.provider.contract;
        let http = Http::new(&request.common)?;
        let mut entry = Entry::new(op);
        entry.key = Some(format!("lr-{}", op.id));
        let header = contract.idempotency.header.as_str();
        let key = entry
            .key
            .as_deref()
            .filter(|_| contract.idempotency.mode != "none");
        entry.attempts = 1;
        match http
            .post(
                &op.resource,
                &kit::create_body(&op.args, &op.id),
                key.map(|k| (header, k)),
            )
            .await
        {
            Ok(resp) if resp.ok() => {
                let outcome = kit::outcome_of(resp.object_status());
                entry.set(
                    outcome,
                    resp.id(),
                    format!("{} {}", resp.status, resp.object_status()),
                );
            }
            Ok(resp) => entry.set(
                OutcomeKind::Failed,
                None,
                format!("provider answered {} {}", resp.status, resp.error_type()),
            ),
            // The flaw: "it didn't work" is not what a timeout says.
            Err(error) => entry.set(
                OutcomeKind::Failed,
                None,
                format!("request failed: {error}"),
            ),
        }
        self.store.put(&entry)?;
        Ok(entry.reply())
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let Some(mut entry) = self.store.get(&request.operation_id)? else {
            return Ok(kit::no_record(&request.operation_id));
        };
        // Only something the provider has accepted and still works on is polled.
        if let (OutcomeKind::Pending, Some(id)) = (entry.outcome, entry.provider_ref.clone()) {
            let http = Http::new(&request.common)?;
            if let Ok(resp) = http.get(&format!("/v1/{}/{id}", entry.resource)).await {
                if resp.ok() {
                    let outcome = kit::outcome_of(resp.object_status());
                    entry.set(
                        outcome,
                        Some(id),
                        format!("retrieve: {}", resp.object_status()),
                    );
                    self.store.put(&entry)?;
                }
            }
        }
        Ok(entry.reply())
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

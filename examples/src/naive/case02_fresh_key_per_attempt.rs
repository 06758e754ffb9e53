//! Case 2 (timeout after the provider commits the effect).
//!
//! FLAW: every attempt gets a brand-new idempotency key ("a fresh UUID per
//! request"), so a retry after a lost response is new work to the provider: a
//! second effect. When the attempts run out it calls the timeouts a failure.
//! The case-2 scenario catches it: the first create commits, its response is
//! lost, the retry commits again (at most once, and the same key on every
//! attempt, are both violated).

use std::path::Path;

use async_trait::async_trait;
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};

use super::kit::{self, Entry, Factory, FileStore, Http};

/// How many times a create is tried before giving up.
const ATTEMPTS: u32 = 3;

/// Retries with a new key.
#[derive(Debug)]
pub struct FreshKeyPerAttempt {
    store: FileStore,
}

/// Its factory.
pub const FACTORY: Factory = Factory {
    name: "naive-02-fresh-key-per-attempt",
    build: |dir: &Path| {
        Ok(Box::new(FreshKeyPerAttempt {
            store: FileStore::open(dir)?,
        }))
    },
};

impl FreshKeyPerAttempt {
    async fn run(
        &self,
        mut entry: Entry,
        http: &Http,
        header: &str,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let body = kit::create_body(&entry.args, &entry.op_id);
        let mut last_error = String::new();
        for _ in 0..ATTEMPTS {
            // The flaw: a new key for every request.
            let key = kit::fresh_key(&entry.op_id);
            entry.key = Some(key.clone());
            entry.attempts += 1;
            match http
                .post(&entry.resource, &body, Some((header, &key)))
                .await
            {
                Ok(resp) if resp.ok() => {
                    let outcome = kit::outcome_of(resp.object_status());
                    entry.set(
                        outcome,
                        resp.id(),
                        format!("created on attempt {}", entry.attempts),
                    );
                    self.store.put(&entry)?;
                    return Ok(entry.reply());
                }
                Ok(resp) if resp.status < 500 => {
                    entry.set(
                        OutcomeKind::Failed,
                        None,
                        format!("rejected: {}", resp.status),
                    );
                    self.store.put(&entry)?;
                    return Ok(entry.reply());
                }
                Ok(resp) => last_error = format!("status {}", resp.status),
                Err(error) => last_error = error,
            }
        }
        entry.set(
            OutcomeKind::Failed,
            None,
            format!("gave up after {ATTEMPTS} attempts: {last_error}"),
        );
        self.store.put(&entry)?;
        Ok(entry.reply())
    }
}

#[async_trait]
impl Adapter for FreshKeyPerAttempt {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        if let Some(entry) = self.store.get(&request.operation.id)? {
            if kit::is_final(entry.outcome) {
                return Ok(entry.reply());
            }
        }
        let http = Http::new(&request.common)?;
        let header = &request.common.provider.contract.idempotency.header;
        self.run(Entry::new(&request.operation), &http, header)
            .await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        match self.store.get(&request.operation_id)? {
            Some(entry) if !kit::is_final(entry.outcome) => {
                let http = Http::new(&request.common)?;
                let header = &request.common.provider.contract.idempotency.header;
                self.run(entry, &http, header).await
            }
            Some(entry) => Ok(entry.reply()),
            None => Ok(kit::no_record(&request.operation_id)),
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

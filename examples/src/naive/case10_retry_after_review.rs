//! Case 10 (manual review resolves an operation while a delayed event arrives).
//!
//! FLAW: it treats everything short of `succeeded` as "still to do": execute
//! and reconcile send the create again for an operation that is unknown, or
//! that an operator resolved `failed` ("it did not go through, so retry it").
//! Its webhook handler checks signatures but applies whatever event comes
//! last, on top of an operator's decision, and does not remember events it
//! already applied. The case-10 scenario catches it: after the resolution, the
//! delayed event changes a terminal outcome, or the retry creates an effect
//! the operator's decision said would not exist.

use std::path::Path;

use async_trait::async_trait;
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest,
    WebhookReply, WebhookRequest,
};
use harness::reference::webhook;
use serde_json::Value;

use super::kit::{self, Entry, Factory, FileStore, Http};

/// Re-executes after an operator's resolution.
#[derive(Debug)]
pub struct RetryAfterReview {
    store: FileStore,
}

/// Its factory.
pub const FACTORY: Factory = Factory {
    name: "naive-10-retry-after-review",
    build: |dir: &Path| {
        Ok(Box::new(RetryAfterReview {
            store: FileStore::open(dir)?,
        }))
    },
};

impl RetryAfterReview {
    /// The retry worker: anything not yet `succeeded` is sent (again).
    async fn work(
        &self,
        mut entry: Entry,
        common: &Common,
    ) -> Result<OutcomeReply, AdapterFailure> {
        if entry.outcome == OutcomeKind::Succeeded {
            return Ok(entry.reply());
        }
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
impl Adapter for RetryAfterReview {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.get(&request.operation.id)? {
            Some(entry) => entry,
            None => {
                let mut entry = Entry::new(&request.operation);
                entry.key = Some(format!("lr-{}", request.operation.id));
                self.store.put(&entry)?;
                entry
            }
        };
        self.work(entry, &request.common).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        match self.store.get(&request.operation_id)? {
            Some(entry) => self.work(entry, &request.common).await,
            None => Ok(kit::no_record(&request.operation_id)),
        }
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        let rejected = WebhookReply {
            accepted: false,
            operation_id: None,
        };
        let Some(webhooks) = &request.common.provider.contract.webhooks else {
            return Ok(rejected);
        };
        let now = request
            .common
            .now
            .parse::<jiff::Timestamp>()
            .map_err(|e| AdapterFailure::new(format!("now: {e}")))?;
        if webhook::verify(
            &webhooks.secret,
            &request.headers,
            &request.body,
            now.as_second(),
        )
        .is_err()
        {
            return Ok(rejected);
        }
        let Ok(event) = serde_json::from_str::<Value>(&request.body) else {
            return Ok(rejected);
        };
        let data = &event["data"];
        let Some(mut entry) = data["client_reference"]
            .as_str()
            .map(|id| self.store.get(id))
            .transpose()?
            .flatten()
        else {
            return Ok(WebhookReply {
                accepted: true,
                operation_id: None,
            });
        };
        // The flaw: the event wins over whatever the record says, the operator's
        // decision included.
        let event_type = event["type"].as_str().unwrap_or("");
        let outcome = if event_type.ends_with(".failed") {
            OutcomeKind::Failed
        } else if event_type.ends_with(".succeeded") {
            OutcomeKind::Succeeded
        } else {
            kit::outcome_of(data["status"].as_str().unwrap_or(""))
        };
        entry.set(
            outcome,
            data["id"].as_str().map(str::to_owned),
            format!("webhook {event_type}"),
        );
        self.store.put(&entry)?;
        Ok(WebhookReply {
            accepted: true,
            operation_id: Some(entry.op_id),
        })
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.store.resolve(&request)
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.store.status(&request)
    }
}

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

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, WebhookReply,
    WebhookRequest,
};
use lostreply_simulator::standard_webhooks;
use serde_json::Value;

use super::kit::{self, Entry, FileStore, Naive, Records};

/// Re-executes after an operator's resolution.
#[derive(Debug)]
pub struct RetryAfterReview {
    store: FileStore,
}

kit::file_backed!(RetryAfterReview, "naive-10-retry-after-review");

impl RetryAfterReview {
    /// The retry worker: anything not yet `succeeded` is sent (again).
    async fn work(&self, entry: Entry, common: &Common) -> Result<OutcomeReply, AdapterFailure> {
        if entry.outcome == OutcomeKind::Succeeded {
            return Ok(entry.reply());
        }
        kit::create_once(&self.store, entry, common).await
    }
}

#[async_trait]
impl Naive for RetryAfterReview {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.get(&request.operation.id)? {
            Some(entry) => entry,
            None => self.store.record_intent(&request.operation)?,
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
        let Some(webhooks) = &request.common.provider.contract.webhooks else {
            return Ok(kit::webhook_rejected());
        };
        let now = request
            .common
            .now
            .parse::<jiff::Timestamp>()
            .map_err(|e| AdapterFailure::new(format!("now: {e}")))?;
        if standard_webhooks::verify(
            &webhooks.secret,
            &request.headers,
            &request.body,
            now.as_second(),
        )
        .is_err()
        {
            return Ok(kit::webhook_rejected());
        }
        let Ok(event) = serde_json::from_str::<Value>(&request.body) else {
            return Ok(kit::webhook_rejected());
        };
        let Some(mut entry) = event["data"]["client_reference"]
            .as_str()
            .map(|id| self.store.get(id))
            .transpose()?
            .flatten()
        else {
            return Ok(kit::webhook_not_ours());
        };
        // The flaw: the event wins over whatever the record says, the operator's
        // decision included.
        let (outcome, id, evidence) = kit::event_outcome(&event);
        entry.set(outcome, id, evidence);
        self.store.put(&entry)?;
        Ok(kit::webhook_applied(entry.op_id))
    }
}

//! Case 6 (webhook before and after the reconciliation poll).
//!
//! FLAW: its webhook handler believes every event: no signature check, no
//! memory of which events it already applied, and each event simply overwrites
//! the stored status, so an old `created` (processing) event arriving after the
//! poll found the object `succeeded` moves it back. The case-6 scenario catches
//! it: a forged event changes the outcome, and a late or repeated event makes a
//! terminal outcome change.

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    ExecuteRequest, OperationRequest, OutcomeReply, WebhookReply, WebhookRequest,
};
use serde_json::Value;

use super::kit::{self, FileStore, Http, Naive, Records};

/// Accepts forged, duplicate and late events.
#[derive(Debug)]
pub struct TrustingWebhooks {
    store: FileStore,
}

kit::file_backed!(TrustingWebhooks, "naive-06-trusting-webhooks");

#[async_trait]
impl Naive for TrustingWebhooks {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        kit::execute_once(&self.store, &request).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let mut entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        let http = Http::new(&request.common)?;
        let path = match &entry.provider_ref {
            Some(id) => format!("/v1/{}/{id}", entry.resource),
            None => format!("/v1/{}?client_reference={}", entry.resource, entry.op_id),
        };
        match http.get(&path).await {
            Ok(resp) if resp.ok() && entry.provider_ref.is_some() => {
                entry.set(
                    kit::outcome_of(resp.object_status()),
                    resp.id(),
                    "polled".to_owned(),
                );
            }
            Ok(resp) if resp.ok() => match kit::find_ours(&resp, &entry.op_id) {
                Some((outcome, id)) => entry.set(outcome, id, "found by search".to_owned()),
                None => return kit::create_once(&self.store, entry, &request.common).await,
            },
            Ok(_) | Err(_) => {}
        }
        self.store.keep(&entry)
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        // The flaw: no signature check, no dedupe, no ordering.
        let Ok(event) = serde_json::from_str::<Value>(&request.body) else {
            return Ok(kit::webhook_rejected());
        };
        let Some(op_id) = event["data"]["client_reference"].as_str() else {
            return Ok(kit::webhook_not_ours());
        };
        let Some(mut entry) = self.store.get(op_id)? else {
            return Ok(kit::webhook_not_ours());
        };
        let (outcome, id, evidence) = kit::event_outcome(&event);
        entry.set(outcome, id, evidence);
        self.store.put(&entry)?;
        Ok(kit::webhook_applied(entry.op_id))
    }
}

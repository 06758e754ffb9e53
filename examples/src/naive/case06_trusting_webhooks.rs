//! Case 6 (webhook before and after the reconciliation poll).
//!
//! FLAW: its webhook handler believes every event: no signature check, no
//! memory of which events it already applied, and each event simply overwrites
//! the stored status, so an old `created` (processing) event arriving after the
//! poll found the object `succeeded` moves it back. The case-6 scenario catches
//! it: a forged event changes the outcome, and a late or repeated event makes a
//! terminal outcome change.

use std::path::Path;

use async_trait::async_trait;
use harness::adapter::{Adapter, AdapterFailure};
use harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest,
    WebhookReply, WebhookRequest,
};
use serde_json::Value;

use super::kit::{self, Entry, Factory, FileStore, Http};

/// Accepts forged, duplicate and late events.
#[derive(Debug)]
pub struct TrustingWebhooks {
    store: FileStore,
}

/// Its factory.
pub const FACTORY: Factory = Factory {
    name: "naive-06-trusting-webhooks",
    build: |dir: &Path| {
        Ok(Box::new(TrustingWebhooks {
            store: FileStore::open(dir)?,
        }))
    },
};

impl TrustingWebhooks {
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
        let body = kit::create_body(&entry.args, &entry.op_id);
        entry.attempts += 1;
        let answer = http
            .post(
                &entry.resource,
                &body,
                key.as_deref()
                    .map(|k| (contract.idempotency.header.as_str(), k)),
            )
            .await;
        let (outcome, provider_ref, evidence) = kit::read_create(&answer);
        entry.set(outcome, provider_ref, evidence);
        self.store.put(&entry)?;
        Ok(entry.reply())
    }
}

#[async_trait]
impl Adapter for TrustingWebhooks {
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
        let Some(mut entry) = self.store.get(&request.operation_id)? else {
            return Ok(kit::no_record(&request.operation_id));
        };
        if kit::is_final(entry.outcome) {
            return Ok(entry.reply());
        }
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
                Some(object) => {
                    let status = object.get("status").and_then(Value::as_str).unwrap_or("");
                    let id = object.get("id").and_then(Value::as_str).map(str::to_owned);
                    entry.set(kit::outcome_of(status), id, "found by search".to_owned());
                }
                None => return self.create(entry, &request.common).await,
            },
            Ok(_) | Err(_) => {}
        }
        self.store.put(&entry)?;
        Ok(entry.reply())
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        // The flaw: no signature check, no dedupe, no ordering.
        let Ok(event) = serde_json::from_str::<Value>(&request.body) else {
            return Ok(WebhookReply {
                accepted: false,
                operation_id: None,
            });
        };
        let data = &event["data"];
        let Some(op_id) = data["client_reference"].as_str() else {
            return Ok(WebhookReply {
                accepted: true,
                operation_id: None,
            });
        };
        let Some(mut entry) = self.store.get(op_id)? else {
            return Ok(WebhookReply {
                accepted: true,
                operation_id: None,
            });
        };
        let event_type = event["type"].as_str().unwrap_or("");
        let outcome = if event_type.ends_with(".failed") {
            OutcomeKind::Failed
        } else if event_type.ends_with(".succeeded") {
            OutcomeKind::Succeeded
        } else {
            kit::outcome_of(data["status"].as_str().unwrap_or(""))
        };
        let id = data["id"].as_str().map(str::to_owned);
        entry.set(outcome, id, format!("webhook {event_type}"));
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

//! Case 3 (provider still processing when reconciliation starts).
//!
//! FLAW: a 2xx create is taken as done, whatever the object's status, so a
//! `202 processing` object is reported `succeeded` before it settled (and
//! settles `failed` sometimes). Its reconcile looks for a *finished* object and
//! re-creates when it finds none, so an object still `processing` gets a twin.
//! It sends no idempotency key: "the search makes it safe". The case-3
//! scenario catches it: either the early `succeeded` (expected `pending`, or a
//! success that settles as a failure) or the second effect.

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply};
use serde_json::Value;

use super::kit::{self, Entry, FileStore, Http, Naive, Records};

/// Calls `processing` done.
#[derive(Debug)]
pub struct ProcessingIsDone {
    store: FileStore,
}

kit::file_backed!(ProcessingIsDone, "naive-03-processing-is-done");

impl ProcessingIsDone {
    /// Search for a finished object of ours; create when there is none.
    async fn ensure_created(
        &self,
        mut entry: Entry,
        http: &Http,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let search = http
            .get(&format!(
                "/v1/{}?client_reference={}",
                entry.resource, entry.op_id
            ))
            .await;
        if let Ok(resp) = &search {
            let listed = resp
                .body
                .get("data")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            // The flaw: only a `succeeded` object counts as "already there".
            if let Some(done) = listed
                .iter()
                .find(|o| o.get("status").and_then(Value::as_str) == Some("succeeded"))
            {
                let id = done.get("id").and_then(Value::as_str).map(str::to_owned);
                entry.set(OutcomeKind::Succeeded, id, "found by search".to_owned());
                return self.store.keep(&entry);
            }
        }
        entry.attempts += 1;
        match http
            .post(
                &entry.resource,
                &kit::create_body(&entry.args, &entry.op_id),
                None,
            )
            .await
        {
            // The flaw: 2xx means done.
            Ok(resp) if resp.ok() => entry.set(
                OutcomeKind::Succeeded,
                resp.id(),
                format!("created: {}", resp.status),
            ),
            Ok(resp) => entry.set(
                OutcomeKind::Failed,
                None,
                format!("rejected: {}", resp.status),
            ),
            Err(error) => entry.set(OutcomeKind::Unknown, None, error.to_string()),
        }
        self.store.keep(&entry)
    }
}

#[async_trait]
impl Naive for ProcessingIsDone {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.get(&request.operation.id)? {
            Some(entry) if kit::is_final(entry.outcome) => return Ok(entry.reply()),
            Some(entry) => entry,
            None => Entry::new(&request.operation),
        };
        let http = Http::new(&request.common)?;
        self.ensure_created(entry, &http).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        let http = Http::new(&request.common)?;
        self.ensure_created(entry, &http).await
    }
}

//! Case 1 (timeout before the provider receives the request).
//!
//! FLAW: any error on the way to the provider is written down as `failed`,
//! including a timeout that proves nothing, and a failed operation is never
//! looked at again. The case-1 scenario catches it: the request never arrived,
//! so a retry (or a reconcile) would have finished the work, but this adapter
//! reports a failure with no evidence and never finishes the operation.

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply};

use super::kit::{self, Entry, FileStore, Http, Naive, Records};

/// Reports `failed` on a timeout.
#[derive(Debug)]
pub struct FailsOnTimeout {
    store: FileStore,
}

kit::file_backed!(FailsOnTimeout, "naive-01-fails-on-timeout");

#[async_trait]
impl Naive for FailsOnTimeout {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let op = &request.operation;
        if let Some(entry) = self.store.get(&op.id)? {
            return Ok(entry.reply());
        }
        let http = Http::new(&request.common)?;
        let mut entry = Entry::new(op);
        entry.key = Some(format!("lr-{}", op.id));
        entry.attempts = 1;
        match http
            .post(
                &op.resource,
                &kit::create_body(&op.args, &op.id),
                kit::key_header(&request.common, entry.key.as_deref()),
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
        self.store.keep(&entry)
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let Some(mut entry) = self.store.get(&request.operation_id)? else {
            return Ok(kit::no_record(&request.operation_id));
        };
        // Only something the provider has accepted and still works on is polled.
        if let (OutcomeKind::Pending, Some(id)) = (entry.outcome, entry.provider_ref.clone()) {
            let http = Http::new(&request.common)?;
            if let Some(status) = kit::retrieve(&http, &mut entry, &id).await {
                entry.evidence = format!("retrieve: {status}");
                self.store.put(&entry)?;
            }
        }
        Ok(entry.reply())
    }
}

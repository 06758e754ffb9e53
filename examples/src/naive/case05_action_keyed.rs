//! Case 5 (same key accidentally reused with different arguments).
//!
//! FLAW: the idempotency key is derived from what is being done
//! (`create-tickets`), not from which operation is doing it, so two different
//! operations on one resource share a key. When the provider then refuses the
//! second one (400 `idempotency_error`, 422, or 409 in flight), the adapter
//! reads "this key was already used" as "this was already done" and reports
//! success with no object. The case-5 scenario catches it: a `succeeded` that
//! names no effect of that operation (and the second operation never runs).

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply,
};

use super::kit::{self, Entry, FileStore, Http, Naive, Records};

/// Derives keys from the action and resource.
#[derive(Debug)]
pub struct ActionKeyed {
    store: FileStore,
}

kit::file_backed!(ActionKeyed, "naive-05-action-keyed");

impl ActionKeyed {
    async fn send(
        &self,
        mut entry: Entry,
        common: &Common,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let http = Http::new(common)?;
        let header = common.provider.contract.idempotency.header.as_str();
        let key = entry.key.clone().unwrap_or_default();
        let body = kit::create_body(&entry.args, &entry.op_id);
        // One immediate retry with the same key and body: that part is right.
        for _ in 0..2 {
            entry.attempts += 1;
            match http
                .post(&entry.resource, &body, Some((header, &key)))
                .await
            {
                // The flaw: "key already used" read as "already done".
                Ok(resp)
                    if resp.error_type() == "idempotency_error"
                        || resp.status == 422
                        || resp.status == 409 =>
                {
                    entry.set(
                        OutcomeKind::Succeeded,
                        None,
                        format!("duplicate request, already processed ({})", resp.status),
                    );
                    break;
                }
                answer => {
                    if kit::record_attempt(&mut entry, answer) {
                        break;
                    }
                }
            }
        }
        self.store.keep(&entry)
    }
}

#[async_trait]
impl Naive for ActionKeyed {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let op = &request.operation;
        let entry = match self.store.get(&op.id)? {
            Some(entry) if kit::is_final(entry.outcome) => return Ok(entry.reply()),
            Some(entry) => entry,
            None => {
                let mut entry = Entry::new(op);
                // The flaw: the key names the action, not the operation.
                entry.key = Some(format!("{}-{}", op.action, op.resource));
                entry
            }
        };
        self.send(entry, &request.common).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => self.send(entry, &request.common).await,
            Err(reply) => Ok(reply),
        }
    }
}

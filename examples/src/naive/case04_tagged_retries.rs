//! Case 4 (same key replayed with identical arguments).
//!
//! FLAW: it keeps one key per operation (good) but tags every retry with an
//! `attempt` field "so the provider's logs show it was a retry", which changes
//! the arguments under the same key; and when the provider does replay, it
//! says "already done" without taking the replayed object's id. Whatever 4xx
//! comes back is a failure. The case-4 scenario catches it: the retry's body
//! differs from the first (same arguments on every attempt is violated), the
//! provider refuses the changed body under a used key, and the adapter calls
//! an operation whose effect exists `failed` (or `succeeded` with no object).

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply,
};
use serde_json::Value;

use super::kit::{self, Entry, FileStore, Http, Naive, Records};

/// Tries per call.
const ATTEMPTS: u32 = 3;

/// Changes the arguments on retry.
#[derive(Debug)]
pub struct TaggedRetries {
    store: FileStore,
}

kit::file_backed!(TaggedRetries, "naive-04-tagged-retries");

impl TaggedRetries {
    async fn send(
        &self,
        mut entry: Entry,
        common: &Common,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let http = Http::new(common)?;
        let header = common.provider.contract.idempotency.header.as_str();
        let key = entry
            .key
            .clone()
            .unwrap_or_else(|| format!("lr-{}", entry.op_id));
        entry.key = Some(key.clone());
        for _ in 0..ATTEMPTS {
            entry.attempts += 1;
            let mut body = kit::create_body(&entry.args, &entry.op_id);
            if entry.attempts > 1 {
                // The flaw: the retry is not the same request any more.
                if let Value::Object(fields) = &mut body {
                    fields.insert("attempt".to_owned(), Value::from(entry.attempts));
                }
            }
            match http
                .post(&entry.resource, &body, Some((header, &key)))
                .await
            {
                Ok(resp) if resp.ok() && resp.replayed => {
                    // The flaw: the replayed object's id is thrown away.
                    entry.set(
                        OutcomeKind::Succeeded,
                        None,
                        "already done (replayed)".to_owned(),
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
impl Naive for TaggedRetries {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let entry = match self.store.get(&request.operation.id)? {
            Some(entry) if kit::is_final(entry.outcome) => return Ok(entry.reply()),
            Some(entry) => entry,
            None => Entry::new(&request.operation),
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

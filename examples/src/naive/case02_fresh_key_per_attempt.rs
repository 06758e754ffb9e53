//! Case 2 (timeout after the provider commits the effect).
//!
//! FLAW: every attempt gets a brand-new idempotency key ("a fresh UUID per
//! request"), so a retry after a lost response is new work to the provider: a
//! second effect. When the attempts run out it calls the timeouts a failure.
//! The case-2 scenario catches it: the first create commits, its response is
//! lost, the retry commits again (at most once, and the same key on every
//! attempt, are both violated).

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply};

use super::kit::{self, Entry, FileStore, Http, Naive, Records};

/// How many times a create is tried before giving up.
const ATTEMPTS: u32 = 3;

/// Retries with a new key.
#[derive(Debug)]
pub struct FreshKeyPerAttempt {
    store: FileStore,
}

kit::file_backed!(FreshKeyPerAttempt, "naive-02-fresh-key-per-attempt");

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
                    return self.store.keep(&entry);
                }
                Ok(resp) if resp.status < 500 => {
                    entry.set(
                        OutcomeKind::Failed,
                        None,
                        format!("rejected: {}", resp.status),
                    );
                    return self.store.keep(&entry);
                }
                Ok(resp) => last_error = format!("status {}", resp.status),
                Err(error) => last_error = error.to_string(),
            }
        }
        entry.set(
            OutcomeKind::Failed,
            None,
            format!("gave up after {ATTEMPTS} attempts: {last_error}"),
        );
        self.store.keep(&entry)
    }
}

#[async_trait]
impl Naive for FreshKeyPerAttempt {
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
        let entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        let http = Http::new(&request.common)?;
        let header = &request.common.provider.contract.idempotency.header;
        self.run(entry, &http, header).await
    }
}

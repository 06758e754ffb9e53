//! Case 7 (two reconcilers racing on one operation).
//!
//! FLAW: the algorithm is the right one (durable intent, search by
//! `client_reference`, re-create only when the search proves absence), but its
//! store has no lock, so check-then-create is not atomic. Two reconcilers that
//! start together both search, both find nothing, and both create. The case-7
//! scenario catches it on a provider without keys (so nothing else dedupes):
//! two effects for one operation.

use async_trait::async_trait;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{ExecuteRequest, OperationRequest, OutcomeReply};

use super::kit::{self, FileStore, Http, Naive, Records};

/// Reconciles without a lock.
#[derive(Debug)]
pub struct UnlockedReconciler {
    store: FileStore,
}

kit::file_backed!(UnlockedReconciler, "naive-07-unlocked-reconciler");

#[async_trait]
impl Naive for UnlockedReconciler {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        kit::execute_once(&self.store, &request).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        // The flaw: nothing stops a second reconciler between this read and the create.
        let mut entry = match self.store.unsettled(&request.operation_id)? {
            Ok(entry) => entry,
            Err(reply) => return Ok(reply),
        };
        let http = Http::new(&request.common)?;
        if let Some(id) = entry.provider_ref.clone() {
            if kit::retrieve(&http, &mut entry, &id).await.is_some() {
                self.store.put(&entry)?;
            }
            return Ok(entry.reply());
        }
        match http
            .get(&format!(
                "/v1/{}?client_reference={}",
                entry.resource, entry.op_id
            ))
            .await
        {
            Ok(resp) if resp.status == 200 => match kit::find_ours(&resp, &entry.op_id) {
                Some((outcome, id)) => {
                    entry.set(outcome, id, "found by search".to_owned());
                    self.store.keep(&entry)
                }
                None => kit::create_once(&self.store, entry, &request.common).await,
            },
            Ok(resp) => {
                entry.evidence = format!("search failed: {}", resp.status);
                Ok(entry.reply())
            }
            Err(error) => {
                entry.evidence = format!("search failed: {error}");
                Ok(entry.reply())
            }
        }
    }
}

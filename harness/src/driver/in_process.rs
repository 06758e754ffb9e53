//! A Rust adapter in this process. Each call runs as its own task so that a
//! crash can abort it at the commit point and a panic is an adapter error, not ours.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lostreply_reports::model::CallEnd;
use lostreply_simulator::sync::lock;
use tokio::sync::oneshot;

use super::output::{crash_signal, CallOutput};
use crate::adapter::{Adapter, AdapterFactory, AdapterFailure};
use crate::dispatch::{dispatch, CallRequest, DispatchError};
use crate::protocol::CallName;

pub(super) struct Instance {
    factory: Arc<dyn AdapterFactory>,
    current: Mutex<Arc<dyn Adapter>>,
}

impl Instance {
    pub(super) fn build(
        factory: Arc<dyn AdapterFactory>,
        state_dir: &Path,
    ) -> Result<Instance, AdapterFailure> {
        let adapter = factory.build(state_dir)?;
        Ok(Instance {
            factory,
            current: Mutex::new(Arc::from(adapter)),
        })
    }

    pub(super) fn rebuild(&self, state_dir: &Path) -> Result<(), AdapterFailure> {
        let fresh: Arc<dyn Adapter> = Arc::from(self.factory.build(state_dir)?);
        *lock(&self.current) = fresh;
        Ok(())
    }

    fn adapter(&self) -> Arc<dyn Adapter> {
        lock(&self.current).clone()
    }

    pub(super) async fn call(
        &self,
        name: CallName,
        request: &serde_json::Value,
        deadline: Duration,
        crash: Option<oneshot::Receiver<()>>,
    ) -> CallOutput {
        let adapter = self.adapter();
        let request = request.clone();
        let mut task = tokio::spawn(async move {
            let request =
                CallRequest::from_value(name, request).map_err(CallFailure::MalformedRequest)?;
            dispatch(adapter.as_ref(), request)
                .await
                .map_err(CallFailure::from)
        });
        let crash = crash_signal(crash);
        let end = tokio::select! {
            joined = &mut task => match joined {
                Ok(Ok(reply)) => return CallOutput { reply: Some(reply), end: CallEnd::Replied, stderr: String::new() },
                Ok(Err(failure)) => CallEnd::Failed { message: failure.to_string().into() },
                Err(join) if join.is_panic() => CallEnd::Failed { message: format!("the adapter panicked: {}", panic_message(join.into_panic())).into() },
                Err(join) => CallEnd::Failed { message: format!("the adapter task ended: {join}").into() },
            },
            _ = tokio::time::sleep(deadline) => {
                task.abort();
                let _ = task.await;
                CallEnd::Deadline { deadline_ms: deadline.as_millis() as u64 }
            }
            _ = crash => {
                // Aborting the task drops every future and socket it held, as a kill would.
                task.abort();
                let _ = task.await;
                CallEnd::Crashed
            }
        };
        CallOutput {
            reply: None,
            end,
            stderr: String::new(),
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-text panic payload".to_owned()
    }
}

/// Why an in-process call has no reply: its [`CallEnd::Failed`] says this.
#[derive(Debug, thiserror::Error)]
enum CallFailure {
    /// The harness built a request that does not parse: a harness bug,
    /// reported loudly rather than blamed on the adapter.
    #[error("harness sent a malformed request: {0}")]
    MalformedRequest(serde_json::Error),
    /// The adapter's call failed.
    #[error(transparent)]
    Adapter(AdapterFailure),
    /// The adapter's reply could not be serialized (the serializer's own text).
    #[error("{0}")]
    Reply(serde_json::Error),
}

impl From<DispatchError> for CallFailure {
    fn from(error: DispatchError) -> CallFailure {
        match error {
            DispatchError::Adapter(failure) => CallFailure::Adapter(failure),
            DispatchError::Reply(e) => CallFailure::Reply(e),
        }
    }
}

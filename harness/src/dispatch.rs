//! One call of the adapter protocol answered by an in-process [`Adapter`]: the
//! request read as its call's type ([`CallRequest`]), the trait's method for that
//! call, the reply as JSON ([`dispatch`]). The in-process driver and
//! `serve_call` (an in-process adapter served as a process) both go through
//! here, so the five calls meet the five methods in one place. Each reports what
//! goes wrong in its own terms: the driver as how the call ended, `serve_call`
//! with the line and column of a bad request.

use serde::de::{Deserialize, Deserializer};
use serde::Serialize;

use crate::adapter::{Adapter, AdapterFailure};
use crate::protocol::{
    CallName, Common, ExecuteRequest, OperationRequest, ResolveRequest, WebhookRequest,
};

/// A request of one of the five calls, read as that call's type.
#[derive(Debug, Clone, PartialEq)]
pub enum CallRequest {
    /// `execute`.
    Execute(ExecuteRequest),
    /// `reconcile`.
    Reconcile(OperationRequest),
    /// `webhook`.
    Webhook(WebhookRequest),
    /// `resolve`.
    Resolve(ResolveRequest),
    /// `status`.
    Status(OperationRequest),
}

impl CallRequest {
    /// Reads `request` as a request of `call`.
    pub fn from_value(
        call: CallName,
        request: serde_json::Value,
    ) -> Result<CallRequest, serde_json::Error> {
        CallRequest::deserialize(call, request)
    }

    /// Reads JSON text as a request of `call`. Unlike going through a
    /// [`serde_json::Value`], an error keeps the line and column it is at in the text.
    pub fn from_slice(call: CallName, json: &[u8]) -> Result<CallRequest, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(json);
        let request = CallRequest::deserialize(call, &mut de)?;
        // As `serde_json::from_slice` does: nothing but whitespace may follow.
        de.end()?;
        Ok(request)
    }

    fn deserialize<'de, D: Deserializer<'de>>(
        call: CallName,
        de: D,
    ) -> Result<CallRequest, D::Error> {
        Ok(match call {
            CallName::Execute => CallRequest::Execute(ExecuteRequest::deserialize(de)?),
            CallName::Reconcile => CallRequest::Reconcile(OperationRequest::deserialize(de)?),
            CallName::Webhook => CallRequest::Webhook(WebhookRequest::deserialize(de)?),
            CallName::Resolve => CallRequest::Resolve(ResolveRequest::deserialize(de)?),
            CallName::Status => CallRequest::Status(OperationRequest::deserialize(de)?),
        })
    }

    /// The fields every call carries.
    pub fn common(&self) -> &Common {
        match self {
            CallRequest::Execute(r) => &r.common,
            CallRequest::Reconcile(r) | CallRequest::Status(r) => &r.common,
            CallRequest::Webhook(r) => &r.common,
            CallRequest::Resolve(r) => &r.common,
        }
    }
}

/// Why a call was not answered. Each caller reports these in its own terms.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// The adapter's call failed.
    #[error(transparent)]
    Adapter(AdapterFailure),
    /// The adapter's reply could not be serialized.
    #[error("cannot serialize the reply: {0}")]
    Reply(#[source] serde_json::Error),
}

/// Calls the method of `adapter` for the request's call and returns its reply as JSON.
pub async fn dispatch(
    adapter: &dyn Adapter,
    request: CallRequest,
) -> Result<serde_json::Value, DispatchError> {
    match request {
        CallRequest::Execute(r) => reply(adapter.execute(r).await),
        CallRequest::Reconcile(r) => reply(adapter.reconcile(r).await),
        CallRequest::Webhook(r) => reply(adapter.webhook(r).await),
        CallRequest::Resolve(r) => reply(adapter.resolve(r).await),
        CallRequest::Status(r) => reply(adapter.status(r).await),
    }
}

fn reply<T: Serialize>(
    answered: Result<T, AdapterFailure>,
) -> Result<serde_json::Value, DispatchError> {
    let value = answered.map_err(DispatchError::Adapter)?;
    serde_json::to_value(value).map_err(DispatchError::Reply)
}

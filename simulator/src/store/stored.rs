//! An object as the store keeps it: tenant and resource interned, the id and
//! the fingerprint shared with the journal, the arguments kept once as the
//! JSON text they are answered with. [`Effect`] is the boundary form the
//! ledger hands out, converted on the way out.

use std::sync::Arc;

use lostreply_text::SharedStr;

use crate::json_text::JsonText;
use crate::record::{Effect, ObjectStatus};

/// One object.
#[derive(Debug)]
pub(crate) struct Stored {
    pub(crate) id: Arc<str>,
    pub(crate) tenant: Arc<str>,
    pub(crate) resource: Arc<str>,
    /// The arguments as JSON text, in the order the client sent them (shared
    /// with every effect handed out for it).
    pub(crate) args: JsonText,
    pub(crate) client_reference: Option<Box<str>>,
    pub(crate) metadata: Option<JsonText>,
    pub(crate) idempotency_key: Option<Box<str>>,
    pub(crate) fingerprint: Arc<str>,
    pub(crate) attempt: u32,
    pub(crate) created_at_ms: i64,
    pub(crate) status: ObjectStatus,
    pub(crate) request_seq: Option<u64>,
}

impl Stored {
    /// The ledger's form, `seq` its position from 1.
    pub(crate) fn to_effect(&self, seq: u64) -> Effect {
        Effect {
            seq,
            id: SharedStr::from(self.id.clone()),
            tenant: SharedStr::from(self.tenant.clone()),
            resource: SharedStr::from(self.resource.clone()),
            args: self.args.clone(),
            client_reference: self.client_reference.as_deref().map(SharedStr::from),
            metadata: self.metadata.clone(),
            idempotency_key: self.idempotency_key.as_deref().map(SharedStr::from),
            fingerprint: SharedStr::from(self.fingerprint.clone()),
            attempt: self.attempt,
            created_at_ms: self.created_at_ms,
            status: self.status,
            request_seq: self.request_seq,
        }
    }
}

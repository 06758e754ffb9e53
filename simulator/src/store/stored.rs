//! An object as the store keeps it: tenant and resource interned, the id and
//! the fingerprint shared with the journal, the arguments kept once as the
//! JSON text they are answered with. [`Effect`] is the boundary form the
//! ledger hands out, converted on the way out.

use lostreply_text::SharedStr;
use nonmax::NonMaxU64;

use crate::json_text::JsonText;
use crate::record::{Effect, EventKind, ObjectStatus};

/// The webhook events an object has had: kept with the object (in the room
/// its small fields leave), so that summarising it out counts its events
/// without searching the events for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Announced {
    /// No event: a seed object, or a plan without webhooks.
    Nothing,
    /// Its created event.
    Created,
    /// Its created event, then its settled one of this kind.
    Settled(EventKind),
}

/// One object.
#[derive(Debug)]
pub(crate) struct Stored {
    pub(crate) id: SharedStr,
    pub(crate) tenant: SharedStr,
    pub(crate) resource: SharedStr,
    /// The arguments as JSON text, in the order the client sent them (shared
    /// with every effect handed out for it).
    pub(crate) args: JsonText,
    pub(crate) client_reference: Option<SharedStr>,
    pub(crate) metadata: Option<JsonText>,
    pub(crate) idempotency_key: Option<SharedStr>,
    pub(crate) fingerprint: SharedStr,
    pub(crate) attempt: u32,
    pub(crate) created_at_ms: i64,
    pub(crate) status: ObjectStatus,
    pub(crate) announced: Announced,
    /// As the effect keeps it (8 bytes as an `Option`).
    pub(crate) request_seq: Option<NonMaxU64>,
}

impl Stored {
    /// The ledger's form, `seq` its position from 1.
    pub(crate) fn to_effect(&self, seq: u64) -> Effect {
        Effect {
            seq,
            // Shared text: a reference count per field, not a copy.
            id: self.id.clone(),
            tenant: self.tenant.clone(),
            resource: self.resource.clone(),
            args: self.args.clone(),
            client_reference: self.client_reference.clone(),
            metadata: self.metadata.clone().map(Box::new),
            idempotency_key: self.idempotency_key.clone(),
            fingerprint: self.fingerprint.clone(),
            attempt: self.attempt,
            created_at_ms: self.created_at_ms,
            status: self.status,
            request_seq: self.request_seq,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knowing_its_events_costs_an_object_no_room() {
        // Six 8-byte text handles, the 16-byte arguments, the 24-byte
        // optional metadata, the 8-byte time and request seq: 104 bytes; the
        // attempt, the status and `announced` share the last word.
        assert_eq!(std::mem::size_of::<Option<JsonText>>(), 24);
        assert_eq!(std::mem::size_of::<Announced>(), 1);
        assert_eq!(std::mem::size_of::<Stored>(), 112);
    }
}

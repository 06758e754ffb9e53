//! Objects, the ledger and webhook events: what the provider has done.
//!
//! The ledger is the object store: every effect is an object, and its status
//! moves when asynchronous work settles. Ids come from seeded ChaCha streams so
//! that the same seed and the same request order give the same ids.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::names::{id_prefix, random_id};
use crate::plan::{Plan, SettleResult};
use crate::record::{Effect, Event, EventKind, ObjectStatus};
use crate::time::rfc3339;

// Child streams of the one seed: adding events never shifts object ids.
const OBJECT_ID_STREAM: u64 = 1;
const EVENT_ID_STREAM: u64 = 2;

/// Everything a create needs to commit.
#[derive(Debug, Clone)]
pub(crate) struct NewObject {
    pub tenant: String,
    pub resource: String,
    pub args: Map<String, Value>,
    pub client_reference: Option<String>,
    pub metadata: Option<Value>,
    pub idempotency_key: Option<String>,
    pub fingerprint: String,
    pub attempt: u32,
    pub request_seq: Option<u64>,
}

/// The tenant already holds `Limits::max_objects` objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoreFull {
    pub max_objects: usize,
}

/// The provider's objects and events.
#[derive(Debug)]
pub(crate) struct Store {
    effects: Vec<Effect>,
    /// Index into `effects` by object id; only looked up, never iterated.
    by_id: HashMap<String, usize>,
    per_tenant: BTreeMap<String, usize>,
    events: Vec<Event>,
    object_ids: ChaCha20Rng,
    event_ids: ChaCha20Rng,
}

/// The wire form of an object, fields in the contract's order.
#[derive(Serialize)]
struct ObjectView<'a> {
    id: &'a str,
    object: &'a str,
    status: ObjectStatus,
    client_reference: Option<&'a str>,
    created_at: String,
    args: &'a Map<String, Value>,
    metadata: Value,
}

/// The JSON object of provider-api.md for an effect.
pub(crate) fn object_json(effect: &Effect) -> Value {
    serde_json::to_value(object_view(effect)).unwrap_or(Value::Null)
}

/// The JSON text of [`object_json`], written straight from the effect: going
/// through a `Value` first cost a second copy of every field per answer.
pub(crate) fn object_body(effect: &Effect) -> Bytes {
    serde_json::to_vec(&object_view(effect))
        .map(Bytes::from)
        .unwrap_or_else(|_| Bytes::from_static(b"null"))
}

fn object_view(effect: &Effect) -> ObjectView<'_> {
    ObjectView {
        id: &effect.id,
        object: &effect.resource,
        status: effect.status,
        client_reference: effect.client_reference.as_deref(),
        created_at: rfc3339(effect.created_at_ms),
        args: &effect.args,
        metadata: effect
            .metadata
            .clone()
            .unwrap_or_else(|| Value::Object(Map::new())),
    }
}

impl Store {
    pub(crate) fn new(seed: u64) -> Store {
        let mut object_ids = ChaCha20Rng::seed_from_u64(seed);
        object_ids.set_stream(OBJECT_ID_STREAM);
        let mut event_ids = ChaCha20Rng::seed_from_u64(seed);
        event_ids.set_stream(EVENT_ID_STREAM);
        Store {
            effects: Vec::new(),
            by_id: HashMap::new(),
            per_tenant: BTreeMap::new(),
            events: Vec::new(),
            object_ids,
            event_ids,
        }
    }

    pub(crate) fn effects(&self) -> &[Effect] {
        &self.effects
    }

    pub(crate) fn events(&self) -> &[Event] {
        &self.events
    }

    /// Commits one effect at `now_ms`: the object exists from here on.
    pub(crate) fn commit(
        &mut self,
        plan: &Plan,
        new: NewObject,
        now_ms: i64,
    ) -> Result<Effect, StoreFull> {
        self.insert(plan, new, now_ms, true)
    }

    /// An object that existed before the run: settled, no event.
    pub(crate) fn seed(
        &mut self,
        plan: &Plan,
        new: NewObject,
        created_at_ms: i64,
    ) -> Result<Effect, StoreFull> {
        self.insert(plan, new, created_at_ms, false)
    }

    fn insert(
        &mut self,
        plan: &Plan,
        new: NewObject,
        created_at_ms: i64,
        live: bool,
    ) -> Result<Effect, StoreFull> {
        let held = self.per_tenant.get(&new.tenant).copied().unwrap_or(0);
        if held >= plan.limits.max_objects {
            return Err(StoreFull {
                max_objects: plan.limits.max_objects,
            });
        }
        let id = loop {
            let candidate = random_id(&id_prefix(&new.resource), &mut self.object_ids);
            if !self.by_id.contains_key(&candidate) {
                break candidate;
            }
        };
        let status = match (live, plan.asynchronous) {
            (true, Some(_)) => ObjectStatus::Processing,
            (true, None) | (false, _) => ObjectStatus::Succeeded,
        };
        let effect = Effect {
            seq: self.effects.len() as u64 + 1,
            id: id.clone(),
            tenant: new.tenant.clone(),
            resource: new.resource,
            args: new.args,
            client_reference: new.client_reference,
            metadata: new.metadata,
            idempotency_key: new.idempotency_key,
            fingerprint: new.fingerprint,
            attempt: new.attempt,
            created_at_ms,
            status,
            request_seq: new.request_seq,
        };
        self.by_id.insert(id, self.effects.len());
        *self.per_tenant.entry(new.tenant).or_insert(0) += 1;
        self.effects.push(effect.clone());
        if live {
            self.emit(
                plan,
                self.effects.len() - 1,
                EventKind::Created,
                created_at_ms,
            );
        }
        Ok(effect)
    }

    /// Settles every asynchronous object whose time has come (`created_at + settle_after <= now`).
    pub(crate) fn settle_due(&mut self, plan: &Plan, now_ms: i64) {
        let Some(asynchronous) = plan.asynchronous else {
            return;
        };
        let (status, kind) = match asynchronous.result {
            SettleResult::Succeeded => (ObjectStatus::Succeeded, EventKind::Succeeded),
            SettleResult::Failed => (ObjectStatus::Failed, EventKind::Failed),
        };
        for index in 0..self.effects.len() {
            let effect = &mut self.effects[index];
            let due = effect
                .settles_at_ms(Some(asynchronous))
                .is_some_and(|at| at <= now_ms);
            if effect.status == ObjectStatus::Processing && due {
                effect.status = status;
                self.emit(plan, index, kind, now_ms);
            }
        }
    }

    fn emit(&mut self, plan: &Plan, index: usize, kind: EventKind, now_ms: i64) {
        if plan.webhooks.is_none() {
            return;
        }
        let effect = &self.effects[index];
        let id = random_id("evt", &mut self.event_ids);
        let event_type = format!("{}.{}", effect.resource, kind.name());
        let mut payload = Map::new();
        payload.insert("id".to_owned(), Value::String(id.clone()));
        payload.insert("type".to_owned(), Value::String(event_type.clone()));
        payload.insert("created_at".to_owned(), Value::String(rfc3339(now_ms)));
        payload.insert("data".to_owned(), object_json(effect));
        let event = Event {
            id,
            kind,
            event_type,
            object_id: effect.id.clone(),
            tenant: effect.tenant.clone(),
            created_at_ms: now_ms,
            body: Value::Object(payload).to_string(),
        };
        self.events.push(event);
    }

    /// The object `id` of `tenant` in `resource`; `None` for anything else, so that
    /// another tenant's id and a missing id are indistinguishable.
    pub(crate) fn get(&self, tenant: &str, resource: &str, id: &str) -> Option<&Effect> {
        let effect = self.effects.get(*self.by_id.get(id)?)?;
        (effect.tenant == tenant && effect.resource == resource).then_some(effect)
    }

    /// The caller's objects in `resource` that pass `keep`, newest first.
    pub(crate) fn newest_first(
        &self,
        tenant: &str,
        resource: &str,
        keep: impl Fn(&Effect) -> bool,
    ) -> Vec<&Effect> {
        let mut found: Vec<&Effect> = self
            .effects
            .iter()
            .filter(|e| e.tenant == tenant && e.resource == resource && keep(e))
            .collect();
        found.sort_by_key(|e| std::cmp::Reverse((e.created_at_ms, e.seq)));
        found
    }

    pub(crate) fn event(&self, id: &str) -> Option<&Event> {
        self.events.iter().find(|e| e.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(client_reference: Option<&str>, metadata: Option<Value>) -> Effect {
        let args = serde_json::json!({"z": 1.5, "a": ["é\n", null, {"k": true}], "m": -3})
            .as_object()
            .cloned()
            .unwrap_or_default();
        Effect {
            seq: 1,
            id: "tkt_1".to_owned(),
            tenant: "sk_test".to_owned(),
            resource: "tickets".to_owned(),
            args,
            client_reference: client_reference.map(str::to_owned),
            metadata,
            idempotency_key: None,
            fingerprint: String::new(),
            attempt: 1,
            created_at_ms: 1_767_225_600_000,
            status: ObjectStatus::Succeeded,
            request_seq: Some(1),
        }
    }

    #[test]
    fn object_body_is_the_text_of_object_json() {
        for e in [
            effect(None, None),
            effect(Some("ref \"1\""), Some(serde_json::json!({"b": 2, "a": 1}))),
        ] {
            let body = object_body(&e);
            assert_eq!(
                std::str::from_utf8(&body).ok(),
                Some(object_json(&e).to_string().as_str())
            );
        }
    }
}

//! Objects, the ledger and webhook events: what the provider has done.
//!
//! The ledger is the object store: every effect is an object, and its status
//! moves when asynchronous work settles. Ids come from seeded ChaCha streams so
//! that the same seed and the same request order give the same ids.
//!
//! Objects are kept compact (`stored`): a long `serve` holds a million of
//! them, and the ledger's [`Effect`] is made only when someone reads it.
//!
//! Bounded without refusing: past `Limits::max_objects` objects (all tenants
//! together) the oldest are summarised out ([`SummarisedObjects`]: counts by
//! tenant and resource, the created-time range), as the journal summarises
//! its oldest entries, so a `serve` that runs for days keeps creating. A
//! summarised object retrieves as one past its retention does (not found).
//! Oldest first, so an object whose idempotency key is still retained goes
//! only after every older one; when even the oldest is still inside its
//! retention it goes anyway (memory stays bounded) and is counted as such.
//! Only `Limits::hard_cap_objects` refuses a create (507).
//!
//! An object's webhook events go with it ([`SummarisedEvents`]: counts by
//! kind and type): a summarised event answers as one the provider never
//! produced, so the events held stay within a small multiple of the bound.
//! Events are found by id through an index of their positions, which loses
//! an event's entry when the event leaves the queue, so it is bounded as the
//! queue is.

mod stored;

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use lostreply_text::SharedStr;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
use serde_json::Value;

use crate::fixed_map::{fixed_hash, FixedMap};
use crate::journal::Interner;
use crate::names::{object_id, prefixed_id, random_id};
use crate::plan::{Plan, SettleResult};
use crate::profile::render::{self, object_value, status_word, ObjectFacts};
use crate::profile::{ObjectShape, Objects, Profile};
use crate::record::{Effect, Event, EventKind, ObjectStatus};
use crate::scratch;
use crate::time::with_rfc3339;

use crate::json_text::JsonText;
use stored::Announced;
pub(crate) use stored::Stored;

// Child streams of the one seed: adding events never shifts object ids.
const OBJECT_ID_STREAM: u64 = 1;
const EVENT_ID_STREAM: u64 = 2;

/// Everything a create needs to commit, every text already written as the
/// object keeps it: the commit runs under the state lock that every request
/// takes, and writing the arguments' text there lengthened it for all.
#[derive(Debug, Clone)]
pub(crate) struct NewObject {
    /// Shared copies (the plan's tenant, the store's interned collection),
    /// which the object keeps as they are.
    pub tenant: SharedStr,
    pub resource: SharedStr,
    /// The arguments' compact text (`JsonText::of` the map).
    pub args: JsonText,
    pub client_reference: Option<SharedStr>,
    /// The metadata's compact text (`JsonText::of` the object).
    pub metadata: Option<JsonText>,
    /// Shared with the request's journal entry.
    pub idempotency_key: Option<SharedStr>,
    /// Shared with the journal entry and the attempt count.
    pub fingerprint: SharedStr,
    pub attempt: u32,
    pub request_seq: Option<u64>,
}

/// The tenant already holds `Limits::hard_cap_objects` objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoreFull {
    pub max_objects: usize,
}

/// What the objects summarised out of the store (the oldest, past
/// `Limits::max_objects`) were, so a long run's totals stay known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SummarisedObjects {
    /// Objects summarised out: the retained ledger starts at `seq`
    /// `summarised + 1`.
    pub summarised: u64,
    /// Of those, objects summarised out while still inside the idempotency
    /// retention (from their creation, simulator clock): only when every
    /// object held was, as memory must stay bounded.
    pub in_retention: u64,
    /// Counts by tenant.
    pub by_tenant: BTreeMap<String, u64>,
    /// Counts by resource (collection).
    pub by_resource: BTreeMap<String, u64>,
    /// The earliest `created_at_ms` summarised out.
    pub oldest_created_at_ms: Option<i64>,
    /// The latest `created_at_ms` summarised out.
    pub newest_created_at_ms: Option<i64>,
}

/// What the webhook events of the objects summarised out were: an object's
/// events go with it, so that the events held stay bounded too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SummarisedEvents {
    /// Events summarised out: every event of every object summarised out.
    pub summarised: u64,
    /// Counts by kind.
    pub by_kind: BTreeMap<EventKind, u64>,
    /// Counts by event type, as the events were delivered (`tickets.created`;
    /// under a profile, its own such as `charge.succeeded`).
    pub by_type: BTreeMap<String, u64>,
}

/// One page of the events held, in the order they were produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventsPage {
    pub events: Vec<Event>,
    /// The last event's id when more events follow the page: the `after`
    /// of the next page.
    pub next_after: Option<String>,
}

impl EventsPage {
    pub(crate) fn has_more(&self) -> bool {
        self.next_after.is_some()
    }
}

/// How many events a page holds at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageSize {
    /// Every event held from the start of the page on.
    Whole,
    /// At most this many (at least one).
    AtMost(usize),
}

/// A page's `after` names no event held: unknown, or summarised out with its
/// object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnknownEvent;

/// An event, with its object's position (as `by_id` holds it): the event
/// is held only while its object is.
#[derive(Debug)]
struct HeldEvent {
    object: u64,
    event: Event,
}

/// Adds one to `name`'s count, copying the name only the first time.
fn count(counts: &mut BTreeMap<String, u64>, name: &str) {
    match counts.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            counts.insert(name.to_owned(), 1);
        }
    }
}

/// The provider's objects and events.
#[derive(Debug)]
pub(crate) struct Store {
    /// Objects in commit order; the front is summarised out past the bound.
    effects: VecDeque<Stored>,
    /// Position (from 0, since the start: summarised objects included) by a
    /// hash of the object id (checked against the id itself), so the index
    /// holds no second copy of every id. Only looked up, never iterated. Ids
    /// are drawn until their hash is new too.
    by_id: FixedMap<u64, u64>,
    summarised: SummarisedObjects,
    /// Collections (and the tenants of seed objects and MCP calls), one copy
    /// each, shared with the attempt counts; a `/v1` create brings its
    /// tenant as the plan's shared copy (`Shared::tenants`).
    pub(crate) strings: Interner,
    per_tenant: BTreeMap<String, usize>,
    /// Events in the order they were produced. Those of summarised objects
    /// are counted at once and freed from the front: one that waits behind
    /// a held object's event (an old object's settled event) is no longer
    /// shown, so at most a settled event per object waits there.
    events: VecDeque<HeldEvent>,
    /// How many events have left the front of `events`: the event at
    /// `events[i]` was produced `events_freed + i`-th (from 0).
    events_freed: u64,
    /// Production position by a hash of the event id (checked against the
    /// id itself), as `by_id` is for objects. An entry goes when its event
    /// leaves `events`; an event summarised out but still waiting in the
    /// queue keeps its entry until then and is told apart by its object's
    /// position.
    event_positions: FixedMap<u64, u64>,
    summarised_events: SummarisedEvents,
    object_ids: ChaCha20Rng,
    event_ids: ChaCha20Rng,
}

/// The fields of an object's body other than its arguments and metadata.
struct Head<'a> {
    id: &'a str,
    object: &'a str,
    status: ObjectStatus,
    client_reference: Option<&'a str>,
    created_at_ms: i64,
}

/// Writes an object's body, fields in the contract's order (`id`, `object`,
/// `status`, `client_reference`, `created_at`, `args`, `metadata`); absent
/// metadata is shown as `{}`. The text is serde_json's for the same fields:
/// the arguments and metadata are JSON text already and are pasted, and the
/// field names are written as they are, as they hold nothing JSON escapes.
/// Every create and every read writes one, and serde_json's escaping of
/// every name and value, byte by byte, would be about a twentieth of a
/// request's handling.
fn write_body(head: Head<'_>, args: &JsonText, metadata: Option<&JsonText>) -> Bytes {
    scratch::bytes(|out| {
        out.extend_from_slice(b"{\"id\":");
        push_json_str(out, head.id);
        out.extend_from_slice(b",\"object\":");
        push_json_str(out, head.object);
        out.extend_from_slice(b",\"status\":\"");
        out.extend_from_slice(head.status.wire_name().as_bytes());
        out.extend_from_slice(b"\",\"client_reference\":");
        match head.client_reference {
            Some(reference) => push_json_str(out, reference),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"created_at\":");
        with_rfc3339(head.created_at_ms, |text| push_json_str(out, text));
        out.extend_from_slice(b",\"args\":");
        out.extend_from_slice(args.get().as_bytes());
        out.extend_from_slice(b",\"metadata\":");
        out.extend_from_slice(metadata.map_or("{}", JsonText::get).as_bytes());
        out.push(b'}');
    })
}

/// Appends `text` as a JSON string, as serde_json writes it: quoted as it is
/// when it holds nothing JSON escapes (a control character, `"` or `\`),
/// as ids, names and instants never do; escaped by serde_json otherwise.
fn push_json_str(out: &mut Vec<u8>, text: &str) {
    // A fold rather than `all`: no early exit, so the compiler checks the
    // bytes many at a time.
    let plain = !text.bytes().fold(false, |escapes, b| {
        escapes | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if plain {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else if serde_json::to_writer(&mut *out, text).is_err() {
        // Writing a string into a `Vec` cannot fail; `null` keeps the body JSON.
        out.extend_from_slice(b"null");
    }
}

pub(crate) fn object_json(profile: &Profile, object: &Stored) -> Value {
    match &profile.objects {
        Objects::Generic => {
            serde_json::from_slice(&object_body(profile, object)).unwrap_or(Value::Null)
        }
        Objects::Shaped(shape) => object_value(profile, shape, stored_facts(object)),
    }
}

fn stored_facts(object: &Stored) -> ObjectFacts<'_> {
    ObjectFacts {
        id: &object.id,
        resource: &object.resource,
        status: object.status,
        client_reference: object.client_reference.as_deref(),
        created_at_ms: object.created_at_ms,
        args: &object.args,
        metadata: object.metadata.as_ref(),
    }
}

/// A shaped object's body.
fn shaped_body(profile: &Profile, shape: &ObjectShape, facts: ObjectFacts<'_>) -> Bytes {
    render::object_bytes(profile, shape, facts)
}

/// An object's API body.
pub(crate) fn object_body(profile: &Profile, object: &Stored) -> Bytes {
    if let Objects::Shaped(shape) = &profile.objects {
        return shaped_body(profile, shape, stored_facts(object));
    }
    let head = Head {
        id: &object.id,
        object: &object.resource,
        status: object.status,
        client_reference: object.client_reference.as_deref(),
        created_at_ms: object.created_at_ms,
    };
    write_body(head, &object.args, object.metadata.as_ref())
}

/// [`object_body`] of a just-committed object, from its ledger form (the
/// create's answer; the same text, as `Stored::args` is this map written out).
pub(crate) fn effect_body(profile: &Profile, effect: &Effect) -> Bytes {
    if let Objects::Shaped(shape) = &profile.objects {
        let facts = ObjectFacts {
            id: &effect.id,
            resource: &effect.resource,
            status: effect.status,
            client_reference: effect.client_reference.as_deref(),
            created_at_ms: effect.created_at_ms,
            args: &effect.args,
            metadata: effect.metadata.as_deref(),
        };
        return shaped_body(profile, shape, facts);
    }
    let head = Head {
        id: &effect.id,
        object: &effect.resource,
        status: effect.status,
        client_reference: effect.client_reference.as_deref(),
        created_at_ms: effect.created_at_ms,
    };
    write_body(head, &effect.args, effect.metadata.as_deref())
}

/// The type of `object`'s event of `kind`, as delivered: a settled event
/// says the object's status in the profile's word for it.
fn event_type(profile: &Profile, object: &Stored, kind: EventKind) -> String {
    let word = match kind {
        EventKind::Created => None,
        EventKind::Succeeded | EventKind::Failed => {
            status_word(profile.resource(&object.resource), object.status)
        }
    };
    render::event_type(profile, &object.resource, word.unwrap_or(kind.name()))
}

/// How long an object's idempotency key is kept, in ms (simulator clock).
fn key_retention_ms(plan: &Plan) -> i64 {
    i64::try_from(plan.idempotency.retention.as_millis()).unwrap_or(i64::MAX)
}

/// The index key of an object or event id: a fixed hasher, so the same seed
/// draws the same ids on every run.
fn id_hash(id: &str) -> u64 {
    fixed_hash(id)
}

/// An id from `draw` whose index hash is not in `taken`: the indexes hold
/// hashes, not ids, so two held ids must never share one.
fn draw_unique_id<Id: std::ops::Deref<Target = str>>(
    taken: &FixedMap<u64, u64>,
    mut draw: impl FnMut() -> Id,
) -> (Id, u64) {
    loop {
        let candidate = draw();
        let hash = id_hash(&candidate);
        if !taken.contains_key(&hash) {
            return (candidate, hash);
        }
    }
}

impl Store {
    pub(crate) fn new(seed: u64) -> Store {
        let mut object_ids = ChaCha20Rng::seed_from_u64(seed);
        object_ids.set_stream(OBJECT_ID_STREAM);
        let mut event_ids = ChaCha20Rng::seed_from_u64(seed);
        event_ids.set_stream(EVENT_ID_STREAM);
        Store {
            effects: VecDeque::new(),
            by_id: FixedMap::default(),
            summarised: SummarisedObjects::default(),
            strings: Interner::default(),
            per_tenant: BTreeMap::new(),
            events: VecDeque::new(),
            events_freed: 0,
            event_positions: FixedMap::default(),
            summarised_events: SummarisedEvents::default(),
            object_ids,
            event_ids,
        }
    }

    /// The ledger, in its boundary form: the objects held (all of them
    /// until `Limits::max_objects` is passed), each `seq` its position since
    /// the start.
    pub(crate) fn effects(&self) -> Vec<Effect> {
        self.effects
            .iter()
            .enumerate()
            .map(|(i, o)| o.to_effect(self.summarised.summarised + i as u64 + 1))
            .collect()
    }

    /// How many objects the ledger holds.
    pub(crate) fn len(&self) -> usize {
        self.effects.len()
    }

    /// What was summarised out to keep the store bounded.
    pub(crate) fn summarised(&self) -> &SummarisedObjects {
        &self.summarised
    }

    /// The events held (those of the objects held), in the order they were
    /// produced.
    pub(crate) fn events(&self) -> impl Iterator<Item = &Event> {
        let first = self.summarised.summarised;
        self.events
            .iter()
            .filter(move |held| held.object >= first)
            .map(|held| &held.event)
    }

    /// What was summarised out with the objects.
    pub(crate) fn summarised_events(&self) -> &SummarisedEvents {
        &self.summarised_events
    }

    /// Commits one effect at `now_ms`: the object exists from here on.
    pub(crate) fn commit(
        &mut self,
        plan: &Plan,
        new: NewObject,
        now_ms: i64,
    ) -> Result<(Effect, SharedStr), StoreFull> {
        self.insert(plan, new, now_ms, true, now_ms)
    }

    /// An object that existed before the run: settled, no event.
    pub(crate) fn seed(
        &mut self,
        plan: &Plan,
        new: NewObject,
        created_at_ms: i64,
    ) -> Result<(), StoreFull> {
        self.insert(plan, new, created_at_ms, false, plan.clock_start_ms)
            .map(|_| ())
    }

    fn insert(
        &mut self,
        plan: &Plan,
        new: NewObject,
        created_at_ms: i64,
        live: bool,
        now_ms: i64,
    ) -> Result<(Effect, SharedStr), StoreFull> {
        if let Some(cap) = plan.limits.hard_cap_objects {
            let held = self
                .per_tenant
                .get(new.tenant.as_str())
                .copied()
                .unwrap_or(0);
            if held >= cap {
                return Err(StoreFull { max_objects: cap });
            }
        }
        let prefix = plan
            .profile
            .resource(&new.resource)
            .map(|r| r.id_prefix.as_str());
        let object_ids = &mut self.object_ids;
        let (id, hash) = draw_unique_id(&self.by_id, || match prefix {
            Some(prefix) => prefixed_id(prefix, object_ids),
            None => object_id(&new.resource, object_ids),
        });
        let status = match (live, plan.asynchronous) {
            (true, Some(_)) => ObjectStatus::Processing,
            (true, None) | (false, _) => ObjectStatus::Succeeded,
        };
        let stored = Stored {
            id,
            // The create's shared copies (see `NewObject`), moved in: the
            // tenant is still read below to count its objects.
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
            announced: Announced::Nothing,
            request_seq: new.request_seq.map(crate::record::nonmax_u64),
        };
        // The effect handed out shares the stored object's text.
        let position = self.summarised.summarised + self.effects.len() as u64;
        let effect = stored.to_effect(position + 1);
        self.by_id.insert(hash, position);
        match self.per_tenant.get_mut(new.tenant.as_str()) {
            Some(held) => *held += 1,
            None => {
                self.per_tenant.insert(new.tenant.to_string(), 1);
            }
        }
        self.effects.push_back(stored);
        if live {
            self.emit(
                plan,
                self.effects.len() - 1,
                EventKind::Created,
                created_at_ms,
            );
        }
        self.trim(plan, now_ms);
        let id = effect.id.clone();
        Ok((effect, id))
    }

    /// Summarises the oldest objects out while more than `Limits::max_objects`
    /// are held: one per create once the bound is reached, so the cost per
    /// create stays constant.
    fn trim(&mut self, plan: &Plan, now_ms: i64) {
        let bound = plan.limits.max_objects.max(1);
        if self.effects.len() <= bound {
            return;
        }
        let retention_ms = key_retention_ms(plan);
        while self.effects.len() > bound {
            let Some(oldest) = self.effects.pop_front() else {
                return;
            };
            let position = self.summarised.summarised;
            let hash = id_hash(&oldest.id);
            if self.by_id.get(&hash) == Some(&position) {
                self.by_id.remove(&hash);
            }
            if let Some(held) = self.per_tenant.get_mut(oldest.tenant.as_str()) {
                *held = held.saturating_sub(1);
            }
            self.summarise_events(plan, &oldest);
            let summary = &mut self.summarised;
            summary.summarised += 1;
            if oldest.created_at_ms.saturating_add(retention_ms) > now_ms {
                summary.in_retention += 1;
            }
            count(&mut summary.by_tenant, &oldest.tenant);
            count(&mut summary.by_resource, &oldest.resource);
            let created = oldest.created_at_ms;
            summary.oldest_created_at_ms = Some(
                summary
                    .oldest_created_at_ms
                    .map_or(created, |t| t.min(created)),
            );
            summary.newest_created_at_ms = Some(
                summary
                    .newest_created_at_ms
                    .map_or(created, |t| t.max(created)),
            );
        }
        self.free_summarised_events();
    }

    /// Frees the events of summarised objects from the front of the queue,
    /// and their index entries with them.
    fn free_summarised_events(&mut self) {
        let first = self.summarised.summarised;
        while self.events.front().is_some_and(|held| held.object < first) {
            let Some(freed) = self.events.pop_front() else {
                return;
            };
            let hash = id_hash(&freed.event.id);
            if self.event_positions.get(&hash) == Some(&self.events_freed) {
                self.event_positions.remove(&hash);
            }
            self.events_freed += 1;
        }
    }

    /// Counts the events of `object`, which is being summarised out, from
    /// what it records of them.
    fn summarise_events(&mut self, plan: &Plan, object: &Stored) {
        let settled = match object.announced {
            Announced::Nothing => return,
            Announced::Created => None,
            Announced::Settled(kind) => Some(kind),
        };
        for kind in std::iter::once(EventKind::Created).chain(settled) {
            let event_type = event_type(&plan.profile, object, kind);
            let summary = &mut self.summarised_events;
            summary.summarised += 1;
            *summary.by_kind.entry(kind).or_insert(0) += 1;
            count(&mut summary.by_type, &event_type);
        }
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
            let settle_ms =
                i64::try_from(asynchronous.settle_after.as_millis()).unwrap_or(i64::MAX);
            // As `Effect::settles_at_ms` reads it.
            let due = effect.created_at_ms.saturating_add(settle_ms) <= now_ms;
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
        let effect = &mut self.effects[index];
        effect.announced = match kind {
            EventKind::Created => Announced::Created,
            EventKind::Succeeded | EventKind::Failed => Announced::Settled(kind),
        };
        let effect = &self.effects[index];
        let profile = &plan.profile;
        let event_ids = &mut self.event_ids;
        let (id, hash) = draw_unique_id(&self.event_positions, || random_id("evt", event_ids));
        let event_type = event_type(profile, effect, kind);
        let body = render::event_body(
            profile,
            &id,
            &event_type,
            now_ms,
            object_json(profile, effect),
        );
        let event = Event {
            id,
            kind,
            event_type,
            object_id: effect.id.to_string(),
            tenant: effect.tenant.to_string(),
            created_at_ms: now_ms,
            body,
        };
        let object = self.summarised.summarised + index as u64;
        let position = self.events_freed + self.events.len() as u64;
        self.event_positions.insert(hash, position);
        self.events.push_back(HeldEvent { object, event });
    }

    /// The object `id` of `tenant` in `resource`; `None` for anything else, so that
    /// another tenant's id and a missing id are indistinguishable.
    pub(crate) fn get(&self, tenant: &str, resource: &str, id: &str) -> Option<&Stored> {
        self.with_id(id)
            .filter(|object| &*object.tenant == tenant && &*object.resource == resource)
    }

    /// The store's own copy of the id `id`, whoever owns the object: for a
    /// caller outside the API (the harness) that holds equal text and
    /// would rather share this copy than keep its own.
    pub(crate) fn id_copy(&self, id: &str) -> Option<SharedStr> {
        self.with_id(id).map(|object| object.id.clone())
    }

    /// True while the object `id` is held (not summarised out, not unknown).
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.with_id(id).is_some()
    }

    /// The object whose id is `id`, whoever owns it.
    fn with_id(&self, id: &str) -> Option<&Stored> {
        let position = self.by_id.get(&id_hash(id))?;
        let index = usize::try_from(position.checked_sub(self.summarised.summarised)?).ok()?;
        self.effects.get(index).filter(|object| &*object.id == id)
    }

    /// The caller's objects in `resource` that pass `keep`, newest first.
    pub(crate) fn newest_first(
        &self,
        tenant: &str,
        resource: &str,
        keep: impl Fn(&Stored) -> bool,
    ) -> Vec<&Stored> {
        let mut found: Vec<(usize, &Stored)> = self
            .effects
            .iter()
            .enumerate()
            .filter(|(_, e)| &*e.tenant == tenant && &*e.resource == resource && keep(e))
            .collect();
        found.sort_by_key(|(seq, e)| std::cmp::Reverse((e.created_at_ms, *seq)));
        found.into_iter().map(|(_, e)| e).collect()
    }

    /// The held event `id`: a summarised one answers as an unknown one.
    pub(crate) fn event(&self, id: &str) -> Option<&Event> {
        let index = self.held_event_index(id)?;
        self.events.get(index).map(|held| &held.event)
    }

    /// Where the held event `id` sits in `events`.
    fn held_event_index(&self, id: &str) -> Option<usize> {
        let position = self.event_positions.get(&id_hash(id))?;
        let index = usize::try_from(position.checked_sub(self.events_freed)?).ok()?;
        let held = self.events.get(index)?;
        let still_held = held.object >= self.summarised.summarised;
        (still_held && held.event.id == id).then_some(index)
    }

    /// The events held after the event `after` (from the first without it),
    /// copied out so that the caller writes them without the state lock.
    pub(crate) fn events_page(
        &self,
        after: Option<&str>,
        size: PageSize,
    ) -> Result<EventsPage, UnknownEvent> {
        let start = match after {
            Some(id) => self.held_event_index(id).ok_or(UnknownEvent)? + 1,
            None => 0,
        };
        let first = self.summarised.summarised;
        let mut held = self
            .events
            .range(start..)
            .filter(|held| held.object >= first)
            .map(|held| &held.event);
        let limit = match size {
            PageSize::Whole => usize::MAX,
            PageSize::AtMost(limit) => limit,
        };
        let events: Vec<Event> = held.by_ref().take(limit).cloned().collect();
        let next_after = match held.next() {
            Some(_) => events.last().map(|event| event.id.clone()),
            None => None,
        };
        Ok(EventsPage { events, next_after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn object(client_reference: Option<&str>, metadata: Option<Value>) -> Stored {
        let args = serde_json::json!({"z": 1.5, "a": ["é\n", null, {"k": true}], "m": -3})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut store = Store::new(1);
        let new = NewObject {
            tenant: "sk_test".into(),
            resource: "tickets".into(),
            args: JsonText::of(&args),
            client_reference: client_reference.map(SharedStr::from),
            metadata: metadata.as_ref().map(JsonText::of),
            idempotency_key: None,
            fingerprint: SharedStr::from(""),
            attempt: 1,
            request_seq: Some(1),
        };
        let plan = Plan::default();
        let (effect, _) = store
            .commit(&plan, new, 1_767_225_600_000)
            .expect("room for one object");
        let mut stored = store.effects.pop_back().expect("the object just committed");
        assert_eq!(stored.to_effect(1), effect);
        stored.status = ObjectStatus::Succeeded;
        stored
    }

    #[test]
    fn object_body_is_the_text_of_object_json_with_the_arguments_in_their_order() {
        for o in [
            object(None, None),
            object(Some("ref \"1\""), Some(serde_json::json!({"b": 2, "a": 1}))),
        ] {
            let generic = Profile::generic();
            let body = object_body(&generic, &o);
            let text = std::str::from_utf8(&body).unwrap_or_default();
            assert_eq!(text, object_json(&generic, &o).to_string());
            assert!(text.contains(r#""args":{"z":1.5,"a":["é\n",null,{"k":true}],"m":-3}"#));
        }
    }

    /// The object's fields as serde_json writes a struct of them: what
    /// [`write_body`] must write, byte for byte.
    #[derive(serde::Serialize)]
    struct SerdeView<'a> {
        id: &'a str,
        object: &'a str,
        status: ObjectStatus,
        client_reference: Option<&'a str>,
        created_at: String,
        args: &'a serde_json::value::RawValue,
        metadata: &'a serde_json::value::RawValue,
    }

    #[test]
    fn a_body_is_serde_json_s_text_of_its_fields_whatever_they_hold() {
        let references = [
            None,
            Some("plain"),
            Some("quote \" and \\ back"),
            Some("tab\t, newline\n, nul\u{0}, del\u{7f}"),
            Some("é ✓ 😀"),
            Some(""),
        ];
        let metadata = JsonText::of(&serde_json::json!({"k": "v \"q\"", "n": [1, 2.5]}));
        let args = JsonText::of(&serde_json::json!({"z": 1, "a": {"é": null}}));
        for reference in references {
            for status in [
                ObjectStatus::Processing,
                ObjectStatus::Succeeded,
                ObjectStatus::Failed,
            ] {
                for (metadata, shown) in [(None, "{}"), (Some(&metadata), metadata.get())] {
                    let created_at_ms = 1_767_225_600_123;
                    let head = Head {
                        id: "tkt_AbC123",
                        object: "line_items2",
                        status,
                        client_reference: reference,
                        created_at_ms,
                    };
                    let body = write_body(head, &args, metadata);
                    let shown_raw =
                        serde_json::value::RawValue::from_string(shown.to_owned()).expect("JSON");
                    let args_raw = serde_json::value::RawValue::from_string(args.get().to_owned())
                        .expect("JSON");
                    let expected = serde_json::to_string(&SerdeView {
                        id: "tkt_AbC123",
                        object: "line_items2",
                        status,
                        client_reference: reference,
                        created_at: crate::time::rfc3339(created_at_ms),
                        args: &args_raw,
                        metadata: &shown_raw,
                    })
                    .expect("serializable");
                    assert_eq!(std::str::from_utf8(&body).expect("UTF-8"), expected);
                }
            }
        }
    }

    #[test]
    fn a_status_s_wire_name_is_its_serialized_form() {
        for status in [
            ObjectStatus::Processing,
            ObjectStatus::Succeeded,
            ObjectStatus::Failed,
        ] {
            assert_eq!(
                serde_json::to_string(&status).expect("serializable"),
                format!("\"{}\"", status.wire_name())
            );
        }
    }

    /// An object of `sk_test` in `resource` with no arguments.
    fn empty_object(resource: &str) -> NewObject {
        NewObject {
            tenant: "sk_test".into(),
            resource: resource.into(),
            args: JsonText::of(&Map::new()),
            client_reference: None,
            metadata: None,
            idempotency_key: None,
            fingerprint: SharedStr::from("{}"),
            attempt: 1,
            request_seq: None,
        }
    }

    #[test]
    fn an_object_is_found_by_its_id_only_with_its_tenant_and_resource() {
        let mut store = Store::new(7);
        let plan = Plan::default();
        let (effect, id) = store
            .commit(&plan, empty_object("tickets"), 0)
            .expect("room");
        assert_eq!(&*id, effect.id);
        assert!(store.get("sk_test", "tickets", &effect.id).is_some());
        assert!(store.get("sk_other", "tickets", &effect.id).is_none());
        assert!(store.get("sk_test", "tickets", "tkt_missing").is_none());
        let ledger = store.effects();
        assert_eq!(ledger, vec![effect.clone()]);
        // The committed effect and every later look share the store's one copy.
        assert!(JsonText::ptr_eq(&ledger[0].args, &effect.args));
        assert!(JsonText::ptr_eq(&store.effects()[0].args, &effect.args));
    }

    #[test]
    fn past_the_bound_the_oldest_are_summarised_out_and_counted() {
        let mut plan = Plan::default();
        plan.limits.max_objects = 2;
        let retention_ms = key_retention_ms(&plan);
        let mut store = Store::new(3);
        let mut ids = Vec::new();
        // Two objects a retention apart, then two more: the first goes past
        // its retention, the second inside it.
        for (at_ms, resource) in [
            (0, "tickets"),
            (retention_ms, "charges"),
            (retention_ms, "tickets"),
            (retention_ms + 1, "tickets"),
        ] {
            let (effect, _) = store
                .commit(&plan, empty_object(resource), at_ms)
                .expect("no cap");
            ids.push(effect.id.clone());
        }
        assert_eq!(store.len(), 2);
        assert!(store.get("sk_test", "tickets", &ids[0]).is_none());
        assert!(store.get("sk_test", "charges", &ids[1]).is_none());
        assert!(store.get("sk_test", "tickets", &ids[3]).is_some());
        let seqs: Vec<u64> = store.effects().iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [3, 4]);
        let summary = store.summarised();
        assert_eq!(summary.summarised, 2);
        assert_eq!(summary.in_retention, 1);
        assert_eq!(summary.by_tenant.get("sk_test"), Some(&2));
        assert_eq!(summary.by_resource.get("tickets"), Some(&1));
        assert_eq!(summary.by_resource.get("charges"), Some(&1));
        assert_eq!(summary.oldest_created_at_ms, Some(0));
        assert_eq!(summary.newest_created_at_ms, Some(retention_ms));
    }

    #[test]
    fn only_the_hard_cap_refuses() {
        let mut plan = Plan::default();
        plan.limits.max_objects = 1;
        plan.limits.hard_cap_objects = Some(1);
        let mut store = Store::new(4);
        let new = || empty_object("tickets");
        assert!(store.commit(&plan, new(), 0).is_ok());
        assert_eq!(
            store.commit(&plan, new(), 0).err(),
            Some(StoreFull { max_objects: 1 })
        );
        plan.limits.hard_cap_objects = None;
        assert!(store.commit(&plan, new(), 0).is_ok());
        assert_eq!(store.summarised().summarised, 1);
    }

    /// A plan that holds at most three objects, whose objects make events
    /// and settle a second after they are created.
    fn three_objects_with_events() -> Plan {
        let mut plan = Plan::default();
        plan.limits.max_objects = 3;
        plan.webhooks = Some(
            crate::plan::Webhooks::builder()
                .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned())
                .build(),
        );
        plan.asynchronous = Some(
            crate::plan::Asynchronous::builder()
                .settle_after(std::time::Duration::from_secs(1))
                .result(SettleResult::Succeeded)
                .build(),
        );
        plan
    }

    /// Every event produced is found by its id exactly while it is listed,
    /// and the index holds an entry for each event queued, no more.
    fn assert_index_matches_the_events_held(store: &Store, produced: &[String]) {
        let held: Vec<&str> = store.events().map(|event| event.id.as_str()).collect();
        for id in produced {
            let found = store.event(id).map(|event| event.id.as_str());
            let expected = held.contains(&id.as_str()).then_some(id.as_str());
            assert_eq!(found, expected, "{id}");
        }
        assert_eq!(store.event_positions.len(), store.events.len());
    }

    #[test]
    fn the_event_index_follows_the_events_through_summarising() {
        let plan = three_objects_with_events();
        let mut store = Store::new(5);
        let mut produced: Vec<String> = Vec::new();
        let mut a_summarised_event_waited = false;
        // A create every 600 ms: an object settles as the second after it is
        // created, so its settled event waits behind a younger object's.
        for n in 0..12 {
            let now_ms = n * 600;
            store.settle_due(&plan, now_ms);
            store
                .commit(&plan, empty_object("tickets"), now_ms)
                .expect("no cap");
            for event in store.events() {
                if !produced.contains(&event.id) {
                    produced.push(event.id.clone());
                }
            }
            assert_index_matches_the_events_held(&store, &produced);
            a_summarised_event_waited |= store.events.len() > store.events().count();
        }
        assert!(a_summarised_event_waited);
        assert!(store.event_positions.len() < produced.len() / 2);
        assert!(store.event("evt_never").is_none());
    }

    #[test]
    fn pages_of_events_join_into_the_whole_listing() {
        let plan = three_objects_with_events();
        let mut store = Store::new(6);
        let mut first_event = None;
        for n in 0..8 {
            store.settle_due(&plan, n * 600);
            store
                .commit(&plan, empty_object("tickets"), n * 600)
                .expect("no cap");
            first_event = first_event.or_else(|| store.events().next().map(|e| e.id.clone()));
        }
        let whole = store.events_page(None, PageSize::Whole).expect("no after");
        assert!(!whole.has_more());
        let held: Vec<Event> = store.events().cloned().collect();
        assert_eq!(whole.events, held);
        let mut joined: Vec<Event> = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = store
                .events_page(after.as_deref(), PageSize::AtMost(2))
                .expect("a held event");
            assert!(page.events.len() <= 2);
            joined.extend(page.events.iter().cloned());
            match page.next_after {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        assert_eq!(joined, held);
        // The first object and its events were summarised out long ago.
        for gone in [first_event.as_deref(), Some("evt_never")] {
            assert_eq!(store.events_page(gone, PageSize::Whole), Err(UnknownEvent));
        }
    }
}

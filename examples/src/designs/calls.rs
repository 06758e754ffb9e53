//! The five calls of the protocol for every design: input checks, the lock,
//! the record, and the ladder.

use std::path::Path;

use async_trait::async_trait;
use jiff::Timestamp;
use lostreply_harness::adapter::{Adapter, AdapterFailure};
use lostreply_harness::protocol::{
    ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};

use super::classify;
use super::client::Provider;
use super::design::{Design, Execute, Flaw, Locking};
use super::ladder::{Climb, Step, RECONCILE_REPLAYS};
use super::record::{self, OpId, Record};
use super::store::{Locked, OpLock, Store, Take, Unreadable};
use super::webhook::{self, Event};

/// One adapter of the family, over one state directory.
#[derive(Debug, Clone)]
pub struct DesignAdapter {
    store: Store,
    design: Design,
}

/// Which kind of call wants the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// `execute` and `reconcile`: may send requests while holding it.
    Worker,
    /// `webhook` and `resolve`: never send anything, and must not drop what
    /// they carry (a genuine event, an operator's decision).
    Applier,
}

/// A provider collection name as the provider defines them. Anything else
/// would not name a collection, and could change the path it is put in.
fn usable_resource(resource: &str) -> bool {
    let mut bytes = resource.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && resource.len() <= 40
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A request whose `now` is not a time: nothing can be judged against it.
#[derive(Debug, thiserror::Error)]
#[error("the request's clock {now:?} is not RFC 3339 ({error}); nothing sent")]
struct UnreadableClock {
    now: String,
    error: jiff::Error,
}

fn parse_now(now: &str) -> Result<Timestamp, UnreadableClock> {
    now.parse().map_err(|error| UnreadableClock {
        now: now.to_owned(),
        error,
    })
}

fn unreadable(operation_id: &str, Unreadable(why): Unreadable) -> OutcomeReply {
    record::unknown_reply(
        operation_id,
        format!("{why}; nothing sent; a person must check the store"),
    )
    .with_needs_review(true)
}

fn refused() -> WebhookReply {
    WebhookReply::REJECTED
}

fn accepted(operation_id: Option<String>) -> WebhookReply {
    WebhookReply::accepted(operation_id)
}

impl DesignAdapter {
    /// An adapter of `design` whose store lives in `state_dir`.
    pub fn open(state_dir: &Path, design: Design) -> Result<DesignAdapter, AdapterFailure> {
        Ok(DesignAdapter {
            store: Store::open(state_dir)?,
            design,
        })
    }

    fn take(&self, caller: Caller) -> Take {
        match (self.design.flaw, caller, self.design.lock) {
            (Flaw::Unlocked, _, _) => Take::Skip,
            (_, Caller::Worker, Locking::Try) => Take::IfFree,
            (_, Caller::Worker, Locking::Blocking) | (_, Caller::Applier, _) => Take::Wait,
        }
    }

    /// The lock, or the reply to give at once because another worker has it.
    async fn lock(
        &self,
        id: &OpId,
        caller: Caller,
    ) -> Result<Result<OpLock, OutcomeReply>, AdapterFailure> {
        Ok(match self.store.lock(id, self.take(caller)).await? {
            Locked::Held(lock) => Ok(lock),
            Locked::Busy => Err(self.busy_reply(id)),
        })
    }

    /// What a worker that found the operation locked says: the stored
    /// record as it stands, sending nothing.
    fn busy_reply(&self, id: &OpId) -> OutcomeReply {
        const BUSY: &str = "another worker holds the operation";
        match self.store.load(id) {
            Ok(Some(stored)) => stored
                .reply()
                .with_evidence(format!("{BUSY}; stored: {}", stored.evidence)),
            Ok(None) => record::unknown_reply(id.as_str(), format!("{BUSY}; nothing sent")),
            Err(why) => unreadable(id.as_str(), why),
        }
    }
}

#[async_trait]
impl Adapter for DesignAdapter {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let operation = &request.operation;
        let id = match OpId::parse(&operation.id) {
            Ok(id) => id,
            Err(why) => return Ok(record::unknown_reply(&operation.id, why.to_string())),
        };
        let now = match parse_now(&request.common.now) {
            Ok(now) => now,
            Err(why) => return Ok(record::unknown_reply(id.as_str(), why.to_string())),
        };
        let _lock = match self.lock(&id, Caller::Worker).await? {
            Ok(lock) => lock,
            Err(reply) => return Ok(reply),
        };
        let stored = match self.store.load(&id) {
            Ok(stored) => stored,
            Err(why) => return Ok(unreadable(id.as_str(), why)),
        };
        if let Some(stored) = &stored {
            // Never a second first create: a known operation is returned or
            // reconciled.
            if stored.is_terminal() {
                return Ok(stored.reply());
            }
        } else if !usable_resource(&operation.resource) {
            return Ok(record::unknown_reply(
                id.as_str(),
                format!(
                    "resource {:?} is not a collection name ([a-z][a-z0-9_]{{0,39}}); nothing stored or sent",
                    operation.resource
                ),
            ));
        }
        let provider = Provider::new(&request.common)?;
        let contract = &request.common.provider.contract;
        let Some(stored) = stored else {
            let intent = Record::intent(&id, operation, now);
            let mut climb = Climb::new(
                self.design,
                &provider,
                &self.store,
                &id,
                contract,
                now,
                intent,
            );
            let step = climb.first_send().await?;
            if let (Execute::Eager { replays }, Step::Open) = (self.design.execute, step) {
                climb.climb(replays).await?;
            }
            return climb.finish().await;
        };
        let mut climb = Climb::new(
            self.design,
            &provider,
            &self.store,
            &id,
            contract,
            now,
            stored,
        );
        climb.climb(RECONCILE_REPLAYS).await?;
        climb.finish().await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let id = match OpId::parse(&request.operation_id) {
            Ok(id) => id,
            Err(why) => {
                return Ok(record::unknown_reply(
                    &request.operation_id,
                    why.to_string(),
                ))
            }
        };
        let _lock = match self.lock(&id, Caller::Worker).await? {
            Ok(lock) => lock,
            Err(reply) => return Ok(reply),
        };
        let stored = match self.store.load(&id) {
            Ok(Some(stored)) => stored,
            Ok(None) => return Ok(record::no_record(id.as_str())),
            Err(why) => return Ok(unreadable(id.as_str(), why)),
        };
        if stored.is_terminal() {
            return Ok(stored.reply());
        }
        let now = match parse_now(&request.common.now) {
            Ok(now) => now,
            Err(why) => return Ok(stored.reply().with_evidence(why.to_string())),
        };
        let provider = Provider::new(&request.common)?;
        let contract = &request.common.provider.contract;
        let mut climb = Climb::new(
            self.design,
            &provider,
            &self.store,
            &id,
            contract,
            now,
            stored,
        );
        climb.climb(RECONCILE_REPLAYS).await?;
        climb.finish().await
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        let Ok(now) = request.common.now.parse::<Timestamp>() else {
            // Freshness cannot be judged without the clock.
            return Ok(refused());
        };
        let secret = request
            .common
            .provider
            .contract
            .webhooks
            .as_ref()
            .map(|w| w.secret.as_str());
        let webhook_id =
            match webhook::verify(secret, &request.headers, &request.body, now.as_second()) {
                Ok(id) => id.to_owned(),
                Err(_) => return Ok(refused()),
            };
        let Some(event) = Event::parse(&request.body) else {
            return Ok(accepted(None));
        };
        let Some(id) = event.operation_id().and_then(|op| OpId::parse(op).ok()) else {
            return Ok(accepted(None));
        };
        let _lock = match self.lock(&id, Caller::Applier).await? {
            Ok(lock) => lock,
            Err(_) => return Ok(refused()),
        };
        let mut stored = match self.store.load(&id) {
            Ok(Some(stored)) => stored,
            Ok(None) => return Ok(accepted(None)),
            // A genuine event we cannot apply: fail loudly so it is redelivered.
            Err(Unreadable(why)) => return Err(AdapterFailure::new(why)),
        };
        if stored.first_sight_of(&webhook_id) {
            apply_event(&mut stored, &event, self.design.flaw);
            self.store.save(&id, &stored).await?;
        }
        Ok(accepted(Some(id.as_str().to_owned())))
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        let id = match OpId::parse(&request.operation_id) {
            Ok(id) => id,
            Err(why) => {
                return Ok(record::unknown_reply(
                    &request.operation_id,
                    why.to_string(),
                ))
            }
        };
        let _lock = match self.lock(&id, Caller::Applier).await? {
            Ok(lock) => lock,
            Err(reply) => return Ok(reply),
        };
        let mut stored = match self.store.load(&id) {
            Ok(Some(stored)) => stored,
            Ok(None) => return Ok(record::no_record(id.as_str())),
            Err(why) => return Ok(unreadable(id.as_str(), why)),
        };
        if stored.is_terminal() {
            return Ok(stored.reply());
        }
        let resolution = &request.resolution;
        if !record::is_terminal(resolution.outcome) {
            return Ok(stored.reply().with_evidence(format!(
                "resolution ignored: an operator decides succeeded or failed; stored: {}",
                stored.evidence
            )));
        }
        stored.overwrite(
            resolution.outcome,
            None,
            format!("operator: {}", resolution.evidence),
        );
        // The operator's word, including "no object", replaces ours.
        stored.provider_ref = resolution.provider_ref.clone();
        stored.needs_review = false;
        stored.create_in_doubt = false;
        stored.resolved_by_person = true;
        self.store.save(&id, &stored).await?;
        Ok(stored.reply())
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let id = match OpId::parse(&request.operation_id) {
            Ok(id) => id,
            Err(why) => {
                return Ok(record::unknown_reply(
                    &request.operation_id,
                    why.to_string(),
                ))
            }
        };
        // Records are replaced atomically, so a read needs no lock.
        Ok(match self.store.load(&id) {
            Ok(Some(stored)) => stored.reply(),
            Ok(None) => record::no_record(id.as_str()),
            Err(why) => unreadable(id.as_str(), why),
        })
    }
}

/// Applies a genuine, first-seen event: it may move a record forward, never
/// back, and never changes a terminal one's outcome; it raises an
/// operator's decision it contradicts for review again. The flawed
/// `last-writer-wins` design takes whatever the event says, and the flawed
/// `ignores-contradiction` design never raises a decision again.
pub fn apply_event(stored: &mut Record, event: &Event, flaw: Flaw) {
    let Some(outcome) = classify::outcome_of_status(event.status()) else {
        return;
    };
    let object_id = event
        .object_id()
        .filter(|id| classify::usable_id(id))
        .map(str::to_owned);
    if stored.is_terminal() && flaw != Flaw::LastWriterWins {
        if flaw != Flaw::IgnoresContradiction {
            raise_if_contradicted(stored, event, outcome, object_id.as_deref());
        }
        return;
    }
    if let (Some(known), Some(theirs)) = (&stored.provider_ref, &object_id) {
        if known != theirs {
            // Another object carrying our reference says nothing about ours.
            return;
        }
    }
    let evidence = format!(
        "webhook {}: object {} is {}",
        event.kind,
        object_id.as_deref().unwrap_or("(no id)"),
        event.status()
    );
    if outcome == OutcomeKind::Succeeded && object_id.is_none() {
        // A success must name its object; without an id it is no claim.
        return;
    }
    let moved = if flaw == Flaw::LastWriterWins {
        stored.overwrite(outcome, object_id, evidence);
        true
    } else {
        stored.advance(outcome, object_id, evidence)
    };
    if moved {
        stored.create_in_doubt = false;
    }
}

/// Raises an operator's decision for review again when the event shows
/// object `seen` in a state that contradicts it; outcome and object stay.
fn raise_if_contradicted(
    stored: &mut Record,
    event: &Event,
    outcome: OutcomeKind,
    seen: Option<&str>,
) {
    let Some(seen) = seen else {
        return;
    };
    let Some(why) = stored.contradiction(outcome, seen) else {
        return;
    };
    let what = format!(
        "webhook {}: object {seen} is {}",
        event.kind,
        event.status()
    );
    stored.review_again(&why, &what);
}

#[cfg(test)]
mod tests {
    use super::*;
    use lostreply_harness::protocol::Operation;
    use serde_json::Map;

    fn record(outcome: OutcomeKind) -> Option<Record> {
        let id = OpId::parse("op-1").ok()?;
        let operation = Operation::new("op-1", "create", "tickets", Map::new());
        let mut record = Record::intent(&id, &operation, Timestamp::UNIX_EPOCH);
        record.outcome = outcome;
        Some(record)
    }

    fn event(status: &str) -> Option<Event> {
        Event::parse(&format!(
            r#"{{"type":"tickets.created","data":{{"id":"tkt_1","status":"{status}","client_reference":"op-1"}}}}"#
        ))
    }

    #[test]
    fn events_move_records_forward_only() {
        let (Some(mut done), Some(late)) = (record(OutcomeKind::Succeeded), event("processing"))
        else {
            panic!("fixture");
        };
        apply_event(&mut done, &late, Flaw::None);
        assert_eq!(done.outcome, OutcomeKind::Succeeded);
        apply_event(&mut done, &late, Flaw::LastWriterWins);
        assert_eq!(done.outcome, OutcomeKind::Pending);

        let (Some(mut open), Some(settled)) = (record(OutcomeKind::Unknown), event("succeeded"))
        else {
            panic!("fixture");
        };
        apply_event(&mut open, &settled, Flaw::None);
        assert_eq!(open.outcome, OutcomeKind::Succeeded);
        assert_eq!(open.provider_ref.as_deref(), Some("tkt_1"));
    }

    fn event_about(kind: &str, id: &str, status: &str) -> Option<Event> {
        Event::parse(&format!(
            r#"{{"type":"{kind}","data":{{"id":"{id}","status":"{status}","client_reference":"op-1"}}}}"#
        ))
    }

    fn resolved(outcome: OutcomeKind, provider_ref: Option<&str>) -> Option<Record> {
        let mut decided = record(OutcomeKind::Unknown)?;
        decided.overwrite(outcome, None, "operator: checked".to_owned());
        decided.provider_ref = provider_ref.map(str::to_owned);
        decided.resolved_by_person = true;
        Some(decided)
    }

    #[test]
    fn an_event_contradicting_a_decision_raises_it_for_review_again() {
        let (Some(mut decided), Some(alive)) = (
            resolved(OutcomeKind::Failed, None),
            event_about("tickets.created", "tkt_1", "processing"),
        ) else {
            panic!("fixture");
        };
        let before = decided.clone();
        apply_event(&mut decided, &alive, Flaw::IgnoresContradiction);
        assert_eq!(decided, before);
        apply_event(&mut decided, &alive, Flaw::None);
        assert_eq!(
            (decided.outcome, decided.provider_ref.as_deref()),
            (OutcomeKind::Failed, None)
        );
        assert!(decided.needs_review);
        assert!(
            decided.evidence.starts_with("operator: checked; then webhook tickets.created: object tkt_1 is processing, which contradicts the decision (the provider holds tkt_1)"),
            "{}",
            decided.evidence
        );

        let (Some(mut named), Some(other), Some(settled)) = (
            resolved(OutcomeKind::Succeeded, Some("tkt_9")),
            event_about("tickets.created", "tkt_2", "processing"),
            event_about("tickets.succeeded", "tkt_9", "succeeded"),
        ) else {
            panic!("fixture");
        };
        apply_event(&mut named, &settled, Flaw::None);
        assert!(!named.needs_review, "{}", named.evidence);
        apply_event(&mut named, &other, Flaw::None);
        assert!(named.needs_review);
        assert_eq!(
            (named.outcome, named.provider_ref.as_deref()),
            (OutcomeKind::Succeeded, Some("tkt_9"))
        );

        // A terminal outcome the adapter reached itself is no decision.
        let (Some(mut own), Some(failed)) = (
            record(OutcomeKind::Succeeded),
            event_about("tickets.failed", "tkt_1", "failed"),
        ) else {
            panic!("fixture");
        };
        apply_event(&mut own, &failed, Flaw::None);
        assert!(!own.needs_review);
    }

    #[test]
    fn resource_names_follow_the_provider() {
        assert!(usable_resource("tickets"));
        assert!(usable_resource("a1_b"));
        for bad in [
            "",
            "Tickets",
            "1x",
            "tickets/1",
            "tickets?x=1",
            &"a".repeat(41),
        ] {
            assert!(!usable_resource(bad), "{bad:?}");
        }
    }
}

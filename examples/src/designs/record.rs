//! What the store holds about one operation, and the one way its outcome may
//! move: forward.

use jiff::Timestamp;
use lostreply_harness::protocol::{Operation, OutcomeKind, OutcomeReply};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Webhook ids remembered per operation. Deliveries of one operation are
/// few; the bound only keeps a hostile sender from growing the file, and an
/// id forgotten past it is harmless because applying an event never regresses.
pub const MAX_WEBHOOK_IDS: usize = 256;

/// An operation id that cannot be a file name: the id as received.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operation id {0:?} is not [A-Za-z0-9_.-]{{1,64}}; nothing was stored or sent")]
pub struct InvalidOpId(pub String);

/// An operation id that is safe to use as a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpId(String);

impl OpId {
    /// Accepts `[A-Za-z0-9_.-]{1,64}`; anything else never reaches the file
    /// system, so an id like `../x` cannot name a file outside the store.
    pub fn parse(id: &str) -> Result<OpId, InvalidOpId> {
        let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
        if (1..=64).contains(&id.len()) && id.bytes().all(allowed) {
            Ok(OpId(id.to_owned()))
        } else {
            Err(InvalidOpId(id.to_owned()))
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The operation's idempotency key: derived from its id alone, so every
    /// attempt of one operation shares it and no two operations do, whatever
    /// their arguments or action.
    pub fn idempotency_key(&self) -> String {
        format!("lr-{}", self.0)
    }
}

/// The durable record of one operation: everything the next process needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The operation's id.
    pub operation_id: String,
    /// The collection it creates in.
    pub resource: String,
    /// The arguments as first executed; every attempt sends these.
    pub args: Map<String, Value>,
    /// `lr-<op id>`, for the life of the operation.
    pub idempotency_key: String,
    /// The op id, sent as `client_reference` and searched by.
    pub client_reference: String,
    /// The request's `now` when the first create was about to be sent: the
    /// start of the key's retention (the provider starts it no earlier).
    pub first_sent_at: Timestamp,
    /// The claim.
    pub outcome: OutcomeKind,
    /// The provider's object, once known.
    pub provider_ref: Option<String>,
    /// Automation has stopped; a person must decide.
    pub needs_review: bool,
    /// What the claim rests on.
    pub evidence: String,
    /// A create we sent may have committed without our seeing it. Set before
    /// every send, so a crash mid-request leaves it set; cleared only by a
    /// definite answer or a proof of absence.
    pub create_in_doubt: bool,
    /// Create requests sent so far (first send, replays, re-creates).
    pub creates_sent: u32,
    /// Climbs in a row that found no evidence at all.
    pub inconclusive_climbs: u32,
    /// Webhook ids already handled, oldest first.
    pub webhook_ids_seen: Vec<String>,
    /// The outcome is an operator's decision: final, and raised for review
    /// again (never changed) when a genuine event contradicts it. A record
    /// written without the field holds no such decision.
    #[serde(default)]
    pub resolved_by_person: bool,
}

impl Record {
    /// The intent for a new operation, before anything is sent.
    pub fn intent(id: &OpId, operation: &Operation, now: Timestamp) -> Record {
        Record {
            operation_id: id.as_str().to_owned(),
            resource: operation.resource.clone(),
            args: operation.args.clone(),
            idempotency_key: id.idempotency_key(),
            client_reference: id.as_str().to_owned(),
            first_sent_at: now,
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: false,
            evidence: "intent recorded; create about to be sent".to_owned(),
            create_in_doubt: false,
            creates_sent: 0,
            inconclusive_climbs: 0,
            webhook_ids_seen: Vec::new(),
            resolved_by_person: false,
        }
    }

    /// `succeeded` or `failed`: never changes again.
    pub fn is_terminal(&self) -> bool {
        is_terminal(self.outcome)
    }

    /// The create body: exactly the arguments plus the two reserved fields,
    /// the same bytes on every attempt.
    pub fn create_body(&self) -> Value {
        let mut body = self.args.clone();
        body.insert(
            "client_reference".to_owned(),
            Value::String(self.client_reference.clone()),
        );
        let mut metadata = Map::new();
        metadata.insert(
            "operation_id".to_owned(),
            Value::String(self.operation_id.clone()),
        );
        body.insert("metadata".to_owned(), Value::Object(metadata));
        Value::Object(body)
    }

    /// Moves the claim forward on evidence; never backwards. A terminal
    /// record keeps its outcome, and `pending` is not undone by a later lack
    /// of evidence. A known object id is never forgotten. Returns whether the
    /// outcome was taken.
    pub fn advance(
        &mut self,
        outcome: OutcomeKind,
        provider_ref: Option<String>,
        evidence: String,
    ) -> bool {
        if !may_move(self.outcome, outcome) {
            return false;
        }
        self.overwrite(outcome, provider_ref, evidence);
        true
    }

    /// Takes the outcome whatever the record said: only for an operator's
    /// decision on a non-terminal record, and for the last-writer-wins flaw.
    pub fn overwrite(
        &mut self,
        outcome: OutcomeKind,
        provider_ref: Option<String>,
        evidence: String,
    ) {
        self.outcome = outcome;
        if provider_ref.is_some() {
            self.provider_ref = provider_ref;
        }
        self.evidence = evidence;
        if outcome != OutcomeKind::Unknown {
            // A definite answer is what a person would have been asked for.
            self.needs_review = false;
            self.inconclusive_climbs = 0;
        }
    }

    /// What an event showing object `seen` in `outcome` says against the
    /// operator's decision this record holds, or `None` when it agrees (or
    /// the outcome is not a person's): an object alive where the person
    /// said `failed`, another live object beside the one they named, the
    /// named object settled `failed`, or, when they named none, an object
    /// settled `failed`.
    pub fn contradiction(&self, outcome: OutcomeKind, seen: &str) -> Option<String> {
        if !self.resolved_by_person {
            return None;
        }
        let alive = outcome != OutcomeKind::Failed;
        match (self.outcome, self.provider_ref.as_deref()) {
            (OutcomeKind::Failed, _) => alive.then(|| format!("the provider holds {seen}")),
            (OutcomeKind::Succeeded, Some(named)) if named == seen => {
                (!alive).then(|| format!("{seen} settled failed"))
            }
            (OutcomeKind::Succeeded, Some(_)) => {
                alive.then(|| format!("the provider also holds {seen}"))
            }
            (OutcomeKind::Succeeded, None) => (!alive).then(|| format!("{seen} settled failed")),
            (OutcomeKind::Pending | OutcomeKind::Unknown, _) => None,
        }
    }

    /// Raises a decision a genuine event contradicts for review again,
    /// keeping its outcome and object: the person decides again.
    pub fn review_again(&mut self, why: &str, seen: &str) {
        self.needs_review = true;
        self.evidence = format!(
            "{}; then {seen}, which contradicts the decision ({why}): a person must review again",
            self.evidence
        );
    }

    /// Remembers a webhook id; false when it was already handled.
    pub fn first_sight_of(&mut self, webhook_id: &str) -> bool {
        if self.webhook_ids_seen.iter().any(|seen| seen == webhook_id) {
            return false;
        }
        if self.webhook_ids_seen.len() >= MAX_WEBHOOK_IDS {
            self.webhook_ids_seen.remove(0);
        }
        self.webhook_ids_seen.push(webhook_id.to_owned());
        true
    }

    /// The protocol reply describing this record.
    pub fn reply(&self) -> OutcomeReply {
        OutcomeReply::new(
            self.operation_id.as_str(),
            self.outcome,
            self.evidence.as_str(),
        )
        .with_provider_ref(self.provider_ref.as_deref().map(Into::into))
        .with_needs_review(self.needs_review)
    }
}

/// `succeeded` and `failed`.
pub fn is_terminal(outcome: OutcomeKind) -> bool {
    matches!(outcome, OutcomeKind::Succeeded | OutcomeKind::Failed)
}

/// Whether a record claiming `from` may take `to`.
pub fn may_move(from: OutcomeKind, to: OutcomeKind) -> bool {
    match from {
        OutcomeKind::Succeeded | OutcomeKind::Failed => false,
        OutcomeKind::Pending => to != OutcomeKind::Unknown,
        OutcomeKind::Unknown => true,
    }
}

/// The reply about an operation id that cannot be used or is not stored.
pub fn unknown_reply(operation_id: &str, evidence: String) -> OutcomeReply {
    OutcomeReply::new(operation_id, OutcomeKind::Unknown, evidence)
}

/// The reply about an operation the store has never seen.
pub fn no_record(operation_id: &str) -> OutcomeReply {
    unknown_reply(
        operation_id,
        "no record of this operation in the store".to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use OutcomeKind::{Failed, Pending, Succeeded, Unknown};

    #[test]
    fn op_ids_that_could_escape_the_store_are_refused() {
        for bad in ["", "../x", "a/b", "op 1", "é", &"x".repeat(65)] {
            assert!(OpId::parse(bad).is_err(), "{bad:?}");
        }
        for good in ["op-1", "A.b_c-9", "..", &"x".repeat(64)] {
            assert!(OpId::parse(good).is_ok(), "{good:?}");
        }
        let key = OpId::parse("op-1").map(|id| id.idempotency_key());
        assert_eq!(key.as_deref(), Ok("lr-op-1"));
    }

    fn resolved(outcome: OutcomeKind, provider_ref: Option<&str>) -> Option<Record> {
        let id = OpId::parse("op-1").ok()?;
        let operation = Operation::new("op-1", "create", "tickets", Map::new());
        let mut record = Record::intent(&id, &operation, Timestamp::UNIX_EPOCH);
        record.outcome = outcome;
        record.provider_ref = provider_ref.map(str::to_owned);
        record.resolved_by_person = true;
        Some(record)
    }

    #[test]
    fn events_that_contradict_a_decision_are_told_from_those_that_agree() {
        let contradicting = [
            (Failed, None, Pending, "tkt_1"),
            (Failed, None, Succeeded, "tkt_1"),
            (Succeeded, Some("tkt_9"), Pending, "tkt_2"),
            (Succeeded, Some("tkt_9"), Failed, "tkt_9"),
            (Succeeded, None, Failed, "tkt_1"),
        ];
        for (decided, named, outcome, seen) in contradicting {
            let record = resolved(decided, named);
            let why = record.as_ref().and_then(|r| r.contradiction(outcome, seen));
            assert!(why.is_some(), "{decided:?} {named:?} vs {seen} {outcome:?}");
        }
        let agreeing = [
            (Failed, None, Failed, "tkt_1"),
            (Succeeded, Some("tkt_9"), Pending, "tkt_9"),
            (Succeeded, Some("tkt_9"), Succeeded, "tkt_9"),
            (Succeeded, Some("tkt_9"), Failed, "tkt_2"),
            (Succeeded, None, Succeeded, "tkt_1"),
        ];
        for (decided, named, outcome, seen) in agreeing {
            let record = resolved(decided, named);
            let why = record.as_ref().and_then(|r| r.contradiction(outcome, seen));
            assert_eq!(why, None, "{decided:?} {named:?} vs {seen} {outcome:?}");
        }
        // An outcome the adapter reached itself is no person's decision.
        let mut own = resolved(Failed, None);
        if let Some(own) = own.as_mut() {
            own.resolved_by_person = false;
        }
        assert_eq!(own.and_then(|r| r.contradiction(Succeeded, "tkt_1")), None);
    }

    #[test]
    fn a_record_without_the_decision_flag_reads_as_no_decision() {
        let Some(record) = resolved(Succeeded, Some("tkt_9")) else {
            panic!("fixture");
        };
        let mut json = serde_json::to_value(&record).unwrap_or_default();
        assert_eq!(json["resolved_by_person"], true);
        if let Some(fields) = json.as_object_mut() {
            fields.remove("resolved_by_person");
        }
        let old: Option<Record> = serde_json::from_value(json).ok();
        assert_eq!(old.map(|r| r.resolved_by_person), Some(false));
    }

    #[test]
    fn outcomes_only_move_forward() {
        for terminal in [Succeeded, Failed] {
            for to in [Succeeded, Failed, Pending, Unknown] {
                assert!(!may_move(terminal, to));
            }
        }
        assert!(!may_move(Pending, Unknown));
        assert!(may_move(Pending, Succeeded));
        assert!(may_move(Unknown, Pending));
    }
}

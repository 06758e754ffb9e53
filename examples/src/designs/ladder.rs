//! Climbing the evidence ladder for one operation, under its lock: send the
//! create, replay the key while it is retained, look the object up, and
//! re-create only on proof of absence. The design decides the order and how
//! far `execute` climbs; the rungs themselves are the same for every design.

use jiff::Timestamp;
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{Contract, OutcomeKind, OutcomeReply};

use super::classify::{self, CreateVerdict, Lookup, Sighting};
use super::client::Provider;
use super::design::{Design, Flaw, Order};
use super::keys::KeyMode;
use super::record::{OpId, Record};
use super::rules::{self, Rungs};
use super::store::Store;

/// Same-key replays one reconcile may send. A reconcile is itself the retry
/// loop, so one replay per visit is enough; `execute`'s burst is the
/// design's `Eager { replays }`.
pub const RECONCILE_REPLAYS: u32 = 1;

/// Which create request is being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    /// The first create of the operation.
    First,
    /// The same key again, while the provider remembers it.
    Replay,
    /// A create sent once nothing of ours can exist (absence proven, or no
    /// earlier attempt can have committed).
    Finish,
}

/// Where a create left the climb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The answer decided the outcome (an object, or a final refusal).
    Settled,
    /// The answer left the effect open: the create may have committed.
    Open,
    /// Refused (a 429, or any refusal of a create sent while an earlier
    /// attempt is in doubt): this request did nothing, and sending it again
    /// in the same call would only be refused again.
    Refused,
    /// The provider is still running an earlier request with our key.
    InFlight,
    /// Our key is held for other arguments: a person must look.
    Mismatch,
}

/// Whether the climb goes on to the next rung.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Continue,
    Done,
}

/// One call's climb over one locked operation.
#[derive(Debug)]
pub struct Climb<'a> {
    design: Design,
    provider: &'a Provider,
    store: &'a Store,
    id: &'a OpId,
    contract: &'a Contract,
    mode: KeyMode,
    now: Timestamp,
    record: Record,
    /// A create of this very call lost its answer: it may still be on its
    /// way to the provider, so an absence seen now does not cover it unless
    /// the next create is a replay the provider deduplicates.
    lost_own_create: bool,
    /// Something this climb saw decided or narrowed the outcome.
    found_evidence: bool,
}

impl<'a> Climb<'a> {
    /// A climb over `record`, whose lock the caller holds.
    pub fn new(
        design: Design,
        provider: &'a Provider,
        store: &'a Store,
        id: &'a OpId,
        contract: &'a Contract,
        now: Timestamp,
        record: Record,
    ) -> Climb<'a> {
        Climb {
            design,
            provider,
            store,
            id,
            contract,
            mode: KeyMode::of(&contract.idempotency),
            now,
            record,
            lost_own_create: false,
            found_evidence: false,
        }
    }

    /// Sends the operation's first create (the record is saved, in doubt,
    /// before a byte goes out: that save is the durable intent).
    pub async fn first_send(&mut self) -> Result<Step, AdapterFailure> {
        self.send(Attempt::First).await
    }

    /// Climbs the ladder for a non-terminal record, with at most `replays`
    /// same-key replays.
    pub async fn climb(&mut self, replays: u32) -> Result<(), AdapterFailure> {
        if let Some(known) = self.record.provider_ref.clone() {
            self.follow_known(&known).await;
        } else if !self.record.create_in_doubt {
            // Nothing we sent can have committed (no send yet, or the last
            // one was refused outright): sending is safe, no lookup needed.
            self.send(Attempt::Finish).await?;
        } else {
            match self.design.order {
                Order::ReplayFirst => {
                    if self.replay(replays).await? == Next::Continue {
                        self.look_then_finish().await?;
                    }
                }
                Order::LookupFirst => {
                    if self.look_then_finish().await? == Next::Continue {
                        self.replay(replays).await?;
                    }
                }
            }
        }
        if self.found_evidence {
            self.record.inconclusive_climbs = 0;
        } else {
            self.record.inconclusive_climbs = self.record.inconclusive_climbs.saturating_add(1);
        }
        Ok(())
    }

    /// Escalates if the situation calls for it, saves the record, and
    /// replies with it.
    pub async fn finish(mut self) -> Result<OutcomeReply, AdapterFailure> {
        if self.design.flaw != Flaw::NeverEscalates {
            let why = rules::escalation(
                self.record.is_terminal(),
                self.rungs(),
                self.record.inconclusive_climbs,
            );
            if let Some(why) = why {
                self.escalate(&why);
            }
        }
        self.store.save(self.id, &self.record).await?;
        Ok(self.record.reply())
    }

    fn escalate(&mut self, why: &str) {
        self.record.needs_review = true;
        if !self.record.evidence.ends_with(why) {
            self.record.evidence = format!("{}; {why}", self.record.evidence);
        }
    }

    /// True while the provider still deduplicates our key. The flawed
    /// `replays-expired-keys` design believes it always does.
    fn key_retained(&self) -> bool {
        self.design.flaw == Flaw::ReplaysExpiredKeys
            || rules::key_retained(
                self.record.first_sent_at,
                self.now,
                self.contract.idempotency.retention_s,
            )
    }

    fn rungs(&self) -> Rungs {
        Rungs::available(
            self.mode,
            self.key_retained(),
            self.contract.lookup,
            self.record.provider_ref.is_some(),
        )
    }

    /// Records what was seen without changing the claim.
    fn note(&mut self, evidence: String) {
        self.record.evidence = if self.record.outcome == OutcomeKind::Pending {
            format!("still pending as last seen; then {evidence}")
        } else {
            evidence
        };
    }

    async fn send(&mut self, attempt: Attempt) -> Result<Step, AdapterFailure> {
        let earlier_in_doubt = self.record.create_in_doubt;
        self.record.create_in_doubt = true;
        self.record.creates_sent = self.record.creates_sent.saturating_add(1);
        self.store.save(self.id, &self.record).await?;
        let header = self.mode.header_value(&self.record.idempotency_key);
        let key = header
            .as_deref()
            .map(|value| (self.contract.idempotency.header.as_str(), value));
        let answer = self
            .provider
            .create(&self.record.resource, &self.record.create_body(), key)
            .await;
        let what = match attempt {
            Attempt::First => "create".to_owned(),
            Attempt::Replay => format!("replay of key {}", self.record.idempotency_key),
            Attempt::Finish if earlier_in_doubt => "create".to_owned(),
            Attempt::Finish => "create (nothing of ours can exist)".to_owned(),
        };
        let verdict = classify::create_verdict(&answer, self.mode, &what);
        Ok(self.take_verdict(verdict, earlier_in_doubt))
    }

    fn take_verdict(&mut self, verdict: CreateVerdict, earlier_in_doubt: bool) -> Step {
        match verdict {
            CreateVerdict::Effect {
                outcome,
                id,
                evidence,
            } => {
                self.found_evidence = true;
                self.record.create_in_doubt = false;
                self.record.advance(outcome, Some(id), evidence);
                Step::Settled
            }
            // The flawed `refused-retry-is-failure` design takes a refusal
            // of a create sent again for the operation's failure.
            CreateVerdict::Rejected { evidence } | CreateVerdict::RateLimited { evidence }
                if earlier_in_doubt && self.design.flaw == Flaw::RefusedRetryIsFailure =>
            {
                self.found_evidence = true;
                self.record.create_in_doubt = false;
                self.record.advance(OutcomeKind::Failed, None, evidence);
                Step::Settled
            }
            // This request did nothing, but an earlier one may have: the
            // refusal says nothing about the operation as a whole.
            CreateVerdict::Rejected { evidence } if earlier_in_doubt => {
                self.note(format!(
                    "{evidence}, but an earlier attempt may have committed"
                ));
                Step::Refused
            }
            CreateVerdict::Rejected { evidence } => {
                self.found_evidence = true;
                self.record.create_in_doubt = false;
                self.record.advance(OutcomeKind::Failed, None, evidence);
                Step::Settled
            }
            CreateVerdict::RateLimited { evidence } => {
                self.found_evidence = true;
                self.record.create_in_doubt = earlier_in_doubt;
                self.note(evidence);
                Step::Refused
            }
            CreateVerdict::InFlight { evidence } => {
                self.found_evidence = true;
                if self.design.flaw == Flaw::InFlightIsFailure {
                    self.record.advance(OutcomeKind::Failed, None, evidence);
                    return Step::Settled;
                }
                self.record.advance(OutcomeKind::Pending, None, evidence);
                Step::InFlight
            }
            CreateVerdict::Mismatch { evidence } => {
                self.found_evidence = true;
                self.note(evidence);
                if self.design.flaw != Flaw::NeverEscalates {
                    self.record.needs_review = true;
                }
                Step::Mismatch
            }
            CreateVerdict::Ambiguous { evidence } => {
                self.lost_own_create = true;
                self.note(evidence);
                Step::Open
            }
        }
    }

    /// Up to `budget` replays while the key is retained; on to the lookups
    /// only while the answers stay open.
    async fn replay(&mut self, budget: u32) -> Result<Next, AdapterFailure> {
        for _ in 0..budget {
            if !self.rungs().replay {
                break;
            }
            match self.send(Attempt::Replay).await? {
                Step::Open => continue,
                // Nothing ran; pressing the provider again now would not help.
                Step::Refused => break,
                // Settled, or the provider told us to stop replaying.
                Step::Settled | Step::InFlight | Step::Mismatch => return Ok(Next::Done),
            }
        }
        Ok(Next::Continue)
    }

    /// Looks for the object; finishes the operation on proof of absence.
    async fn look_then_finish(&mut self) -> Result<Next, AdapterFailure> {
        match self.look_up(None).await {
            Lookup::Found(seen) => {
                self.adopt(seen);
                Ok(Next::Done)
            }
            Lookup::Absent(evidence) => {
                self.on_absence(evidence).await?;
                Ok(Next::Done)
            }
            // The flawed `failed-lookup-is-absence` design reads a lookup
            // that answered nothing as one that found nothing.
            Lookup::NoEvidence(evidence) if self.design.flaw == Flaw::FailedLookupIsAbsence => {
                self.on_absence(evidence).await?;
                Ok(Next::Done)
            }
            Lookup::NoEvidence(evidence) => {
                self.note(evidence);
                Ok(Next::Continue)
            }
        }
    }

    async fn on_absence(&mut self, evidence: String) -> Result<(), AdapterFailure> {
        self.found_evidence = true;
        // An absence is proof only when no create of this call lost its
        // answer: such a create may still be on its way and land after the
        // lookup. The flawed `same-call-absence` design takes it as proof.
        let proof = !self.lost_own_create || self.design.flaw == Flaw::SameCallAbsence;
        if proof {
            self.record.create_in_doubt = false;
            self.note(evidence);
            self.send(Attempt::Finish).await?;
        } else if self.rungs().replay {
            // A retained-key replay is deduplicated against the lost create,
            // which stays in doubt: a refusal of the replay is no failure.
            self.note(format!(
                "{evidence}; a create of this call lost its answer and may still land, so only a replay of our key is sent"
            ));
            self.send(Attempt::Replay).await?;
        } else {
            // Anything else waits for a later reconcile.
            self.note(format!(
                "{evidence}; a create of this call lost its answer and may still land, so a later reconcile finishes the operation"
            ));
        }
        Ok(())
    }

    fn adopt(&mut self, seen: Sighting) {
        self.found_evidence = true;
        self.record.create_in_doubt = false;
        match seen.outcome {
            Some(outcome) => {
                self.record.advance(outcome, Some(seen.id), seen.evidence);
            }
            // It exists (so never create it again) but its status is not one
            // the contract defines: keep it and say so.
            None => {
                self.record.provider_ref = Some(seen.id);
                self.note(seen.evidence);
            }
        }
    }

    /// The object is known: only its current status is missing.
    async fn follow_known(&mut self, known: &str) {
        match self.look_up(Some(known)).await {
            Lookup::Found(seen) if seen.id == known => self.adopt(seen),
            Lookup::Found(other) => self.note(format!(
                "looked for {known} and found another object carrying our reference ({})",
                other.id
            )),
            Lookup::Absent(evidence) => self.note(format!(
                "{evidence}, yet object {known} is known to exist: no evidence either way"
            )),
            Lookup::NoEvidence(evidence) => self.note(evidence),
        }
    }

    /// The lookups the contract offers, in order: retrieve (only with a
    /// known id), search by reference, list recent. The first that proves
    /// something decides; a disabled, failed or garbled lookup proves
    /// nothing and the next one is tried.
    async fn look_up(&self, known: Option<&str>) -> Lookup {
        let lookup = self.contract.lookup;
        let resource = self.record.resource.clone();
        let op_id = self.record.operation_id.clone();
        let mut tried = Vec::new();
        if let Some(id) = known.filter(|id| lookup.retrieve && classify::usable_id(id)) {
            let answer = self.provider.get(&format!("/v1/{resource}/{id}")).await;
            match classify::retrieve_lookup(&answer, id) {
                Lookup::NoEvidence(why) => tried.push(why),
                proof => return proof,
            }
        }
        if lookup.client_reference {
            let answer = self
                .provider
                .get(&format!("/v1/{resource}?client_reference={op_id}"))
                .await;
            let how = format!("search by client_reference {op_id}");
            match classify::listing_lookup(&answer, &op_id, known, &how) {
                Lookup::NoEvidence(why) => tried.push(why),
                proof => return proof,
            }
        }
        if lookup.list_recent {
            let since = rules::list_since(self.record.first_sent_at);
            let answer = self
                .provider
                .get(&format!(
                    "/v1/{resource}?created_gte={since}&limit={}",
                    classify::MAX_LISTED
                ))
                .await;
            let how = format!("list since {since}");
            match classify::listing_lookup(&answer, &op_id, known, &how) {
                Lookup::NoEvidence(why) => tried.push(why),
                proof => return proof,
            }
        }
        if tried.is_empty() {
            Lookup::NoEvidence("the contract offers no lookup that applies".to_owned())
        } else {
            Lookup::NoEvidence(tried.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use lostreply_harness::adapter::Adapter;
    use lostreply_harness::protocol::{ExecuteRequest, OperationRequest, OutcomeReply};
    use serde_json::{json, Value};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::super::calls::DesignAdapter;
    use super::super::design::{Design, EAGER, LAZY};
    use super::*;

    /// One scripted answer: a status and a JSON body, or `None` to close the
    /// connection without a byte once the request has arrived.
    type Answer = Option<(u16, Value)>;

    /// A provider on loopback that answers the nth request with the nth
    /// answer (a 599 past the script) and keeps each request's method.
    struct Scripted {
        url: String,
        methods: Arc<Mutex<Vec<String>>>,
    }

    impl Scripted {
        async fn start(script: Vec<Answer>) -> Scripted {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("http://{}", listener.local_addr().expect("address"));
            let methods = Arc::new(Mutex::new(Vec::new()));
            let seen = Arc::clone(&methods);
            tokio::spawn(async move {
                let mut script = script.into_iter();
                while let Ok((mut socket, _)) = listener.accept().await {
                    let Some(method) = read_request(&mut socket).await else {
                        continue;
                    };
                    seen.lock().expect("journal").push(method);
                    let answer = script
                        .next()
                        .unwrap_or(Some((599, json!({"error": {"type": "unscripted"}}))));
                    if let Some((status, body)) = answer {
                        let body = body.to_string();
                        let head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
                    }
                }
            });
            Scripted { url, methods }
        }

        fn methods(&self) -> Vec<String> {
            self.methods.lock().expect("journal").clone()
        }
    }

    /// Reads one request whole (head and `content-length` body); its method.
    async fn read_request(socket: &mut TcpStream) -> Option<String> {
        let mut read = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = socket.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            read.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&read).into_owned();
            let Some(end) = text.find("\r\n\r\n") else {
                continue;
            };
            let length = text[..end]
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if read.len() >= end + 4 + length {
                return text.split(' ').next().map(str::to_owned);
            }
        }
    }

    fn common(url: &str, mode: &str, search: bool) -> Value {
        json!({
            "protocol": 1,
            "now": "2026-01-01T00:00:00Z",
            "provider": {
                "base_url": url,
                "credential": "sk_test_a",
                "contract": {
                    "idempotency": {"mode": mode, "header": "Idempotency-Key", "retention_s": 86400},
                    "lookup": {"retrieve": false, "client_reference": search, "list_recent": false},
                    "asynchronous": false,
                    "webhooks": null
                }
            },
            "client_timeout_ms": 5000
        })
    }

    fn with_common(mut fields: Value, common: Value) -> Value {
        if let (Some(fields), Value::Object(common)) = (fields.as_object_mut(), common) {
            fields.extend(common);
        }
        fields
    }

    async fn execute(adapter: &DesignAdapter, common: Value) -> OutcomeReply {
        let operation = json!({"id": "op-1", "action": "create", "resource": "tickets",
                               "args": {"title": "Purchase review"}});
        let request: ExecuteRequest =
            serde_json::from_value(with_common(json!({"operation": operation}), common))
                .expect("an execute request");
        adapter.execute(request).await.expect("a reply")
    }

    async fn reconcile(adapter: &DesignAdapter, common: Value) -> OutcomeReply {
        let request: OperationRequest =
            serde_json::from_value(with_common(json!({"operation_id": "op-1"}), common))
                .expect("a reconcile request");
        adapter.reconcile(request).await.expect("a reply")
    }

    fn object(id: &str) -> Answer {
        Some((
            201,
            json!({"id": id, "status": "succeeded", "client_reference": "op-1"}),
        ))
    }

    fn error(status: u16, kind: &str) -> Answer {
        Some((status, json!({"error": {"type": kind}})))
    }

    fn empty_page() -> Answer {
        Some((200, json!({"data": [], "has_more": false})))
    }

    fn said(reply: &OutcomeReply) -> (OutcomeKind, Option<&str>, bool) {
        (
            reply.outcome,
            reply.provider_ref.as_deref(),
            reply.needs_review,
        )
    }

    const REFUSALS: [(u16, &str); 5] = [
        (400, "invalid_request"),
        (401, "unauthorized"),
        (404, "not_found"),
        (413, "payload_too_large"),
        (429, "rate_limited"),
    ];

    #[tokio::test]
    async fn a_refused_retry_in_execute_leaves_the_operation_open() {
        for (status, kind) in REFUSALS {
            let dir = tempfile::tempdir().expect("state dir");
            let adapter = DesignAdapter::open(dir.path(), EAGER).expect("adapter");
            let provider = Scripted::start(vec![None, error(status, kind), object("tkt_1")]).await;
            let common = common(&provider.url, "stripe", false);
            let reply = execute(&adapter, common.clone()).await;
            assert_eq!(
                said(&reply),
                (OutcomeKind::Unknown, None, false),
                "{status}: {}",
                reply.evidence
            );
            // The refusal ends the call's replays; the next climb starts again.
            assert_eq!(provider.methods(), ["POST", "POST"], "{status}");
            let later = reconcile(&adapter, common).await;
            assert_eq!(
                said(&later),
                (OutcomeKind::Succeeded, Some("tkt_1"), false),
                "{status}"
            );
        }
    }

    #[tokio::test]
    async fn a_refused_replay_in_reconcile_leaves_the_operation_open() {
        for (status, kind) in REFUSALS {
            let dir = tempfile::tempdir().expect("state dir");
            let adapter = DesignAdapter::open(dir.path(), LAZY).expect("adapter");
            let provider = Scripted::start(vec![None, error(status, kind), object("tkt_1")]).await;
            let common = common(&provider.url, "stripe", false);
            assert_eq!(
                execute(&adapter, common.clone()).await.outcome,
                OutcomeKind::Unknown
            );
            let refused = reconcile(&adapter, common.clone()).await;
            assert_eq!(
                said(&refused),
                (OutcomeKind::Unknown, None, false),
                "{status}: {}",
                refused.evidence
            );
            let later = reconcile(&adapter, common).await;
            assert_eq!(
                said(&later),
                (OutcomeKind::Succeeded, Some("tkt_1"), false),
                "{status}"
            );
        }
    }

    #[tokio::test]
    async fn a_first_refusal_is_final_and_a_flawed_design_takes_a_refused_retry_for_one() {
        let dir = tempfile::tempdir().expect("state dir");
        let adapter = DesignAdapter::open(dir.path(), EAGER).expect("adapter");
        let provider = Scripted::start(vec![error(400, "invalid_request")]).await;
        let reply = execute(&adapter, common(&provider.url, "stripe", false)).await;
        assert_eq!(said(&reply), (OutcomeKind::Failed, None, false));

        let flawed = Design {
            flaw: Flaw::RefusedRetryIsFailure,
            ..EAGER
        };
        let dir = tempfile::tempdir().expect("state dir");
        let adapter = DesignAdapter::open(dir.path(), flawed).expect("adapter");
        let provider = Scripted::start(vec![None, error(429, "rate_limited")]).await;
        let reply = execute(&adapter, common(&provider.url, "stripe", false)).await;
        assert_eq!(said(&reply), (OutcomeKind::Failed, None, false));
    }

    #[tokio::test]
    async fn an_absence_seen_in_the_call_whose_unkeyed_create_was_lost_proves_nothing() {
        let dir = tempfile::tempdir().expect("state dir");
        let adapter = DesignAdapter::open(dir.path(), EAGER).expect("adapter");
        let provider =
            Scripted::start(vec![None, empty_page(), empty_page(), object("tkt_2")]).await;
        let common = common(&provider.url, "none", true);
        let reply = execute(&adapter, common.clone()).await;
        assert_eq!(
            said(&reply),
            (OutcomeKind::Unknown, None, false),
            "{}",
            reply.evidence
        );
        assert_eq!(provider.methods(), ["POST", "GET"]);
        // A later call's lookup is proof: that one creates again.
        let later = reconcile(&adapter, common).await;
        assert_eq!(said(&later), (OutcomeKind::Succeeded, Some("tkt_2"), false));
        assert_eq!(provider.methods(), ["POST", "GET", "GET", "POST"]);

        let flawed = Design {
            flaw: Flaw::SameCallAbsence,
            ..EAGER
        };
        let dir = tempfile::tempdir().expect("state dir");
        let adapter = DesignAdapter::open(dir.path(), flawed).expect("adapter");
        let provider = Scripted::start(vec![None, empty_page(), object("tkt_2")]).await;
        execute(&adapter, self::common(&provider.url, "none", true)).await;
        assert_eq!(provider.methods(), ["POST", "GET", "POST"]);
    }

    #[tokio::test]
    async fn a_same_call_absence_with_a_retained_key_is_followed_by_a_replay_only() {
        let dir = tempfile::tempdir().expect("state dir");
        let adapter = DesignAdapter::open(dir.path(), EAGER).expect("adapter");
        let script = vec![None, None, None, empty_page(), error(404, "not_found")];
        let provider = Scripted::start(script).await;
        let reply = execute(&adapter, common(&provider.url, "stripe", true)).await;
        // The replay's refusal says nothing about the lost creates.
        assert_eq!(
            said(&reply),
            (OutcomeKind::Unknown, None, false),
            "{}",
            reply.evidence
        );
        assert_eq!(provider.methods(), ["POST", "POST", "POST", "GET", "POST"]);
    }
}

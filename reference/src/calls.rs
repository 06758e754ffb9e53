//! The five calls of the reference adapter, as /work/reference-algorithm.md
//! (docs: "The reference adapter's algorithm") lays them out. Each call that may
//! change a record holds that operation's lock from its first read to its last
//! write, network requests included: that is what makes two racing reconcilers
//! (processes or tasks) safe.

use std::str::FromStr;

use jiff::Timestamp;
use serde_json::{json, Value};

use crate::classify::{self, create_verdict, Conclusion, Correlation, Lookup};
use crate::client::ProviderClient;
use crate::store::{InvalidOpId, OpId, OpLock, OpRecord, Store, StoreError};
use lostreply_harness::adapter::AdapterFailure;
use lostreply_harness::protocol::{
    Common, Contract, Operation, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest,
    WebhookReply, WebhookRequest,
};
use lostreply_simulator::standard_webhooks;

/// Reconciles in a row without evidence before automation stops.
pub const MAX_INCONCLUSIVE: u32 = 3;

/// How far before the first send a `list_recent` lookup starts (clock skew margin).
const LIST_MARGIN_S: i64 = 60;

/// What the lookup sees at most.
const LIST_LIMIT: &str = "100";

const NO_RECORD: &str = "no record of this operation in the store";

/// The reference adapter over one store.
#[derive(Debug)]
pub struct ReferenceAdapter {
    store: Store,
}

/// What one reconcile established.
enum Finding {
    /// A verdict that rests on evidence (including "a person must decide").
    Evidence(Conclusion),
    /// Nothing learned; the sentence says why.
    Inconclusive(String),
}

impl ReferenceAdapter {
    /// An adapter over an opened store.
    pub fn new(store: Store) -> ReferenceAdapter {
        ReferenceAdapter { store }
    }

    /// Runs blocking store work off the async runtime.
    pub(crate) async fn blocking<T, F>(&self, work: F) -> Result<T, AdapterFailure>
    where
        T: Send + 'static,
        F: FnOnce(Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || work(store))
            .await
            .map_err(|e| AdapterFailure::new(format!("store task failed: {e}")))?
            .map_err(AdapterFailure::new)
    }

    pub(crate) async fn lock(&self, id: &OpId) -> Result<OpLock, AdapterFailure> {
        let id = id.clone();
        self.blocking(move |store| store.lock(&id)).await
    }

    pub(crate) async fn load(&self, id: &OpId) -> Result<Option<OpRecord>, AdapterFailure> {
        let id = id.clone();
        self.blocking(move |store| store.load(&id)).await
    }

    /// Every operation's record (for telling another operation's effect from ours).
    pub(crate) async fn records(&self) -> Result<Vec<OpRecord>, AdapterFailure> {
        self.blocking(|store| store.records()).await
    }

    pub(crate) async fn save(&self, record: &OpRecord) -> Result<(), AdapterFailure> {
        let record = record.clone();
        self.blocking(move |store| store.save(&record)).await
    }

    /// Steps a–e of reconcile, on an unsettled create operation whose lock
    /// the caller holds.
    pub(crate) async fn reconcile_create_locked(
        &self,
        mut record: OpRecord,
        common: &Common,
        now: Timestamp,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let client = client(common)?;
        let finding = find(&client, &record, &common.provider.contract, now).await?;
        match finding {
            Finding::Evidence(verdict) => absorb(&mut record, verdict),
            Finding::Inconclusive(evidence) => {
                record.inconclusive = record.inconclusive.saturating_add(1);
                match record.outcome {
                    OutcomeKind::Pending => {
                        record.evidence = format!("still pending as last seen; now {evidence}");
                    }
                    OutcomeKind::Unknown if record.inconclusive >= MAX_INCONCLUSIVE => {
                        record.needs_review = true;
                        record.evidence = format!(
                            "{evidence}; {} reconciles in a row found no evidence: automation stopped, a person must check",
                            record.inconclusive
                        );
                    }
                    OutcomeKind::Unknown | OutcomeKind::Succeeded | OutcomeKind::Failed => {
                        record.evidence = evidence;
                    }
                }
            }
        }
        self.save(&record).await?;
        Ok(record.reply())
    }
}

/// Applies a verdict that rests on evidence, never regressing `pending` to `unknown`.
pub(crate) fn absorb(record: &mut OpRecord, verdict: Conclusion) {
    record.inconclusive = 0;
    let keep_pending =
        record.outcome == OutcomeKind::Pending && verdict.outcome == OutcomeKind::Unknown;
    if !keep_pending {
        record.outcome = verdict.outcome;
    }
    if verdict.provider_ref.is_some() {
        record.provider_ref = verdict.provider_ref;
    }
    record.needs_review = verdict.needs_review && !keep_pending;
    record.evidence = verdict.evidence;
}

fn client(common: &Common) -> Result<ProviderClient, AdapterFailure> {
    ProviderClient::new(common).map_err(AdapterFailure::new)
}

pub(crate) fn parse_time(field: &str, text: &str) -> Result<Timestamp, AdapterFailure> {
    Timestamp::from_str(text)
        .map_err(|e| AdapterFailure::new(format!("{field} {text:?} is not an RFC 3339 time: {e}")))
}

fn keyed(contract: &Contract) -> bool {
    contract.idempotency.mode != "none"
}

/// The reply for an operation id the store cannot hold.
pub(crate) fn invalid_id_reply(error: &InvalidOpId) -> OutcomeReply {
    OutcomeReply::new(
        error.0.as_str(),
        OutcomeKind::Unknown,
        format!("refused: {error}"),
    )
}

pub(crate) fn no_record_reply(id: &OpId) -> OutcomeReply {
    OutcomeReply::new(id.as_str(), OutcomeKind::Unknown, NO_RECORD)
}

/// A collection name as the provider API defines it; anything else would not
/// be a path segment of the provider's API.
pub(crate) fn valid_resource(resource: &str) -> bool {
    let mut bytes = resource.bytes();
    resource.len() <= 40
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The create body: the arguments, plus our reserved correlation fields.
fn create_body(record: &OpRecord) -> Value {
    let mut body = record.operation.args.clone();
    body.insert(
        "client_reference".to_owned(),
        Value::String(record.client_reference.clone()),
    );
    body.insert(
        "metadata".to_owned(),
        json!({"operation_id": record.operation.id}),
    );
    Value::Object(body)
}

/// Sends the create exactly as every attempt of this operation sends it: same
/// body, same key (when the provider has keys).
async fn send_create(
    client: &ProviderClient,
    record: &OpRecord,
    contract: &Contract,
) -> Conclusion {
    create_verdict(
        &post_create(client, record, contract).await,
        client.timeout_ms(),
    )
}

/// [`send_create`] for a create sent again after an ambiguous attempt: a
/// refusal of it is not the operation's failure ([`classify::retry_verdict`]).
async fn resend_create(
    client: &ProviderClient,
    record: &OpRecord,
    contract: &Contract,
) -> Conclusion {
    classify::retry_verdict(
        &post_create(client, record, contract).await,
        client.timeout_ms(),
    )
}

async fn post_create(
    client: &ProviderClient,
    record: &OpRecord,
    contract: &Contract,
) -> crate::client::Answer {
    let key =
        keyed(contract).then_some((contract.idempotency.header.as_str(), record.key.as_str()));
    client
        .create(&record.operation.resource, &create_body(record), key)
        .await
}

/// Looks for our object by correlation, with the best lookup the contract offers;
/// `None` when it offers neither search nor list.
async fn look_up(
    client: &ProviderClient,
    record: &OpRecord,
    contract: &Contract,
) -> Result<Option<Lookup>, AdapterFailure> {
    let resource = record.operation.resource.as_str();
    let op_id = record.operation.id.as_str();
    if contract.lookup.client_reference {
        let answer = client
            .query(resource, &[("client_reference", &record.client_reference)])
            .await;
        let source = format!("search by client_reference {}", record.client_reference);
        return Ok(Some(classify::list_lookup(
            &answer,
            op_id,
            Correlation::ClientReference,
            &source,
            client.timeout_ms(),
        )));
    }
    if contract.lookup.list_recent {
        let first = parse_time("stored first_sent_at", &record.first_sent_at)?;
        let since = Timestamp::from_second(first.as_second().saturating_sub(LIST_MARGIN_S))
            .map_err(|e| AdapterFailure::new(format!("list window start out of range: {e}")))?;
        let since = since.to_string();
        let answer = client
            .query(
                resource,
                &[("created_gte", since.as_str()), ("limit", LIST_LIMIT)],
            )
            .await;
        let source = format!("list of objects created since {since}");
        return Ok(Some(classify::list_lookup(
            &answer,
            op_id,
            Correlation::ClientReferenceOrMetadata,
            &source,
            client.timeout_ms(),
        )));
    }
    Ok(None)
}

/// What the evidence the contract offers says about a non-terminal record.
async fn find(
    client: &ProviderClient,
    record: &OpRecord,
    contract: &Contract,
    now: Timestamp,
) -> Result<Finding, AdapterFailure> {
    // a. We know the object: follow it.
    if let Some(provider_ref) = &record.provider_ref {
        let lookup = if contract.lookup.retrieve {
            let answer = client
                .retrieve(&record.operation.resource, provider_ref)
                .await;
            classify::retrieve_lookup(&answer, provider_ref, client.timeout_ms())
        } else {
            match look_up(client, record, contract).await? {
                Some(lookup) => lookup,
                None => {
                    return Ok(Finding::Inconclusive(format!(
                        "no lookup available to follow object {provider_ref}"
                    )))
                }
            }
        };
        return Ok(match lookup {
            Lookup::Found(verdict) => Finding::Evidence(verdict),
            // The object exists (the provider named it): absence in a lookup is
            // not proof of anything, and it must never lead to a re-create.
            Lookup::Absent(evidence) | Lookup::Failed(evidence) => Finding::Inconclusive(evidence),
        });
    }

    // b. The provider still remembers our key: a replay tells us what happened.
    let first = parse_time("stored first_sent_at", &record.first_sent_at)?;
    let age_s = now.as_second().saturating_sub(first.as_second());
    let retained = i64::try_from(contract.idempotency.retention_s)
        .map_or(true, |retention_s| age_s < retention_s);
    if keyed(contract) && retained {
        let verdict = resend_create(client, record, contract).await;
        let verdict = Conclusion {
            evidence: format!("replay with the same key: {}", verdict.evidence),
            ..verdict
        };
        return Ok(if verdict.is_ambiguous() {
            Finding::Inconclusive(verdict.evidence)
        } else {
            Finding::Evidence(verdict)
        });
    }

    // c. Look for it; absence proven by a readable answer allows one re-create.
    match look_up(client, record, contract).await? {
        Some(Lookup::Found(verdict)) => Ok(Finding::Evidence(verdict)),
        Some(Lookup::Failed(evidence)) => Ok(Finding::Inconclusive(format!(
            "{evidence}: nothing learned about the create"
        ))),
        Some(Lookup::Absent(absence)) => {
            let verdict = send_create(client, record, contract).await;
            let evidence = format!("{absence}, so created again: {}", verdict.evidence);
            Ok(if verdict.is_ambiguous() {
                Finding::Inconclusive(evidence)
            } else {
                Finding::Evidence(Conclusion {
                    evidence,
                    ..verdict
                })
            })
        }
        // d. Nothing can tell: stop automation rather than re-create blind.
        None => {
            let why = if keyed(contract) {
                "the idempotency key has expired and the provider offers no lookup"
            } else {
                "no idempotency and no lookup"
            };
            Ok(Finding::Evidence(Conclusion {
                outcome: OutcomeKind::Unknown,
                provider_ref: None,
                needs_review: true,
                evidence: format!(
                    "{why}: cannot tell whether the create committed; a person must check"
                ),
            }))
        }
    }
}

/// The operation a webhook body is about, by our correlation fields.
fn correlated_op(event: &Value) -> Option<&str> {
    let data = event.get("data")?;
    data.get("client_reference")
        .and_then(Value::as_str)
        .or_else(|| {
            data.pointer("/metadata/operation_id")
                .and_then(Value::as_str)
        })
}

/// The verdict an authentic event carries, if it is about this resource.
fn event_verdict(event: &Value, resource: &str, event_id: &str) -> Option<Conclusion> {
    let event_type = event.get("type").and_then(Value::as_str)?;
    let kind = event_type.strip_prefix(resource)?.strip_prefix('.')?;
    let data = event.get("data")?;
    let source = format!("event {event_id} ({event_type})");
    match kind {
        "created" => classify::object_verdict(data, &source),
        "succeeded" | "failed" => {
            let id = data.get("id").and_then(Value::as_str)?.to_owned();
            let outcome = if kind == "succeeded" {
                OutcomeKind::Succeeded
            } else {
                OutcomeKind::Failed
            };
            Some(Conclusion {
                outcome,
                provider_ref: Some(id.clone()),
                needs_review: false,
                evidence: format!("{source}: object {id} {kind}"),
            })
        }
        _ => None,
    }
}

/// True when an event's verdict contradicts the operator's decision the
/// record holds: an object alive where the person said `failed`, another
/// live object beside the one they named, or the named one settled failed.
fn contradicts_decision(record: &OpRecord, event: &Conclusion) -> bool {
    let alive = event.outcome != OutcomeKind::Failed;
    match (
        record.outcome,
        record.provider_ref.as_deref(),
        event.provider_ref.as_deref(),
    ) {
        (OutcomeKind::Failed, _, Some(_)) => alive,
        (OutcomeKind::Succeeded, Some(named), Some(seen)) if named == seen => !alive,
        (OutcomeKind::Succeeded, Some(_), Some(_)) => alive,
        (OutcomeKind::Succeeded, None, Some(_)) => !alive,
        _ => false,
    }
}

const REJECTED: WebhookReply = WebhookReply::REJECTED;
const NOTHING_TO_APPLY: WebhookReply = WebhookReply::accepted(None);

/// The calls of a create operation, and the calls every operation answers
/// alike; [`crate::adapter`] routes the protocol's calls here.
impl ReferenceAdapter {
    /// The first execute of a create operation, its lock held: the intent
    /// saved, then the create sent (and resent once with its key when the
    /// answer is lost).
    pub(crate) async fn execute_create(
        &self,
        id: &OpId,
        operation: Operation,
        common: &Common,
        now: Timestamp,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let contract = &common.provider.contract;
        let client = client(common)?;
        let mut record = OpRecord {
            key: format!("lr-{}", id.as_str()),
            client_reference: id.as_str().to_owned(),
            operation,
            first_sent_at: now.to_string(),
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: false,
            evidence: "create about to be sent".to_owned(),
            inconclusive: 0,
            events_seen: Vec::new(),
            mcp: None,
            resolved_by_person: false,
        };
        // The intent is durable before the request leaves: a crash after the
        // remote commit leaves a record whose key and reference find the effect.
        self.save(&record).await?;
        let mut verdict = send_create(&client, &record, contract).await;
        if verdict.is_ambiguous() && keyed(contract) {
            let retry = resend_create(&client, &record, contract).await;
            verdict = Conclusion {
                evidence: format!(
                    "first attempt: {}; retry with the same key: {}",
                    verdict.evidence, retry.evidence
                ),
                ..retry
            };
        }
        absorb(&mut record, verdict);
        self.save(&record).await?;
        Ok(record.reply())
    }

    /// `webhook`: verifies a delivery, then applies it to its operation's record.
    pub(crate) async fn accept_webhook(
        &self,
        request: WebhookRequest,
    ) -> Result<WebhookReply, AdapterFailure> {
        let now = parse_time("now", &request.common.now)?;
        let Some(webhooks) = &request.common.provider.contract.webhooks else {
            return Ok(REJECTED);
        };
        let Ok(webhook_id) = standard_webhooks::verify(
            &webhooks.secret,
            &request.headers,
            &request.body,
            now.as_second(),
        )
        .map(str::to_owned) else {
            return Ok(REJECTED);
        };
        // Authentic but unreadable: nothing can be correlated or applied.
        let Ok(event) = serde_json::from_str::<Value>(&request.body) else {
            return Ok(REJECTED);
        };
        let Some(id) = correlated_op(&event).and_then(|op| OpId::parse(op).ok()) else {
            return Ok(NOTHING_TO_APPLY);
        };
        let _lock = self.lock(&id).await?;
        let Some(mut record) = self.load(&id).await? else {
            return Ok(NOTHING_TO_APPLY);
        };
        let accepted = WebhookReply::accepted(Some(id.as_str().to_owned()));
        if record.events_seen.contains(&webhook_id) {
            return Ok(accepted);
        }
        record.remember_event(&webhook_id);
        // Terminal outcomes never change (a late event after an operator's
        // resolution included); an event never carries `unknown`, so pending
        // cannot regress either. An event that contradicts an operator's
        // decision raises the operation for review again, outcome kept.
        if let Some(verdict) = event_verdict(&event, &record.operation.resource, &webhook_id) {
            if !record.is_terminal() {
                absorb(&mut record, verdict);
            } else if record.resolved_by_person && contradicts_decision(&record, &verdict) {
                record.needs_review = true;
                record.evidence = format!(
                    "{}; contradicted by {}: review again",
                    record.evidence, verdict.evidence
                );
            }
        }
        self.save(&record).await?;
        Ok(accepted)
    }

    /// `resolve`: an operator's decision, final unless the outcome already was.
    pub(crate) async fn apply_resolution(
        &self,
        request: ResolveRequest,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let id = match OpId::parse(&request.operation_id) {
            Ok(id) => id,
            Err(e) => return Ok(invalid_id_reply(&e)),
        };
        let _lock = self.lock(&id).await?;
        let Some(mut record) = self.load(&id).await? else {
            return Ok(no_record_reply(&id));
        };
        let resolution = request.resolution;
        if record.is_terminal() {
            let mut reply = record.reply();
            reply.evidence = format!(
                "resolution ignored: the outcome was already final ({})",
                record.evidence
            )
            .into();
            return Ok(reply);
        }
        match resolution.outcome {
            OutcomeKind::Succeeded | OutcomeKind::Failed => {
                record.outcome = resolution.outcome;
                record.provider_ref = resolution.provider_ref;
                record.needs_review = false;
                record.inconclusive = 0;
                record.resolved_by_person = true;
                record.evidence = format!("operator: {}", resolution.evidence);
                self.save(&record).await?;
                Ok(record.reply())
            }
            OutcomeKind::Pending | OutcomeKind::Unknown => {
                let mut reply = record.reply();
                reply.evidence =
                    "resolution ignored: an operator resolves to succeeded or failed".into();
                Ok(reply)
            }
        }
    }

    /// `status`: the record's claim, read without a lock.
    pub(crate) async fn read_status(
        &self,
        request: OperationRequest,
    ) -> Result<OutcomeReply, AdapterFailure> {
        let id = match OpId::parse(&request.operation_id) {
            Ok(id) => id,
            Err(e) => return Ok(invalid_id_reply(&e)),
        };
        // No lock: records are replaced atomically, so a read sees a whole one.
        Ok(match self.load(&id).await? {
            Some(record) => record.reply(),
            None => no_record_reply(&id),
        })
    }
}

#[cfg(test)]
mod tests {
    //! The calls without a provider, or against a loopback listener that
    //! accepts and hangs up (so every answer is lost). The simulator-backed
    //! tests live in `reference/tests/it/reference_adapter.rs`.
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use serde_json::json;
    use tokio::io::AsyncReadExt;

    use super::*;
    use lostreply_harness::adapter::Adapter;
    use lostreply_harness::protocol::{
        ContractIdempotency, ContractLookup, ContractWebhooks, ExecuteRequest, Operation,
        ProviderInfo, Resolution, WebhookScheme,
    };

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const NOW: &str = "2026-01-01T00:00:00Z";
    const NOW_S: i64 = 1_767_225_600;

    fn common(base_url: &str, mode: &str, lookup: bool) -> Common {
        let lookup = ContractLookup::NONE
            .with_retrieve(lookup)
            .with_client_reference(lookup)
            .with_list_recent(lookup);
        let idempotency = ContractIdempotency::new(mode, "Idempotency-Key", 86_400);
        let webhooks = ContractWebhooks::new(SECRET, WebhookScheme::StandardWebhooks);
        let contract =
            Contract::new("generic", idempotency, lookup, false).with_webhooks(Some(webhooks));
        Common::new(
            NOW,
            ProviderInfo::new(base_url, "sk_test_a", contract),
            2_000,
        )
    }

    fn operation(id: &str) -> Operation {
        let mut args = serde_json::Map::new();
        args.insert("title".into(), "Purchase review".into());
        Operation::new(id, "create", "tickets", args)
    }

    /// A loopback listener that accepts, reads a little, and hangs up: every
    /// request is received and every answer lost. Counts connections.
    async fn hang_up_server() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                drop(socket);
            }
        });
        (format!("http://{addr}"), count)
    }

    /// A reference adapter over a fresh directory, its provider a
    /// [`hang_up_server`].
    struct HungUp {
        dir: tempfile::TempDir,
        connections: Arc<AtomicUsize>,
        common: Common,
        adapter: ReferenceAdapter,
    }

    impl HungUp {
        async fn start(mode: &str, lookup: bool) -> HungUp {
            let dir = tempfile::tempdir().unwrap();
            let (url, connections) = hang_up_server().await;
            let adapter = adapter(dir.path());
            HungUp {
                dir,
                connections,
                common: common(&url, mode, lookup),
                adapter,
            }
        }

        async fn execute(&self) -> OutcomeReply {
            let request = execute_request("op-1", &self.common);
            self.adapter.execute(request).await.unwrap()
        }

        async fn reconcile(&self) -> OutcomeReply {
            let request = op_request("op-1", &self.common);
            self.adapter.reconcile(request).await.unwrap()
        }

        fn connections(&self) -> usize {
            self.connections.load(Ordering::SeqCst)
        }
    }

    fn adapter(dir: &std::path::Path) -> ReferenceAdapter {
        ReferenceAdapter::new(Store::open(dir).unwrap())
    }

    fn execute_request(id: &str, common: &Common) -> ExecuteRequest {
        ExecuteRequest::new(operation(id), common.clone())
    }

    fn op_request(id: &str, common: &Common) -> OperationRequest {
        OperationRequest::new(id, common.clone())
    }

    #[tokio::test]
    async fn a_lost_answer_is_unknown_and_retried_once_with_the_same_key() {
        let hung_up = HungUp::start("stripe", true).await;
        let reply = hung_up.execute().await;
        assert_eq!(
            (reply.outcome, reply.needs_review),
            (OutcomeKind::Unknown, false)
        );
        assert!(
            reply.evidence.contains("retry with the same key"),
            "{}",
            reply.evidence
        );
        assert!(
            reply.evidence.contains("may or may not have committed"),
            "{}",
            reply.evidence
        );
        assert_eq!(hung_up.connections(), 2);
        // The record is durable and status reads it without a request.
        let record = Store::open(hung_up.dir.path())
            .unwrap()
            .load(&OpId::parse("op-1").unwrap())
            .unwrap();
        let record = record.unwrap();
        assert_eq!(
            (record.key.as_str(), record.first_sent_at.as_str()),
            ("lr-op-1", NOW)
        );
        let status = op_request("op-1", &hung_up.common);
        assert_eq!(hung_up.adapter.status(status).await.unwrap(), reply);
        assert_eq!(hung_up.connections(), 2);
    }

    #[tokio::test]
    async fn without_keys_or_lookups_a_person_is_asked_and_nothing_is_resent() {
        let hung_up = HungUp::start("none", false).await;
        let reply = hung_up.execute().await;
        assert_eq!(reply.outcome, OutcomeKind::Unknown);
        assert_eq!(hung_up.connections(), 1, "no immediate retry without keys");
        let reply = hung_up.reconcile().await;
        assert_eq!(
            (reply.outcome, reply.needs_review),
            (OutcomeKind::Unknown, true)
        );
        assert!(
            reply.evidence.starts_with("no idempotency and no lookup"),
            "{}",
            reply.evidence
        );
        // Executing again never re-creates a known operation.
        assert_eq!(hung_up.execute().await.outcome, OutcomeKind::Unknown);
        assert_eq!(hung_up.connections(), 1);
    }

    #[tokio::test]
    async fn lookups_that_fail_three_times_stop_automation() {
        let mut hung_up = HungUp::start("stripe", true).await;
        hung_up.execute().await;
        // Keys exist but have expired by the time of the reconciles.
        hung_up.common.now = "2026-01-02T01:00:00Z".to_owned();
        for round in 1..=3 {
            let reply = hung_up.reconcile().await;
            assert_eq!(reply.outcome, OutcomeKind::Unknown);
            assert_eq!(
                reply.needs_review,
                round == 3,
                "round {round}: {}",
                reply.evidence
            );
            assert!(
                reply.evidence.contains("search by client_reference"),
                "{}",
                reply.evidence
            );
        }
        // Two creates from execute, then one (failed) search per reconcile: no re-create.
        assert_eq!(hung_up.connections(), 5);
    }

    #[tokio::test]
    async fn refused_operation_ids_never_touch_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let common = common("http://127.0.0.1:9", "stripe", true);
        let adapter = adapter(dir.path());
        for bad in ["../escape", "a/b", ""] {
            let reply = adapter
                .execute(execute_request(bad, &common))
                .await
                .unwrap();
            assert_eq!(reply.outcome, OutcomeKind::Unknown);
            assert!(reply.evidence.starts_with("refused"), "{}", reply.evidence);
            let status = adapter.status(op_request(bad, &common)).await.unwrap();
            assert!(
                status.evidence.starts_with("refused"),
                "{}",
                status.evidence
            );
        }
        assert!(!dir.path().join("escape.json").exists());
        assert_eq!(
            std::fs::read_dir(dir.path().join("ops")).unwrap().count(),
            0
        );
    }

    fn seed(dir: &std::path::Path, id: &str) {
        let record = OpRecord {
            operation: operation(id),
            key: format!("lr-{id}"),
            client_reference: id.into(),
            first_sent_at: NOW.into(),
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: true,
            evidence: "create about to be sent".into(),
            inconclusive: 0,
            events_seen: vec![],
            mcp: None,
            resolved_by_person: false,
        };
        Store::open(dir).unwrap().save(&record).unwrap();
    }

    fn delivery(event_id: &str, kind: &str, status: &str, obj: &str, ts: i64) -> WebhookRequest {
        let body = json!({"id": event_id, "type": format!("tickets.{kind}"), "created_at": NOW,
            "data": {"id": obj, "object": "tickets", "status": status, "client_reference": "op-1",
                     "metadata": {"operation_id": "op-1"}}})
        .to_string();
        let headers = BTreeMap::from([("webhook-id".to_owned(), event_id.to_owned())]);
        let unsigned =
            WebhookRequest::new(headers, body, common("http://127.0.0.1:9", "stripe", true));
        resign(unsigned, ts)
    }

    /// Signs the delivery's body afresh, as the sender does on every delivery.
    fn resign(mut delivery: WebhookRequest, ts: i64) -> WebhookRequest {
        let event_id = delivery.headers["webhook-id"].clone();
        let key = standard_webhooks::secret_key(SECRET).unwrap();
        let signature = standard_webhooks::sign(&key, &event_id, ts, &delivery.body);
        delivery
            .headers
            .insert("webhook-timestamp".to_owned(), ts.to_string());
        delivery
            .headers
            .insert("webhook-signature".to_owned(), signature);
        delivery
    }

    #[tokio::test]
    async fn webhooks_are_verified_deduplicated_and_never_regress() {
        let dir = tempfile::tempdir().unwrap();
        seed(dir.path(), "op-1");
        let adapter = adapter(dir.path());
        let status_common = common("http://127.0.0.1:9", "stripe", true);
        let status = || adapter.status(op_request("op-1", &status_common));
        let ours = WebhookReply::accepted(Some("op-1".into()));

        let mut forged = delivery("evt_1", "succeeded", "succeeded", "tkt_forged", NOW_S);
        forged
            .headers
            .insert("webhook-signature".into(), "v1,AAAA".into());
        assert_eq!(adapter.webhook(forged).await.unwrap(), REJECTED);
        let stale = delivery("evt_1", "succeeded", "succeeded", "tkt_1", NOW_S - 301);
        assert_eq!(adapter.webhook(stale).await.unwrap(), REJECTED);
        assert_eq!(status().await.unwrap().outcome, OutcomeKind::Unknown);

        let created = delivery("evt_1", "created", "processing", "tkt_1", NOW_S);
        assert_eq!(adapter.webhook(created.clone()).await.unwrap(), ours);
        let reply = status().await.unwrap();
        assert_eq!(
            (reply.outcome, reply.provider_ref.as_deref()),
            (OutcomeKind::Pending, Some("tkt_1"))
        );
        assert!(!reply.needs_review, "evidence ends the review");
        assert!(reply.evidence.contains("evt_1"), "{}", reply.evidence);

        let settled = delivery("evt_2", "succeeded", "succeeded", "tkt_1", NOW_S);
        assert_eq!(adapter.webhook(settled).await.unwrap(), ours);
        assert_eq!(status().await.unwrap().outcome, OutcomeKind::Succeeded);

        // A repeat and a late event change nothing once terminal.
        assert_eq!(adapter.webhook(created).await.unwrap(), ours);
        let late = delivery("evt_3", "failed", "failed", "tkt_1", NOW_S);
        assert_eq!(adapter.webhook(late).await.unwrap(), ours);
        let reply = status().await.unwrap();
        assert_eq!(
            (reply.outcome, reply.provider_ref.as_deref()),
            (OutcomeKind::Succeeded, Some("tkt_1"))
        );
        let record = Store::open(dir.path())
            .unwrap()
            .load(&OpId::parse("op-1").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(record.events_seen, vec!["evt_1", "evt_2", "evt_3"]);

        // An authentic event about an operation the store never saw.
        let other = delivery("evt_4", "created", "succeeded", "tkt_4", NOW_S);
        let other = WebhookRequest::new(
            other.headers,
            other.body.replace("op-1", "op-9"),
            other.common,
        );
        let other = resign(other, NOW_S);
        assert_eq!(adapter.webhook(other).await.unwrap(), NOTHING_TO_APPLY);
    }

    #[tokio::test]
    async fn an_operators_resolution_is_final() {
        let dir = tempfile::tempdir().unwrap();
        seed(dir.path(), "op-1");
        let adapter = adapter(dir.path());
        let common = common("http://127.0.0.1:9", "none", false);
        let resolve = |id: &str, outcome, provider_ref: Option<&str>| {
            let resolution = Resolution::new(
                outcome,
                provider_ref.map(str::to_owned),
                "found it in the console",
            );
            ResolveRequest::new(id, resolution, common.clone())
        };
        let reply = adapter
            .resolve(resolve("op-1", OutcomeKind::Succeeded, Some("tkt_1")))
            .await
            .unwrap();
        assert_eq!(
            reply,
            OutcomeReply::new(
                "op-1",
                OutcomeKind::Succeeded,
                "operator: found it in the console"
            )
            .with_provider_ref(Some("tkt_1".into()))
        );
        let again = adapter
            .resolve(resolve("op-1", OutcomeKind::Failed, None))
            .await
            .unwrap();
        assert_eq!(
            (again.outcome, again.provider_ref.as_deref()),
            (OutcomeKind::Succeeded, Some("tkt_1"))
        );
        assert!(
            again.evidence.starts_with("resolution ignored"),
            "{}",
            again.evidence
        );
        // Neither reconcile nor execute touch a resolved operation (the provider
        // address is unreachable: any request would show as an unknown).
        let reconciled = adapter
            .reconcile(op_request("op-1", &common))
            .await
            .unwrap();
        assert_eq!(reconciled, reply);
        let executed = adapter
            .execute(execute_request("op-1", &common))
            .await
            .unwrap();
        assert_eq!(executed, reply);
        let unknown = adapter
            .resolve(resolve("op-2", OutcomeKind::Failed, None))
            .await
            .unwrap();
        assert_eq!(unknown.evidence, NO_RECORD);
    }
}

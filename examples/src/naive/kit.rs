//! What the naive adapters have in common, written the way such code usually
//! is: a thin HTTP helper, a one-file-per-operation JSON store without locks,
//! reply builders, and the calls most of them make the same way (`status`,
//! `resolve`, ignoring webhooks). None of their flaws live here; each adapter's
//! module shows its own.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use lostreply_harness::adapter::{Adapter, AdapterFactory, AdapterFailure};
use lostreply_harness::protocol::{
    Common, ExecuteRequest, Operation, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest,
    WebhookReply, WebhookRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a naive adapter comes to life over a state directory, and where it
/// keeps its entries.
pub trait Stored: Sized + Send + Sync + 'static {
    /// An instance over the run's state directory.
    fn open(state_dir: &Path) -> Result<Self, AdapterFailure>;
    /// Its entries.
    fn records(&self) -> &dyn Records;
}

/// The calls of a naive adapter. `execute` and `reconcile` are each adapter's
/// own; the others default to what most of them do: ignore webhooks, take the
/// operator's word unless the outcome is final, report the stored entry.
#[async_trait]
pub trait Naive: Stored {
    /// Perform the operation.
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure>;

    /// Find out what happened to a known operation.
    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure>;

    /// Handle a delivered event: not used.
    async fn webhook(&self, _request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        Ok(webhook_rejected())
    }

    /// Apply an operator's decision.
    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.records().resolve(&request)
    }

    /// Report the stored entry.
    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.records().status(&request)
    }
}

/// A [`Naive`] adapter as the harness calls it.
#[derive(Debug)]
struct Served<T>(T);

#[async_trait]
impl<T: Naive> Adapter for Served<T> {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.0.execute(request).await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.0.reconcile(request).await
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        self.0.webhook(request).await
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.0.resolve(request).await
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.0.status(request).await
    }
}

fn build<T: Naive>(state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
    Ok(Box::new(Served(T::open(state_dir)?)))
}

/// Gives a naive adapter whose entries live in a [`FileStore`] field named
/// `store` its [`Stored`] impl and its `FACTORY`.
macro_rules! file_backed {
    ($adapter:ident, $name:literal) => {
        /// Its factory.
        pub const FACTORY: $crate::naive::kit::Factory =
            $crate::naive::kit::Factory::of::<$adapter>($name);

        impl $crate::naive::kit::Stored for $adapter {
            fn open(
                state_dir: &::std::path::Path,
            ) -> Result<Self, ::lostreply_harness::adapter::AdapterFailure> {
                let store = $crate::naive::kit::FileStore::open(state_dir)?;
                Ok($adapter { store })
            }

            fn records(&self) -> &dyn $crate::naive::kit::Records {
                &self.store
            }
        }
    };
}
pub(crate) use file_backed;

/// A naive adapter's factory: a name and a constructor over the state directory.
pub struct Factory {
    /// The adapter's display name (`naive-01-fails-on-timeout`).
    pub name: &'static str,
    /// Builds an instance.
    pub build: fn(&Path) -> Result<Box<dyn Adapter>, AdapterFailure>,
}

impl Factory {
    /// The factory of the naive adapter `T`.
    pub const fn of<T: Naive>(name: &'static str) -> Factory {
        Factory {
            name,
            build: build::<T>,
        }
    }
}

impl std::fmt::Debug for Factory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Factory")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl AdapterFactory for Factory {
    fn name(&self) -> String {
        self.name.to_owned()
    }

    fn build(&self, state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
        (self.build)(state_dir)
    }
}

/// A response the helper read completely.
#[derive(Debug, Clone)]
pub struct Resp {
    /// HTTP status.
    pub status: u16,
    /// `Idempotent-Replayed: true` was present.
    pub replayed: bool,
    /// The body as JSON (`Null` when it was not JSON).
    pub body: Value,
}

impl Resp {
    /// 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `error.type` of an error body (empty when absent).
    pub fn error_type(&self) -> &str {
        self.body
            .pointer("/error/type")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The object's `id`.
    pub fn id(&self) -> Option<String> {
        self.body
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// The object's `status`.
    pub fn object_status(&self) -> &str {
        self.body
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// A small HTTP client for the provider.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    base_url: String,
    credential: String,
}

impl Http {
    /// A client with the request's timeout.
    pub fn new(common: &Common) -> Result<Http, AdapterFailure> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(common.client_timeout_ms))
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(AdapterFailure::new)?;
        Ok(Http {
            client,
            base_url: common.provider.base_url.trim_end_matches('/').to_owned(),
            credential: common.provider.credential.clone(),
        })
    }

    /// `POST /v1/{resource}` with an optional idempotency header.
    pub async fn post(
        &self,
        resource: &str,
        body: &Value,
        key: Option<(&str, &str)>,
    ) -> Result<Resp, RequestError> {
        let mut request = self
            .client
            .post(format!("{}/v1/{resource}", self.base_url))
            .bearer_auth(&self.credential)
            .json(body);
        if let Some((header, key)) = key {
            request = request.header(header, key);
        }
        read(request.send().await).await
    }

    /// `GET {path}` (path and query, e.g. `/v1/tickets?client_reference=op-1`).
    pub async fn get(&self, path: &str) -> Result<Resp, RequestError> {
        let request = self
            .client
            .get(format!("{}{path}", self.base_url))
            .bearer_auth(&self.credential);
        read(request.send().await).await
    }
}

async fn read(sent: reqwest::Result<reqwest::Response>) -> Result<Resp, RequestError> {
    let response = sent.map_err(RequestError::from)?;
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|v| v.as_bytes() == b"true");
    let bytes = response.bytes().await.map_err(RequestError::from)?;
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok(Resp {
        status,
        replayed,
        body,
    })
}

/// A request without an answer, as the evidence of an `unknown` says it.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The client's timeout ran out.
    #[error("timeout")]
    Timeout,
    /// Any other failure to send or to read the answer.
    #[error("request error: {0}")]
    Failed(#[source] reqwest::Error),
}

impl From<reqwest::Error> for RequestError {
    fn from(error: reqwest::Error) -> Self {
        if error.is_timeout() {
            RequestError::Timeout
        } else {
            RequestError::Failed(error)
        }
    }
}

/// The create body most adapters send: the arguments plus our correlation field.
pub fn create_body(args: &Map<String, Value>, op_id: &str) -> Value {
    let mut body = args.clone();
    body.insert(
        "client_reference".to_owned(),
        Value::String(op_id.to_owned()),
    );
    Value::Object(body)
}

/// The provider's status word as an outcome.
pub fn outcome_of(object_status: &str) -> OutcomeKind {
    match object_status {
        "succeeded" => OutcomeKind::Succeeded,
        "processing" => OutcomeKind::Pending,
        "failed" => OutcomeKind::Failed,
        _ => OutcomeKind::Unknown,
    }
}

/// True for `succeeded` and `failed`.
pub fn is_final(outcome: OutcomeKind) -> bool {
    match outcome {
        OutcomeKind::Succeeded | OutcomeKind::Failed => true,
        OutcomeKind::Pending | OutcomeKind::Unknown => false,
    }
}

/// A key no other request has used ("a fresh UUID").
pub fn fresh_key(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{prefix}-{nanos:x}-{}",
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// What the naive adapters remember about an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Operation id.
    pub op_id: String,
    /// Collection.
    pub resource: String,
    /// Arguments.
    pub args: Map<String, Value>,
    /// The idempotency key in use, if any.
    pub key: Option<String>,
    /// Create attempts sent so far.
    pub attempts: u32,
    /// The claim.
    pub outcome: OutcomeKind,
    /// The provider object, once known.
    pub provider_ref: Option<String>,
    /// Why.
    pub evidence: String,
}

impl Entry {
    /// A new entry for an operation about to be sent.
    pub fn new(op: &Operation) -> Entry {
        Entry {
            op_id: op.id.clone(),
            resource: op.resource.clone(),
            args: op.args.clone(),
            key: None,
            attempts: 0,
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            evidence: "sending".to_owned(),
        }
    }

    /// Records an outcome.
    pub fn set(&mut self, outcome: OutcomeKind, provider_ref: Option<String>, evidence: String) {
        self.outcome = outcome;
        self.provider_ref = provider_ref;
        self.evidence = evidence;
    }

    /// The protocol reply.
    pub fn reply(&self) -> OutcomeReply {
        OutcomeReply::new(self.op_id.as_str(), self.outcome, self.evidence.as_str())
            .with_provider_ref(self.provider_ref.as_deref().map(Into::into))
    }
}

/// The reply for an operation nobody wrote down.
pub fn no_record(op_id: &str) -> OutcomeReply {
    OutcomeReply::new(op_id, OutcomeKind::Unknown, "no record")
}

/// Where a naive adapter keeps its entries, and the calls that only read or
/// write them.
pub trait Records: Send + Sync {
    /// The entry, if any.
    fn get(&self, op_id: &str) -> Result<Option<Entry>, AdapterFailure>;

    /// Writes the entry.
    fn put(&self, entry: &Entry) -> Result<(), AdapterFailure>;

    /// Writes the entry and replies with it.
    fn keep(&self, entry: &Entry) -> Result<OutcomeReply, AdapterFailure> {
        self.put(entry)?;
        Ok(entry.reply())
    }

    /// A new entry for the operation, with a key of its own (`lr-{id}`),
    /// written down before anything is sent.
    fn record_intent(&self, op: &Operation) -> Result<Entry, AdapterFailure> {
        let mut entry = Entry::new(op);
        entry.key = Some(format!("lr-{}", op.id));
        self.put(&entry)?;
        Ok(entry)
    }

    /// The entry when its outcome is not final yet; otherwise the reply to give
    /// as things stand (the final outcome, or "no record").
    fn unsettled(&self, op_id: &str) -> Result<Result<Entry, OutcomeReply>, AdapterFailure> {
        Ok(match self.get(op_id)? {
            Some(entry) if !is_final(entry.outcome) => Ok(entry),
            Some(entry) => Err(entry.reply()),
            None => Err(no_record(op_id)),
        })
    }

    /// `status`: the stored entry, no network.
    fn status(&self, request: &OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        Ok(match self.get(&request.operation_id)? {
            Some(entry) => entry.reply(),
            None => no_record(&request.operation_id),
        })
    }

    /// `resolve` as most of them do it: take the operator's word unless the
    /// outcome is already final.
    fn resolve(&self, request: &ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        let Some(mut entry) = self.get(&request.operation_id)? else {
            return Ok(no_record(&request.operation_id));
        };
        if !is_final(entry.outcome) {
            entry.set(
                request.resolution.outcome,
                request.resolution.provider_ref.clone(),
                format!("operator: {}", request.resolution.evidence),
            );
            self.put(&entry)?;
        }
        Ok(entry.reply())
    }
}

/// One JSON file per operation, read and written whole. No lock.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// Opens the store under `state_dir`.
    pub fn open(state_dir: &Path) -> Result<FileStore, AdapterFailure> {
        let dir = state_dir.join("naive");
        fs::create_dir_all(&dir)
            .map_err(|e| AdapterFailure::new(format!("create {}: {e}", dir.display())))?;
        Ok(FileStore { dir })
    }

    fn path(&self, op_id: &str) -> Result<PathBuf, AdapterFailure> {
        let plain = !op_id.is_empty()
            && op_id.len() <= 64
            && op_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if plain {
            Ok(self.dir.join(format!("{op_id}.json")))
        } else {
            Err(AdapterFailure::new(format!(
                "operation id {op_id:?} is not [A-Za-z0-9_-]{{1,64}}"
            )))
        }
    }
}

impl Records for FileStore {
    fn get(&self, op_id: &str) -> Result<Option<Entry>, AdapterFailure> {
        let path = self.path(op_id)?;
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| AdapterFailure::new(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(AdapterFailure::new(format!("read {}: {e}", path.display()))),
        }
    }

    /// Writes to a temporary file, then renames, so readers never see half a
    /// file.
    fn put(&self, entry: &Entry) -> Result<(), AdapterFailure> {
        let path = self.path(&entry.op_id)?;
        let tmp = self.dir.join(format!("{}.tmp", fresh_key(&entry.op_id)));
        let bytes = serde_json::to_vec_pretty(entry).map_err(AdapterFailure::new)?;
        fs::write(&tmp, bytes)
            .and_then(|()| fs::rename(&tmp, &path))
            .map_err(|e| AdapterFailure::new(format!("write {}: {e}", path.display())))
    }
}

/// Refuses a delivery (bad signature, unreadable body, or webhooks not used).
pub fn webhook_rejected() -> WebhookReply {
    WebhookReply::REJECTED
}

/// Accepts a delivery about no operation we know.
pub fn webhook_not_ours() -> WebhookReply {
    WebhookReply::accepted(None)
}

/// Accepts a delivery applied to `op_id`.
pub fn webhook_applied(op_id: String) -> WebhookReply {
    WebhookReply::accepted(Some(op_id))
}

/// What an event says about its object: outcome, object id and evidence, ready
/// for [`Entry::set`]. The event type decides when it names a final state;
/// otherwise the object's status does.
pub fn event_outcome(event: &Value) -> (OutcomeKind, Option<String>, String) {
    let data = &event["data"];
    let event_type = event["type"].as_str().unwrap_or("");
    let outcome = if event_type.ends_with(".failed") {
        OutcomeKind::Failed
    } else if event_type.ends_with(".succeeded") {
        OutcomeKind::Succeeded
    } else {
        outcome_of(data["status"].as_str().unwrap_or(""))
    };
    (
        outcome,
        data["id"].as_str().map(str::to_owned),
        format!("webhook {event_type}"),
    )
}

/// The entry's key under the contract's header, unless the provider takes no
/// keys.
pub fn key_header<'a>(common: &'a Common, key: Option<&'a str>) -> Option<(&'a str, &'a str)> {
    let idempotency = &common.provider.contract.idempotency;
    key.filter(|_| idempotency.mode != "none")
        .map(|k| (idempotency.header.as_str(), k))
}

/// The usual reading of a create's answer: 2xx by the object's status, other
/// 4xx a rejection, anything else (5xx, no answer) not known yet.
pub fn read_create(answer: &Result<Resp, RequestError>) -> (OutcomeKind, Option<String>, String) {
    match answer {
        Ok(resp) if resp.ok() => (
            outcome_of(resp.object_status()),
            resp.id(),
            format!("{} {}", resp.status, resp.object_status()),
        ),
        Ok(resp) if resp.status < 500 => (
            OutcomeKind::Failed,
            None,
            format!("rejected: {} {}", resp.status, resp.error_type()),
        ),
        Ok(resp) => (
            OutcomeKind::Unknown,
            None,
            format!("status {}", resp.status),
        ),
        Err(error) => (OutcomeKind::Unknown, None, error.to_string()),
    }
}

/// Sends the entry's create (same body, same `key`) up to `tries` times, until
/// the provider answers at all, and records the answer as [`read_create`]
/// reads it.
pub async fn send_create(http: &Http, entry: &mut Entry, key: Option<(&str, &str)>, tries: u32) {
    let body = create_body(&entry.args, &entry.op_id);
    for _ in 0..tries {
        entry.attempts += 1;
        let answer = http.post(&entry.resource, &body, key).await;
        let (outcome, provider_ref, evidence) = read_create(&answer);
        entry.set(outcome, provider_ref, evidence);
        if answer.is_ok() {
            break;
        }
    }
}

/// Sends the entry's create once, with its key unless the provider takes none,
/// and keeps what the answer says.
pub async fn create_once(
    store: &dyn Records,
    mut entry: Entry,
    common: &Common,
) -> Result<OutcomeReply, AdapterFailure> {
    let http = Http::new(common)?;
    let key = entry.key.clone();
    send_create(&http, &mut entry, key_header(common, key.as_deref()), 1).await;
    store.keep(&entry)
}

/// `execute` for adapters that never send an operation twice on their own: a
/// known operation gets its stored reply; a new one has its intent recorded and
/// its create sent once.
pub async fn execute_once(
    store: &dyn Records,
    request: &ExecuteRequest,
) -> Result<OutcomeReply, AdapterFailure> {
    if let Some(entry) = store.get(&request.operation.id)? {
        return Ok(entry.reply());
    }
    let entry = store.record_intent(&request.operation)?;
    create_once(store, entry, &request.common).await
}

/// Retrieves the entry's object by id and takes its status when the provider
/// answers 2xx; returns the status it took. No answer leaves the entry as it
/// was.
pub async fn retrieve(http: &Http, entry: &mut Entry, id: &str) -> Option<String> {
    let resp = http
        .get(&format!("/v1/{}/{id}", entry.resource))
        .await
        .ok()?;
    if !resp.ok() {
        return None;
    }
    let status = resp.object_status().to_owned();
    entry.set(
        outcome_of(&status),
        Some(id.to_owned()),
        "retrieved".to_owned(),
    );
    Some(status)
}

/// The outcome and id of the first listed object whose `client_reference` is
/// ours.
pub fn find_ours(list: &Resp, op_id: &str) -> Option<(OutcomeKind, Option<String>)> {
    let object = list
        .body
        .get("data")
        .and_then(Value::as_array)?
        .iter()
        .find(|o| o.get("client_reference").and_then(Value::as_str) == Some(op_id))?;
    let status = object.get("status").and_then(Value::as_str).unwrap_or("");
    let id = object.get("id").and_then(Value::as_str).map(str::to_owned);
    Some((outcome_of(status), id))
}

/// How the adapters that retry on their own read one attempt's answer: records
/// it on the entry and says whether it ends the retries (any answer but a 5xx).
pub fn record_attempt(entry: &mut Entry, answer: Result<Resp, RequestError>) -> bool {
    match answer {
        Ok(resp) if resp.ok() => {
            let outcome = outcome_of(resp.object_status());
            entry.set(outcome, resp.id(), format!("created: {}", resp.status));
            true
        }
        Ok(resp) if resp.status < 500 => {
            entry.set(
                OutcomeKind::Failed,
                None,
                format!("{} {}", resp.status, resp.error_type()),
            );
            true
        }
        Ok(resp) => {
            entry.set(
                OutcomeKind::Unknown,
                None,
                format!("status {}", resp.status),
            );
            false
        }
        Err(error) => {
            entry.set(OutcomeKind::Unknown, None, error.to_string());
            false
        }
    }
}

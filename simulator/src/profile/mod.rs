//! Provider profiles: the wire a provider speaks, mapped onto the engine.
//!
//! The engine (store, ledger, journal, clock, faults, idempotency modes)
//! knows one model of a provider: collections of objects created by `POST`,
//! read back by id, searched by a reference and listed by time. A
//! [`Profile`] says how one real provider puts that model on the wire: its
//! paths, how it authenticates, how a create's body is encoded, what its
//! objects, lists, errors and events look like, which header carries the
//! idempotency key and which headers hint at a retry. So a user's real SDK
//! (stripe-python, openai-python, ...) runs against the simulator unchanged,
//! while fault rules, invariants and reports never learn which profile
//! served a request: they see resources, kinds, keys and effects, whatever
//! the wire.
//!
//! [`Profile::generic`] is the provider API of docs/provider-api.md, served
//! by the engine's own fast paths byte for byte (every `Generic` variant
//! below). The built-in profiles of real providers are in `builtin`; a user
//! describes any other JSON API in a profile file, which the harness reads
//! into this same type.
//!
//! The map of the folder: `builtin` (stripe, openai, anthropic), `wire`
//! (a request's route and credential under a profile), `form` (Stripe's
//! bracket-notation form bodies), `render` (objects, pages, errors and
//! events from the profile's templates), `search` (Stripe's search query
//! language).

mod builtin;
pub(crate) mod form;
pub(crate) mod render;
pub(crate) mod search;
pub(crate) mod wire;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Map, Value};

pub use builtin::{BUILTIN_PROFILES, PROFILE_NAMES};
pub use form::{decode_form, wire_args, FormError, PercentDecodeError};

/// How one provider speaks: everything the simulator needs to take its shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The name reports, the journal's banner and the adapter's contract use.
    pub name: String,
    /// Which paths exist and what each asks for.
    pub routes: Routes,

    /// Where the credential is.
    pub auth: Auth,
    /// How a create's body is encoded and which of its fields are not arguments.
    pub body: BodyFormat,
    /// What an object looks like on the wire, and how a create is answered.
    pub objects: Objects,
    /// What an error looks like.
    pub errors: Errors,
    /// Lists and searches: their parameters and envelopes.
    pub pages: Pages,
    /// The idempotency key's header and the provider's defaults.
    pub keys: Keys,
    /// A header that tells clients whether to retry, where the provider sends one.
    pub retry_hints: Option<RetryHints>,
    /// Events: their envelope, type names and signature scheme.
    pub webhooks: WebhookFormat,
}

impl Default for Profile {
    fn default() -> Self {
        Profile::generic()
    }
}

impl Profile {
    /// The simulator's own API (docs/provider-api.md).
    pub fn generic() -> Profile {
        Profile {
            name: "generic".to_owned(),
            routes: Routes::Generic,
            auth: Auth::Bearer,
            body: BodyFormat {
                encoding: Encoding::Json,
                client_reference: Some("client_reference".to_owned()),
                metadata: Some("metadata".to_owned()),
                ignored: Vec::new(),
            },
            objects: Objects::Generic,
            errors: Errors::Generic,
            pages: Pages::Generic,
            keys: Keys {
                header: "idempotency-key".to_owned(),
                replay_header: Some(("idempotent-replayed".to_owned(), "true".to_owned())),
                default_mode: IdempotencyMode::None,
                default_retention: Duration::from_secs(24 * 3600),
            },
            retry_hints: None,
            webhooks: WebhookFormat {
                scheme: SignatureScheme::StandardWebhooks,
                envelope: EventEnvelope::Generic,
                event_type: "{resource}.{event}".to_owned(),
            },
        }
    }

    /// The generic profile, made once: for answers that are not the
    /// provider's (the MCP face's HTTP errors).
    pub(crate) fn generic_ref() -> &'static Profile {
        static GENERIC: std::sync::LazyLock<Profile> = std::sync::LazyLock::new(Profile::generic);
        &GENERIC
    }

    /// The resource named `name`, where the profile declares its resources.
    pub fn resource(&self, name: &str) -> Option<&Resource> {
        match &self.routes {
            Routes::Generic => None,
            Routes::Declared(resources) => resources.iter().find(|r| r.name == name),
        }
    }

    /// The resources a plan may name: `None` where any valid name exists.
    pub fn resource_names(&self) -> Option<BTreeSet<String>> {
        match &self.routes {
            Routes::Generic => None,
            Routes::Declared(resources) => Some(resources.iter().map(|r| r.name.clone()).collect()),
        }
    }

    /// The arguments of a create as they arrive on this profile's wire: a
    /// form body carries only strings, so an operation's `1200` arrives as
    /// `"1200"`. The harness gives an adapter an operation's arguments in
    /// this form, so that what it sends and what the ledger holds compare
    /// equal.
    pub fn wire_args(&self, args: &Map<String, Value>) -> Map<String, Value> {
        match self.body.encoding {
            Encoding::Json => args.clone(),
            Encoding::Form => wire_args(args),
        }
    }
}

/// Which paths exist.
#[derive(Debug, Clone, PartialEq)]
pub enum Routes {
    /// `/v1/{resource}` and `/v1/{resource}/{id}` for any valid name; a
    /// search is a `GET` with `client_reference`, a list any other `GET`.
    Generic,
    /// Only these resources, each at its own paths.
    Declared(Vec<Resource>),
}

/// One collection of a declared profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The ledger's name of the collection (`[a-z][a-z0-9_]{0,39}`): what
    /// scenarios, fault rules and reports say.
    pub name: String,
    /// The collection's path: `POST` creates, `GET` lists, `GET {path}/{id}` retrieves.
    pub path: String,
    /// Where searches go when the search syntax has a path of its own
    /// (Stripe's `/v1/customers/search`).
    pub search_path: Option<String>,
    /// Which reads the provider has for this collection; the others answer
    /// the profile's 404.
    pub offers: Offers,
    /// The new object's id starts with this (`cus_`, `chatcmpl-`).
    pub id_prefix: String,
    /// The object's type name (`customer`, `chat.completion`).
    pub object: String,
    /// The status field and its values, where the object has one.
    pub status: Option<StatusValues>,
    /// Fields this collection's objects carry beside the profile's constants
    /// (a completion's `choices`, a response's `output`).
    pub constants: Map<String, Value>,
}

/// Which reads a declared resource offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offers {
    /// `GET {path}/{id}`.
    pub retrieve: bool,
    /// `GET {path}`.
    pub list: bool,
    /// A search, in the profile's syntax.
    pub search: bool,
}

/// An object's status field and the provider's word for each engine status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusValues {
    /// The field (`status`).
    pub field: String,
    /// Still running.
    pub processing: String,
    /// Done.
    pub succeeded: String,
    /// Settled as a failure (`canceled` for a Stripe payment intent).
    pub failed: String,
}

/// The idempotency behaviours of provider-api.md, the good and the known-bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IdempotencyMode {
    /// Keys are ignored: every create is new work.
    None,
    /// Stripe-like: bare token, replay with `Idempotent-Replayed: true`, 400 on mismatch, 409 in flight.
    Stripe,
    /// IETF draft: structured-field string or token, problem+json errors (422 mismatch, 409 in flight).
    Ietf,
    /// Known-bad: the body is folded into the key, so a changed body runs again.
    FingerprintInKey,
    /// Known-bad: a changed body replays the old response.
    NoFingerprint,
    /// Known-bad: check-then-set, so concurrent duplicates both run.
    Racy,
    /// Known-bad: keys shared across tenants, leaking another tenant's response.
    GlobalScope,
    /// Known-bad: a failed first attempt leaves the key in flight until it expires.
    StuckInFlight,
    /// Known-bad: an error answer releases the key, even a server error sent
    /// after the work committed, so the retry runs again.
    ReleaseOnError,
}

impl IdempotencyMode {
    /// Every mode, in a stable order (for help texts and schemas).
    pub const ALL: [IdempotencyMode; 9] = [
        IdempotencyMode::None,
        IdempotencyMode::Stripe,
        IdempotencyMode::Ietf,
        IdempotencyMode::FingerprintInKey,
        IdempotencyMode::NoFingerprint,
        IdempotencyMode::Racy,
        IdempotencyMode::GlobalScope,
        IdempotencyMode::StuckInFlight,
        IdempotencyMode::ReleaseOnError,
    ];

    /// The name used in scenarios, flags and the adapter's contract.
    pub fn name(self) -> &'static str {
        match self {
            IdempotencyMode::None => "none",
            IdempotencyMode::Stripe => "stripe",
            IdempotencyMode::Ietf => "ietf",
            IdempotencyMode::FingerprintInKey => "fingerprint_in_key",
            IdempotencyMode::NoFingerprint => "no_fingerprint",
            IdempotencyMode::Racy => "racy",
            IdempotencyMode::GlobalScope => "global_scope",
            IdempotencyMode::StuckInFlight => "stuck_in_flight",
            IdempotencyMode::ReleaseOnError => "release_on_error",
        }
    }

    /// Parses a name produced by [`IdempotencyMode::name`].
    pub fn from_name(name: &str) -> Option<IdempotencyMode> {
        IdempotencyMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Where the credential is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <credential>`.
    Bearer,
    /// The whole value of this header (lower case, e.g. `x-api-key`).
    Header(String),
    /// This header, or else `Authorization: Bearer`: Anthropic documents
    /// `x-api-key`, and anthropic-python 2.x sends its `api_key` as a bearer
    /// token.
    HeaderOrBearer(String),
}

impl Auth {
    /// The credential a request carries, where the profile looks for it.
    pub(crate) fn credential<'h>(&self, headers: &'h http::HeaderMap) -> Option<&'h str> {
        match self {
            Auth::Bearer => {
                let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
                let (scheme, credential) = value.split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| credential.trim())
            }
            Auth::Header(name) => Some(headers.get(name.as_str())?.to_str().ok()?.trim()),
            Auth::HeaderOrBearer(name) => match headers.get(name.as_str()) {
                Some(value) => Some(value.to_str().ok()?.trim()),
                None => Auth::Bearer.credential(headers),
            },
        }
    }
}

/// A create's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyFormat {
    /// JSON or form.
    pub encoding: Encoding,
    /// The field kept as the object's searchable reference, if the provider has one.
    pub client_reference: Option<String>,
    /// The field kept as the object's metadata (an object), if the provider has one.
    pub metadata: Option<String>,
    /// Fields that modify the request rather than describe the effect
    /// (Stripe's `expand`): dropped before anything reads the body.
    pub ignored: Vec<String>,
}

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Encoding {
    /// `application/json`, an object.
    Json,
    /// `application/x-www-form-urlencoded` with bracket notation
    /// (`metadata[order_id]=X`, `items[0][price]=p`, `expand[]=a`).
    Form,
}

/// What an object looks like.
#[derive(Debug, Clone, PartialEq)]
pub enum Objects {
    /// docs/provider-api.md's object, answered `201`/`202` with `Location`.
    Generic,
    /// A declared shape.
    Shaped(Box<ObjectShape>),
}

/// A declared object shape. Fields are written in this order: the id, the
/// type field, the constants, the creation time, the status, the arguments,
/// the metadata, the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectShape {
    /// The id's field.
    pub id_field: String,
    /// The field that names the object's type (`object`, `type`), if any.
    pub type_field: Option<String>,
    /// The creation time's field and format, if any.
    pub created: Option<TimeField>,
    /// Where the create's arguments appear.
    pub args: ArgsPlacement,
    /// The metadata's field, if shown (absent metadata is `{}`).
    pub metadata: Option<String>,
    /// The reference's field, if shown (`null` when absent).
    pub client_reference: Option<String>,
    /// Fields every object carries as they are (`livemode: false`, a
    /// completion's `choices`).
    pub constants: Map<String, Value>,
    /// The status of a create's answer (Stripe and OpenAI: `200`).
    pub created_status: u16,
    /// The status of a create's answer when the work goes on (asynchronous).
    pub accepted_status: u16,
    /// Whether a create's answer carries `Location: {path}/{id}`.
    pub location: bool,
    /// Whether an argument that arrived as a form's text is shown typed, as
    /// the provider's schema would show it: `"1200"` as `1200`, `"true"` as
    /// `true` (top-level arguments only; metadata stays text, as Stripe's
    /// does). A form carries only strings, and an SDK user's code reads
    /// `intent.amount` as the integer Stripe answers.
    pub typed_values: bool,
}

/// A time field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeField {
    /// The field's name.
    pub field: String,
    /// How the time is written.
    pub format: TimeFormat,
}

/// How a time is written (the simulator clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeFormat {
    /// `2026-01-01T00:00:00Z`.
    Rfc3339,
    /// Whole seconds since the Unix epoch.
    UnixSeconds,
}

/// Where an object shows the arguments it was created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsPlacement {
    /// Each argument as a field of the object (Stripe).
    Flatten,
    /// All of them under one field.
    Nested(String),
    /// These arguments only, each as a field (OpenAI's `model`).
    Pick(Vec<String>),
    /// None of them.
    Omit,
}

/// What an error looks like.
#[derive(Debug, Clone, PartialEq)]
pub enum Errors {
    /// docs/provider-api.md's `{"error":{"type":…,"message":…}}`.
    Generic,
    /// A declared envelope.
    Shaped(ErrorShape),
}

/// A declared error envelope: a JSON template whose string leaves may hold
/// `{type}`, `{code}`, `{message}` and `{status}`. A leaf that is exactly
/// one placeholder takes the value itself (`{code}` without a code is
/// `null`, `{status}` a number); elsewhere the placeholder is replaced in
/// the text.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorShape {
    /// The template.
    pub envelope: Value,
    /// The type and code of each kind of error; kinds not listed take `fallback`.
    pub kinds: BTreeMap<ErrorKind, ErrorCode>,
    /// The type and code of every other kind.
    pub fallback: ErrorCode,
}

/// An error's type and code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCode {
    /// `invalid_request_error`, `not_found_error`, ...
    pub kind: String,
    /// `resource_missing`, `idempotency_key_in_use`, ... or none.
    pub code: Option<String>,
}

impl ErrorCode {
    /// A type with a code, or none.
    pub fn new(kind: &str, code: Option<&str>) -> ErrorCode {
        ErrorCode {
            kind: kind.to_owned(),
            code: code.map(str::to_owned),
        }
    }
}

/// Every error the simulator answers, by what went wrong. Its status is the
/// engine's (a mismatched key is `400` in `stripe` mode, `422` in `ietf`);
/// the profile decides only the body and the hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// No or an unknown credential (401).
    Unauthorized,
    /// 403 (a fault's status).
    Forbidden,
    /// Unknown path, collection or id (404).
    NotFound,
    /// A path that exists without that method (405).
    MethodNotAllowed,
    /// A body or query the provider refuses (400).
    InvalidRequest,
    /// A lookup the scenario took away (400: never a 404, which would read as absence).
    UnsupportedQuery,
    /// 409 (a fault's status).
    Conflict,
    /// A body over the limit (413).
    PayloadTooLarge,
    /// 422 (a fault's status).
    Unprocessable,
    /// 429, with `Retry-After`.
    RateLimited,
    /// An idempotency key the mode refuses.
    KeyInvalid,
    /// A missing key where the mode requires one.
    KeyMissing,
    /// A key first used with another body.
    KeyReused,
    /// A key whose first request is still running (409).
    KeyInFlight,
    /// The tenant's store is full (507).
    InsufficientStorage,
    /// Any 5xx.
    ServerError,
}

impl ErrorKind {
    /// Every kind, in a stable order.
    pub const ALL: [ErrorKind; 16] = [
        ErrorKind::Unauthorized,
        ErrorKind::Forbidden,
        ErrorKind::NotFound,
        ErrorKind::MethodNotAllowed,
        ErrorKind::InvalidRequest,
        ErrorKind::UnsupportedQuery,
        ErrorKind::Conflict,
        ErrorKind::PayloadTooLarge,
        ErrorKind::Unprocessable,
        ErrorKind::RateLimited,
        ErrorKind::KeyInvalid,
        ErrorKind::KeyMissing,
        ErrorKind::KeyReused,
        ErrorKind::KeyInFlight,
        ErrorKind::InsufficientStorage,
        ErrorKind::ServerError,
    ];

    /// The name profile files use.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::NotFound => "not_found",
            ErrorKind::MethodNotAllowed => "method_not_allowed",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::UnsupportedQuery => "unsupported_query",
            ErrorKind::Conflict => "conflict",
            ErrorKind::PayloadTooLarge => "payload_too_large",
            ErrorKind::Unprocessable => "unprocessable",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::KeyInvalid => "key_invalid",
            ErrorKind::KeyMissing => "key_missing",
            ErrorKind::KeyReused => "key_reused",
            ErrorKind::KeyInFlight => "key_in_flight",
            ErrorKind::InsufficientStorage => "insufficient_storage",
            ErrorKind::ServerError => "server_error",
        }
    }

    /// Parses [`ErrorKind::name`].
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind of an error status a fault rule answers with.
    pub fn of_status(code: u16) -> ErrorKind {
        match code {
            401 => ErrorKind::Unauthorized,
            403 => ErrorKind::Forbidden,
            404 => ErrorKind::NotFound,
            405 => ErrorKind::MethodNotAllowed,
            409 => ErrorKind::Conflict,
            413 => ErrorKind::PayloadTooLarge,
            422 => ErrorKind::Unprocessable,
            429 => ErrorKind::RateLimited,
            507 => ErrorKind::InsufficientStorage,
            500..=599 => ErrorKind::ServerError,
            _ => ErrorKind::InvalidRequest,
        }
    }
}

/// Lists and searches.
#[derive(Debug, Clone, PartialEq)]
pub enum Pages {
    /// `?client_reference=X` and `?created_gte=RFC3339&limit=N`, answered
    /// `{"data":[…],"has_more":…}`.
    Generic,
    /// Declared parameters and envelopes.
    Shaped(Box<PageShape>),
}

/// A declared list and search.
///
/// An envelope is a JSON template whose string leaves may be exactly
/// `{data}` (the objects), `{has_more}`, `{url}` (the path asked),
/// `{first_id}`, `{last_id}` (`null` on an empty page) or `{next_page}`
/// (always `null`: one page is all the simulator answers).
#[derive(Debug, Clone, PartialEq)]
pub struct PageShape {
    /// A list's envelope.
    pub list_envelope: Value,
    /// A search's envelope.
    pub search_envelope: Value,
    /// The parameter that keeps objects created at or after a time
    /// (`created[gte]`), and how the time is written.
    pub created_gte: Option<(String, TimeFormat)>,
    /// The page size's parameter.
    pub limit: String,
    /// The cursor's parameter: the page starts after the object with this id.
    pub starting_after: Option<String>,
    /// The page size when none is asked.
    pub default_limit: usize,
    /// How searches are written.
    pub search: SearchSyntax,
    /// Parameters that are accepted and change nothing (`expand[]`, `order`).
    pub ignored: Vec<String>,
}

/// How a search is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SearchSyntax {
    /// Stripe's search query language on the resource's search path:
    /// `?query=metadata['order_id']:'X' AND currency:'usd'`.
    StripeQuery,
    /// A `GET` of the collection with `metadata[key]=value` parameters
    /// (OpenAI's stored chat completions).
    MetadataParams,
}

/// The idempotency key's header and the provider's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    /// The header (lower case).
    pub header: String,
    /// The header (lower case) and value a replayed answer carries (every
    /// keyed mode but `ietf`).
    pub replay_header: Option<(String, String)>,
    /// The mode a scenario gets when it names none.
    pub default_mode: IdempotencyMode,
    /// The retention a scenario gets when it names none.
    pub default_retention: Duration,
}

/// A header that tells clients whether to retry (`Stripe-Should-Retry`, `x-should-retry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryHints {
    /// The header (lower case).
    pub header: String,
    /// Errors answered with `true`.
    pub retry: BTreeSet<ErrorKind>,
    /// Errors answered with `false`.
    pub no_retry: BTreeSet<ErrorKind>,
}

/// Events.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookFormat {
    /// How a delivery is signed.
    pub scheme: SignatureScheme,
    /// The event's body.
    pub envelope: EventEnvelope,
    /// The event's type: a template with `{resource}` (the collection),
    /// `{object}` (the object's type name) and `{event}` (`created`, or the
    /// object's status value it settled to).
    pub event_type: String,
}

/// How a delivery is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SignatureScheme {
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp`,
    /// `webhook-signature: v1,<base64 HMAC-SHA256>` keyed by the decoded
    /// `whsec_` secret.
    StandardWebhooks,
    /// Stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`,
    /// keyed by the secret's own bytes.
    Stripe,
}

/// An event's body.
#[derive(Debug, Clone, PartialEq)]
pub enum EventEnvelope {
    /// `{"id","type","created_at","data":{object}}`.
    Generic,
    /// A JSON template whose string leaves may be exactly `{id}`, `{type}`,
    /// `{created}` (unix seconds), `{created_at}` (RFC 3339) or `{object}`.
    Shaped(Value),
}

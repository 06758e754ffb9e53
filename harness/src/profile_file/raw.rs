//! The profile file exactly as written: serde types at the boundary, every
//! value with its position, nothing checked beyond shape. `check` turns them
//! into the simulator's `Profile`. The doc comments become the JSON Schema's
//! descriptions, and docs/profiles.md restates them with the defaults.

use std::fmt;
use std::marker::PhantomData;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::node::Node;
pub(crate) use crate::scenario::raw::{DurationText, ModeName};
use crate::scenario::span::{present, Sp, SpMap};

/// A lostreply provider profile (format v1): how one provider's wire maps
/// onto the simulator. Every key but `version`, `name` and one of `routes`
/// and `resources` has a default: the generic profile's (docs/provider-api.md).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "lostreply provider profile (format v1)")]
#[schemars(rename = "Profile")]
pub(crate) struct RawProfile {
    /// Format version. Always 1.
    #[schemars(range(min = 1, max = 1))]
    pub version: Sp<u32>,
    /// The profile's name, in reports and the journal: `[a-z][a-z0-9_-]{0,39}`.
    pub name: Sp<String>,
    /// `generic`: the simulator's own paths (`/v1/{resource}`, any valid
    /// name). Exactly one of `routes` and `resources`.
    #[serde(default)]
    pub routes: Option<Sp<RawRoutes>>,
    /// The provider's collections, each at its own paths. Exactly one of
    /// `routes` and `resources`.
    #[serde(default)]
    pub resources: Option<Sp<Vec<Sp<RawResource>>>>,
    /// Where the credential is: `bearer` (`Authorization: Bearer …`),
    /// `{header: x-api-key}` (the header's whole value) or
    /// `{header_or_bearer: x-api-key}` (either). Default bearer.
    #[serde(default)]
    pub auth: Option<Sp<RawAuth>>,
    /// A create's body. Default: JSON, `client_reference` and `metadata`.
    #[serde(default)]
    pub body: Option<Sp<RawBody>>,
    /// What an object looks like: `generic` (docs/provider-api.md) or a
    /// shape. Default generic.
    #[serde(default)]
    pub objects: Option<Sp<OrGeneric<RawObjects>>>,
    /// What an error looks like: `generic` or an envelope. Default generic.
    #[serde(default)]
    pub errors: Option<Sp<OrGeneric<RawErrors>>>,
    /// Lists and searches: `generic` or declared parameters and envelopes.
    /// Default generic.
    #[serde(default)]
    pub pages: Option<Sp<OrGeneric<RawPages>>>,
    /// The idempotency key's header and the provider's defaults.
    #[serde(default)]
    pub keys: Option<Sp<RawKeys>>,
    /// A header telling clients whether to retry an error, or `null` (none).
    /// Default null.
    #[serde(default, deserialize_with = "present")]
    pub retry_hints: Option<Sp<Option<RawRetryHints>>>,
    /// Events: signature scheme, envelope, type names.
    #[serde(default)]
    pub webhooks: Option<Sp<RawWebhooks>>,
}

/// The generic routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Routes")]
pub(crate) enum RawRoutes {
    /// `/v1/{resource}` and `/v1/{resource}/{id}` for any valid name.
    Generic,
}

/// One collection of the provider.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Resource")]
pub(crate) struct RawResource {
    /// The ledger's name of the collection, what scenarios and reports say:
    /// `[a-z][a-z0-9_]{0,39}`, unique in the profile.
    pub name: Sp<String>,
    /// The collection's path: `POST` creates, `GET` lists, `GET {path}/{id}`
    /// retrieves. Absolute, no query, no trailing slash.
    pub path: Sp<String>,
    /// Where searches go when the search syntax has a path of its own
    /// (`/v1/customers/search`). Default null.
    #[serde(default)]
    pub search_path: Option<Sp<String>>,
    /// Which reads the provider offers; the others answer the profile's 404.
    /// Default: all three.
    #[serde(default)]
    pub offers: Option<Sp<RawOffers>>,
    /// A new object's id starts with this (`cus_`, `ISS-`): at most 32 of
    /// `A-Z a-z 0-9 . _ ~ -`. Default: the generic prefix of the name and `_`.
    #[serde(default)]
    pub id_prefix: Option<Sp<String>>,
    /// The object's type name (`customer`, `chat.completion`). Default: the name.
    #[serde(default)]
    pub object: Option<Sp<String>>,
    /// The status field and the provider's word for each status, or null
    /// (the objects have none). Default null.
    #[serde(default)]
    pub status: Option<Sp<RawStatus>>,
    /// Fields this collection's objects carry as written. Default {}.
    #[serde(default)]
    pub constants: Option<Sp<Node>>,
}

/// Which reads a resource offers; each defaults to true.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Offers")]
pub(crate) struct RawOffers {
    /// `GET {path}/{id}`.
    #[serde(default)]
    pub retrieve: Option<bool>,
    /// `GET {path}`.
    #[serde(default)]
    pub list: Option<bool>,
    /// A search, in the profile's syntax.
    #[serde(default)]
    pub search: Option<bool>,
}

/// An object's status field and the provider's words.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Status")]
pub(crate) struct RawStatus {
    /// The field. Default `status`.
    #[serde(default)]
    pub field: Option<Sp<String>>,
    /// The word while the work goes on (asynchronous objects).
    pub processing: Sp<String>,
    /// The word once done.
    pub succeeded: Sp<String>,
    /// The word once settled as a failure.
    pub failed: Sp<String>,
}

/// Where the credential is.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Auth")]
pub(crate) enum RawAuth {
    /// `Authorization: Bearer <credential>`.
    Bearer,
    /// The whole value of this header (`x-api-key`).
    Header(Sp<String>),
    /// This header, or else `Authorization: Bearer` (Anthropic's API takes
    /// both).
    HeaderOrBearer(Sp<String>),
}

/// A create's body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Body")]
pub(crate) struct RawBody {
    /// `json` or `form` (Stripe's bracket notation). Default json.
    #[serde(default)]
    pub encoding: Option<Sp<RawEncoding>>,
    /// The field kept as the object's searchable reference, or null. Default
    /// `client_reference`.
    #[serde(default, deserialize_with = "present")]
    pub client_reference: Option<Sp<Option<String>>>,
    /// The field kept as the object's metadata (an object), or null.
    /// Default `metadata`.
    #[serde(default, deserialize_with = "present")]
    pub metadata: Option<Sp<Option<String>>>,
    /// Fields that modify the request rather than describe the effect
    /// (`expand`): dropped before anything reads the body. Default [].
    #[serde(default)]
    pub ignored: Option<Sp<Vec<Sp<String>>>>,
}

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Encoding")]
pub(crate) enum RawEncoding {
    /// `application/json`, an object.
    Json,
    /// `application/x-www-form-urlencoded` with bracket notation.
    Form,
}

/// A declared object shape. Fields are written in this order: the id, the
/// type field, the constants, the creation time, the status, the arguments,
/// the metadata, the reference.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Objects")]
pub(crate) struct RawObjects {
    /// The id's field. Default `id`.
    #[serde(default)]
    pub id_field: Option<Sp<String>>,
    /// The field naming the object's type (`object`, `type`), or null. Default null.
    #[serde(default, deserialize_with = "present")]
    pub type_field: Option<Sp<Option<String>>>,
    /// The creation time's field and format, or null. Default null.
    #[serde(default, deserialize_with = "present")]
    pub created: Option<Sp<Option<RawTimeField>>>,
    /// Where the create's arguments appear: `flatten` (each a field),
    /// `omit`, `{nested: FIELD}` or `{pick: [names]}`. Default flatten.
    #[serde(default)]
    pub args: Option<Sp<RawArgs>>,
    /// The metadata's field, or null (not shown). Default null.
    #[serde(default, deserialize_with = "present")]
    pub metadata: Option<Sp<Option<String>>>,
    /// The reference's field, or null (not shown). Default null.
    #[serde(default, deserialize_with = "present")]
    pub client_reference: Option<Sp<Option<String>>>,
    /// Fields every object carries as written (`livemode: false`). Default {}.
    #[serde(default)]
    pub constants: Option<Sp<Node>>,
    /// The status of a create's answer (200..=299). Default 201.
    #[serde(default)]
    #[schemars(range(min = 200, max = 299))]
    pub created_status: Option<Sp<u16>>,
    /// The status of a create's answer when the work goes on (200..=299). Default 202.
    #[serde(default)]
    #[schemars(range(min = 200, max = 299))]
    pub accepted_status: Option<Sp<u16>>,
    /// Whether a create's answer carries `Location: {path}/{id}`. Default true.
    #[serde(default)]
    pub location: Option<Sp<bool>>,
    /// Whether arguments that arrived as a form's text are shown typed
    /// (`"1200"` as `1200`, `"true"` as `true`). Default false.
    #[serde(default)]
    pub typed_values: Option<Sp<bool>>,
}

/// A time field.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TimeField")]
pub(crate) struct RawTimeField {
    /// The field's name.
    pub field: Sp<String>,
    /// How the time is written.
    pub format: Sp<RawTimeFormat>,
}

/// How a time is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "TimeFormat")]
pub(crate) enum RawTimeFormat {
    /// `2026-01-01T00:00:00Z`.
    Rfc3339,
    /// Whole seconds since the Unix epoch.
    UnixSeconds,
}

/// Where an object shows its arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Args")]
pub(crate) enum RawArgs {
    /// Each argument as a field of the object.
    Flatten,
    /// None of them.
    Omit,
    /// All of them under this field.
    Nested(Sp<String>),
    /// These arguments only, each as a field.
    Pick(Sp<Vec<Sp<String>>>),
}

/// A declared error envelope.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Errors")]
pub(crate) struct RawErrors {
    /// A JSON template (a mapping) whose string leaves may hold `{type}`,
    /// `{code}`, `{message}` and `{status}`.
    pub envelope: Sp<Node>,
    /// The type and code of each kind of error; kinds not listed take
    /// `fallback`. Default {}.
    #[serde(default)]
    #[schemars(schema_with = "kinds_schema")]
    pub kinds: Option<Sp<SpMap<KindName, Sp<RawErrorCode>>>>,
    /// The type and code of every kind not listed.
    pub fallback: Sp<RawErrorCode>,
}

/// An error's type and code.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ErrorCode")]
pub(crate) struct RawErrorCode {
    /// What `{type}` becomes (`invalid_request_error`).
    #[serde(rename = "type")]
    pub kind: Sp<String>,
    /// What `{code}` becomes, or null. Default null.
    #[serde(default)]
    pub code: Option<Sp<String>>,
}

/// An error kind's name (checked against the simulator's list).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct KindName(pub String);

/// Declared lists and searches.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Pages")]
pub(crate) struct RawPages {
    /// A list's envelope: a JSON template (a mapping) whose string leaves may
    /// be `{data}`, `{has_more}`, `{url}`, `{first_id}`, `{last_id}` or
    /// `{next_page}`. Default `{data: "{data}", has_more: "{has_more}"}`.
    #[serde(default)]
    pub list_envelope: Option<Sp<Node>>,
    /// A search's envelope, with the same placeholders. Default: the list's.
    #[serde(default)]
    pub search_envelope: Option<Sp<Node>>,
    /// The parameter that keeps objects created at or after a time, and the
    /// time's format, or null. Default null.
    #[serde(default, deserialize_with = "present")]
    pub created_gte: Option<Sp<Option<RawTimeParam>>>,
    /// The page size's parameter. Default `limit`.
    #[serde(default)]
    pub limit: Option<Sp<String>>,
    /// The cursor's parameter (the page starts after this id), or null. Default null.
    #[serde(default, deserialize_with = "present")]
    pub starting_after: Option<Sp<Option<String>>>,
    /// The page size when none is asked (1..=100). Default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub default_limit: Option<Sp<u64>>,
    /// How searches are written: `stripe_query` (`?query=…` on a resource's
    /// `search_path`) or `metadata_params` (`?metadata[key]=value`). Default
    /// metadata_params.
    #[serde(default)]
    pub search: Option<Sp<RawSearch>>,
    /// Parameters accepted that change nothing (`expand`). Default [].
    #[serde(default)]
    pub ignored: Option<Sp<Vec<Sp<String>>>>,
}

/// A time parameter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TimeParam")]
pub(crate) struct RawTimeParam {
    /// The parameter (`created[gte]`).
    pub param: Sp<String>,
    /// How the time is written.
    pub format: Sp<RawTimeFormat>,
}

/// How a search is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Search")]
pub(crate) enum RawSearch {
    /// Stripe's query language on the resource's search path.
    StripeQuery,
    /// `metadata[key]=value` parameters on the collection's path.
    MetadataParams,
}

/// The idempotency key's header and the provider's defaults.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Keys")]
pub(crate) struct RawKeys {
    /// The key's header. Default `idempotency-key`.
    #[serde(default)]
    pub header: Option<Sp<String>>,
    /// The header and value a replayed answer carries (`{idempotent-replayed:
    /// "true"}`), or null. Default `{idempotent-replayed: "true"}`.
    #[serde(default, deserialize_with = "present")]
    pub replay_header: Option<Sp<Option<ReplayHeader>>>,
    /// The idempotency mode a scenario gets when it names none. Default none.
    #[serde(default)]
    pub default_mode: Option<Sp<ModeName>>,
    /// How long keys are kept when a scenario says nothing (simulator clock).
    /// Default 24h.
    #[serde(default)]
    pub default_retention: Option<Sp<DurationText>>,
}

/// `{header-name: value}`: one entry, checked by `check`.
pub(crate) type ReplayHeader = SpMap<String, Sp<HeaderValue>>;

/// A header's value: text, or a YAML scalar read as its text (`true`).
#[derive(Debug)]
pub(crate) struct HeaderValue(pub String);

impl<'de> Deserialize<'de> for HeaderValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;

        impl Visitor<'_> for ValueVisitor {
            type Value = HeaderValue;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a header value")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<HeaderValue, E> {
                Ok(HeaderValue(v.to_owned()))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<HeaderValue, E> {
                Ok(HeaderValue(v.to_string()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HeaderValue, E> {
                Ok(HeaderValue(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<HeaderValue, E> {
                Ok(HeaderValue(v.to_string()))
            }
        }

        deserializer.deserialize_any(ValueVisitor)
    }
}

/// A retry-hint header.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "RetryHints")]
pub(crate) struct RawRetryHints {
    /// The header (`stripe-should-retry`).
    pub header: Sp<String>,
    /// Error kinds answered with `true`. Default [].
    #[serde(default)]
    pub retry: Vec<Sp<KindName>>,
    /// Error kinds answered with `false`. Default [].
    #[serde(default)]
    pub no_retry: Vec<Sp<KindName>>,
}

/// Events.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Webhooks")]
pub(crate) struct RawWebhooks {
    /// How a delivery is signed: `standard_webhooks` or `stripe`. Default
    /// standard_webhooks.
    #[serde(default)]
    pub scheme: Option<Sp<RawScheme>>,
    /// The event's body: `generic` or a JSON template (a mapping) whose string
    /// leaves may be `{id}`, `{type}`, `{created}`, `{created_at}` or
    /// `{object}`. Default generic.
    #[serde(default)]
    pub envelope: Option<Sp<OrGeneric<Node>>>,
    /// The event's type: text with `{resource}`, `{object}` and `{event}`.
    /// Default `{resource}.{event}`.
    #[serde(default)]
    pub event_type: Option<Sp<String>>,
}

/// How a delivery is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "SignatureScheme")]
pub(crate) enum RawScheme {
    /// `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,…`.
    StandardWebhooks,
    /// `Stripe-Signature: t=…,v1=…`.
    Stripe,
}

/// `generic`, or a mapping read as `T`.
#[derive(Debug)]
pub(crate) enum OrGeneric<T> {
    /// The word `generic`.
    Generic,
    /// A mapping.
    Shaped(T),
    /// Another word: reported by `check` at its place.
    Other(String),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrGeneric<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for OrVisitor<T> {
            type Value = OrGeneric<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`generic` or a mapping")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(match v {
                    "generic" => OrGeneric::Generic,
                    other => OrGeneric::Other(other.to_owned()),
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(OrGeneric::Shaped)
            }
        }

        deserializer.deserialize_any(OrVisitor(PhantomData))
    }
}

/// `errors.kinds`: a mapping from an error kind's name to its type and code
/// (the keys are checked, which a map's derived schema would not do).
fn kinds_schema(generator: &mut SchemaGenerator) -> Schema {
    let kind = generator.subschema_for::<KindName>();
    let code = generator.subschema_for::<RawErrorCode>();
    json_schema!({
        "type": "object",
        "propertyNames": kind,
        "additionalProperties": code,
    })
}

//! The built-in profiles of real providers, each written from the
//! provider's public API reference and from what its official SDK sends,
//! parses and retries (docs/profiles.md cites both; docs/sdks.md the SDKs).
//!
//! Each answers what its SDK needs to run unchanged: the paths it calls, the
//! encoding it sends, the fields it reads back (an id, a status, an
//! `object` or `type`), the error envelope it turns into its exceptions,
//! and the headers that steer its retries. Fields no SDK reads are left out
//! rather than invented.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::IdempotencyMode;
use super::{
    ArgsPlacement, Auth, BodyFormat, Encoding, ErrorCode, ErrorKind, ErrorShape, Errors,
    EventEnvelope, Keys, ObjectShape, Objects, Offers, PageShape, Pages, Profile, Resource,
    RetryHints, Routes, SearchSyntax, SignatureScheme, StatusValues, TimeField, TimeFormat,
    WebhookFormat,
};

/// The names `Profile::builtin` knows, in the order help texts list them.
pub const PROFILE_NAMES: [&str; 4] = ["generic", "stripe", "openai", "anthropic"];

/// Makes one built-in profile.
pub type MakeProfile = fn() -> Profile;

/// Every built-in profile, by name, in [`PROFILE_NAMES`]'s order.
pub const BUILTIN_PROFILES: [(&str, MakeProfile); 4] = [
    ("generic", Profile::generic),
    ("stripe", stripe),
    ("openai", openai),
    ("anthropic", anthropic),
];

impl Profile {
    /// A built-in profile by name (`generic`, `stripe`, `openai`, `anthropic`).
    pub fn builtin(name: &str) -> Option<Profile> {
        BUILTIN_PROFILES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, make)| make())
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

const ALL_READS: Offers = Offers {
    retrieve: true,
    list: true,
    search: true,
};

fn resource(name: &str, path: &str, id_prefix: &str, object_name: &str) -> Resource {
    Resource {
        name: name.to_owned(),
        path: path.to_owned(),
        search_path: None,
        offers: ALL_READS,
        id_prefix: id_prefix.to_owned(),
        object: object_name.to_owned(),
        status: None,
        constants: Map::new(),
    }
}

fn status(processing: &str, succeeded: &str, failed: &str) -> Option<StatusValues> {
    Some(StatusValues {
        field: "status".to_owned(),
        processing: processing.to_owned(),
        succeeded: succeeded.to_owned(),
        failed: failed.to_owned(),
    })
}

fn kinds(list: &[(ErrorKind, &str, Option<&str>)]) -> BTreeMap<ErrorKind, ErrorCode> {
    list.iter()
        .map(|(kind, name, code)| (*kind, ErrorCode::new(name, *code)))
        .collect()
}

/// Stripe (API reference: docs.stripe.com/api; stripe-python 16, stripe-node 23).
///
/// Form bodies with bracket notation; objects carry `object`, `created`
/// (unix seconds), `livemode` and their parameters at the top level; a
/// create answers `200`. Keys per account, kept 24 hours, a reuse with
/// other parameters `400 idempotency_error`, a reuse in flight `409`, a
/// replay marked `Idempotent-Replayed: true`; `Stripe-Should-Retry` on the
/// answers whose retry Stripe decides. Search is Stripe's query language on
/// `/v1/{collection}/search`; events are Stripe's, signed with `Stripe-Signature`.
pub fn stripe() -> Profile {
    let mut customers = resource("customers", "/v1/customers", "cus_", "customer");
    customers.search_path = Some("/v1/customers/search".to_owned());
    let mut payment_intents = resource(
        "payment_intents",
        "/v1/payment_intents",
        "pi_",
        "payment_intent",
    );
    payment_intents.search_path = Some("/v1/payment_intents/search".to_owned());
    payment_intents.status = status("processing", "succeeded", "canceled");
    let mut refunds = resource("refunds", "/v1/refunds", "re_", "refund");
    refunds.offers.search = false;
    refunds.status = status("pending", "succeeded", "failed");
    let envelope = json!({"error": {"type": "{type}", "code": "{code}", "message": "{message}"}});
    let invalid = "invalid_request_error";
    Profile {
        name: "stripe".to_owned(),
        routes: Routes::Declared(vec![customers, payment_intents, refunds]),
        auth: Auth::Bearer,
        body: BodyFormat {
            encoding: Encoding::Form,
            client_reference: None,
            metadata: Some("metadata".to_owned()),
            ignored: vec!["expand".to_owned()],
        },
        objects: Objects::Shaped(Box::new(ObjectShape {
            id_field: "id".to_owned(),
            type_field: Some("object".to_owned()),
            created: Some(TimeField {
                field: "created".to_owned(),
                format: TimeFormat::UnixSeconds,
            }),
            args: ArgsPlacement::Flatten,
            metadata: Some("metadata".to_owned()),
            client_reference: None,
            constants: object(json!({"livemode": false})),
            created_status: 200,
            accepted_status: 200,
            location: false,
            typed_values: true,
        })),
        errors: Errors::Shaped(ErrorShape {
            envelope,
            kinds: kinds(&[
                (ErrorKind::NotFound, invalid, Some("resource_missing")),
                (ErrorKind::RateLimited, invalid, Some("rate_limit")),
                (ErrorKind::KeyReused, "idempotency_error", None),
                (
                    ErrorKind::KeyInFlight,
                    "idempotency_error",
                    Some("idempotency_key_in_use"),
                ),
                (ErrorKind::ServerError, "api_error", None),
                (ErrorKind::InsufficientStorage, "api_error", None),
            ]),
            fallback: ErrorCode::new(invalid, None),
        }),
        pages: Pages::Shaped(Box::new(PageShape {
            list_envelope: json!({"object": "list", "data": "{data}", "has_more": "{has_more}", "url": "{url}"}),
            search_envelope: json!({"object": "search_result", "data": "{data}", "has_more": "{has_more}", "next_page": "{next_page}", "url": "{url}"}),
            created_gte: Some(("created[gte]".to_owned(), TimeFormat::UnixSeconds)),
            limit: "limit".to_owned(),
            starting_after: Some("starting_after".to_owned()),
            default_limit: 10,
            search: SearchSyntax::StripeQuery,
            ignored: vec!["expand".to_owned(), "page".to_owned()],
        })),
        keys: Keys {
            header: "idempotency-key".to_owned(),
            replay_header: Some(("idempotent-replayed".to_owned(), "true".to_owned())),
            default_mode: IdempotencyMode::Stripe,
            default_retention: Duration::from_secs(24 * 3600),
        },
        retry_hints: Some(RetryHints {
            header: "stripe-should-retry".to_owned(),
            retry: BTreeSet::from([ErrorKind::KeyInFlight]),
            no_retry: BTreeSet::from([
                ErrorKind::KeyReused,
                ErrorKind::KeyInvalid,
                ErrorKind::InvalidRequest,
                ErrorKind::NotFound,
                ErrorKind::Unauthorized,
            ]),
        }),
        webhooks: WebhookFormat {
            scheme: SignatureScheme::Stripe,
            envelope: EventEnvelope::Shaped(json!({
                "id": "{id}",
                "object": "event",
                "api_version": "2025-06-30.basil",
                "created": "{created}",
                "data": {"object": "{object}"},
                "livemode": false,
                "pending_webhooks": 1,
                "request": {"id": null, "idempotency_key": null},
                "type": "{type}"
            })),
            event_type: "{object}.{event}".to_owned(),
        },
    }
}

/// The retry hint OpenAI's and Anthropic's SDKs read (`x-should-retry`),
/// sent where their own rules would retry anyway.
fn should_retry_hints() -> Option<RetryHints> {
    Some(RetryHints {
        header: "x-should-retry".to_owned(),
        retry: BTreeSet::from([ErrorKind::RateLimited, ErrorKind::ServerError]),
        no_retry: BTreeSet::from([
            ErrorKind::InvalidRequest,
            ErrorKind::NotFound,
            ErrorKind::Unauthorized,
        ]),
    })
}

/// OpenAI (API reference: platform.openai.com/docs/api-reference;
/// openai-python 3, openai-node 7).
///
/// Every answered create is a billed effect and no idempotency key is
/// honoured, as with the real API. Chat completions are stored (so they can
/// be retrieved by id and listed by `metadata[key]=value`, as stored
/// completions are); responses can be retrieved by id. Errors are
/// `{"error":{"message","type","param","code"}}`.
pub fn openai() -> Profile {
    let mut chat = resource(
        "chat_completions",
        "/v1/chat/completions",
        "chatcmpl-",
        "chat.completion",
    );
    chat.constants = object(json!({
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": "ok", "refusal": null},
            "logprobs": null,
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 8, "completion_tokens": 1, "total_tokens": 9}
    }));
    let mut responses = resource("responses", "/v1/responses", "resp_", "response");
    responses.offers = Offers {
        retrieve: true,
        list: false,
        search: false,
    };
    responses.status = status("in_progress", "completed", "failed");
    responses.constants = object(json!({
        "output": [{
            "type": "message",
            "id": "msg_0",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}]
        }],
        "usage": {"input_tokens": 8, "output_tokens": 1, "total_tokens": 9}
    }));
    Profile {
        name: "openai".to_owned(),
        routes: Routes::Declared(vec![chat, responses]),
        auth: Auth::Bearer,
        body: BodyFormat {
            encoding: Encoding::Json,
            client_reference: None,
            metadata: Some("metadata".to_owned()),
            ignored: vec!["store".to_owned()],
        },
        objects: Objects::Shaped(Box::new(ObjectShape {
            id_field: "id".to_owned(),
            type_field: Some("object".to_owned()),
            created: Some(TimeField {
                field: "created".to_owned(),
                format: TimeFormat::UnixSeconds,
            }),
            args: ArgsPlacement::Pick(vec!["model".to_owned()]),
            metadata: Some("metadata".to_owned()),
            client_reference: None,
            constants: Map::new(),
            created_status: 200,
            accepted_status: 200,
            location: false,
            typed_values: false,
        })),
        errors: Errors::Shaped(ErrorShape {
            envelope: json!({"error": {"message": "{message}", "type": "{type}", "param": null, "code": "{code}"}}),
            kinds: kinds(&[
                (
                    ErrorKind::Unauthorized,
                    "invalid_request_error",
                    Some("invalid_api_key"),
                ),
                (
                    ErrorKind::RateLimited,
                    "requests",
                    Some("rate_limit_exceeded"),
                ),
                (ErrorKind::ServerError, "server_error", None),
                (ErrorKind::InsufficientStorage, "server_error", None),
            ]),
            fallback: ErrorCode::new("invalid_request_error", None),
        }),
        pages: Pages::Shaped(Box::new(PageShape {
            list_envelope: json!({"object": "list", "data": "{data}", "first_id": "{first_id}", "last_id": "{last_id}", "has_more": "{has_more}"}),
            search_envelope: json!({"object": "list", "data": "{data}", "first_id": "{first_id}", "last_id": "{last_id}", "has_more": "{has_more}"}),
            created_gte: None,
            limit: "limit".to_owned(),
            starting_after: Some("after".to_owned()),
            default_limit: 20,
            search: SearchSyntax::MetadataParams,
            ignored: vec!["order".to_owned(), "model".to_owned()],
        })),
        keys: Keys {
            header: "idempotency-key".to_owned(),
            replay_header: None,
            default_mode: IdempotencyMode::None,
            default_retention: Duration::from_secs(24 * 3600),
        },
        retry_hints: should_retry_hints(),
        webhooks: WebhookFormat {
            scheme: SignatureScheme::StandardWebhooks,
            envelope: EventEnvelope::Shaped(json!({
                "id": "{id}",
                "object": "event",
                "created_at": "{created}",
                "type": "{type}",
                "data": "{object}"
            })),
            event_type: "{object}.{event}".to_owned(),
        },
    }
}

/// Anthropic (API reference: docs.anthropic.com/en/api; anthropic-python 2).
///
/// `POST /v1/messages` is a billed effect with no key and no way to look a
/// message up afterwards; the credential is `x-api-key` (or a bearer token,
/// which anthropic-python 2.x sends); errors are
/// `{"type":"error","error":{"type","message"}}`.
pub fn anthropic() -> Profile {
    let mut messages = resource("messages", "/v1/messages", "msg_", "message");
    messages.offers = Offers {
        retrieve: false,
        list: false,
        search: false,
    };
    Profile {
        name: "anthropic".to_owned(),
        routes: Routes::Declared(vec![messages]),
        auth: Auth::HeaderOrBearer("x-api-key".to_owned()),
        body: BodyFormat {
            encoding: Encoding::Json,
            client_reference: None,
            metadata: Some("metadata".to_owned()),
            ignored: Vec::new(),
        },
        objects: Objects::Shaped(Box::new(ObjectShape {
            id_field: "id".to_owned(),
            type_field: Some("type".to_owned()),
            created: None,
            args: ArgsPlacement::Pick(vec!["model".to_owned()]),
            metadata: None,
            client_reference: None,
            constants: object(json!({
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "stop_sequence": null,
                "usage": {"input_tokens": 8, "output_tokens": 1}
            })),
            created_status: 200,
            accepted_status: 200,
            location: false,
            typed_values: false,
        })),
        errors: Errors::Shaped(ErrorShape {
            envelope: json!({"type": "error", "error": {"type": "{type}", "message": "{message}"}}),
            kinds: kinds(&[
                (ErrorKind::Unauthorized, "authentication_error", None),
                (ErrorKind::Forbidden, "permission_error", None),
                (ErrorKind::NotFound, "not_found_error", None),
                (ErrorKind::PayloadTooLarge, "request_too_large", None),
                (ErrorKind::RateLimited, "rate_limit_error", None),
                (ErrorKind::ServerError, "api_error", None),
                (ErrorKind::InsufficientStorage, "api_error", None),
            ]),
            fallback: ErrorCode::new("invalid_request_error", None),
        }),
        pages: Pages::Shaped(Box::new(PageShape {
            list_envelope: json!({"data": "{data}", "has_more": "{has_more}", "first_id": "{first_id}", "last_id": "{last_id}"}),
            search_envelope: json!({"data": "{data}", "has_more": "{has_more}", "first_id": "{first_id}", "last_id": "{last_id}"}),
            created_gte: None,
            limit: "limit".to_owned(),
            starting_after: Some("after_id".to_owned()),
            default_limit: 20,
            search: SearchSyntax::MetadataParams,
            ignored: Vec::new(),
        })),
        keys: Keys {
            header: "idempotency-key".to_owned(),
            replay_header: None,
            default_mode: IdempotencyMode::None,
            default_retention: Duration::from_secs(24 * 3600),
        },
        retry_hints: should_retry_hints(),
        webhooks: WebhookFormat {
            scheme: SignatureScheme::StandardWebhooks,
            envelope: EventEnvelope::Generic,
            event_type: "{object}.{event}".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_built_ins_and_each_makes_its_own_profile() {
        let names: Vec<&str> = BUILTIN_PROFILES.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, PROFILE_NAMES);
        for (name, make) in BUILTIN_PROFILES {
            assert_eq!(make().name, name);
        }
    }
}

//! `POST /v1/{resource}` up to the commit point: the body read and
//! validated, the attempt counted, the idempotency key checked.

use http::{HeaderMap, HeaderValue};
use hyper::body::Incoming;
use lostreply_text::SharedStr;
use serde_json::Value;

use super::commit::{commit_stage, Intake};
use super::ctx::{Ctx, Outcome};
use super::idempotency_replies::{in_flight, key_error, mismatch, replay};
use super::request_body::{read_body, timed_out_message, BodyError};
use crate::canonical::canonical_shared;
use crate::idempotency::{parse_key, Decision};
use crate::json_text::JsonText;
use crate::plan::IdempotencyMode;
use crate::profile::{decode_form, BodyFormat, Encoding, Profile};
use crate::query;
use crate::responses::{self, Prepared};
use crate::shared::retention_ms;
use crate::store::NewObject;

/// Longest `client_reference`, in bytes.
pub const MAX_CLIENT_REFERENCE_BYTES: usize = 255;

/// `POST /v1/{resource}`. `Err` is a reply that commits nothing (it still meets
/// the fault of the way out); `Ok` is the final outcome of a request that
/// reached the commit point.
pub(super) async fn create(
    ctx: &Ctx,
    tenant: &SharedStr,
    resource: &str,
    path: &str,
    raw_query: Option<&str>,
    headers: &HeaderMap,
    body: Incoming,
) -> Result<Outcome, Prepared> {
    let plan = &ctx.shared.plan;
    let profile = &plan.profile;
    let deadline = plan.limits.read_timeout;
    let bytes = match read_body(body, headers, plan.limits.max_body_bytes, deadline).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            let message = format!("request body exceeds {} bytes", plan.limits.max_body_bytes);
            return Err(responses::failure(
                profile,
                413,
                crate::profile::ErrorKind::PayloadTooLarge,
                &message,
            ));
        }
        // 408 in the profile's error envelope; nothing was committed. hyper
        // closes the connection after it, as the body was not read to its end.
        Err(BodyError::TimedOut) => {
            return Err(responses::failure(
                profile,
                408,
                crate::profile::ErrorKind::InvalidRequest,
                &timed_out_message(deadline),
            ));
        }
        Err(BodyError::Unreadable(why)) => {
            return Err(responses::invalid_request(
                profile,
                &format!("cannot read the request body: {why}"),
            ))
        }
    };
    let intake = intake(ctx, tenant, resource, path, raw_query, headers, &bytes)?;
    drop(bytes);
    if plan.idempotency.mode == IdempotencyMode::Racy {
        // Known-bad: the check above and the set after the commit are separate
        // steps; everything in between (this yield, faults, the commit hook) is
        // a window in which duplicates pass the check too.
        tokio::task::yield_now().await;
    }
    Ok(commit_stage(ctx, intake).await)
}

/// Everything between reading the body and the commit stage, none of which
/// waits: parsing and validating the body, counting the attempt, checking the
/// key. A function of its own so that none of its values sits in the
/// create's future (they are many, and a future is allocated per request).
fn intake(
    ctx: &Ctx,
    tenant: &SharedStr,
    resource: &str,
    path: &str,
    raw_query: Option<&str>,
    headers: &HeaderMap,
    bytes: &[u8],
) -> Result<Intake, Prepared> {
    let plan = &ctx.shared.plan;
    let profile = &plan.profile;
    let mode = plan.idempotency.mode;
    if let Some(name) = query::names(raw_query).first() {
        return Err(responses::invalid_request(
            profile,
            &format!("create takes no query parameters; got `{name}`"),
        ));
    }
    let value = decode_body(profile, headers, bytes)?;
    // One copy, shared by the journal entry, the attempt count and the object.
    let fingerprint: SharedStr = canonical_shared(&value);
    // Everything below up to the key check reads only the request, so it runs
    // before the lock; the attempt count and the key check then share one
    // lock (one fewer per create: the lock is contended at 64 connections).
    // Attempts are counted whether or not the body then passes.
    let checked = validate(profile, value, headers, mode, plan.idempotency.required);
    // A block, not `drop`: the guard must not look live across the awaits below.
    let (attempt, fields, client_reference, metadata, key_header, decision, names) = {
        let mut state = ctx.shared.state();
        state.journal.set_fingerprint(ctx.seq, fingerprint.clone());
        // One copy of each name, for the count and the object: the request's
        // tenant is already the plan's shared copy; the collection is interned.
        let names = (tenant.clone(), state.store.strings.intern(resource));
        let attempt = state
            .attempts
            .count((names.0.clone(), names.1.clone(), fingerprint.clone()));
        let (fields, client_reference, metadata, key, key_header) = checked?;
        // The key as sent is the request's journal entry's (the same first
        // header, read the same way): the object shares that copy.
        let key_header = match (key_header, state.journal.idempotency_key(ctx.seq)) {
            (Some(sent), Some(journaled)) if journaled == sent => Some(journaled),
            (sent, _) => sent.map(SharedStr::from),
        };
        let decision = {
            let now_ms = state.now_ms;
            state.keys.check(
                mode,
                retention_ms(plan),
                tenant,
                path,
                key.as_deref(),
                &fingerprint,
                now_ms,
            )
        };
        (
            attempt,
            fields,
            client_reference,
            metadata,
            key_header,
            decision,
            names,
        )
    };
    let ticket = match decision {
        Decision::Untracked => None,
        Decision::Proceed(scope) => Some(scope),
        Decision::Replay(saved) => {
            ctx.shared.state().journal.set_replayed(ctx.seq);
            return Err(replay(profile, mode, saved));
        }
        Decision::Mismatch => return Err(mismatch(profile, mode)),
        Decision::InFlight => return Err(in_flight(profile, mode)),
    };
    let intake = Intake {
        new: NewObject {
            tenant: names.0,
            resource: names.1,
            args: fields,
            client_reference,
            metadata,
            idempotency_key: key_header,
            fingerprint,
            attempt,
            request_seq: Some(ctx.seq),
        },
        ticket,
    };
    Ok(intake)
}

/// A create body's fields once validated: the args' and `metadata`'s text
/// and `client_reference` as the object keeps them (written here, before
/// the state lock, not in the commit under it), the parsed idempotency key
/// and the key header as sent.
type Checked = (
    JsonText,
    Option<SharedStr>,
    Option<JsonText>,
    Option<String>,
    Option<String>,
);

/// A create's body as the engine reads it: a JSON object whose reserved
/// fields carry the engine's names (`client_reference`, `metadata`), with
/// the fields that only modify the request left out. The generic API's
/// body is its JSON as sent; a form body is decoded first.
fn decode_body(profile: &Profile, headers: &HeaderMap, bytes: &[u8]) -> Result<Value, Prepared> {
    let mut value: Value = match profile.body.encoding {
        Encoding::Json => serde_json::from_slice(bytes).map_err(|e| {
            responses::invalid_request(profile, &format!("request body is not valid JSON: {e}"))
        })?,
        Encoding::Form => {
            let content_type = headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let essence = content_type.split(';').next().unwrap_or("").trim();
            let form = essence.eq_ignore_ascii_case("application/x-www-form-urlencoded");
            let empty = essence.is_empty() && bytes.is_empty();
            if !(form || empty) {
                return Err(responses::invalid_request(
                    profile,
                    &format!(
                        "this provider takes form-encoded bodies (application/x-www-form-urlencoded), got `{content_type}`"
                    ),
                ));
            }
            Value::Object(
                decode_form(bytes)
                    .map_err(|why| responses::invalid_request(profile, &why.to_string()))?,
            )
        }
    };
    if let Value::Object(fields) = &mut value {
        rename_reserved(&profile.body, fields).map_err(|field| {
            responses::invalid_request(profile, &format!("Received unknown parameter: {field}"))
        })?;
        // `null` for a reserved field means absent, as it does for most JSON
        // APIs, so it must not make two attempts' fingerprints differ either.
        fields
            .retain(|name, v| !(v.is_null() && (name == "client_reference" || name == "metadata")));
    }
    Ok(value)
}

/// Puts a declared profile's reserved fields under the engine's names and
/// drops the fields that modify the request. The generic API's names are
/// the engine's, so its bodies pass through untouched. A field that carries
/// one of the engine's reserved names without being the profile's own
/// reference or metadata field is not part of this provider's API: `Err`
/// names it, and the provider refuses it as real ones refuse an unknown
/// parameter (an argument of that name could not be told from the reserved
/// field in the ledger).
fn rename_reserved(
    format: &BodyFormat,
    fields: &mut serde_json::Map<String, Value>,
) -> Result<(), &'static str> {
    for name in &format.ignored {
        fields.remove(name);
    }
    for (declared, engine) in [
        (&format.client_reference, "client_reference"),
        (&format.metadata, "metadata"),
    ] {
        if declared.as_deref() == Some(engine) {
            continue;
        }
        if fields.contains_key(engine) {
            return Err(engine);
        }
        if let Some(value) = declared.as_deref().and_then(|name| fields.remove(name)) {
            fields.insert(engine.to_owned(), value);
        }
    }
    Ok(())
}

/// The checks of a create that read only the request, in the order their
/// errors take precedence.
fn validate(
    profile: &Profile,
    value: Value,
    headers: &HeaderMap,
    mode: IdempotencyMode,
    required: bool,
) -> Result<Checked, Prepared> {
    let Value::Object(mut fields) = value else {
        return Err(responses::invalid_request(
            profile,
            &format!(
                "request body must be a JSON object, got {}",
                json_kind(&value)
            ),
        ));
    };
    let client_reference = match fields.remove("client_reference") {
        None => None,
        Some(Value::String(reference)) if reference.len() <= MAX_CLIENT_REFERENCE_BYTES => {
            Some(reference)
        }
        Some(Value::String(reference)) => {
            return Err(responses::invalid_request(
                profile,
                &format!(
                "client_reference is {} bytes; at most {MAX_CLIENT_REFERENCE_BYTES} are accepted",
                reference.len()
            ),
            ))
        }
        Some(other) => {
            return Err(responses::invalid_request(
                profile,
                &format!(
                    "client_reference must be a string, got {}",
                    json_kind(&other)
                ),
            ))
        }
    };
    let metadata = match fields.remove("metadata") {
        None => None,
        Some(object @ Value::Object(_)) => Some(object),
        Some(other) => {
            return Err(responses::invalid_request(
                profile,
                &format!("metadata must be an object, got {}", json_kind(&other)),
            ))
        }
    };
    let key_headers: Vec<&HeaderValue> = headers
        .get_all(profile.keys.header.as_str())
        .iter()
        .collect();
    let key = parse_key(mode, required, &key_headers).map_err(|e| key_error(profile, mode, &e))?;
    let key_header = key_headers
        .first()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Ok((
        JsonText::of(&fields),
        client_reference.map(SharedStr::from),
        metadata.as_ref().map(JsonText::of),
        key,
        key_header,
    ))
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

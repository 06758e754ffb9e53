//! `POST /v1/{resource}` up to the commit point: the body read and
//! validated, the attempt counted, the idempotency key checked.

use bytes::Bytes;
use http::header::GetAll;
use http::{HeaderMap, HeaderValue};
use hyper::body::Incoming;
use lostreply_text::SharedStr;
use serde_json::Value;

use super::commit::{commit_stage, Intake};
use super::ctx::{Ctx, Delivery, Outcome};
use super::flat_body;
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

/// A create's request, borrowed from the request's future: everything a
/// create reads besides its body.
#[derive(Clone, Copy)]
pub(super) struct CreateAt<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) tenant: &'a SharedStr,
    pub(super) resource: &'a str,
    pub(super) path: &'a str,
    pub(super) raw_query: Option<&'a str>,
    pub(super) headers: &'a HeaderMap,
}

/// `POST /v1/{resource}` to its outcome. A reply that commits nothing (the
/// body refused, the key's own answer) still meets the fault of the way out.
///
/// Not an `async fn`: an `async fn` keeps its by-value arguments twice in its
/// future (the argument and the local it is moved into), and this future is
/// allocated for every create.
#[allow(clippy::manual_async_fn)]
pub(super) fn create<'a>(
    at: CreateAt<'a>,
    body: Incoming,
) -> impl std::future::Future<Output = Outcome> + Send + 'a {
    async move {
        let ctx = at.ctx;
        let read = read_then_intake(at, body);
        let intake = match read.await {
            Ok(intake) => intake,
            Err(outcome) => return outcome,
        };
        if ctx.shared.plan.idempotency.mode == IdempotencyMode::Racy {
            // Known-bad: the check above and the set after the commit are
            // separate steps; everything in between (this yield, faults, the
            // commit hook) is a window in which duplicates pass the check too.
            tokio::task::yield_now().await;
        }
        commit_stage(ctx, intake).await
    }
}

/// The body read within its bounds, then [`intake`]. `Err` is the outcome of
/// a reply that commits nothing, delivered here (through the fault of the way
/// out), so that no wait of the create's own holds it. Not an `async fn`, for
/// the reason [`create`] is not.
#[allow(clippy::manual_async_fn)]
fn read_then_intake(
    at: CreateAt<'_>,
    body: Incoming,
) -> impl std::future::Future<Output = Result<Intake, Outcome>> + Send + '_ {
    async move {
        let ctx = at.ctx;
        let reply = match read_body_within_bounds(ctx, at.headers, body).await {
            Ok(bytes) => match intake(at, &bytes) {
                Ok(intake) => return Ok(intake),
                Err(reply) => reply,
            },
            Err(reply) => reply,
        };
        let wait = match ctx.deliver(reply, ctx.rule_on_the_way_out()) {
            Delivery::Now(outcome) => return Err(outcome),
            Delivery::Wait(wait) => wait,
        };
        Err(wait.await)
    }
}

/// A create's body, read within the plan's size and time bounds; `Err` is
/// the reply that refuses it.
async fn read_body_within_bounds(
    ctx: &Ctx,
    headers: &HeaderMap,
    body: Incoming,
) -> Result<Bytes, Prepared> {
    let limits = &ctx.shared.plan.limits;
    read_body(body, headers, limits.max_body_bytes, limits.read_timeout)
        .await
        .map_err(|error| body_refusal(&ctx.shared.plan, error))
}

/// What the provider answers a body it could not read.
fn body_refusal(plan: &crate::Plan, error: BodyError) -> Prepared {
    let profile = &plan.profile;
    match error {
        BodyError::TooLarge => {
            let message = format!("request body exceeds {} bytes", plan.limits.max_body_bytes);
            responses::failure(
                profile,
                413,
                crate::profile::ErrorKind::PayloadTooLarge,
                &message,
            )
        }
        // 408 in the profile's error envelope; nothing was committed. hyper
        // closes the connection after it, as the body was not read to its end.
        BodyError::TimedOut => responses::failure(
            profile,
            408,
            crate::profile::ErrorKind::InvalidRequest,
            &timed_out_message(plan.limits.read_timeout),
        ),
        BodyError::Unreadable(why) => {
            responses::invalid_request(profile, &format!("cannot read the request body: {why}"))
        }
    }
}

/// Everything between reading the body and the commit stage, none of which
/// waits: parsing and validating the body, counting the attempt, checking the
/// key. A function of its own so that none of its values sits in the
/// create's future (they are many, and a future is allocated per request).
fn intake(at: CreateAt<'_>, bytes: &[u8]) -> Result<Intake, Prepared> {
    let CreateAt {
        ctx,
        tenant,
        resource,
        path,
        raw_query,
        headers,
    } = at;
    let plan = &ctx.shared.plan;
    let profile = &plan.profile;
    let mode = plan.idempotency.mode;
    if let Some(name) = query::names(raw_query).first() {
        return Err(responses::invalid_request(
            profile,
            &format!("create takes no query parameters; got `{name}`"),
        ));
    }
    let (fingerprint, body) = read_fields(profile, headers, bytes)?;
    // Everything below up to the key check reads only the request, so it runs
    // before the lock; the attempt count and the key check then share one
    // lock (one fewer per create: the lock is contended at 64 connections).
    // Attempts are counted whether or not the body then passes.
    let checked = body.and_then(|fields| {
        let key_values = ctx.shared.key_values(headers);
        let (key, key_header) = read_key(profile, key_values, mode, plan.idempotency.required)?;
        Ok((fields, key, key_header))
    });
    // A block, not `drop`: the guard must not look live across the awaits below.
    let (attempt, fields, key_header, decision, names) = {
        let mut state = ctx.shared.state();
        state.journal.set_fingerprint(ctx.seq, fingerprint.clone());
        // One copy of each name, for the count and the object: the request's
        // tenant is already the plan's shared copy; the collection is interned.
        let names = (tenant.clone(), state.store.strings.intern(resource));
        let attempt = state
            .attempts
            .count((names.0.clone(), names.1.clone(), fingerprint.clone()));
        let (fields, key, key_header) = checked?;
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
        (attempt, fields, key_header, decision, names)
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
            args: fields.args,
            client_reference: fields.client_reference,
            metadata: fields.metadata,
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
/// the state lock, not in the commit under it).
struct BodyFields {
    args: JsonText,
    client_reference: Option<SharedStr>,
    metadata: Option<JsonText>,
}

/// The body's canonical fingerprint, and its fields or the reply that
/// refuses them. A body that is not JSON (or not the profile's form) is
/// refused at once; a body that is, but whose fields do not pass, is still
/// an attempt, counted under its fingerprint before it is refused.
type ReadFields = Result<(SharedStr, Result<BodyFields, Prepared>), Prepared>;

/// Reads a create's body: a flat JSON object straight from its text, any
/// other body parsed as a `Value` (the two agree; see `flat_body`).
fn read_fields(profile: &Profile, headers: &HeaderMap, bytes: &[u8]) -> ReadFields {
    if takes_flat_bodies(&profile.body) {
        if let Some((fingerprint, fields)) = read_flat(bytes) {
            return Ok((fingerprint, Ok(fields)));
        }
    }
    read_value_fields(profile, headers, bytes)
}

/// A flat body's fingerprint and fields, read from its text (`None` for
/// any other body).
fn read_flat(bytes: &[u8]) -> Option<(SharedStr, BodyFields)> {
    let flat = flat_body::read(bytes, MAX_CLIENT_REFERENCE_BYTES)?;
    let fields = BodyFields {
        args: flat.args,
        client_reference: flat.client_reference,
        metadata: None,
    };
    Some((flat.fingerprint, fields))
}

/// Whether the flat reader and the parse agree on `bytes`: `Ok(true)` when
/// the flat reader takes the body and makes of it what the parse makes
/// (fingerprint, arguments, reference, metadata), `Ok(false)` when it leaves
/// the body to the parse, and both readings when they differ. The
/// equivalence test and the `flat_body` fuzz target ask it.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn flat_reading_agrees(bytes: &[u8]) -> Result<bool, String> {
    let Some((fingerprint, fields)) = read_flat(bytes) else {
        return Ok(false);
    };
    let from_text = body_as_text(&fingerprint, &fields);
    let parsed = match read_value_fields(&Profile::generic(), &HeaderMap::new(), bytes) {
        Ok((fingerprint, Ok(fields))) => Some(body_as_text(&fingerprint, &fields)),
        _ => None,
    };
    match parsed {
        Some(parsed) if parsed == from_text => Ok(true),
        parsed => Err(format!(
            "read from its text: {from_text:?}; parsed: {parsed:?}"
        )),
    }
}

/// What a reader made of a body, as text: fingerprint, arguments,
/// reference, metadata.
#[cfg(any(test, feature = "fuzzing"))]
type BodyText = (String, String, Option<String>, Option<String>);

#[cfg(any(test, feature = "fuzzing"))]
fn body_as_text(fingerprint: &SharedStr, fields: &BodyFields) -> BodyText {
    (
        fingerprint.as_str().to_owned(),
        fields.args.get().to_owned(),
        fields
            .client_reference
            .as_ref()
            .map(|r| r.as_str().to_owned()),
        fields.metadata.as_ref().map(|m| m.get().to_owned()),
    )
}

/// Whether a body's fields reach the engine as sent: JSON, with the
/// engine's own reserved names and nothing to leave out.
fn takes_flat_bodies(format: &BodyFormat) -> bool {
    format.encoding == Encoding::Json
        && format.ignored.is_empty()
        && format.client_reference.as_deref() == Some("client_reference")
        && format.metadata.as_deref() == Some("metadata")
}

/// [`read_fields`] for any body: parsed as a `Value`.
fn read_value_fields(profile: &Profile, headers: &HeaderMap, bytes: &[u8]) -> ReadFields {
    let value = decode_body(profile, headers, bytes)?;
    let fingerprint = canonical_shared(&value);
    Ok((fingerprint, validate(profile, value)))
}

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
fn validate(profile: &Profile, value: Value) -> Result<BodyFields, Prepared> {
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
    Ok(BodyFields {
        args: JsonText::of(&fields),
        client_reference: client_reference.map(SharedStr::from),
        metadata: metadata.as_ref().map(JsonText::of),
    })
}

/// The request's idempotency key, parsed, and its header as sent (the
/// first), from the values of the profile's key header.
fn read_key(
    profile: &Profile,
    values: GetAll<'_, HeaderValue>,
    mode: IdempotencyMode,
    required: bool,
) -> Result<(Option<String>, Option<String>), Prepared> {
    let key_headers: Vec<&HeaderValue> = values.iter().collect();
    let key = parse_key(mode, required, &key_headers).map_err(|e| key_error(profile, mode, &e))?;
    let key_header = key_headers
        .first()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Ok((key, key_header))
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

#[cfg(test)]
mod flat_bodies {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn flat(text: &str) -> Option<BodyText> {
        read_flat(text.as_bytes()).map(|(fingerprint, fields)| body_as_text(&fingerprint, &fields))
    }

    #[test]
    fn a_flat_body_is_read_from_its_text() {
        let body = flat(r#"{"title":"bench","n":7}"#).expect("a flat body");
        assert_eq!(body.0, r#"{"n":7,"title":"bench"}"#);
        assert_eq!(body.1, r#"{"title":"bench","n":7}"#);
        let body = flat(" {\"client_reference\" : \"r-1\",\n\"a\":1,\t\"b\":true, \"c\":null} ")
            .expect("a flat body with a reference");
        assert_eq!(
            body.0,
            r#"{"a":1,"b":true,"c":null,"client_reference":"r-1"}"#
        );
        // As a `serde_json::Map` leaves them: the last member in the reference's place.
        assert_eq!(body.1, r#"{"c":null,"a":1,"b":true}"#);
        assert_eq!(body.2.as_deref(), Some("r-1"));
        assert_eq!(flat("{}").map(|b| b.1).as_deref(), Some("{}"));
    }

    #[test]
    fn anything_serde_json_would_write_otherwise_is_left_to_it() {
        for text in [
            r#"{"a":"\n"}"#,
            r#"{"\u0061":1}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":01}"#,
            r#"{"a":1234567890123456}"#,
            r#"{"a":{}}"#,
            r#"{"a":[]}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"metadata":{"k":"v"}}"#,
            r#"{"client_reference":null}"#,
            r#"{"client_reference":7}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r#"[1]"#,
            "\u{feff}{}",
            "",
        ] {
            assert!(flat(text).is_none(), "{text}");
        }
        let long = format!(r#"{{"client_reference":"{}"}}"#, "r".repeat(256));
        assert!(flat(&long).is_none());
        assert!(read_flat(b"{\"a\":\"\xff\"}").is_none());
    }

    /// One piece of a generated body, some of which the reader takes and
    /// some it must leave to serde_json.
    fn piece(rng: &mut ChaCha8Rng, pieces: &[&str]) -> String {
        pieces[rng.random_range(0..pieces.len())].to_owned()
    }

    fn generated_body(rng: &mut ChaCha8Rng) -> String {
        const NAMES: &[&str] = &[
            "\"title\"",
            "\"n\"",
            "\"a\"",
            "\"é ü\"",
            "\"client_reference\"",
            "\"metadata\"",
            "\"a\\\"b\"",
            "\"\"",
            "\"Z\"",
        ];
        const SPACE: &[&str] = &["", "", " ", "\n\t", "\r "];
        let mut text = piece(rng, SPACE) + "{";
        for index in 0..rng.random_range(0..6) {
            if index > 0 {
                text += ",";
            }
            text += &(piece(rng, SPACE) + &piece(rng, NAMES) + &piece(rng, SPACE) + ":");
            text += &(piece(rng, SPACE) + &generated_value(rng) + &piece(rng, SPACE));
        }
        text += "}";
        text += &piece(rng, SPACE);
        if rng.random_range(0..20) == 0 {
            let mut at = rng.random_range(0..=text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.insert(at, ',');
        }
        text
    }

    fn generated_value(rng: &mut ChaCha8Rng) -> String {
        const VALUES: &[&str] = &[
            "\"plain\"",
            "\"\"",
            "\"é, ü and 😀\"",
            "\"with \\\"quote\\\"\"",
            "\"line\\nbreak\"",
            "\"\\u00e9\"",
            "true",
            "false",
            "null",
            "0",
            "-0",
            "01",
            "1.5",
            "-2.50",
            "1e3",
            "{}",
            "[1,\"x\"]",
            "{\"k\":\"v\",\"a\":1}",
            "\"\u{7f}\"",
        ];
        match rng.random_range(0..4) {
            0 => {
                let digits = rng.random_range(1..=20);
                let mut number = String::new();
                if rng.random_bool(0.3) {
                    number.push('-');
                }
                for position in 0..digits {
                    let low = if position == 0 { 1 } else { 0 };
                    number.push(char::from(b'0' + rng.random_range(low..10)));
                }
                number
            }
            1 => format!("\"{}\"", "r".repeat(rng.random_range(250..260))),
            _ => piece(rng, VALUES),
        }
    }

    #[test]
    fn a_body_read_from_its_text_is_what_its_parse_makes_of_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut taken = 0;
        for _ in 0..20_000 {
            let text = generated_body(&mut rng);
            match flat_reading_agrees(text.as_bytes()) {
                Ok(true) => taken += 1,
                Ok(false) => {}
                Err(difference) => panic!("{text}: {difference}"),
            }
        }
        // Both ways are exercised: the reader takes a share, not all or none.
        assert!(
            (2_000..18_000).contains(&taken),
            "{taken} of 20000 read from text"
        );
    }
}

//! What the provider answers about idempotency keys: a missing or invalid
//! key, a key reused with another body, a key still in flight, and replays.
//! `ietf` answers with problem details; every other keyed mode like Stripe.

use crate::idempotency::{KeyError, Saved};
use crate::plan::IdempotencyMode;
use crate::profile::{ErrorKind, Errors, Profile};
use crate::responses::with_retry_hint;
use crate::responses::{self, Prepared};

/// `ietf` answers with problem details; every other keyed mode answers like Stripe.
fn is_ietf(mode: IdempotencyMode) -> bool {
    mode == IdempotencyMode::Ietf
}

pub(super) fn key_error(profile: &Profile, mode: IdempotencyMode, error: &KeyError) -> Prepared {
    match (error, is_ietf(mode)) {
        (KeyError::Missing, _) => responses::problem(
            400,
            "idempotency-key-missing",
            "Idempotency-Key is missing",
            "this endpoint requires an Idempotency-Key header",
        ),
        (KeyError::Invalid(why), true) => responses::problem(
            400,
            "idempotency-key-invalid",
            "Idempotency-Key is invalid",
            why,
        ),
        (KeyError::Invalid(why), false) => {
            responses::failure(profile, 400, ErrorKind::KeyInvalid, why)
        }
    }
}

/// A declared profile's envelope: the generic API's own bodies are kept as
/// docs/provider-api.md writes them.
fn declared(profile: &Profile) -> bool {
    matches!(profile.errors, Errors::Shaped(_))
}

pub(super) fn mismatch(profile: &Profile, mode: IdempotencyMode) -> Prepared {
    let detail = "this Idempotency-Key was first used with a different request body";
    if is_ietf(mode) {
        responses::problem(
            422,
            "idempotency-key-reused",
            "Idempotency-Key reused with a different body",
            detail,
        )
    } else if declared(profile) {
        responses::failure(profile, 400, ErrorKind::KeyReused, detail)
    } else {
        responses::error(400, "idempotency_error", detail)
    }
}

pub(super) fn in_flight(profile: &Profile, mode: IdempotencyMode) -> Prepared {
    let detail = "a request with this Idempotency-Key is still being processed";
    if is_ietf(mode) {
        responses::problem(
            409,
            "idempotency-key-in-use",
            "Idempotency-Key in use",
            detail,
        )
    } else if declared(profile) {
        responses::failure(profile, 409, ErrorKind::KeyInFlight, detail)
    } else {
        with_retry_hint(
            profile,
            Prepared::json(
                409,
                &serde_json::json!({"error": {"type": "idempotency_error", "code": "idempotency_key_in_use", "message": detail}}),
            ),
            ErrorKind::KeyInFlight,
        )
    }
}

pub(super) fn replay(profile: &Profile, mode: IdempotencyMode, saved: Saved) -> Prepared {
    let mut prepared = Prepared {
        status: saved.status,
        content_type: responses::JSON,
        body: saved.body,
        headers: Vec::new(),
    };
    if let Some(location) = saved.location {
        prepared = prepared.with_header_value("location", location);
    }
    if let (false, Some((name, value))) = (is_ietf(mode), &profile.keys.replay_header) {
        prepared = prepared.with_header_owned(name, value);
    }
    prepared
}

pub(super) fn saved_of(prepared: &Prepared) -> Saved {
    let location = prepared
        .headers
        .iter()
        .find(|(name, _)| *name == http::header::LOCATION)
        .map(|(_, v)| v.clone());
    Saved {
        status: prepared.status,
        body: prepared.body.clone(),
        location,
    }
}

//! The vendor's declarations, which the probes judge against. Every one but
//! the retention is optional, so a contract written from a README names only
//! what the README says: an absent one takes the answer the IETF draft
//! (draft-ietf-httpapi-idempotency-key-header) gives, or where the draft
//! leaves it to the server, what the simulator's honest modes do.

use std::time::Duration;

use super::fields::{statuses, written};
use super::found::Found;
use super::model::{
    ErrorsReplayed, Fingerprint, InFlight, KeyChecks, KeyScope, KeyValidation, MissingKey, Written,
};
use super::raw::{self, Pos, Sp};

/// The IETF draft's status for a reused key with another payload.
pub(crate) const DRAFT_MISMATCH: u16 = 422;
/// The IETF draft's status for a key whose first request is still running.
pub(crate) const DRAFT_IN_FLIGHT: u16 = 409;
/// The IETF draft's status for a missing key where one is required (and
/// certify's default for a key it cannot accept: the same kind of bad request).
pub(crate) const DRAFT_BAD_KEY: u16 = 400;

/// What the vendor declares, validated.
pub(crate) struct Declared {
    pub(crate) retention: Written,
    pub(crate) replay_marker: Option<(String, String)>,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) key_scope: KeyScope,
    pub(crate) mismatch_status: Vec<u16>,
    pub(crate) in_flight: InFlight,
    pub(crate) errors_replayed: ErrorsReplayed,
    pub(crate) missing_key: MissingKey,
    pub(crate) key_checks: KeyChecks,
}

/// What the vendor declares; the probes judge against it.
pub(crate) fn declares(dec: &raw::RawDeclares, d: &mut Found<'_>) -> Declared {
    let retention = written(
        d,
        &dec.retention,
        Duration::from_secs(1),
        Duration::from_secs(3650 * 86400),
    );
    Declared {
        retention,
        replay_marker: dec
            .replay_marker
            .as_ref()
            .map(|m| (m.header.clone(), m.value.clone())),
        fingerprint: dec
            .fingerprint
            .as_ref()
            .map_or(Fingerprint::CanonicalJson, |f| f.value),
        key_scope: dec
            .key_scope
            .as_ref()
            .map_or(KeyScope::PerPath, |s| s.value),
        mismatch_status: dec
            .mismatch_status
            .as_ref()
            .map_or_else(|| vec![DRAFT_MISMATCH], |s| statuses(d, s)),
        in_flight: dec
            .in_flight
            .as_ref()
            .map_or(InFlight::Status(vec![DRAFT_IN_FLIGHT]), |f| in_flight(d, f)),
        errors_replayed: dec
            .errors_replayed
            .as_ref()
            .map_or(ErrorsReplayed::Never, |e| errors_replayed(d, e)),
        missing_key: dec
            .missing_key
            .as_ref()
            .map_or(MissingKey::Status(vec![DRAFT_BAD_KEY]), |m| {
                missing_key(d, m)
            }),
        key_checks: key_checks(dec, d),
    }
}

fn in_flight(d: &mut Found<'_>, f: &Sp<raw::RawInFlight>) -> InFlight {
    match &f.value {
        raw::RawInFlight::Word(w) if w == "waits" => InFlight::Waits,
        raw::RawInFlight::Word(w) => {
            d.error(
                f.pos,
                format!(
                    "{w:?}: in_flight is `waits`, {{status: [409]}} or {{waits: 15s, then: [409]}}"
                ),
            );
            InFlight::Waits
        }
        raw::RawInFlight::Status(s) => InFlight::Status(statuses(d, &at(s.status.clone(), f.pos))),
        raw::RawInFlight::WaitsThen(w) => InFlight::WaitsThen(
            written(
                d,
                &at(w.waits.clone(), f.pos),
                Duration::from_millis(1),
                Duration::from_secs(600),
            ),
            statuses(d, &at(w.then.clone(), f.pos)),
        ),
    }
}

fn errors_replayed(d: &mut Found<'_>, e: &Sp<raw::RawErrorsReplayed>) -> ErrorsReplayed {
    match &e.value {
        raw::RawErrorsReplayed::All(false) => ErrorsReplayed::Never,
        raw::RawErrorsReplayed::All(true) => ErrorsReplayed::Every,
        raw::RawErrorsReplayed::Statuses(list) => {
            let codes = statuses(d, &at(list.clone(), e.pos));
            if codes.iter().any(|c| *c < 400) {
                d.error(
                    e.pos,
                    "errors_replayed lists error statuses (400 to 599): successes are always replayed",
                );
            }
            ErrorsReplayed::Statuses(codes)
        }
    }
}

fn missing_key(d: &mut Found<'_>, m: &Sp<raw::RawStatusOr>) -> MissingKey {
    match &m.value {
        raw::RawStatusOr::Word(w) if w == "processed" => MissingKey::Processed,
        raw::RawStatusOr::Word(w) => {
            d.error(
                m.pos,
                format!("{w:?}: missing_key is `processed` or {{status: [400]}}"),
            );
            MissingKey::Processed
        }
        raw::RawStatusOr::Status(s) => {
            MissingKey::Status(statuses(d, &at(s.status.clone(), m.pos)))
        }
    }
}

/// `key_validation` and the statuses it takes: `accepts_any` names none.
fn key_checks(dec: &raw::RawDeclares, d: &mut Found<'_>) -> KeyChecks {
    let given = |s: &Option<Sp<Vec<u16>>>| s.as_ref().map(|s| s.pos);
    match dec.key_validation.as_ref().map(|v| v.value) {
        Some(KeyValidation::AcceptsAny) => {
            for stray in [
                given(&dec.malformed_key_status),
                given(&dec.oversized_key_status),
            ]
            .into_iter()
            .flatten()
            {
                d.error(
                    stray,
                    "key_validation: accepts_any refuses no key: drop the key statuses, or declare `refuses`",
                );
            }
            KeyChecks::AcceptsAny
        }
        Some(KeyValidation::Refuses) | None => {
            let or_draft = |d: &mut Found<'_>, s: &Option<Sp<Vec<u16>>>| {
                s.as_ref()
                    .map_or_else(|| vec![DRAFT_BAD_KEY], |s| statuses(d, s))
            };
            KeyChecks::Refused {
                malformed: or_draft(d, &dec.malformed_key_status),
                oversized: or_draft(d, &dec.oversized_key_status),
            }
        }
    }
}

/// A value placed where another field sits (so its problems point there).
pub(crate) fn at<T>(value: T, pos: Pos) -> Sp<T> {
    Sp { value, pos }
}

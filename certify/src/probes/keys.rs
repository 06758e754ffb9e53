//! Keys that fail: a rejected request's key, and missing, malformed and
//! over-long keys.

use futures::future::BoxFuture;

use super::ctx::{fill, Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::Response;
use crate::contract::{KeyChecks, KeySyntax, MissingKey};

/// A request the vendor rejects; the same request again under its key (a
/// saved rejection replays, else it is answered afresh, never as a poisoned
/// key); then, unless the rejection is saved, the valid request under the key.
pub async fn rejected_not_poisoned(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some((path, body, statuses)) = c.contract.rejected.clone() else {
        t.skip("the contract names no rejected request");
        return Ok(());
    };
    let marker = c.marker("rejected_not_poisoned", 0);
    let key = KeyUse::Key(c.key("rejected_not_poisoned", 0));
    let bad = c.create(&path, &fill(&body, &marker), &key, &c.contract.primary);
    let first = c.send(t, "the rejected request", &bad).await?;
    if !statuses.contains(&first.status) {
        return Err(Stop(format!(
            "the contract's rejected request answered {}, not one of {statuses:?}: nothing was rejected",
            first.status
        )));
    }
    let again = c
        .send(t, "the same rejected request, same key", &bad)
        .await?;
    if c.contract.errors_replayed.replays(first.status) {
        judge_replayed_rejection(t, &first, &again);
        // A retry that ran (against the declaration) made the one effect it may.
        let expected = usize::from(c.is_success(again.status));
        let found = c.count(t, &marker, expected).await?;
        c.judge_count(t, found, expected, "a rejection and its retry");
        return Ok(());
    }
    if c.is_success(again.status) {
        t.held(format!(
            "the key was usable after the rejection: the same request answered {}",
            again.status
        ));
    } else if statuses.contains(&again.status) {
        t.held(format!(
            "the same request was rejected again ({}), as a fresh request",
            again.status
        ));
        let good = c.create(&path, &c.body(&marker), &key, &c.contract.primary);
        let valid = c.send(t, "the valid request, same key", &good).await?;
        judge_valid_after(c, t, first.status, valid.status);
    } else {
        t.fail(poisoned(c, first.status, again.status, "the same request"));
    }
    let found = c.count(t, &marker, 1).await?;
    if found > 1 {
        c.judge_count(t, found, 1, "a rejection then the request under its key");
    }
    Ok(())
}

/// A declared saved rejection: the same request gets it again, byte for byte.
fn judge_replayed_rejection(t: &mut Trail, first: &Response, again: &Response) {
    if again.status == first.status && again.body == first.body {
        t.held(format!(
            "the same request got the saved rejection ({}, the same body), as declared",
            again.status
        ));
    } else if again.status == first.status {
        t.fail(format!(
            "declared: a {} is saved and replayed; the same request answered {} with another body (answered afresh, not replayed)",
            first.status, again.status
        ));
    } else {
        t.fail(format!(
            "declared: a {} is saved and replayed; the same request answered {}",
            first.status, again.status
        ));
    }
}

/// After a rejection that is not saved, the valid request under the same key runs.
fn judge_valid_after(c: &Ctx, t: &mut Trail, rejected: u16, valid: u16) {
    if c.is_success(valid) {
        t.held(format!("the valid request under the key answered {valid}"));
    } else {
        t.fail(poisoned(c, rejected, valid, "the valid request"));
    }
}

/// Why an answer after a rejection shows a poisoned key, naming what the status declares.
fn poisoned(c: &Ctx, rejected: u16, answered: u16, what: &str) -> String {
    let meaning = if c.contract.mismatch_status.contains(&answered) {
        " (the declared mismatch status: the rejection was kept for the key, which the contract does not declare)"
    } else if c.contract.in_flight.refuses_with(answered) {
        " (the declared in-flight status: the rejected request still holds the key)"
    } else {
        ""
    };
    format!("after a rejection ({rejected}), {what} under the same key answered {answered}{meaning}: the rejection poisoned its key")
}

/// One of `key_validation`'s checks.
type KeyCheck = for<'a> fn(&'a Ctx, &'a mut Trail) -> BoxFuture<'a, Result<(), Stop>>;

/// `key_validation`'s checks, in the order they run (each with its own marker).
const KEY_CHECKS: [KeyCheck; 4] = [
    |c, t| Box::pin(missing_key(c, t)),
    |c, t| Box::pin(malformed_key(c, t)),
    |c, t| Box::pin(oversized_key(c, t)),
    |c, t| Box::pin(longest_key(c, t)),
];

const PROBE: &str = "key_validation";

/// Missing, malformed, over-long, and longest-allowed keys.
pub async fn key_validation(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    for check in KEY_CHECKS {
        check(c, t).await?;
    }
    Ok(())
}

/// A create without a key gets the declared answer.
async fn missing_key(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker(PROBE, 0);
    let r = c
        .send(t, "no key", &c.create_main(&c.body(&marker), &KeyUse::None))
        .await?;
    match &c.contract.missing_key {
        MissingKey::Processed => {
            if c.is_success(r.status) {
                t.held("a create without a key was processed");
            } else {
                t.fail(format!(
                    "a create without a key answered {}, declared: processed",
                    r.status
                ));
            }
        }
        MissingKey::Status(codes) => {
            if codes.contains(&r.status) {
                t.held(format!("a create without a key was refused ({})", r.status));
                let found = c.count(t, &marker, 0).await?;
                if found > 0 {
                    t.fail("the refused keyless create left an effect");
                }
            } else {
                t.fail(format!(
                    "a create without a key answered {}, declared {codes:?}",
                    r.status
                ));
            }
        }
    }
    Ok(())
}

/// A malformed key, derived from the seed like every key (so no run meets
/// another run's record under it): refused with no effect, or under
/// `accepts_any` taken as a key. A body-field key has no syntax to break.
async fn malformed_key(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let seeded = c.key(PROBE, 1);
    let bad = match &c.contract.key {
        KeySyntax::Token { .. } => format!("{seeded} with spaces"),
        KeySyntax::SfString { .. } => format!("\"{seeded}"),
        KeySyntax::BodyField { .. } => {
            t.note("malformed keys: not applicable to a body-field key");
            return Ok(());
        }
    };
    let declared = match &c.contract.key_checks {
        KeyChecks::Refused { malformed, .. } => Some(malformed.as_slice()),
        KeyChecks::AcceptsAny => None,
    };
    odd_key(c, t, "malformed key", KeyUse::Raw(bad), 1, declared).await
}

/// A key one byte over the declared maximum: refused with no effect, or
/// under `accepts_any` taken as a key.
async fn oversized_key(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let max = c.contract.key_max_bytes;
    let base = c.key(PROBE, 2);
    let long = format!("{base}{}", "x".repeat(max + 1 - base.len().min(max)));
    let declared = match &c.contract.key_checks {
        KeyChecks::Refused { oversized, .. } => Some(oversized.as_slice()),
        KeyChecks::AcceptsAny => None,
    };
    let label = format!("key of {} bytes (over {max})", long.len());
    odd_key(c, t, &label, KeyUse::Key(long), 2, declared).await
}

/// One odd key. Refused (`declared` statuses): the answer is one of them and
/// no effect is left. Accepted (`accepts_any`): the same request twice under
/// it leaves at most one effect; more is a duplicate.
async fn odd_key(
    c: &Ctx,
    t: &mut Trail,
    label: &str,
    key: KeyUse,
    n: u32,
    declared: Option<&[u16]>,
) -> Result<(), Stop> {
    let marker = c.marker(PROBE, n);
    let req = c.create_main(&c.body(&marker), &key);
    let r = c.send(t, label, &req).await?;
    let Some(codes) = declared else {
        c.send(t, &format!("{label}, the same again"), &req).await?;
        let found = c.count(t, &marker, 1).await?;
        if found > 1 {
            c.judge_count(t, found, 1, &format!("{label}, sent twice"));
        } else {
            t.held(format!(
                "{label}: answered {}, {found} effect(s) from two sends (accepts_any: no duplicate)",
                r.status
            ));
        }
        return Ok(());
    };
    let found = c.count(t, &marker, 0).await?;
    if codes.contains(&r.status) && found == 0 {
        t.held(format!("{label}: refused ({})", r.status));
    } else {
        t.fail(format!(
            "{label}: answered {} and left {found} effect(s), declared {codes:?} and none",
            r.status
        ));
    }
    Ok(())
}

/// A key of exactly the declared maximum is accepted.
async fn longest_key(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let max = c.contract.key_max_bytes;
    let base = c.key(PROBE, 3);
    let longest = format!("{base}{}", "y".repeat(max - base.len().min(max)));
    let marker = c.marker(PROBE, 3);
    let r = c
        .send(
            t,
            &format!("key of {max} bytes"),
            &c.create_main(&c.body(&marker), &KeyUse::Key(longest)),
        )
        .await?;
    if c.is_success(r.status) {
        t.held(format!("a key of exactly {max} bytes was accepted"));
    } else {
        t.fail(format!(
            "a key of exactly {max} bytes (the declared maximum) answered {}",
            r.status
        ));
    }
    Ok(())
}

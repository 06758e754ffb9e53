//! Keys that fail: a rejected request's key, and missing, malformed and
//! over-long keys.

use futures::future::BoxFuture;

use super::ctx::{fill, Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::contract::{KeySyntax, MissingKey};

/// A request the vendor rejects, then the valid request under the same key.
pub async fn rejected_not_poisoned(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some((path, body, statuses)) = c.contract.rejected.clone() else {
        t.skip("the contract names no rejected request");
        return Ok(());
    };
    let marker = c.marker("rejected_not_poisoned", 0);
    let key = KeyUse::Key(c.key("rejected_not_poisoned", 0));
    let bad = fill(&body, &marker);
    let first = c
        .send(
            t,
            "the rejected request",
            &c.create(&path, &bad, &key, &c.contract.primary),
        )
        .await?;
    if !statuses.contains(&first.status) {
        return Err(Stop(format!(
            "the contract's rejected request answered {}, not one of {statuses:?}: nothing was rejected",
            first.status
        )));
    }
    let good = c.body(&marker);
    let second = c
        .send(
            t,
            "the valid request, same key",
            &c.create(&path, &good, &key, &c.contract.primary),
        )
        .await?;
    if c.contract.errors_replayed {
        if second.status == first.status {
            t.held(format!(
                "the rejection was replayed ({}), as declared",
                second.status
            ));
        } else {
            t.fail(format!(
                "declared: errors are replayed; the retry answered {}",
                second.status
            ));
        }
        return Ok(());
    }
    if c.is_success(second.status) {
        t.held(format!(
            "the key was usable after the rejection ({})",
            second.status
        ));
        let found = c.count(t, &marker, 1).await?;
        c.judge_count(t, found, 1, "a rejection then a success");
    } else {
        t.fail(format!(
            "after a rejection ({}), the same key answered {}: the rejected request poisoned its key",
            first.status, second.status
        ));
    }
    Ok(())
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

/// A malformed key is refused and leaves no effect (a body-field key has no syntax to break).
async fn malformed_key(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let bad = match &c.contract.key {
        KeySyntax::Token { .. } => "lrk bad key with spaces",
        KeySyntax::SfString { .. } => "\"lrk_unterminated",
        KeySyntax::BodyField { .. } => {
            t.note("malformed keys: not applicable to a body-field key");
            return Ok(());
        }
    };
    let marker = c.marker(PROBE, 1);
    let r = c
        .send(
            t,
            "malformed key",
            &c.create_main(&c.body(&marker), &KeyUse::Raw(bad.to_owned())),
        )
        .await?;
    let found = c.count(t, &marker, 0).await?;
    if c.contract.malformed_key_status.contains(&r.status) && found == 0 {
        t.held(format!("a malformed key was refused ({})", r.status));
    } else {
        t.fail(format!(
            "a malformed key answered {} and left {found} effect(s), declared {:?} and none",
            r.status, c.contract.malformed_key_status
        ));
    }
    Ok(())
}

/// A key one byte over the declared maximum is refused and leaves no effect.
async fn oversized_key(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let max = c.contract.key_max_bytes;
    let base = c.key(PROBE, 2);
    let long = format!("{base}{}", "x".repeat(max + 1 - base.len().min(max)));
    let marker = c.marker(PROBE, 2);
    let r = c
        .send(
            t,
            &format!("key of {} bytes", long.len()),
            &c.create_main(&c.body(&marker), &KeyUse::Key(long)),
        )
        .await?;
    let found = c.count(t, &marker, 0).await?;
    if c.contract.oversized_key_status.contains(&r.status) && found == 0 {
        t.held(format!("a key over {max} bytes was refused ({})", r.status));
    } else {
        t.fail(format!(
            "a key of {} bytes answered {} and left {found} effect(s), declared {:?} and none",
            max + 1,
            r.status,
            c.contract.oversized_key_status
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

//! Baseline, sequential replay, replay fidelity, and key reuse with other or
//! reordered arguments.

use super::ctx::{Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::Response;
use crate::contract::Fingerprint;

/// One keyed create; it must succeed, name an id, and be seen exactly once.
pub async fn baseline(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("baseline", 0);
    let key = KeyUse::Key(c.key("baseline", 0));
    let r = c
        .send(t, "create", &c.create_main(&c.body(&marker), &key))
        .await?;
    if !c.is_success(r.status) {
        t.fail(format!(
            "the contract's own create answered {} (declared success: {:?})",
            r.status, c.contract.success
        ));
        return Ok(());
    }
    let Some(id) = c.id_of(&r) else {
        return Err(Stop(format!(
            "the create answered {} without an id at {:?}",
            r.status, c.contract.id_at
        )));
    };
    let found = c.count(t, &marker, 1).await?;
    c.judge_count(t, found, 1, "one create");
    if let Some(retrieve) = &c.contract.retrieve {
        let req = crate::client::Request {
            method: "GET".to_owned(),
            path: retrieve
                .path
                .replace("{id}", &crate::readback::percent(&id)),
            headers: auth(c, &c.contract.primary, retrieve.auth),
            body: Vec::new(),
        };
        let got = c.send(t, "retrieve by id", &req).await?;
        if !(200..300).contains(&got.status) {
            t.fail(format!("retrieving {id} answered {}", got.status));
        } else if !String::from_utf8_lossy(&got.body).contains(&marker) {
            t.fail(format!(
                "the object retrieved as {id} does not carry the marker"
            ));
        } else {
            t.held(format!("retrieved {id} with its marker"));
        }
    }
    Ok(())
}

pub(super) fn auth(c: &Ctx, credential: &str, send: bool) -> Vec<(String, String)> {
    if send {
        vec![(
            c.contract.auth_header.clone(),
            format!("{}{credential}", c.contract.auth_prefix),
        )]
    } else {
        Vec::new()
    }
}

/// The same key and body twice, one after the other.
pub async fn sequential_replay(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("sequential_replay", 0);
    let key = KeyUse::Key(c.key("sequential_replay", 0));
    let req = c.create_main(&c.body(&marker), &key);
    let first = c.send(t, "first", &req).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let second = c.send(t, "the same again", &req).await?;
    let found = c.count(t, &marker, 1).await?;
    c.judge_count(t, found, 1, "two identical keyed creates");
    if !c.is_success(second.status) {
        t.fail(format!(
            "the replay answered {} instead of the saved result",
            second.status
        ));
    } else if c.id_of(&second) != c.id_of(&first) {
        t.fail(format!(
            "the replay names {:?}, the first {:?}",
            c.id_of(&second),
            c.id_of(&first)
        ));
    } else {
        t.held("the replay returned the saved result");
    }
    Ok(())
}

/// The replay's status, body and marker, against the first answer.
pub async fn replay_fidelity(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("replay_fidelity", 0);
    let key = KeyUse::Key(c.key("replay_fidelity", 0));
    let req = c.create_main(&c.body(&marker), &key);
    let first = c.send(t, "first", &req).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let second = c.send(t, "replay", &req).await?;
    if second.status != first.status {
        t.fail(format!(
            "the replay's status is {}, the first answer's {}",
            second.status, first.status
        ));
    }
    match (first.json(), second.json()) {
        (Some(a), Some(b)) if a == b => t.held("the replay's body equals the first"),
        (Some(_), Some(_)) => t.fail("the replay's body differs from the first answer's"),
        _ if first.body == second.body => t.held("the replay's bytes equal the first"),
        _ => t.fail("the replay's body differs from the first answer's"),
    }
    if let Some((header, value)) = &c.contract.replay_marker {
        if first
            .header(header)
            .is_some_and(|v| v.eq_ignore_ascii_case(value))
        {
            t.fail(format!(
                "the first answer already carries {header}: {value}"
            ));
        }
        match second.header(header) {
            Some(v) if v.eq_ignore_ascii_case(value) => {
                t.held(format!("{header}: {v} on the replay"))
            }
            Some(v) => t.fail(format!(
                "the replay carries {header}: {v}, declared {value}"
            )),
            None => t.fail(format!("the replay lacks the declared {header}: {value}")),
        }
    }
    Ok(())
}

/// The same key with the `vary` field changed: the declared mismatch status,
/// or under `fingerprint: none` the first result replayed; then the first
/// body again, which must still replay.
pub async fn other_args(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("key_reuse_other_args", 0);
    let key = KeyUse::Key(c.key("key_reuse_other_args", 0));
    let body = c.body(&marker);
    let first = c.send(t, "first", &c.create_main(&body, &key)).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let changed = c.varied(&body);
    let second = c
        .send(
            t,
            &format!("same key, {} changed", c.contract.vary),
            &c.create_main(&changed, &key),
        )
        .await?;
    if c.contract.fingerprint == Fingerprint::None {
        judge_unfingerprinted(c, t, &first, &second, "other arguments");
    } else {
        judge_mismatch(c, t, &first, &second, "other arguments");
    }
    let third = c
        .send(t, "the first body again", &c.create_main(&body, &key))
        .await?;
    if c.is_success(third.status) && c.id_of(&third) != c.id_of(&first) {
        t.hard(format!(
            "the first request ran again under its own key ({}, the first answer's {}): a duplicate",
            c.id_of(&third).unwrap_or_default(),
            c.id_of(&first).unwrap_or_default()
        ));
    } else if !c.is_success(third.status) {
        t.fail(format!(
            "after the other arguments, the original request no longer replays (answered {})",
            third.status
        ));
    }
    let found = c.count(t, &marker, 1).await?;
    if found > 1 {
        t.note(format!(
            "{found} effects carry the marker: the changed request committed under a used key"
        ));
    }
    Ok(())
}

/// A body the fingerprint tells apart: the declared mismatch status.
fn judge_mismatch(c: &Ctx, t: &mut Trail, first: &Response, second: &Response, what: &str) {
    let declared = &c.contract.mismatch_status;
    if declared.contains(&second.status) && !c.is_success(second.status) {
        t.held(format!("{what} refused with {}", second.status));
    } else if c.is_success(second.status) && c.id_of(second) == c.id_of(first) {
        t.fail(format!(
            "{what} answered {} with the first request's object: the old result was replayed for a different request (declared {declared:?})",
            second.status
        ));
    } else if c.is_success(second.status) {
        t.fail(format!(
            "{what} answered {}: the request ran again under a used key (declared {declared:?})",
            second.status
        ));
    } else {
        t.fail(format!(
            "{what} answered {}, declared {declared:?}",
            second.status
        ));
    }
}

/// `fingerprint: none`: any body under a used key gets the first result.
fn judge_unfingerprinted(c: &Ctx, t: &mut Trail, first: &Response, second: &Response, what: &str) {
    if c.is_success(second.status) && c.id_of(second) == c.id_of(first) {
        t.held(format!(
            "{what} replayed the first result ({}), as declared (fingerprint: none)",
            second.status
        ));
    } else if c.is_success(second.status) {
        // Under no fingerprint the key alone names the work: a second object is a duplicate.
        t.hard(format!(
            "{what} answered {} with a new object: the work ran again under a used key, which declares one operation whatever the body (fingerprint: none)",
            second.status
        ));
    } else {
        t.fail(format!(
            "{what} answered {}, declared fingerprint: none (the first result replayed)",
            second.status
        ));
    }
}

/// The same arguments with the top-level fields in reverse order: a replay
/// under `canonical_json` and `none`, a mismatch under `raw_bytes`.
pub async fn reordered_args(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("key_reuse_reordered_args", 0);
    let key = KeyUse::Key(c.key("key_reuse_reordered_args", 0));
    let body = c.body(&marker);
    let first = c.send(t, "first", &c.create_main(&body, &key)).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let reversed: serde_json::Map<String, serde_json::Value> = body
        .iter()
        .rev()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let second = c
        .send(
            t,
            "same key, fields in reverse order",
            &c.create_main(&reversed, &key),
        )
        .await?;
    let found = c.count(t, &marker, 1).await?;
    c.judge_count(t, found, 1, "the same arguments reordered");
    match c.contract.fingerprint {
        Fingerprint::RawBytes => judge_mismatch(c, t, &first, &second, "the reordered bytes"),
        Fingerprint::CanonicalJson | Fingerprint::None => {
            if c.contract.mismatch_status.contains(&second.status) && !c.is_success(second.status) {
                t.fail(format!(
                    "the same arguments in another order were refused as a mismatch ({})",
                    second.status
                ));
            } else if !(c.is_success(second.status) && c.id_of(&second) == c.id_of(&first)) {
                t.fail(format!(
                    "the reordered request answered {} without the saved result",
                    second.status
                ));
            } else {
                t.held("reordered arguments replayed the saved result");
            }
        }
    }
    Ok(())
}

//! An error after the commit: the sandbox commits the request and then
//! answers with a server error, and the client retries with the same key, as
//! it must. Middlewares that release the key on a 5xx run the retry again: the
//! duplicate that field experience meets most, invisible to every probe whose
//! first request succeeds.

use super::ctx::{fill, Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::Response;

const PROBE: &str = "error_after_commit";

/// The declared failing request, then a retry with the same key and body;
/// the read-back decides: one effect holds, two are a duplicate.
pub async fn error_after_commit(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some(failing) = c.contract.error_after_commit.clone() else {
        t.skip("the contract names no error_after_commit request");
        return Ok(());
    };
    let marker = c.marker(PROBE, 0);
    let key = KeyUse::Key(c.key(PROBE, 0));
    let mut req = c.create(
        &failing.path,
        &fill(&failing.body, &marker),
        &key,
        &c.contract.primary,
    );
    // A declared header takes the place of the create's own of that name
    // (a credential that makes the sandbox fail, say).
    for (name, value) in &failing.headers {
        req.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        req.headers.push((name.clone(), value.clone()));
    }
    let first = c
        .send(t, "the request that fails after its commit", &req)
        .await?;
    if !failing.status.contains(&first.status) {
        return Err(Stop(format!(
            "the contract's error_after_commit request answered {}, not one of {:?}: nothing failed",
            first.status, failing.status
        )));
    }
    let committed = c.count(t, &marker, 1).await?;
    if committed == 0 {
        return Err(Stop(format!(
            "the request answered {} and the read-back sees no effect: it did not commit, so a retry proves nothing",
            first.status
        )));
    }
    let retry = c.send(t, "the retry, same key and body", &req).await?;
    judge_retry(c, t, first.status, &retry_of(c, &retry));
    let found = c.count(t, &marker, 1).await?;
    if found > 1 {
        t.hard(format!(
            "after a {} answered once the request had committed, the retry with the same key ran again: {found} effects (the key was released on the error)",
            first.status
        ));
    } else {
        t.held(format!(
            "the retry after the {} left one effect: the key held its committed work",
            first.status
        ));
    }
    Ok(())
}

/// How the retry was answered, in words for the evidence.
fn retry_of(c: &Ctx, r: &Response) -> (u16, &'static str) {
    let how = if c.is_success(r.status) {
        "a result"
    } else if c.contract.in_flight.refuses_with(r.status) {
        "the in-flight answer"
    } else if r.status >= 500 {
        "a server error"
    } else {
        "a refusal"
    };
    (r.status, how)
}

/// A declared saved error must come back as it was; anything else is recorded.
fn judge_retry(c: &Ctx, t: &mut Trail, first: u16, (status, how): &(u16, &str)) {
    if c.contract.errors_replayed.replays(first) && *status != first {
        t.fail(format!(
            "declared: a {first} is saved and replayed; the retry answered {status}"
        ));
    } else {
        t.note(format!("the retry was answered {status} ({how})"));
    }
}

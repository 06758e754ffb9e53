//! Concurrent duplicates behind a barrier, and requests that meet their first
//! attempt still in flight.

use std::sync::Arc;

use futures::future::join_all;

use super::ctx::{exchange, wait, Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::Response;
use crate::contract::{Fingerprint, InFlight};

/// N identical keyed requests: each is sent but for its last byte, then every
/// last byte goes out at once. Uses the slow path when the contract has one (a
/// longer window between the key check and the commit, where races live).
pub async fn concurrent_duplicates(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("concurrent_duplicates", 0);
    let key = KeyUse::Key(c.key("concurrent_duplicates", 0));
    let path = c
        .contract
        .slow_path
        .clone()
        .unwrap_or_else(|| c.contract.path.clone());
    let req = c.create(&path, &c.body(&marker), &key, &c.contract.primary);
    let n = c.contract.concurrency as usize;
    let primed = join_all((0..n).map(|_| c.client.prime(&req))).await;
    let mut ready = Vec::new();
    for p in primed {
        ready.push(p?);
    }
    t.note(format!(
        "{n} requests primed (all but the last byte sent), released together"
    ));
    let answers = join_all(ready.into_iter().map(|p| c.client.release(p))).await;
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    let mut ids = std::collections::BTreeSet::new();
    for (i, a) in answers.iter().enumerate() {
        let ev = exchange(&format!("duplicate {}", i + 1), &req, a);
        // Keep the evidence short: the first three, then a tally.
        if i < 3 {
            t.push(ev);
        }
        match a {
            Ok(r) => {
                *statuses.entry(r.status.to_string()).or_default() += 1;
                if c.is_success(r.status) {
                    if let Some(id) = c.id_of(r) {
                        ids.insert(id);
                    }
                }
                let declared = c.contract.in_flight.refuses_with(r.status);
                if !c.is_success(r.status) && !declared {
                    t.fail(format!("a duplicate answered {}, neither a result nor the declared in-flight answer", r.status));
                }
            }
            Err(e) => *statuses.entry(format!("error: {e}")).or_default() += 1,
        }
    }
    t.note(format!(
        "answers: {statuses:?}; distinct ids among successes: {}",
        ids.len()
    ));
    let found = c.count(t, &marker, 1).await?;
    c.judge_count(t, found, 1, &format!("{n} concurrent identical requests"));
    if ids.len() > 1 {
        t.hard(format!(
            "{} different objects were returned for one key",
            ids.len()
        ));
    }
    Ok(())
}

/// Attempts at arranging "the first request still in flight" before the
/// probe gives up without a verdict (each with its own key and marker).
const IN_FLIGHT_ATTEMPTS: u32 = 3;

/// The first request runs on the slow path; while it runs, the same key is
/// sent again with the same arguments and with other ones (together).
///
/// "In flight" needs the server to have claimed the first request's key and
/// not yet answered it; holding the first request's last byte back would keep
/// the key unclaimed, so only the server's own slowness can open the window.
/// What the client can do is notice when the window was missed (the first
/// answer was already back before the others left, or one of the others
/// overtook the first and owns the key) and try again with a fresh key rather
/// than report a verdict about a situation that never happened.
pub async fn in_flight(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some(slow) = c.contract.slow_path.clone() else {
        t.skip("the contract names no slow_path: nothing keeps a request in flight long enough to meet it");
        return Ok(());
    };
    for attempt in 0..IN_FLIGHT_ATTEMPTS {
        match in_flight_attempt(c, t, &slow, attempt).await? {
            Window::Met => return Ok(()),
            Window::Missed(why) => t.note(format!(
                "attempt {}: the first request was not in flight when the others arrived ({why}); trying again with a fresh key",
                attempt + 1
            )),
        }
    }
    Err(Stop(format!(
        "in {IN_FLIGHT_ATTEMPTS} attempts the first request was never met in flight: {slow} answers faster than in_flight_after ({}), or the machine is too loaded",
        c.contract.in_flight_after
    )))
}

/// Whether one attempt met the first request in flight.
enum Window {
    Met,
    Missed(String),
}

/// The three answers of one attempt, and whether the first was already back
/// before the others left.
struct Attempt {
    first: Response,
    same: Response,
    other: Response,
    answered_early: bool,
}

async fn in_flight_attempt(
    c: &Ctx,
    t: &mut Trail,
    slow: &str,
    attempt: u32,
) -> Result<Window, Stop> {
    let marker = c.marker("in_flight", attempt);
    let sent = send_attempt(c, t, slow, &marker, attempt).await?;
    if let Some(window) = missed_window(c, t, &marker, &sent).await? {
        return Ok(window);
    }
    judge_in_flight(c, t, &sent);
    let found = c.count(t, &marker, 1).await?;
    c.judge_count(
        t,
        found,
        1,
        "three requests under one key while the first ran",
    );
    Ok(Window::Met)
}

/// The first request on the slow path; after `in_flight_after`, the same key
/// with the same and with other arguments, together.
async fn send_attempt(
    c: &Ctx,
    t: &mut Trail,
    slow: &str,
    marker: &str,
    attempt: u32,
) -> Result<Attempt, Stop> {
    let key = KeyUse::Key(c.key("in_flight", attempt));
    let body = c.body(marker);
    let req = c.create(slow, &body, &key, &c.contract.primary);
    let other_req = c.create(slow, &c.varied(&body), &key, &c.contract.primary);
    let client = c.client.clone();
    let first_req = Arc::new(req.clone());
    let first = tokio::spawn({
        let r = first_req.clone();
        async move { client.send(&r).await }
    });
    wait(c.contract.in_flight_after.value).await;
    let answered_early = first.is_finished();
    let (same, other) = futures::join!(c.client.send(&req), c.client.send(&other_req));
    t.push(exchange(
        "same key and arguments, first in flight",
        &req,
        &same,
    ));
    t.push(exchange(
        "same key, other arguments, first in flight",
        &other_req,
        &other,
    ));
    let first = first
        .await
        .map_err(|e| Stop(format!("the first request's task failed: {e}")))?;
    t.push(exchange("the first request", &first_req, &first));
    // A request without an answer stops the probe; the others' failures come first.
    Ok(Attempt {
        same: same?,
        other: other?,
        first: first?,
        answered_early,
    })
}

/// When the window was missed: the first answer was back before the others
/// left, or one of the others overtook the first. A duplicate effect is judged
/// whatever the timing.
async fn missed_window(
    c: &Ctx,
    t: &mut Trail,
    marker: &str,
    sent: &Attempt,
) -> Result<Option<Window>, Stop> {
    let Attempt {
        first, same, other, ..
    } = sent;
    if !sent.answered_early && c.is_success(first.status) {
        return Ok(None);
    }
    let overtaken = c.is_success(same.status) || c.is_success(other.status);
    let found = c.count(t, marker, 1).await?;
    if found > 1 {
        c.judge_count(t, found, 1, "three requests under one key");
        return Ok(Some(Window::Met));
    }
    if sent.answered_early {
        return Ok(Some(Window::Missed(format!(
            "its answer ({}) was back after {} ms, before the others were sent",
            first.status,
            first.elapsed.as_millis()
        ))));
    }
    if overtaken {
        return Ok(Some(Window::Missed(format!(
            "a later request claimed the key first; the first answered {}",
            first.status
        ))));
    }
    Err(Stop(format!("the first request answered {}", first.status)))
}

/// The answers met in flight, against the declared in-flight behaviour.
/// Under `fingerprint: none` the other arguments are the same request.
fn judge_in_flight(c: &Ctx, t: &mut Trail, sent: &Attempt) {
    let Attempt {
        first, same, other, ..
    } = sent;
    let declared = &c.contract.in_flight;
    let replayed = |r: &Response| c.is_success(r.status) && c.id_of(r) == c.id_of(first);
    if declared.refuses_with(same.status) || (declared.may_wait() && replayed(same)) {
        t.held(format!("same arguments in flight: {}", same.status));
    } else if replayed(same) {
        t.fail(format!(
            "same arguments in flight answered {} with the result (it waited), declared {}",
            same.status,
            in_flight_words(declared)
        ));
    } else {
        t.fail(format!(
            "same arguments in flight answered {}, declared {}",
            same.status,
            in_flight_words(declared)
        ));
    }
    let mismatch = &c.contract.mismatch_status;
    let unfingerprinted = c.contract.fingerprint == Fingerprint::None;
    let other_ok = declared.refuses_with(other.status)
        || (!unfingerprinted && mismatch.contains(&other.status))
        || (unfingerprinted && declared.may_wait() && replayed(other));
    if other_ok {
        t.held(format!("other arguments in flight: {}", other.status));
    } else {
        t.fail(format!(
            "other arguments in flight answered {}, declared in-flight {}{}",
            other.status,
            in_flight_words(declared),
            if unfingerprinted {
                " (fingerprint: none, so the same request)".to_owned()
            } else {
                format!(" or mismatch {mismatch:?}")
            }
        ));
    }
}

/// The declared in-flight behaviour, in the contract's words.
fn in_flight_words(declared: &InFlight) -> String {
    match declared {
        InFlight::Waits => "waits (the first result, once it is back)".to_owned(),
        InFlight::Status(codes) => format!("{codes:?}"),
        InFlight::WaitsThen(up_to, codes) => {
            format!("waits up to {up_to} for the first result, then {codes:?}")
        }
    }
}

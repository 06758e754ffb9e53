//! Concurrent duplicates behind a barrier, and requests that meet their first
//! attempt still in flight.

use std::sync::Arc;

use futures::future::join_all;

use super::ctx::{exchange, wait, Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::Response;
use crate::contract::InFlight;

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
                let declared = match &c.contract.in_flight {
                    InFlight::Status(codes) => codes.contains(&r.status),
                    InFlight::Waits => false,
                };
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
        humantime::format_duration(c.contract.in_flight_after)
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
    wait(c.contract.in_flight_after).await;
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
fn judge_in_flight(c: &Ctx, t: &mut Trail, sent: &Attempt) {
    let Attempt {
        first, same, other, ..
    } = sent;
    let mismatch = &c.contract.mismatch_status;
    match &c.contract.in_flight {
        InFlight::Status(codes) => {
            if codes.contains(&same.status) {
                t.held(format!("same arguments in flight: {}", same.status));
            } else if c.is_success(same.status) && c.id_of(same) == c.id_of(first) {
                t.fail(format!("same arguments in flight answered {} with the result (it waited), declared {codes:?}", same.status));
            } else {
                t.fail(format!(
                    "same arguments in flight answered {}, declared {codes:?}",
                    same.status
                ));
            }
            if codes.contains(&other.status) || mismatch.contains(&other.status) {
                t.held(format!("other arguments in flight: {}", other.status));
            } else {
                t.fail(format!(
                    "other arguments in flight answered {}, declared in-flight {codes:?} or mismatch {mismatch:?}",
                    other.status
                ));
            }
        }
        InFlight::Waits => {
            if !(c.is_success(same.status) && c.id_of(same) == c.id_of(first)) {
                t.fail(format!("same arguments in flight answered {}, declared: waits for the first and replays it", same.status));
            }
            if !mismatch.contains(&other.status) {
                t.fail(format!(
                    "other arguments in flight answered {}, declared mismatch {mismatch:?}",
                    other.status
                ));
            }
        }
    }
}

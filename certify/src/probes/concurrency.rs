//! Concurrent duplicates behind a barrier, and requests that meet their first
//! attempt still in flight.

use std::sync::Arc;

use futures::future::join_all;

use super::{wait, Ctx, KeyUse, Stop, Trail};
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
        let ev = super::exchange(&format!("duplicate {}", i + 1), &req, a);
        // Keep the evidence short: the first three, then a tally.
        if i < 3 {
            t.evidence.push(ev);
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

async fn in_flight_attempt(
    c: &Ctx,
    t: &mut Trail,
    slow: &str,
    attempt: u32,
) -> Result<Window, Stop> {
    let marker = c.marker("in_flight", attempt);
    let key = KeyUse::Key(c.key("in_flight", attempt));
    let body = c.body(&marker);
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
    t.evidence.push(super::exchange(
        "same key and arguments, first in flight",
        &req,
        &same,
    ));
    t.evidence.push(super::exchange(
        "same key, other arguments, first in flight",
        &other_req,
        &other,
    ));
    let first = first
        .await
        .map_err(|e| Stop(format!("the first request's task failed: {e}")))?;
    t.evidence
        .push(super::exchange("the first request", &first_req, &first));
    let (same, other, first) = (same?, other?, first?);
    if answered_early {
        // Effects are still counted: a duplicate is a duplicate whatever the timing.
        let found = c.count(t, &marker, 1).await?;
        if found > 1 {
            c.judge_count(t, found, 1, "three requests under one key");
            return Ok(Window::Met);
        }
        return Ok(Window::Missed(format!(
            "its answer ({}) was back after {} ms, before the others were sent",
            first.status,
            first.elapsed.as_millis()
        )));
    }
    if !c.is_success(first.status) {
        let overtaken = c.is_success(same.status) || c.is_success(other.status);
        let found = c.count(t, &marker, 1).await?;
        if found > 1 {
            c.judge_count(t, found, 1, "three requests under one key");
            return Ok(Window::Met);
        }
        if overtaken {
            return Ok(Window::Missed(format!(
                "a later request claimed the key first; the first answered {}",
                first.status
            )));
        }
        return Err(Stop(format!("the first request answered {}", first.status)));
    }
    match &c.contract.in_flight {
        InFlight::Status(codes) => {
            if codes.contains(&same.status) {
                t.held(format!("same arguments in flight: {}", same.status));
            } else if c.is_success(same.status) && c.id_of(&same) == c.id_of(&first) {
                t.fail(format!("same arguments in flight answered {} with the result (it waited), declared {codes:?}", same.status));
            } else {
                t.fail(format!(
                    "same arguments in flight answered {}, declared {codes:?}",
                    same.status
                ));
            }
            if codes.contains(&other.status) || c.contract.mismatch_status.contains(&other.status) {
                t.held(format!("other arguments in flight: {}", other.status));
            } else {
                t.fail(format!(
                    "other arguments in flight answered {}, declared in-flight {codes:?} or mismatch {:?}",
                    other.status, c.contract.mismatch_status
                ));
            }
        }
        InFlight::Waits => {
            if !(c.is_success(same.status) && c.id_of(&same) == c.id_of(&first)) {
                t.fail(format!("same arguments in flight answered {}, declared: waits for the first and replays it", same.status));
            }
            if !c.contract.mismatch_status.contains(&other.status) {
                t.fail(format!(
                    "other arguments in flight answered {}, declared mismatch {:?}",
                    other.status, c.contract.mismatch_status
                ));
            }
        }
    }
    let found = c.count(t, &marker, 1).await?;
    c.judge_count(
        t,
        found,
        1,
        "three requests under one key while the first ran",
    );
    Ok(Window::Met)
}

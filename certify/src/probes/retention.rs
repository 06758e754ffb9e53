//! Retention: the key still replays after a sampled wait, and (when the
//! provider's clock can be moved) just before the declared retention ends.
//! What happens after it ends is recorded, not judged: a declared retention is
//! a minimum.

use super::ctx::{wait, Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::{Request, Response};
use crate::contract::PathSpec;

/// One create, replays over time.
pub async fn retention(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let marker = c.marker("retention", 0);
    let key = KeyUse::Key(c.key("retention", 0));
    let req = c.create_main(&c.body(&marker), &key);
    let first = c.send(t, "first", &req).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let sample = &c.contract.retention_sample;
    wait(sample.value).await;
    let label = format!("replay after {sample}");
    let again = c.send(t, &label, &req).await?;
    check_replay(c, t, &first, &again, &label);
    let declared = &c.contract.retention;
    let after = if let Some(clock) = &c.contract.clock {
        by_the_clock(c, t, clock, &req, &first, &marker).await?
    } else if c.contract.wait_out_retention {
        within_retention(c, t, &marker).await?;
        wait(declared.value).await;
        c.send(t, "the same request after waiting the retention out", &req)
            .await?
    } else {
        within_retention(c, t, &marker).await?;
        t.note(format!(
            "declared retention {declared} sampled at {sample}, not waited out (set limits.wait_out_retention)"
        ));
        return Ok(());
    };
    // After the retention the key may be forgotten: then one more effect is
    // the new work it did, and only a third would be a duplicate.
    let ran_again = c.is_success(after.status) && c.id_of(&after) != c.id_of(&first);
    let replayed = c.is_success(after.status) && !ran_again;
    t.note(format!(
        "after the declared retention the request answered {}: the key {} (not judged: a retention is a minimum)",
        after.status,
        match (ran_again, replayed) {
            (true, _) => "is forgotten and the request ran again",
            (false, true) => "still replays",
            (false, false) => "answered no result",
        }
    ));
    let expected = if ran_again { 2 } else { 1 };
    let found = c.count(t, &marker, expected).await?;
    c.judge_count(
        t,
        found,
        expected,
        "the same key within and after the retention",
    );
    Ok(())
}

/// Every request so far was within the declared retention: one effect, and
/// any more is a duplicate.
async fn within_retention(c: &Ctx, t: &mut Trail, marker: &str) -> Result<(), Stop> {
    let found = c.count(t, marker, 1).await?;
    c.judge_count(
        t,
        found,
        1,
        "one key replayed within the declared retention",
    );
    Ok(())
}

/// With the provider's clock: a replay just before the declared retention
/// ends, then the same request after it (recorded, not judged).
async fn by_the_clock(
    c: &Ctx,
    t: &mut Trail,
    clock: &PathSpec,
    req: &Request,
    first: &Response,
    marker: &str,
) -> Result<Response, Stop> {
    let declared = c.contract.retention.value;
    let sample = c.contract.retention_sample.value;
    let margin = std::time::Duration::from_secs(2).min(declared / 2);
    let advance = |by: std::time::Duration| Request {
        method: "POST".to_owned(),
        path: clock.path.clone(),
        headers: {
            let mut h = super::basic::auth(c, &c.contract.primary, clock.auth);
            h.push(("Content-Type".to_owned(), "application/json".to_owned()));
            h
        },
        body: serde_json::json!({"advance_ms": u64::try_from(by.as_millis()).unwrap_or(u64::MAX)})
            .to_string()
            .into_bytes(),
    };
    let moved = c
        .send(
            t,
            "provider clock moved to just before the retention ends",
            &advance(declared.saturating_sub(margin + sample)),
        )
        .await?;
    if !(200..300).contains(&moved.status) {
        return Err(Stop(format!(
            "the clock endpoint answered {}",
            moved.status
        )));
    }
    let label = format!(
        "replay {} before the declared retention ends",
        humantime::format_duration(margin)
    );
    let late = c.send(t, &label, req).await?;
    check_replay(c, t, first, &late, &label);
    within_retention(c, t, marker).await?;
    c.send(
        t,
        "provider clock moved past the retention",
        &advance(margin * 2),
    )
    .await?;
    c.send(t, "the same request after the retention", req).await
}

fn check_replay(c: &Ctx, t: &mut Trail, first: &Response, again: &Response, label: &str) {
    if c.is_success(again.status) && c.id_of(again) == c.id_of(first) {
        t.held(format!("{label}: replayed"));
    } else {
        t.fail(format!(
            "{label}: answered {} without the saved result, within the declared retention",
            again.status
        ));
    }
}

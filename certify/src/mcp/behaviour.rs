//! The behaviour findings, which need more than one credential or the
//! provider's clock: a not-yours id and an expired id must answer exactly like
//! an unknown one, or retrieval becomes an oracle of what exists; and another
//! tenant's list must not show the primary's operations (`their_list`).

use std::time::Duration;

use serde_json::{json, Value};

use super::book::FindingId;
use super::session::{Session, Wire};
use super::state::{compare, unknown_like, Likeness, Run};
use super::their_list;
use crate::client::{ClientError, Request};
use crate::verdict::Evidence;

/// What the second tenant sees: `not_yours_like_unknown`, and its recent
/// list (`list_is_per_tenant`, and the empty case when the primary's list is
/// not empty). `target`: the primary's id to ask about, or why there is
/// none; `own_ids`: every id the primary's lists and paid call showed.
pub(super) async fn not_yours(
    run: &mut Run<'_>,
    wire: &Wire,
    target: Result<&str, String>,
    needs_empty_from_second: bool,
    own_ids: &[String],
) {
    let Some(second) = run.contract.second_tenant.clone() else {
        let why = "no second tenant's credential (auth.second_tenant, or LOSTREPLY_MCP_SECOND_CREDENTIAL with --mcp)";
        run.book.t(FindingId::NotYoursLikeUnknown).skip(why);
        run.book.t(FindingId::ListIsPerTenant).skip(why);
        if needs_empty_from_second {
            run.book.t(FindingId::EmptyListIsNormal).skip(format!(
                "the primary credential's list is not empty and {why}: the empty case cannot be seen"
            ));
        }
        return;
    };
    let mut b = Session::new(wire, Some(second.clone()));
    let (result, evidence) = b.initialize("initialize (second tenant)").await;
    let ok = matches!(&result, Ok(a) if a.status == 200) && b.revision().is_some();
    if !ok {
        let why = match &result {
            Err(e) => format!("the second tenant's initialize: {e}"),
            Ok(a) => format!("the second tenant's initialize answered HTTP {}", a.status),
        };
        for e in evidence {
            run.book.t(FindingId::NotYoursLikeUnknown).push(e);
        }
        run.book.stop(
            &[FindingId::NotYoursLikeUnknown, FindingId::ListIsPerTenant],
            &why,
        );
        if needs_empty_from_second {
            run.book.stop(&[FindingId::EmptyListIsNormal], &why);
        }
        return;
    }
    their_list::judge(run, &mut b, &second, own_ids, needs_empty_from_second).await;
    match target {
        Ok(id) => ask_as_second(run, &mut b, &second, id).await,
        Err(why) => run.book.t(FindingId::NotYoursLikeUnknown).skip(why),
    }
}

/// The second tenant asks for the primary's id and for an unknown id of the
/// same shape, with the same JSON-RPC id: the answers must not differ.
async fn ask_as_second(run: &mut Run<'_>, b: &mut Session<'_>, second: &str, id: &str) {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let unknown = unknown_like(id);
    let same_rpc_id = json!("certify-not-yours");
    let theirs = run.id_arguments(id, Some(second));
    let nobody = run.id_arguments(&unknown, Some(second));
    let x = run
        .retrieve(
            b,
            FindingId::NotYoursLikeUnknown,
            "the primary's id, asked by the second tenant",
            &spec.get,
            &theirs,
            Some(same_rpc_id.clone()),
        )
        .await;
    let y = run
        .retrieve(
            b,
            FindingId::NotYoursLikeUnknown,
            "an unknown id of the same shape, asked by the second tenant",
            &spec.get,
            &nobody,
            Some(same_rpc_id),
        )
        .await;
    let (Some(x), Some(y)) = (x, y) else {
        return;
    };
    let t = run.book.t(FindingId::NotYoursLikeUnknown);
    match compare(&x, id, &y, &unknown) {
        Likeness::Identical => t.held(
            "not yours and unknown answer alike, byte for byte (same JSON-RPC id on both)",
        ),
        Likeness::AlikeButTheEcho => t.held(format!(
            "not yours and unknown answer alike, byte for byte once each answer's echo of the id it was asked about ({id}, {unknown}) is masked: the echo tells the caller only what it sent"
        )),
        Likeness::Different => t.hard(format!(
            "not yours (HTTP {}) and unknown (HTTP {}) answer differently, even with each one's own id masked: another tenant learns that {id} exists",
            x.status, y.status
        )),
    }
}

/// `expired_like_unknown`: only where the contract names the provider's
/// clock. `target`: the id to let expire, or why there is none.
pub(super) async fn expired(
    run: &mut Run<'_>,
    wire: &Wire,
    a: &mut Session<'_>,
    target: Result<&str, String>,
) {
    let id = match target {
        Ok(id) => id,
        Err(why) => {
            run.book.t(FindingId::ExpiredLikeUnknown).skip(why);
            return;
        }
    };
    let Some(clock) = run.contract.clock.clone() else {
        run.book.t(FindingId::ExpiredLikeUnknown).skip(format!(
            "a live server's ids expire after the declared retention{}: certification does not wait that long (the contract names no clock control)",
            run.retention.map(|r| format!(" ({})", humantime::format_duration(r))).unwrap_or_default()
        ));
        return;
    };
    let Some(retention) = run.retention else {
        run.book
            .t(FindingId::ExpiredLikeUnknown)
            .skip("no retention declared: nothing says when an id expires");
        return;
    };
    if move_clock_past(run, wire, &clock, retention).await {
        ask_after_expiry(run, a, id).await;
    }
}

/// Moves the provider's clock one second past the retention; whether it moved
/// (if not, `expired_like_unknown` stops with the reason).
async fn move_clock_past(run: &mut Run<'_>, wire: &Wire, clock: &str, retention: Duration) -> bool {
    let past = retention + Duration::from_secs(1);
    let body = json!({"advance_ms": u64::try_from(past.as_millis()).unwrap_or(u64::MAX)});
    let req = Request {
        method: "POST".to_owned(),
        path: clock.to_owned(),
        headers: vec![("Content-Type".to_owned(), "application/json".to_owned())],
        body: body.to_string().into_bytes(),
    };
    let moved: Result<_, ClientError> = wire.client().send(&req).await;
    let outcome = match &moved {
        Ok(r) => format!("{}", r.status),
        Err(e) => format!("no answer: {e}"),
    };
    run.book
        .t(FindingId::ExpiredLikeUnknown)
        .push(Evidence::Exchange {
            label: format!("move the provider's clock {} past the retention", "1s"),
            request: format!("POST {clock} {body}"),
            key: None,
            outcome,
            body: String::new(),
        });
    let why = match moved {
        Ok(r) if (200..300).contains(&r.status) => return true,
        Ok(r) => format!("the clock control answered HTTP {}", r.status),
        Err(e) => format!("the clock control: {e}"),
    };
    run.book.stop(&[FindingId::ExpiredLikeUnknown], &why);
    false
}

/// The primary asks for its expired id and for an unknown id of the same
/// shape, with the same JSON-RPC id: the answers must not differ.
async fn ask_after_expiry(run: &mut Run<'_>, a: &mut Session<'_>, id: &str) {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let primary = run.contract.primary.clone();
    let unknown = unknown_like(id);
    let same_rpc_id: Value = json!("certify-expired");
    let expired_args = run.id_arguments(id, primary.as_deref());
    let unknown_args = run.id_arguments(&unknown, primary.as_deref());
    let x = run
        .retrieve(
            a,
            FindingId::ExpiredLikeUnknown,
            "the call's id, past the retention",
            &spec.get,
            &expired_args,
            Some(same_rpc_id.clone()),
        )
        .await;
    let y = run
        .retrieve(
            a,
            FindingId::ExpiredLikeUnknown,
            "an unknown id of the same shape",
            &spec.get,
            &unknown_args,
            Some(same_rpc_id),
        )
        .await;
    let (Some(x), Some(y)) = (x, y) else {
        return;
    };
    let t = run.book.t(FindingId::ExpiredLikeUnknown);
    match compare(&x, id, &y, &unknown) {
        Likeness::Identical => t.held("expired and unknown answer alike, byte for byte"),
        Likeness::AlikeButTheEcho => t.held(format!(
            "expired and unknown answer alike, byte for byte once each answer's echo of the id it was asked about ({id}, {unknown}) is masked"
        )),
        Likeness::Different => t.fail(format!(
            "{id} past the retention answers other than an unknown id (HTTP {} vs {}), even with each one's own id masked",
            x.status, y.status
        )),
    }
}

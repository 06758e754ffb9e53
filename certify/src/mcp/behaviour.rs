//! The behaviour findings, which need more than one credential or the
//! provider's clock: a not-yours id and an expired id must answer exactly like
//! an unknown one, or retrieval becomes an oracle of what exists.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::book::FindingId;
use super::session::{Session, Wire};
use super::state::{alike, listed_ids, unknown_like, Run};
use crate::client::{ClientError, Request};
use crate::verdict::Evidence;

/// `not_yours_like_unknown`, and the empty list seen through the second
/// tenant when the primary's is not empty.
pub(super) async fn not_yours(
    run: &mut Run<'_>,
    wire: &Wire,
    target: Option<&str>,
    needs_empty_from_second: bool,
) {
    let Some(second) = run.contract.second_tenant.clone() else {
        let why = "no second tenant's credential (auth.second_tenant, or LOSTREPLY_MCP_SECOND_CREDENTIAL with --mcp)";
        run.book.t(FindingId::NotYoursLikeUnknown).skip(why);
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
        run.book.stop(&[FindingId::NotYoursLikeUnknown], &why);
        if needs_empty_from_second {
            run.book.stop(&[FindingId::EmptyListIsNormal], &why);
        }
        return;
    }
    if needs_empty_from_second {
        empty_list_of_second(run, &mut b, &second).await;
    }
    match target {
        Some(id) => ask_as_second(run, &mut b, &second, id).await,
        None => run
            .book
            .t(FindingId::NotYoursLikeUnknown)
            .skip("no id of the primary's to ask about"),
    }
}

/// `empty_list_is_normal` through the second tenant, whose list may be empty
/// where the primary's is not.
async fn empty_list_of_second(run: &mut Run<'_>, b: &mut Session<'_>, second: &str) {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let args = run.arguments(Map::new(), Some(second));
    let Some(l) = run
        .retrieve(
            b,
            FindingId::EmptyListIsNormal,
            "list recent (second tenant)",
            &spec.list,
            &args,
            None,
        )
        .await
    else {
        return;
    };
    let t = run.book.t(FindingId::EmptyListIsNormal);
    match (l.is_tool_error(), listed_ids(&l, spec)) {
        (true, _) => t.fail(format!(
            "{} answers an error for the second tenant (status {:?})",
            spec.list,
            l.tool_status()
        )),
        (false, Some(ids)) if ids.is_empty() => {
            t.held("the second tenant's empty list is a normal result")
        }
        (false, _) => {
            t.skip("neither credential's recent list is empty: the empty case cannot be seen")
        }
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
    if alike(&x, &y) {
        t.held("not yours and unknown answer alike, byte for byte (same JSON-RPC id on both)");
    } else {
        t.hard(format!(
            "not yours (HTTP {}) and unknown (HTTP {}) answer differently: another tenant learns that {id} exists",
            x.status, y.status
        ));
    }
}

/// `expired_like_unknown`: only where the contract names the provider's clock.
pub(super) async fn expired(
    run: &mut Run<'_>,
    wire: &Wire,
    a: &mut Session<'_>,
    target: Option<&str>,
) {
    let Some(id) = target else {
        run.book
            .t(FindingId::ExpiredLikeUnknown)
            .skip("no id to let expire");
        return;
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
    if alike(&x, &y) {
        t.held("expired and unknown answer alike, byte for byte");
    } else {
        t.fail(format!(
            "{id} past the retention answers other than an unknown id (HTTP {} vs {})",
            x.status, y.status
        ));
    }
}

//! The behaviour findings, which need more than one credential or the
//! provider's clock: a not-yours id and an expired id must answer exactly like
//! an unknown one, or retrieval becomes an oracle of what exists.

use std::time::Duration;

use serde_json::{json, Map};

use super::run::{alike, listed_ids, unknown_like, Run};
use super::session::{Session, Wire};
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
    let contract = run.contract;
    let spec = &contract.retrieval;
    let target = target.map(str::to_owned);
    let unknown = target.as_deref().map(unknown_like);
    match &contract.second_tenant {
        None => {
            let why = "no second tenant's credential (auth.second_tenant, or LOSTREPLY_MCP_SECOND_CREDENTIAL with --mcp)";
            run.book.t("not_yours_like_unknown").skip(why);
            if needs_empty_from_second {
                run.book.t("empty_list_is_normal").skip(format!(
                    "the primary credential's list is not empty and {why}: the empty case cannot be seen"
                ));
            }
        }
        Some(second) => {
            let mut b = Session::new(wire, Some(second.clone()));
            let (result, evidence) = b.initialize("initialize (second tenant)").await;
            let ok = matches!(&result, Ok(a) if a.status == 200) && b.revision().is_some();
            if !ok {
                let why = match &result {
                    Err(e) => format!("the second tenant's initialize: {e}"),
                    Ok(a) => format!("the second tenant's initialize answered HTTP {}", a.status),
                };
                for e in evidence {
                    run.book.t("not_yours_like_unknown").push(e);
                }
                run.book.stop(&["not_yours_like_unknown"], &why);
                if needs_empty_from_second {
                    run.book.stop(&["empty_list_is_normal"], &why);
                }
            } else {
                if needs_empty_from_second {
                    let args = run.arguments(Map::new(), Some(second));
                    if let Some(l) = run
                        .retrieve(
                            &mut b,
                            "empty_list_is_normal",
                            "list recent (second tenant)",
                            &spec.list,
                            &args,
                            None,
                        )
                        .await
                    {
                        match (l.is_tool_error(), listed_ids(&l, spec)) {
                            (true, _) => run.book.t("empty_list_is_normal").fail(format!(
                                "{} answers an error for the second tenant (status {:?})",
                                spec.list,
                                l.tool_status()
                            )),
                            (false, Some(ids)) if ids.is_empty() => run
                                .book
                                .t("empty_list_is_normal")
                                .held("the second tenant's empty list is a normal result"),
                            (false, _) => run.book.t("empty_list_is_normal").skip(
                                "neither credential's recent list is empty: the empty case cannot be seen",
                            ),
                        }
                    }
                }
                match (&target, &unknown) {
                    (Some(id), Some(unknown)) => {
                        let same_rpc_id = json!("certify-not-yours");
                        let theirs = run.id_arguments(id, Some(second));
                        let nobody = run.id_arguments(unknown, Some(second));
                        let x = run
                            .retrieve(
                                &mut b,
                                "not_yours_like_unknown",
                                "the primary's id, asked by the second tenant",
                                &spec.get,
                                &theirs,
                                Some(same_rpc_id.clone()),
                            )
                            .await;
                        let y = run
                            .retrieve(
                                &mut b,
                                "not_yours_like_unknown",
                                "an unknown id of the same shape, asked by the second tenant",
                                &spec.get,
                                &nobody,
                                Some(same_rpc_id),
                            )
                            .await;
                        if let (Some(x), Some(y)) = (x, y) {
                            if alike(&x, &y) {
                                run.book.t("not_yours_like_unknown").held(
                                    "not yours and unknown answer alike, byte for byte (same JSON-RPC id on both)",
                                );
                            } else {
                                run.book.t("not_yours_like_unknown").hard(format!(
                                    "not yours (HTTP {}) and unknown (HTTP {}) answer differently: another tenant learns that {id} exists",
                                    x.status, y.status
                                ));
                            }
                        }
                    }
                    _ => run
                        .book
                        .t("not_yours_like_unknown")
                        .skip("no id of the primary's to ask about"),
                }
            }
        }
    }
}

/// `expired_like_unknown`: only where the contract names the provider's clock.
pub(super) async fn expired(
    run: &mut Run<'_>,
    wire: &Wire,
    a: &mut Session<'_>,
    target: Option<&str>,
) {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let primary = contract.primary.clone();
    let unknown = target.map(unknown_like);
    let (Some(id), Some(unknown)) = (target.map(str::to_owned), unknown) else {
        run.book
            .t("expired_like_unknown")
            .skip("no id to let expire");
        return;
    };
    let Some(clock) = &contract.clock else {
        run.book.t("expired_like_unknown").skip(format!(
            "a live server's ids expire after the declared retention{}: certification does not wait that long (the contract names no clock control)",
            run.retention.map(|r| format!(" ({})", humantime::format_duration(r))).unwrap_or_default()
        ));
        return;
    };
    let Some(retention) = run.retention else {
        run.book
            .t("expired_like_unknown")
            .skip("no retention declared: nothing says when an id expires");
        return;
    };
    let past = retention + Duration::from_secs(1);
    let body = json!({"advance_ms": u64::try_from(past.as_millis()).unwrap_or(u64::MAX)});
    let req = Request {
        method: "POST".to_owned(),
        path: clock.clone(),
        headers: vec![("Content-Type".to_owned(), "application/json".to_owned())],
        body: body.to_string().into_bytes(),
    };
    let moved: Result<_, ClientError> = wire.client().send(&req).await;
    let outcome = match &moved {
        Ok(r) => format!("{}", r.status),
        Err(e) => format!("no answer: {e}"),
    };
    run.book.t("expired_like_unknown").push(Evidence::Exchange {
        label: format!("move the provider's clock {} past the retention", "1s"),
        request: format!("POST {clock} {body}"),
        key: None,
        outcome,
        body: String::new(),
    });
    match moved {
        Ok(r) if (200..300).contains(&r.status) => {}
        Ok(r) => {
            run.book.stop(
                &["expired_like_unknown"],
                &format!("the clock control answered HTTP {}", r.status),
            );
            return;
        }
        Err(e) => {
            run.book.stop(
                &["expired_like_unknown"],
                &format!("the clock control: {e}"),
            );
            return;
        }
    }
    let same_rpc_id = json!("certify-expired");
    let expired_args = run.id_arguments(&id, primary.as_deref());
    let unknown_args = run.id_arguments(&unknown, primary.as_deref());
    let x = run
        .retrieve(
            a,
            "expired_like_unknown",
            "the call's id, past the retention",
            &spec.get,
            &expired_args,
            Some(same_rpc_id.clone()),
        )
        .await;
    let y = run
        .retrieve(
            a,
            "expired_like_unknown",
            "an unknown id of the same shape",
            &spec.get,
            &unknown_args,
            Some(same_rpc_id),
        )
        .await;
    if let (Some(x), Some(y)) = (x, y) {
        if alike(&x, &y) {
            run.book
                .t("expired_like_unknown")
                .held("expired and unknown answer alike, byte for byte");
        } else {
            run.book.t("expired_like_unknown").fail(format!(
                "{id} past the retention answers other than an unknown id (HTTP {} vs {})",
                x.status, y.status
            ));
        }
    }
}

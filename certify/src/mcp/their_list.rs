//! What another tenant's recent list shows. One list answers two findings:
//! `list_is_per_tenant`, since a list that shows one tenant another's
//! operations tells it what the other did (whatever `get_operation` answers
//! for their ids), and the empty case of `empty_list_is_normal` when the
//! primary's own list is not empty.
//!
//! Operations belong to one tenant, so on a well-scoped server the two
//! tenants' lists never share an id: an id in both is a leak one way or the
//! other, whichever tenant it belongs to.

use serde_json::Map;

use super::book::FindingId;
use super::session::{Answer, Session};
use super::state::{listed_ids, Run};

/// Lists as the second tenant and judges both findings. `own_ids`: the
/// primary's ids (its lists and its paid call); `needs_empty`: the primary's
/// list was not empty, so the empty case is judged here.
pub(super) async fn judge(
    run: &mut Run<'_>,
    b: &mut Session<'_>,
    second: &str,
    own_ids: &[String],
    needs_empty: bool,
) {
    if own_ids.is_empty() {
        run.book.t(FindingId::ListIsPerTenant).skip(
            "the primary has no operation to look for: its list is empty and no paid call was made",
        );
    }
    let findings: Vec<FindingId> = [
        (!own_ids.is_empty()).then_some(FindingId::ListIsPerTenant),
        needs_empty.then_some(FindingId::EmptyListIsNormal),
    ]
    .into_iter()
    .flatten()
    .collect();
    if findings.is_empty() {
        return;
    }
    let contract = run.contract;
    let args = run.arguments(Map::new(), Some(second));
    let Some(list) = run
        .retrieve_for(
            b,
            &findings,
            "list recent (second tenant)",
            &contract.retrieval.list,
            &args,
            None,
        )
        .await
    else {
        return;
    };
    if needs_empty {
        judge_empty(run, &list);
    }
    if !own_ids.is_empty() {
        judge_shown(run, &list, own_ids);
    }
}

/// `empty_list_is_normal` through the second tenant, whose list may be empty
/// where the primary's is not.
fn judge_empty(run: &mut Run<'_>, list: &Answer) {
    let spec = &run.contract.retrieval;
    let ids = listed_ids(list, spec);
    let t = run.book.t(FindingId::EmptyListIsNormal);
    match (list.is_tool_error(), ids) {
        (true, _) => t.fail(format!(
            "{} answers an error for the second tenant (status {:?})",
            spec.list,
            list.tool_status()
        )),
        (false, Some(ids)) if ids.is_empty() => {
            t.held("the second tenant's empty list is a normal result")
        }
        (false, _) => {
            t.skip("neither credential's recent list is empty: the empty case cannot be seen")
        }
    }
}

/// `list_is_per_tenant`: none of the primary's ids in the second tenant's list.
fn judge_shown(run: &mut Run<'_>, list: &Answer, own_ids: &[String]) {
    let spec = &run.contract.retrieval;
    let ids = listed_ids(list, spec);
    let t = run.book.t(FindingId::ListIsPerTenant);
    t.note(format!("the primary's operations: {}", own_ids.join(", ")));
    if list.is_tool_error() {
        t.held(format!(
            "the second tenant's list answers an error (status {}), which shows none of the primary's operations",
            list.tool_status().map_or("none".to_owned(), |s| s.to_string())
        ));
        return;
    }
    let Some(ids) = ids else {
        let why = format!(
            "no array at {} in the second tenant's list (set retrieval.items_at)",
            spec.items_at
        );
        run.book.stop(&[FindingId::ListIsPerTenant], &why);
        return;
    };
    let shown: Vec<&str> = ids
        .iter()
        .filter(|id| own_ids.contains(id))
        .map(String::as_str)
        .collect();
    if shown.is_empty() {
        t.held(format!(
            "the second tenant's list ({} ids) shows none of the primary's {} operations",
            ids.len(),
            own_ids.len()
        ));
    } else {
        t.hard(format!(
            "both tenants' recent lists show {}: one tenant's list shows another's operations, so it learns what the other did",
            shown.join(", ")
        ));
    }
}

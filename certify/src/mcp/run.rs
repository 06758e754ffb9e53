//! One MCP certification, in the order an engineer would check by hand:
//! `initialize`, `tools/list` (the design rules), the pre-flight of mcp.md
//! (list recent with no arguments, the one paid call when allowed, retrieve
//! and compare), then the behaviour with a second tenant (not yours) and the
//! provider's clock (expired).
//!
//! `STEPS` is that order, walked by one loop. Each finding keeps its own
//! trail; a step that fails stops only the findings that need it, with the
//! reason, and ends the walk when nothing after it could conclude.

use std::time::Instant;

use serde_json::{json, Map, Value};

use super::behaviour;
use super::book::{FindingId, AFTER_PRE_FLIGHT, DESIGN, RETRIEVAL};
use super::contract::{McpContract, PaidCall, RetrievalSpec};
use super::rules::{self, Tools};
use super::session::{Answer, Refused, Session, Wire, REVISIONS};
use super::state::{fill, id_at, listed_ids, Run};

use crate::client::ClientError;
use crate::probes::Trail;
use crate::report::ProbeResult;
use crate::verdict::Evidence;

pub use super::book::{names, Finding, FINDINGS};

/// Runs every finding against the contract's server.
pub async fn run(contract: &McpContract, wire: &Wire, seed: u64) -> Vec<ProbeResult> {
    let started = Instant::now();
    let mut run = Run::new(contract);
    let mut progress = Progress {
        wire,
        seed,
        primary: Session::new(wire, contract.primary.clone()),
        paid: None,
        list_listed: false,
        get_listed: false,
        first_ids: None,
        own_ids: Vec::new(),
        needs_empty_from_second: false,
        original: None,
        target: None,
    };
    for step in STEPS {
        if step.take(&mut run, &mut progress).await == Flow::Halt {
            break;
        }
    }
    run.book
        .finish(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX))
}

/// The steps of a run, in order.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// `initialize` on a supported revision.
    Initialize,
    /// `tools/list`, and the design rules read from it.
    DesignRules,
    /// List recent with no arguments, then read the list the others use.
    PreFlight,
    /// The one paid call, when the contract allows it and the server offers it.
    PaidCall,
    /// Retrieve an id and compare it with what its call returned.
    RetrieveAndCompare,
    /// The field half of `retention_declared`, once every answer is in.
    RetentionField,
    /// Another tenant asks for the primary's id.
    NotYours,
    /// The provider's clock moves past the retention.
    Expired,
}

/// The order an engineer checks in by hand.
const STEPS: [Step; 8] = [
    Step::Initialize,
    Step::DesignRules,
    Step::PreFlight,
    Step::PaidCall,
    Step::RetrieveAndCompare,
    Step::RetentionField,
    Step::NotYours,
    Step::Expired,
];

/// Whether the walk goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Halt,
}

/// What one step leaves for the steps after it.
struct Progress<'w, 'c> {
    wire: &'w Wire,
    seed: u64,
    /// The primary credential's session.
    primary: Session<'w>,
    /// The paid call the contract allows and `tools/list` offers.
    paid: Option<&'c PaidCall>,
    /// Whether `tools/list` lists the list tool, the pre-flight's way in.
    list_listed: bool,
    /// Whether `tools/list` lists the get tool: without it nothing can be
    /// retrieved, so nothing retrieved can be compared.
    get_listed: bool,
    /// The primary's recent list, before the paid call.
    first_ids: Option<Vec<String>>,
    /// Every id the primary's lists and its paid call showed, which another
    /// tenant's list must not show.
    own_ids: Vec<String>,
    /// The primary's list is not empty: the empty case needs the second tenant.
    needs_empty_from_second: bool,
    /// The paid call's `structuredContent` and the id it carried.
    original: Option<(Value, Option<String>)>,
    /// The id the behaviour findings ask about.
    target: Option<String>,
}

impl Step {
    async fn take<'c>(self, run: &mut Run<'c>, p: &mut Progress<'_, 'c>) -> Flow {
        match self {
            Step::Initialize => initialize(run, p).await,
            Step::DesignRules => design_rules(run, p).await,
            Step::PreFlight => pre_flight(run, p).await,
            Step::PaidCall => {
                paid_call(run, p).await;
                Flow::Next
            }
            Step::RetrieveAndCompare => {
                retrieve_and_compare(run, p).await;
                Flow::Next
            }
            Step::RetentionField => {
                if !run.retention_field_seen {
                    run.book
                        .t(FindingId::RetentionDeclared)
                        .fail("no retrieval answer carries a retention field (e.g. `retention_s`)");
                }
                Flow::Next
            }
            Step::NotYours => {
                p.own_ids.sort_unstable();
                p.own_ids.dedup();
                let target = target_or(
                    &p.target,
                    p.get_listed,
                    run,
                    "no id of the primary's to ask about",
                );
                let needs_empty = p.needs_empty_from_second;
                behaviour::not_yours(run, p.wire, target, needs_empty, &p.own_ids).await;
                Flow::Next
            }
            Step::Expired => {
                let target = target_or(&p.target, p.get_listed, run, "no id to let expire");
                behaviour::expired(run, p.wire, &mut p.primary, target).await;
                Flow::Next
            }
        }
    }
}

/// The id the behaviour findings ask about, or why there is none.
fn target_or<'p>(
    target: &'p Option<String>,
    get_listed: bool,
    run: &Run<'_>,
    otherwise: &str,
) -> Result<&'p str, String> {
    match target {
        _ if !get_listed => Err(no_get(run)),
        Some(id) => Ok(id),
        None => Err(otherwise.to_owned()),
    }
}

/// Why the findings that retrieve by id have nothing to judge.
fn no_get(run: &Run<'_>) -> String {
    format!(
        "tools/list lists no `{}`, so no id can be retrieved or compared (see retrieval_read_only)",
        run.contract.retrieval.get
    )
}

/// Why `initialize` did not open a session worth going on with.
enum InitFailure {
    /// No answer: nothing can conclude.
    Unreachable(String),
    /// An answer, but not a session: `initialize` fails, the rest stop.
    Refused(String),
}

fn init_failure(
    result: &Result<Answer, ClientError>,
    revision: Option<&str>,
) -> Option<InitFailure> {
    match result {
        Err(e) => Some(InitFailure::Unreachable(format!("initialize: {e}"))),
        Ok(answer) if answer.status == 401 || answer.status == 403 => {
            Some(InitFailure::Refused(format!(
                "initialize answered HTTP {}: the credential is refused",
                answer.status
            )))
        }
        Ok(answer) => match revision {
            Some(r) if REVISIONS.contains(&r) => None,
            Some(r) => Some(InitFailure::Refused(format!(
                "the server chose revision {r:?}, not one of {}",
                REVISIONS.join(", ")
            ))),
            None => Some(InitFailure::Refused(format!(
                "initialize answered HTTP {} without a protocolVersion",
                answer.status
            ))),
        },
    }
}

async fn initialize<'c>(run: &mut Run<'c>, p: &mut Progress<'_, 'c>) -> Flow {
    let (result, evidence) = p.primary.initialize("initialize (primary)").await;
    for e in evidence {
        run.book.t(FindingId::Initialize).push(e);
    }
    match init_failure(&result, p.primary.revision()) {
        Some(InitFailure::Unreachable(why)) => {
            run.book.stop(&FindingId::ALL, &why);
            Flow::Halt
        }
        Some(InitFailure::Refused(why)) => {
            run.book.t(FindingId::Initialize).fail(why.clone());
            let rest: Vec<FindingId> = FindingId::ALL
                .into_iter()
                .filter(|f| *f != FindingId::Initialize)
                .collect();
            run.book.stop(&rest, &format!("initialize failed: {why}"));
            Flow::Halt
        }
        None => {
            let revision = p.primary.revision().unwrap_or_default().to_owned();
            run.book
                .t(FindingId::Initialize)
                .held(format!("revision {revision}"));
            Flow::Next
        }
    }
}

/// A design rule: the finding it fills and the check over the listed tools.
type Rule = (FindingId, fn(&Tools, &RetrievalSpec, &mut Trail));

/// The design rules judged from `tools/list` alone, in the order they are read.
const RULES: [Rule; 6] = [
    (FindingId::DurationStated, |tools, _, t| {
        rules::duration_stated(tools, t)
    }),
    (FindingId::TimeoutIsClientSetting, |tools, _, t| {
        rules::timeout_is_client_setting(tools, t)
    }),
    (FindingId::RetrievalReadOnly, rules::retrieval_read_only),
    (
        FindingId::NotYoursRuleWritten,
        rules::not_yours_rule_written,
    ),
    (FindingId::CredentialsHostSide, rules::credentials_host_side),
    (FindingId::RetentionDeclared, |tools, spec, t| {
        rules::retention_in_descriptions(tools, spec, t);
    }),
];

async fn design_rules<'c>(run: &mut Run<'c>, p: &mut Progress<'_, 'c>) -> Flow {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let (listed, evidence) = p.primary.call("tools/list", "tools/list", json!({})).await;
    let tools = listed
        .as_ref()
        .ok()
        .and_then(Answer::result)
        .and_then(|r| Tools::read(r, spec));
    let Some(tools) = tools else {
        let why = match &listed {
            Err(e) => format!("tools/list: {e}"),
            Ok(a) => format!("tools/list answered HTTP {} without a tool list", a.status),
        };
        for id in DESIGN {
            run.book.t(id).push(evidence.clone());
        }
        run.book.stop(&DESIGN, &why);
        run.book.stop(&RETRIEVAL, &why);
        return Flow::Halt;
    };
    let duration = run.book.t(FindingId::DurationStated);
    duration.push(evidence);
    duration.note(format!(
        "paid tools (not read-only, not retrieval): {}",
        tools.paid.join(", ")
    ));
    for (id, rule) in RULES {
        rule(&tools, spec, run.book.t(id));
    }
    run.credential_argument = rules::credential_argument(&tools, spec);
    p.list_listed = tools.find(&spec.list).is_some();
    p.get_listed = tools.find(&spec.get).is_some();
    p.paid = contract
        .paid
        .as_ref()
        .filter(|paid| tools.find(&paid.tool).is_some());
    // Without a list tool the run stops at the pre-flight, before the paid
    // call, so the listing judges the paid tool too.
    rules::id_by_listing(
        &tools,
        spec,
        p.paid
            .filter(|_| p.list_listed)
            .map(|paid| paid.tool.as_str()),
        run.book.t(FindingId::IdInEveryResult),
    );
    if let Some(paid) = contract.paid.as_ref().filter(|_| p.paid.is_none()) {
        run.book.t(FindingId::IdInEveryResult).note(format!(
            "the contract allows {:?}, which tools/list does not offer: not called",
            paid.tool
        ));
    }
    Flow::Next
}

/// List recent with no arguments while all is well: is retrieval reachable,
/// and what does the list hold.
async fn pre_flight<'c>(run: &mut Run<'c>, p: &mut Progress<'_, 'c>) -> Flow {
    let contract = run.contract;
    let spec = &contract.retrieval;
    if !p.list_listed {
        run.book.t(FindingId::RetrievalReachable).fail(format!(
            "tools/list lists no `{}`: an agent that loses an answer has no recovery path to reach (see retrieval_read_only; a server that names it otherwise is told by the contract's retrieval.list)",
            spec.list
        ));
        let why = format!(
            "no `{}` is listed, so there is nothing to read (see retrieval_reachable)",
            spec.list
        );
        for id in AFTER_PRE_FLIGHT {
            run.book.t(id).skip(why.clone());
        }
        return Flow::Halt;
    }
    let (result, evidence) = p
        .primary
        .tool("list recent (no arguments)", &spec.list, &Map::new(), None)
        .await;
    if let Some(e) = evidence {
        if run.credential_argument.is_some() {
            run.book.t(FindingId::CredentialsHostSide).push(e.clone());
        }
        run.book.t(FindingId::RetrievalReachable).push(e);
    }
    let first_list = match result {
        Err(e) => {
            run.book.stop(&RETRIEVAL, &format!("{}: {e}", spec.list));
            return Flow::Halt;
        }
        Ok(answer) => answer,
    };
    if !judge_reachable(run, &first_list) {
        let why = "retrieval is not reachable (see retrieval_reachable)";
        for id in AFTER_PRE_FLIGHT {
            run.book.t(id).skip(why);
        }
        return Flow::Halt;
    }
    let Some(list) = list_to_read(run, p, first_list).await else {
        let why = "the recent list could not be read";
        run.book.stop(
            &[
                FindingId::RetrieveMatchesOriginal,
                FindingId::NotYoursLikeUnknown,
                FindingId::ListIsPerTenant,
                FindingId::ExpiredLikeUnknown,
            ],
            why,
        );
        return Flow::Halt;
    };
    run.retention_field(&list);
    p.first_ids = judge_empty_list(run, &list);
    p.own_ids.extend(p.first_ids.iter().flatten().cloned());
    p.needs_empty_from_second = p.first_ids.as_ref().is_some_and(|ids| !ids.is_empty());
    Flow::Next
}

/// `retrieval_reachable` from the first list's answer; whether the others go on.
fn judge_reachable(run: &mut Run<'_>, first_list: &Answer) -> bool {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let t = run.book.t(FindingId::RetrievalReachable);
    if matches!(first_list.status, 401 | 403) {
        t.fail(format!(
            "HTTP {}: retrieval is unreachable with the transport's credential, so an agent cannot recover",
            first_list.status
        ));
        false
    } else if let Some(error) = first_list.rpc_error() {
        t.fail(format!("{} answers a JSON-RPC error: {error}", spec.list));
        false
    } else if first_list.result().is_none() {
        t.fail(format!(
            "HTTP {} without a JSON-RPC result",
            first_list.status
        ));
        false
    } else if first_list.is_tool_error() && matches!(first_list.tool_status(), Some(401 | 403)) {
        match &run.credential_argument {
            Some(arg) => {
                t.held(format!(
                    "reached with the transport's credential; the tool refuses without its `{arg}` argument (judged by credentials_host_side)"
                ));
                true
            }
            None => {
                t.fail(format!(
                    "the tool refuses the transport's credential ({:?})",
                    first_list.tool_status()
                ));
                false
            }
        }
    } else {
        t.held("reached with the transport's credential and no arguments");
        true
    }
}

/// The answer the other findings read: with the credential argument when
/// the tool insists on one (its own finding fails; these go on).
async fn list_to_read<'c>(
    run: &mut Run<'c>,
    p: &mut Progress<'_, 'c>,
    first_list: Answer,
) -> Option<Answer> {
    if first_list.is_tool_error() && run.credential_argument.is_some() {
        let primary = run.contract.primary.clone();
        let args = run.arguments(Map::new(), primary.as_deref());
        let contract = run.contract;
        let tool = &contract.retrieval.list;
        run.retrieve(
            &mut p.primary,
            FindingId::EmptyListIsNormal,
            "list recent (credential in the argument)",
            tool,
            &args,
            None,
        )
        .await
    } else {
        run.book
            .t(FindingId::EmptyListIsNormal)
            .push(Evidence::Note {
                text: "the answer of `list recent (no arguments)` (see retrieval_reachable)"
                    .to_owned(),
            });
        Some(first_list)
    }
}

/// `empty_list_is_normal` as far as the primary's list shows it; its ids.
fn judge_empty_list(run: &mut Run<'_>, list: &Answer) -> Option<Vec<String>> {
    let contract = run.contract;
    let spec = &contract.retrieval;
    if list.is_tool_error() {
        run.book.t(FindingId::EmptyListIsNormal).fail(format!(
            "{} answers an error (isError, status {}) where a list, perhaps empty, was due: an agent reads that as \"retrieval is broken\" or \"nothing happened\"",
            spec.list,
            list.tool_status().map_or("none".to_owned(), |s| s.to_string())
        ));
        return None;
    }
    match listed_ids(list, spec) {
        None => {
            run.book.stop(
                &[FindingId::EmptyListIsNormal],
                &format!(
                    "no array at {} in the answer's structuredContent (set retrieval.items_at)",
                    spec.items_at
                ),
            );
            None
        }
        Some(ids) if ids.is_empty() => {
            run.book
                .t(FindingId::EmptyListIsNormal)
                .held("the empty list is a normal result");
            Some(ids)
        }
        Some(ids) => {
            run.book.t(FindingId::EmptyListIsNormal).note(format!(
                "the primary credential's list is not empty ({} ids)",
                ids.len()
            ));
            Some(ids)
        }
    }
}

/// The one paid call, when allowed: `id_in_every_result`, and the original
/// result `retrieve_matches_original` compares with.
async fn paid_call<'c>(run: &mut Run<'c>, p: &mut Progress<'_, 'c>) {
    let Some(paid) = p.paid else {
        return;
    };
    let contract = run.contract;
    let spec = &contract.retrieval;
    let marker = format!("lostreply-certify-{}", p.seed);
    let args = match fill(&Value::Object(paid.arguments.clone()), &marker) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let (result, evidence) = p
        .primary
        .tool(
            "paid call (allowed by the contract)",
            &paid.tool,
            &args,
            None,
        )
        .await;
    if let Some(e) = evidence {
        run.book.t(FindingId::IdInEveryResult).push(e.clone());
        run.book.t(FindingId::RetrieveMatchesOriginal).push(e);
    }
    let both = [
        FindingId::IdInEveryResult,
        FindingId::RetrieveMatchesOriginal,
    ];
    match result {
        Err(Refused::Client(e)) => {
            run.book.stop(&both, &format!("the paid call: {e}"));
        }
        Err(refused) => run
            .book
            .stop(&[FindingId::IdInEveryResult], &refused.to_string()),
        Ok(answer) if answer.is_tool_error() || answer.structured().is_none() => {
            let why = format!(
                "the paid call did not succeed with structuredContent (HTTP {}, isError {}): no result to judge",
                answer.status,
                answer.is_tool_error()
            );
            run.book.stop(&both, &why);
        }
        Ok(answer) => {
            let structured = answer.structured().cloned().unwrap_or(Value::Null);
            let id = id_at(Some(&structured), &spec.id_at);
            let t = run.book.t(FindingId::IdInEveryResult);
            match &id {
                Some(id) => t.held(format!(
                    "{}: the result carries {} = {id}",
                    paid.tool, spec.id_at
                )),
                None => t.fail(format!(
                    "{}: a successful result without an id at {}: a caller who loses the next answer has nothing to retrieve by",
                    paid.tool, spec.id_at
                )),
            }
            p.own_ids.extend(id.clone());
            p.original = Some((structured, id));
        }
    }
}

/// Retrieve and compare: our call's id (or, having none, the newest listed:
/// the recovery path of a caller without an id), else the oldest listed.
async fn retrieve_and_compare<'c>(run: &mut Run<'c>, p: &mut Progress<'_, 'c>) {
    if !p.get_listed {
        let why = no_get(run);
        run.book.t(FindingId::RetrieveMatchesOriginal).skip(why);
    } else if let Some((payload, own_id)) = p.original.clone() {
        p.target = retrieve_own_call(run, p, &payload, own_id.as_deref()).await;
    } else if let Some(oldest) = p.first_ids.as_ref().and_then(|ids| ids.last().cloned()) {
        retrieve_oldest(run, p, &oldest).await;
        p.target = Some(oldest);
    } else if !run.book.stopped(FindingId::RetrieveMatchesOriginal) {
        run.book.t(FindingId::RetrieveMatchesOriginal).skip(
            "no id to retrieve: the list is empty and the contract allows no paid call (`paid`)",
        );
    }
}

/// Lists again after the paid call, retrieves the call's operation and
/// compares its payload with the call's result; the id it asked about.
async fn retrieve_own_call<'c>(
    run: &mut Run<'c>,
    p: &mut Progress<'_, 'c>,
    payload: &Value,
    own_id: Option<&str>,
) -> Option<String> {
    const FINDING: FindingId = FindingId::RetrieveMatchesOriginal;
    let contract = run.contract;
    let spec = &contract.retrieval;
    let primary = run.contract.primary.clone();
    let args = run.arguments(Map::new(), primary.as_deref());
    let after = run
        .retrieve(
            &mut p.primary,
            FINDING,
            "list recent (after the call)",
            &spec.list,
            &args,
            None,
        )
        .await;
    let ids = after
        .as_ref()
        .and_then(|l| listed_ids(l, spec))
        .unwrap_or_default();
    if let Some(after) = &after {
        run.retention_field(after);
    }
    p.own_ids.extend(ids.iter().cloned());
    let target = match own_id {
        Some(id) if ids.iter().any(|listed| listed == id) => Some(id.to_owned()),
        Some(id) => {
            run.book
                .t(FINDING)
                .fail(format!("the call's id {id} is not in the recent list"));
            Some(id.to_owned())
        }
        None => {
            run.book.t(FINDING).note(
                "the result gave no id: the newest listed id is taken, as a caller who lost the answer would",
            );
            ids.first().cloned()
        }
    };
    let Some(id) = target.clone() else {
        run.book
            .t(FINDING)
            .fail("the recent list is empty after the paid call");
        return target;
    };
    let args = run.id_arguments(&id, primary.as_deref());
    let got = run
        .retrieve(
            &mut p.primary,
            FINDING,
            "retrieve the call's operation",
            &spec.get,
            &args,
            None,
        )
        .await;
    if let Some(got) = got {
        judge_payload(run, &id, payload, &got);
    }
    target
}

/// `retrieve_matches_original` from what `get` answered for the call's id.
fn judge_payload(run: &mut Run<'_>, id: &str, payload: &Value, got: &Answer) {
    run.retention_field(got);
    let spec = &run.contract.retrieval;
    let t = run.book.t(FindingId::RetrieveMatchesOriginal);
    match got.structured().and_then(|s| s.pointer(&spec.payload_at)) {
        Some(r) if r == payload => t.held(format!(
            "{id} retrieves exactly the structuredContent the call returned"
        )),
        Some(r) => t.fail(format!(
            "{id} retrieves a payload other than the call's result: call {payload}, retrieved {r}"
        )),
        None => t.fail(format!(
            "{id}: the answer has no payload at {} (isError {})",
            spec.payload_at,
            got.is_tool_error()
        )),
    }
}

/// Without a paid call the original result is unknown: the oldest listed id
/// must retrieve with a payload, and the finding ends skipped, since nothing
/// was compared.
async fn retrieve_oldest<'c>(run: &mut Run<'c>, p: &mut Progress<'_, 'c>, oldest: &str) {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let primary = run.contract.primary.clone();
    let args = run.id_arguments(oldest, primary.as_deref());
    let Some(got) = run
        .retrieve(
            &mut p.primary,
            FindingId::RetrieveMatchesOriginal,
            "retrieve the oldest listed id",
            &spec.get,
            &args,
            None,
        )
        .await
    else {
        return;
    };
    let t = run.book.t(FindingId::RetrieveMatchesOriginal);
    match got.structured().and_then(|s| s.pointer(&spec.payload_at)) {
        Some(_) if !got.is_tool_error() => t.skip(format!(
            "not compared: {oldest} retrieves with a payload, but the contract allows no paid call, so the original result is unknown"
        )),
        _ => t.fail(format!(
            "the listed id {oldest} does not retrieve with a payload at {}",
            spec.payload_at
        )),
    }
}

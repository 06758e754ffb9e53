//! One MCP certification, in the order an engineer would check by hand:
//! `initialize`, `tools/list` (the design rules), the pre-flight of mcp.md
//! (list recent with no arguments, the one paid call when allowed, retrieve
//! and compare), then the behaviour with a second tenant (not yours) and the
//! provider's clock (expired).
//!
//! Each finding keeps its own trail; a step that fails stops only the findings
//! that need it, with the reason.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::behaviour;
use super::contract::{McpContract, RetrievalSpec};
use super::rules::{self, Tools};
use super::session::{Answer, Refused, Session, Wire, REVISIONS};

use crate::probes::{Stop, Trail};
use crate::report::ProbeResult;
use crate::verdict::Evidence;

/// A named, documented check.
#[derive(Debug, Clone, Copy)]
pub struct Finding {
    /// Stable name (reports, docs).
    pub name: &'static str,
    /// What it checks, in one line.
    pub title: &'static str,
}

/// Every finding, in report order.
pub const FINDINGS: [Finding; 13] = [
    Finding { name: "initialize", title: "initialize succeeds on a supported protocol revision (2025-11-25 or 2025-06-18)" },
    Finding { name: "retrieval_reachable", title: "list_recent_operations with no arguments reaches retrieval with the transport's credential (no 401)" },
    Finding { name: "empty_list_is_normal", title: "an empty recent list is a normal answer, never an error" },
    Finding { name: "retrieve_matches_original", title: "a listed id retrieves, with exactly the payload its call returned" },
    Finding { name: "id_in_every_result", title: "every paid tool's result carries an operation id, successes included" },
    Finding { name: "duration_stated", title: "every paid tool's description states its expected duration" },
    Finding { name: "timeout_is_client_setting", title: "descriptions say the timeout is a client setting; no tool takes a timeout parameter" },
    Finding { name: "retrieval_read_only", title: "retrieval tools exist and are annotated readOnlyHint and idempotentHint" },
    Finding { name: "not_yours_rule_written", title: "the retrieval tool's description says a not-yours id answers like an unknown one" },
    Finding { name: "retention_declared", title: "the retention of ids is declared, in a description and in a field" },
    Finding { name: "credentials_host_side", title: "retrieval takes no credential argument: the transport's credential is enough" },
    Finding { name: "not_yours_like_unknown", title: "another tenant's id and an unknown id answer byte-identically (status and message)" },
    Finding { name: "expired_like_unknown", title: "an id past the declared retention answers byte-identically to an unknown one" },
];

/// The names of every finding, in order.
pub fn names() -> Vec<&'static str> {
    FINDINGS.iter().map(|f| f.name).collect()
}

/// The trails of a run.
pub(super) struct Book {
    trails: Vec<(Finding, Trail, Option<String>)>,
}

impl Book {
    fn new() -> Book {
        Book {
            trails: FINDINGS
                .iter()
                .map(|f| (*f, Trail::default(), None))
                .collect(),
        }
    }

    pub(super) fn t(&mut self, name: &str) -> &mut Trail {
        let at = self
            .trails
            .iter()
            .position(|(f, _, _)| f.name == name)
            .unwrap_or(0);
        &mut self.trails[at].1
    }

    /// The finding cannot conclude (exit code 3), unless it already stopped.
    pub(super) fn stop(&mut self, names: &[&str], why: &str) {
        for (f, _, stop) in &mut self.trails {
            if names.contains(&f.name) && stop.is_none() {
                *stop = Some(why.to_owned());
            }
        }
    }

    fn stopped(&self, name: &str) -> bool {
        self.trails
            .iter()
            .any(|(f, _, stop)| f.name == name && stop.is_some())
    }

    fn finish(self, duration_ms: u64) -> Vec<ProbeResult> {
        self.trails
            .into_iter()
            .map(|(f, trail, stop)| {
                let outcome = stop.map_or(Ok(()), |why| Err(Stop(why)));
                trail.finish(f.name, f.title, outcome, duration_ms)
            })
            .collect()
    }
}

const DESIGN: [&str; 7] = [
    "id_in_every_result",
    "duration_stated",
    "timeout_is_client_setting",
    "retrieval_read_only",
    "not_yours_rule_written",
    "retention_declared",
    "credentials_host_side",
];
const RETRIEVAL: [&str; 5] = [
    "retrieval_reachable",
    "empty_list_is_normal",
    "retrieve_matches_original",
    "not_yours_like_unknown",
    "expired_like_unknown",
];

/// A value at a JSON pointer, as a string id.
fn id_at(value: Option<&Value>, pointer: &str) -> Option<String> {
    match value?.pointer(pointer)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An id of the same shape as `id` that no one was given: its last
/// alphanumeric characters rotated. Same length and prefix, so a server that
/// answers malformed ids differently is not mistaken for one that leaks.
pub fn unknown_like(id: &str) -> String {
    let mut chars: Vec<char> = id.chars().collect();
    // Only the part after the last separator turns: prefixes (`tkt_`, `op-`) stay.
    let tail_from = chars
        .iter()
        .rposition(|c| !c.is_ascii_alphanumeric())
        .map_or(0, |at| at + 1);
    let mut turned = 0;
    for c in chars[tail_from..].iter_mut().rev().take(6) {
        *c = match *c {
            '9' => '0',
            'z' => 'a',
            'Z' => 'A',
            other => char::from_u32(other as u32 + 1).unwrap_or(other),
        };
        turned += 1;
    }
    let out: String = chars.into_iter().collect();
    if turned == 0 || out == id {
        format!("{id}x")
    } else {
        out
    }
}

fn fill(value: &Value, marker: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{marker}", marker)),
        Value::Array(a) => Value::Array(a.iter().map(|v| fill(v, marker)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), fill(v, marker)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The ids of a recent list, newest first (`None`: no array where the contract says).
pub(super) fn listed_ids(answer: &Answer, spec: &RetrievalSpec) -> Option<Vec<String>> {
    let items = answer.structured()?.pointer(&spec.items_at)?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|i| id_at(Some(i), &spec.id_at))
            .collect(),
    )
}

/// Two answers alike for a caller: the same status and the same message bytes.
pub(super) fn alike(a: &Answer, b: &Answer) -> bool {
    let text = |x: &Answer| {
        x.message_text
            .clone()
            .map_or_else(|| x.body.clone(), String::into_bytes)
    };
    a.status == b.status && text(a) == text(b)
}

/// What the run learned as it went.
pub(super) struct Run<'c> {
    pub(super) contract: &'c McpContract,
    pub(super) book: Book,
    /// The argument retrieval wants a credential in (a defect, worked around
    /// so the other findings can still conclude).
    credential_argument: Option<String>,
    pub(super) retention: Option<Duration>,
    /// Whether a retrieval answer carried a retention field.
    retention_field_seen: bool,
}

impl Run<'_> {
    pub(super) fn arguments(
        &self,
        base: Map<String, Value>,
        credential: Option<&str>,
    ) -> Map<String, Value> {
        let mut args = base;
        if let (Some(arg), Some(c)) = (&self.credential_argument, credential) {
            args.insert(arg.clone(), json!(c));
        }
        args
    }

    pub(super) fn id_arguments(&self, id: &str, credential: Option<&str>) -> Map<String, Value> {
        let mut base = Map::new();
        base.insert(self.contract.retrieval.id_argument.clone(), json!(id));
        self.arguments(base, credential)
    }

    /// A retrieval call whose refusal or transport failure stops `finding`.
    pub(super) async fn retrieve(
        &mut self,
        s: &mut Session<'_>,
        finding: &str,
        label: &str,
        tool: &str,
        args: &Map<String, Value>,
        id: Option<Value>,
    ) -> Option<Answer> {
        let (result, evidence) = s.tool(label, tool, args, id).await;
        if let Some(e) = evidence {
            self.book.t(finding).push(e);
        }
        match result {
            Ok(answer) if answer.message.is_some() => Some(answer),
            Ok(answer) => {
                self.book.stop(
                    &[finding],
                    &format!("{label}: HTTP {} without a JSON-RPC message", answer.status),
                );
                None
            }
            Err(e) => {
                self.book.stop(&[finding], &format!("{label}: {e}"));
                None
            }
        }
    }

    /// Reads a retention field (`retention_s`, or any `retention…` number in
    /// seconds) from a retrieval answer: the field half of `retention_declared`.
    fn retention_field(&mut self, answer: &Answer) -> bool {
        let Some(Value::Object(fields)) = answer.structured() else {
            return false;
        };
        let Some((key, value)) = fields.iter().find(|(k, _)| k.starts_with("retention")) else {
            return false;
        };
        if self.retention_field_seen {
            return true;
        }
        self.retention_field_seen = true;
        if self.retention.is_none() {
            if let Some(s) = value.as_u64() {
                self.retention = Some(Duration::from_secs(s));
            }
        }
        self.book
            .t("retention_declared")
            .held(format!("answers carry `{key}: {value}`"));
        true
    }
}

/// Runs every finding against the contract's server.
pub async fn run(contract: &McpContract, wire: &Wire, seed: u64) -> Vec<ProbeResult> {
    let started = Instant::now();
    let mut run = Run {
        contract,
        book: Book::new(),
        credential_argument: None,
        retention: contract.retention,
        retention_field_seen: false,
    };
    steps(&mut run, wire, seed).await;
    run.book
        .finish(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX))
}

async fn steps(run: &mut Run<'_>, wire: &Wire, seed: u64) {
    let contract = run.contract;
    let spec = &contract.retrieval;
    let everything: Vec<&str> = names();
    let primary = contract.primary.clone();
    let mut a = Session::new(wire, primary.clone());

    // initialize.
    let (result, evidence) = a.initialize("initialize (primary)").await;
    for e in evidence {
        run.book.t("initialize").push(e);
    }
    let init_failed = match &result {
        Err(e) => Some((true, format!("initialize: {e}"))),
        Ok(answer) if answer.status == 401 || answer.status == 403 => Some((
            false,
            format!(
                "initialize answered HTTP {}: the credential is refused",
                answer.status
            ),
        )),
        Ok(answer) => match a.revision() {
            Some(r) if REVISIONS.contains(&r) => None,
            Some(r) => Some((
                false,
                format!(
                    "the server chose revision {r:?}, not one of {}",
                    REVISIONS.join(", ")
                ),
            )),
            None => Some((
                false,
                format!(
                    "initialize answered HTTP {} without a protocolVersion",
                    answer.status
                ),
            )),
        },
    };
    if let Some((unreachable, why)) = init_failed {
        if unreachable {
            run.book.stop(&everything, &why);
        } else {
            run.book.t("initialize").fail(why.clone());
            let rest: Vec<&str> = everything
                .iter()
                .copied()
                .filter(|n| *n != "initialize")
                .collect();
            run.book.stop(&rest, &format!("initialize failed: {why}"));
        }
        return;
    }
    let revision = a.revision().unwrap_or_default().to_owned();
    run.book
        .t("initialize")
        .held(format!("revision {revision}"));

    // tools/list: the design rules.
    let (listed, evidence) = a.call("tools/list", "tools/list", json!({})).await;
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
        for name in DESIGN {
            run.book.t(name).push(evidence.clone());
        }
        run.book.stop(&DESIGN, &why);
        run.book.stop(&RETRIEVAL, &why);
        return;
    };
    run.book.t("duration_stated").push(evidence);
    run.book.t("duration_stated").note(format!(
        "paid tools (not read-only, not retrieval): {}",
        tools.paid.join(", ")
    ));
    rules::duration_stated(&tools, run.book.t("duration_stated"));
    rules::timeout_is_client_setting(&tools, run.book.t("timeout_is_client_setting"));
    rules::retrieval_read_only(&tools, spec, run.book.t("retrieval_read_only"));
    rules::not_yours_rule_written(&tools, spec, run.book.t("not_yours_rule_written"));
    rules::credentials_host_side(&tools, spec, run.book.t("credentials_host_side"));
    rules::retention_in_descriptions(&tools, spec, run.book.t("retention_declared"));
    run.credential_argument = rules::credential_argument(&tools, spec);
    let paid_tool = contract
        .paid
        .as_ref()
        .filter(|p| tools.find(&p.tool).is_some());
    rules::id_by_listing(
        &tools,
        spec,
        paid_tool.map(|p| p.tool.as_str()),
        run.book.t("id_in_every_result"),
    );
    if let Some(p) = contract.paid.as_ref().filter(|_| paid_tool.is_none()) {
        run.book.t("id_in_every_result").note(format!(
            "the contract allows {:?}, which tools/list does not offer: not called",
            p.tool
        ));
    }

    // Pre-flight: list recent with no arguments while all is well.
    let (result, evidence) = a
        .tool("list recent (no arguments)", &spec.list, &Map::new(), None)
        .await;
    if let Some(e) = evidence {
        if run.credential_argument.is_some() {
            run.book.t("credentials_host_side").push(e.clone());
        }
        run.book.t("retrieval_reachable").push(e);
    }
    let first_list = match result {
        Err(e) => {
            run.book.stop(&RETRIEVAL, &format!("{}: {e}", spec.list));
            return;
        }
        Ok(answer) => answer,
    };
    let reachable = if matches!(first_list.status, 401 | 403) {
        run.book.t("retrieval_reachable").fail(format!(
            "HTTP {}: retrieval is unreachable with the transport's credential, so an agent cannot recover",
            first_list.status
        ));
        false
    } else if let Some(error) = first_list.rpc_error() {
        run.book
            .t("retrieval_reachable")
            .fail(format!("{} answers a JSON-RPC error: {error}", spec.list));
        false
    } else if first_list.result().is_none() {
        run.book.t("retrieval_reachable").fail(format!(
            "HTTP {} without a JSON-RPC result",
            first_list.status
        ));
        false
    } else if first_list.is_tool_error() && matches!(first_list.tool_status(), Some(401 | 403)) {
        match &run.credential_argument {
            Some(arg) => {
                run.book.t("retrieval_reachable").held(format!(
                    "reached with the transport's credential; the tool refuses without its `{arg}` argument (judged by credentials_host_side)"
                ));
                true
            }
            None => {
                run.book.t("retrieval_reachable").fail(format!(
                    "the tool refuses the transport's credential ({:?})",
                    first_list.tool_status()
                ));
                false
            }
        }
    } else {
        run.book
            .t("retrieval_reachable")
            .held("reached with the transport's credential and no arguments");
        true
    };
    if !reachable {
        let why = "retrieval is not reachable (see retrieval_reachable)";
        for name in [
            "empty_list_is_normal",
            "retrieve_matches_original",
            "not_yours_like_unknown",
            "expired_like_unknown",
        ] {
            run.book.t(name).skip(why);
        }
        return;
    }
    // The answer the other findings read: with the credential argument when
    // the tool insists on one (its own finding fails; these go on).
    let list = if first_list.is_tool_error() && run.credential_argument.is_some() {
        let args = run.arguments(Map::new(), primary.as_deref());
        match run
            .retrieve(
                &mut a,
                "empty_list_is_normal",
                "list recent (credential in the argument)",
                &spec.list,
                &args,
                None,
            )
            .await
        {
            Some(answer) => answer,
            None => {
                let why = "the recent list could not be read";
                run.book.stop(
                    &[
                        "retrieve_matches_original",
                        "not_yours_like_unknown",
                        "expired_like_unknown",
                    ],
                    why,
                );
                return;
            }
        }
    } else {
        run.book.t("empty_list_is_normal").push(Evidence::Note {
            text: "the answer of `list recent (no arguments)` (see retrieval_reachable)".to_owned(),
        });
        first_list
    };
    run.retention_field(&list);
    let first_ids = if list.is_tool_error() {
        run.book.t("empty_list_is_normal").fail(format!(
            "{} answers an error (isError, status {}) where a list, perhaps empty, was due: an agent reads that as \"retrieval is broken\" or \"nothing happened\"",
            spec.list,
            list.tool_status().map_or("none".to_owned(), |s| s.to_string())
        ));
        None
    } else {
        match listed_ids(&list, spec) {
            None => {
                run.book.stop(
                    &["empty_list_is_normal"],
                    &format!(
                        "no array at {} in the answer's structuredContent (set retrieval.items_at)",
                        spec.items_at
                    ),
                );
                None
            }
            Some(ids) if ids.is_empty() => {
                run.book
                    .t("empty_list_is_normal")
                    .held("the empty list is a normal result");
                Some(ids)
            }
            Some(ids) => {
                run.book.t("empty_list_is_normal").note(format!(
                    "the primary credential's list is not empty ({} ids)",
                    ids.len()
                ));
                Some(ids)
            }
        }
    };
    let needs_empty_from_second = first_ids.as_ref().is_some_and(|ids| !ids.is_empty());

    // The one paid call, when allowed.
    let marker = format!("lostreply-certify-{seed}");
    let mut original: Option<(Value, Option<String>)> = None;
    if let Some(paid) = paid_tool {
        let args = match fill(&Value::Object(paid.arguments.clone()), &marker) {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let (result, evidence) = a
            .tool(
                "paid call (allowed by the contract)",
                &paid.tool,
                &args,
                None,
            )
            .await;
        if let Some(e) = evidence {
            run.book.t("id_in_every_result").push(e.clone());
            run.book.t("retrieve_matches_original").push(e);
        }
        match result {
            Err(Refused::Client(e)) => {
                let why = format!("the paid call: {e}");
                run.book
                    .stop(&["id_in_every_result", "retrieve_matches_original"], &why);
            }
            Err(refused) => run.book.stop(&["id_in_every_result"], &refused.to_string()),
            Ok(answer) if answer.is_tool_error() || answer.structured().is_none() => {
                let why = format!(
                    "the paid call did not succeed with structuredContent (HTTP {}, isError {}): no result to judge",
                    answer.status,
                    answer.is_tool_error()
                );
                run.book
                    .stop(&["id_in_every_result", "retrieve_matches_original"], &why);
            }
            Ok(answer) => {
                let structured = answer.structured().cloned().unwrap_or(Value::Null);
                let id = id_at(Some(&structured), &spec.id_at);
                match &id {
                    Some(id) => run.book.t("id_in_every_result").held(format!(
                        "{}: the result carries {} = {id}",
                        paid.tool, spec.id_at
                    )),
                    None => run.book.t("id_in_every_result").fail(format!(
                        "{}: a successful result without an id at {}: a caller who loses the next answer has nothing to retrieve by",
                        paid.tool, spec.id_at
                    )),
                }
                original = Some((structured, id));
            }
        }
    }

    // Retrieve and compare: our call's id (or, having none, the newest listed:
    // the recovery path of a caller without an id), else the oldest listed.
    let mut target: Option<String> = None;
    if let Some((payload, own_id)) = &original {
        let after = run
            .retrieve(
                &mut a,
                "retrieve_matches_original",
                "list recent (after the call)",
                &spec.list,
                &run.arguments(Map::new(), primary.as_deref()),
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
        target = match own_id {
            Some(id) if ids.contains(id) => Some(id.clone()),
            Some(id) => {
                run.book
                    .t("retrieve_matches_original")
                    .fail(format!("the call's id {id} is not in the recent list"));
                Some(id.clone())
            }
            None => {
                run.book.t("retrieve_matches_original").note(
                    "the result gave no id: the newest listed id is taken, as a caller who lost the answer would",
                );
                ids.first().cloned()
            }
        };
        if let Some(id) = target.clone() {
            let args = run.id_arguments(&id, primary.as_deref());
            if let Some(got) = run
                .retrieve(
                    &mut a,
                    "retrieve_matches_original",
                    "retrieve the call's operation",
                    &spec.get,
                    &args,
                    None,
                )
                .await
            {
                run.retention_field(&got);
                let retrieved = got.structured().and_then(|s| s.pointer(&spec.payload_at));
                match retrieved {
                    Some(r) if r == payload => run.book.t("retrieve_matches_original").held(format!(
                        "{id} retrieves exactly the structuredContent the call returned"
                    )),
                    Some(r) => run.book.t("retrieve_matches_original").fail(format!(
                        "{id} retrieves a payload other than the call's result: call {payload}, retrieved {r}"
                    )),
                    None => run.book.t("retrieve_matches_original").fail(format!(
                        "{id}: the answer has no payload at {} (isError {})",
                        spec.payload_at,
                        got.is_tool_error()
                    )),
                }
            }
        } else {
            run.book
                .t("retrieve_matches_original")
                .fail("the recent list is empty after the paid call");
        }
    } else if let Some(oldest) = first_ids.as_ref().and_then(|ids| ids.last().cloned()) {
        let args = run.id_arguments(&oldest, primary.as_deref());
        if let Some(got) = run
            .retrieve(
                &mut a,
                "retrieve_matches_original",
                "retrieve the oldest listed id",
                &spec.get,
                &args,
                None,
            )
            .await
        {
            match got.structured().and_then(|s| s.pointer(&spec.payload_at)) {
                Some(_) if !got.is_tool_error() => run.book.t("retrieve_matches_original").held(format!(
                    "{oldest} retrieves with a payload (not compared: the contract allows no paid call, so the original result is unknown)"
                )),
                _ => run.book.t("retrieve_matches_original").fail(format!(
                    "the listed id {oldest} does not retrieve with a payload at {}",
                    spec.payload_at
                )),
            }
        }
        target = Some(oldest);
    } else if !run.book.stopped("retrieve_matches_original") {
        run.book.t("retrieve_matches_original").skip(
            "no id to retrieve: the list is empty and the contract allows no paid call (`paid`)",
        );
    }
    if !run.retention_field_seen {
        run.book
            .t("retention_declared")
            .fail("no retrieval answer carries a retention field (e.g. `retention_s`)");
    }

    // Behaviour: another tenant, then the provider's clock.
    behaviour::not_yours(run, wire, target.as_deref(), needs_empty_from_second).await;
    behaviour::expired(run, wire, &mut a, target.as_deref()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ids_keep_the_shape() {
        assert_eq!(unknown_like("op_000123"), "op_111234");
        assert_eq!(unknown_like("tkt_zz9"), "tkt_aa0");
        assert_eq!(unknown_like("--"), "--x");
        let id = "op_7f3a";
        assert_eq!(unknown_like(id).len(), id.len());
        assert_ne!(unknown_like(id), id);
    }

    #[test]
    fn every_finding_has_a_distinct_name() {
        let mut n = names();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), FINDINGS.len());
    }
}

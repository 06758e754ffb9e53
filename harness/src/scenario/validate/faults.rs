//! `faults:` -> fault rules, rejecting the ones that cannot mean anything.
//! One list holds both families: HTTP rules (`response:`, for `/v1`
//! requests) and MCP rules (`call:`, for `tools/call` at `/mcp`); each family
//! keeps its file order, and the first matching rule of its family wins.

use std::time::Duration;

use lostreply_simulator::mcp::McpRule;
use lostreply_simulator::profile::Pages;
use lostreply_simulator::{
    FaultResponse, FaultRule, Match, Position, Release, RequestKind, StallThen, MAX_RETRY_AFTER_S,
};

use super::common::{duration_in, show, MAX_ITEMS, MAX_PARTIAL_BYTES, NONZERO};
use super::declared::Declared;
use super::fault_match::{counts_and_steps, step_end};
use super::provider::{stall_too_short, tenant};
use crate::scenario::error::Diagnostics;
use crate::scenario::raw::{
    RawFault, RawGather, RawKind, RawMatch, RawMethod, RawPosition, RawQuery, RawResponse,
    RawStatus, RawThen, RawUntil, MAPPING_RESPONSES, PLAIN_RESPONSES,
};
use crate::scenario::span::{Pos, Sp};

/// The HTTP rules and the MCP rules of `faults:`, each in file order.
pub(super) fn faults(
    d: &mut Diagnostics,
    raw: &[Sp<RawFault>],
    declared: &Declared,
) -> (Vec<FaultRule>, Vec<McpRule>) {
    if raw.len() > MAX_ITEMS {
        if let Some(first) = raw.first() {
            d.error(
                first.pos,
                format!("at most {MAX_ITEMS} fault rules, not {}", raw.len()),
            );
        }
    }
    let mut http: Vec<(usize, FaultRule)> = Vec::new();
    let mut mcp: Vec<(usize, McpRule)> = Vec::new();
    for (index, rule) in raw.iter().enumerate() {
        match (&rule.value.response, &rule.value.call) {
            (_, Some(call)) => {
                if let Some(response) = &rule.value.response {
                    d.error(
                        response.pos,
                        "a fault rule has `response:` (an HTTP request's fate) or `call:` (an MCP \
                         tool call's), not both: write two rules",
                    );
                }
                if let Some(at) = &rule.value.at {
                    d.error(
                        at.pos,
                        "`at` belongs to HTTP rules; an MCP fault says where it strikes inside \
                         `call:` ({drop: before_commit}, {is_error: {status: 504, at: after_commit}})",
                    );
                }
                if declared.mcp.is_none() {
                    d.error(
                        call.pos,
                        "an MCP fault (`call:`) needs an `mcp:` section: this provider is no MCP \
                         server",
                    );
                }
                mcp.push((index, super::mcp_faults::rule(d, rule, call, declared)));
            }
            (Some(response), None) => {
                if let Some(cancel) = &rule.value.cancel {
                    d.error(
                        cancel.pos,
                        "`cancel` belongs to MCP rules (`call:`): HTTP has no cancellation",
                    );
                }
                if let Some(tool) = rule.value.when.as_ref().and_then(|w| w.value.tool.as_ref()) {
                    d.error(
                        tool.pos,
                        "`tool` matches MCP tool calls: this rule needs `call:` instead of \
                         `response:`",
                    );
                }
                http.push((index, fault(d, rule, response, declared)));
            }
            (None, None) => d.error(
                rule.pos,
                "a fault rule needs `response:` (for HTTP requests) or `call:` (for MCP tool calls)",
            ),
        }
    }
    unreachable_rules(d, raw, &http, |first, second| {
        shadows(&first.when, &second.when)
    });
    unreachable_rules(d, raw, &mcp, |first, second| {
        super::mcp_faults::shadows(&first.when, &second.when)
    });
    (
        http.into_iter().map(|(_, r)| r).collect(),
        mcp.into_iter().map(|(_, r)| r).collect(),
    )
}

/// One HTTP rule: its `when`, its `at` and its response.
fn fault(
    d: &mut Diagnostics,
    raw: &Sp<RawFault>,
    response: &Sp<RawResponse>,
    declared: &Declared,
) -> FaultRule {
    let empty = RawMatch::default();
    let when_raw = raw.value.when.as_ref().map_or(&empty, |w| &w.value);
    let when = matcher(d, when_raw, declared);
    let (at, at_pos) = raw
        .value
        .at
        .as_ref()
        .map_or((default_at(&response.value), response.pos), |at| {
            (position(at.value), at.pos)
        });
    let rule = RuleContext {
        when: &when,
        at,
        at_pos,
        response_pos: response.pos,
    };
    let response = fault_response(d, &response.value, &rule, declared);
    FaultRule::builder()
        .when(when)
        .at(at)
        .response(response)
        .build()
}

/// What a response's checks need of its rule.
struct RuleContext<'r> {
    when: &'r Match,
    at: Position,
    /// Where `at` is written (the response's place when it is not).
    at_pos: Pos,
    response_pos: Pos,
}

/// Where a response acts when the rule does not say.
fn default_at(response: &RawResponse) -> Position {
    match response {
        // A stall that says what happens next is about the commit.
        RawResponse::Stall { then: Some(_), .. } => Position::BeforeCommit,
        // Two requests that meet before anything is read are answered from
        // the state after the meeting, which is what a race needs.
        RawResponse::Gather(_) => Position::BeforeRead,
        RawResponse::Ok
        | RawResponse::Drop
        | RawResponse::Reset
        | RawResponse::Idle
        | RawResponse::Stall { then: None, .. }
        | RawResponse::Delay(_)
        | RawResponse::Status(_)
        | RawResponse::Partial(_)
        | RawResponse::Unknown(_) => Position::AfterCommit,
    }
}

/// An HTTP rule's response, checked against where it acts.
fn fault_response(
    d: &mut Diagnostics,
    response: &RawResponse,
    rule: &RuleContext<'_>,
    declared: &Declared,
) -> FaultResponse {
    match response {
        RawResponse::Unknown(name) => {
            unknown_response(d, name, rule.response_pos);
            FaultResponse::Ok
        }
        RawResponse::Ok => FaultResponse::Ok,
        RawResponse::Drop => FaultResponse::Drop,
        RawResponse::Reset => FaultResponse::Reset,
        RawResponse::Idle => {
            needs_response(d, "idle", rule.at, rule.at_pos);
            if let Some(problem) = stall_too_short(declared) {
                d.error(rule.response_pos, problem);
            }
            FaultResponse::Idle
        }
        RawResponse::Stall { then, until } => FaultResponse::Stall {
            until: stall_until(d, until.as_ref(), rule, declared),
            then: stall_then(d, then.as_ref(), rule),
        },
        RawResponse::Gather(gather) => self::gather(d, gather, declared),
        RawResponse::Delay(delay) => {
            let delay =
                duration_in(d, delay, "delay", NONZERO, declared.stall_cap).unwrap_or(NONZERO);
            FaultResponse::Delay { delay }
        }
        RawResponse::Status(status) => self::status(d, status),
        RawResponse::Partial(bytes) => {
            needs_response(d, "partial", rule.at, rule.at_pos);
            if bytes.value > MAX_PARTIAL_BYTES {
                d.error(
                    bytes.pos,
                    format!(
                        "partial lets through at most {MAX_PARTIAL_BYTES} bytes, not {}",
                        bytes.value
                    ),
                );
            }
            FaultResponse::Partial {
                bytes: usize::try_from(bytes.value).unwrap_or(0),
            }
        }
    }
}

/// A response name that is not one, or one that needs a value.
fn unknown_response(d: &mut Diagnostics, name: &str, pos: Pos) {
    let message = if MAPPING_RESPONSES.contains(&name) {
        format!("`{name}` needs a value: write it as {{{name}: ...}}")
    } else {
        format!(
            "unknown fault response `{name}`: one of {}, or a mapping with one of {}",
            PLAIN_RESPONSES.join(", "),
            MAPPING_RESPONSES.join(", ")
        )
    };
    d.error(pos, message);
}

/// A stall's `until`: the client's leaving when absent (so the stall must
/// outlast the client), else the end of a step, before the commit only.
fn stall_until(
    d: &mut Diagnostics,
    until: Option<&Sp<RawUntil>>,
    rule: &RuleContext<'_>,
    declared: &Declared,
) -> Release {
    let Some(until) = until else {
        if let Some(problem) = stall_too_short(declared) {
            d.error(rule.response_pos, problem);
        }
        return Release::ClientGone;
    };
    if rule.at == Position::AfterCommit {
        d.error(
            until.pos,
            "`until` holds a request and its key in flight before the commit; \
             at after_commit the effect has committed and its key's answer is \
             saved (a retry is replayed, not met in flight): add `then: commit` \
             (before_commit) to hold the key in flight, or give a call of a \
             parallel step `during: {kind: create}` to run it while the \
             committed create's answer is held",
        );
    }
    step_end(d, until, declared)
}

/// A stall's `then`: what a stall before the commit does once the client
/// left (abandon when absent); `commit` only for rules that match creates.
fn stall_then(
    d: &mut Diagnostics,
    then: Option<&Sp<RawThen>>,
    rule: &RuleContext<'_>,
) -> StallThen {
    let Some(then) = then else {
        return StallThen::Abandon;
    };
    if rule.at != Position::BeforeCommit {
        d.error(
            then.pos,
            format!(
                "`then` says what a stall before the commit does once the client \
                 left; at {} there is nothing left to decide (remove `then` or \
                 use at: before_commit)",
                rule.at.name()
            ),
        );
    }
    match then.value {
        RawThen::Abandon => StallThen::Abandon,
        RawThen::Commit => {
            if !only_creates(rule.when) {
                d.error(
                    then.pos,
                    "`then: commit` commits an effect, so the rule must match only \
                     creates: add `method: POST` or `kind: create` to `when`",
                );
            }
            StallThen::Commit
        }
    }
}

/// `{status: 500}` or `{status: {code: 429, retry_after: 30s}}`.
fn status(d: &mut Diagnostics, raw: &Sp<RawStatus>) -> FaultResponse {
    let (code, code_pos, retry_after) = match &raw.value {
        RawStatus::Code(code) => (*code, raw.pos, None),
        RawStatus::Full(full) => (full.code.value, full.code.pos, full.retry_after.as_ref()),
    };
    if !(400..=599).contains(&code) {
        d.error(
            code_pos,
            format!("status {code} is not an HTTP error status (400 to 599)"),
        );
    }
    let retry_after_s = retry_after.map(|text| {
        if !matches!(code, 429 | 503) {
            d.error(
                text.pos,
                format!(
                    "retry_after goes with 429 (rate limited) or 503 (unavailable), the \
                     statuses that tell a client when to come back, not with {code}"
                ),
            );
        }
        let max = Duration::from_secs(u64::from(MAX_RETRY_AFTER_S));
        let seconds = duration_in(d, text, "retry_after", Duration::ZERO, max).unwrap_or_default();
        if seconds.subsec_nanos() != 0 {
            d.error(
                text.pos,
                format!(
                    "retry_after is sent as whole seconds (`Retry-After: 30`): {} is not",
                    show(seconds)
                ),
            );
        }
        u32::try_from(seconds.as_secs()).unwrap_or(MAX_RETRY_AFTER_S)
    });
    FaultResponse::Status {
        code: u16::try_from(code).unwrap_or(500),
        retry_after_s,
    }
}

fn gather(d: &mut Diagnostics, raw: &Sp<RawGather>, declared: &Declared) -> FaultResponse {
    let requests = &raw.value.requests;
    if requests.value < 2 {
        d.error(
            requests.pos,
            format!(
                "a gather needs at least 2 requests to meet, not {}",
                requests.value
            ),
        );
    }
    let at_most = duration_in(
        d,
        &raw.value.at_most,
        "at_most",
        NONZERO,
        declared.stall_cap,
    )
    .unwrap_or(NONZERO);
    if at_most >= declared.client_timeout {
        d.error(
            raw.value.at_most.pos,
            format!(
                "a gathered request must be answered before its client gives up: at_most ({}) \
                 must be shorter than client_timeout ({})",
                show(at_most),
                show(declared.client_timeout)
            ),
        );
    }
    FaultResponse::Gather {
        requests: requests.value.max(2),
        at_most,
    }
}

/// Headers and body exist only once the request was handled.
fn needs_response(d: &mut Diagnostics, name: &str, at: Position, at_pos: Pos) {
    match at {
        Position::AfterCommit => {}
        Position::BeforeRead | Position::BeforeCommit => d.error(
            at_pos,
            format!(
                "`{name}` sends part of a response, and at {} there is no response yet: use \
                 at: after_commit (or `drop`, `reset` or `stall` to lose the request earlier)",
                at.name()
            ),
        ),
    }
}

fn position(raw: RawPosition) -> Position {
    match raw {
        RawPosition::BeforeRead => Position::BeforeRead,
        RawPosition::BeforeCommit => Position::BeforeCommit,
        RawPosition::AfterCommit => Position::AfterCommit,
    }
}

pub(super) fn matcher(d: &mut Diagnostics, raw: &RawMatch, declared: &Declared) -> Match {
    if let Some(r) = &raw.resource {
        declared.check_resource(d, r);
    }
    if let Some(t) = &raw.tenant {
        tenant(d, t, &declared.tenants);
    }
    let steps = counts_and_steps(d, raw, declared);
    let method = raw.method.as_ref().map(|m| m.value);
    let kind = raw.kind.as_ref().map(|k| k.value);
    if let (Some(method), Some(kind)) = (&raw.method, &raw.kind) {
        let fits = match kind.value {
            RawKind::Create => method.value == RawMethod::Post,
            RawKind::Retrieve | RawKind::Search | RawKind::List => method.value == RawMethod::Get,
        };
        if !fits {
            d.error(
                kind.pos,
                format!(
                    "no request is both {} and kind {}: creates are POST, lookups are GET",
                    method_name(method.value),
                    kind_of(kind.value).name()
                ),
            );
        }
    }
    profile_lookup(d, raw, declared);
    if let Some(query) = &raw.query {
        let query_kind = match query.value {
            RawQuery::ClientReference => RawKind::Search,
            RawQuery::CreatedGte | RawQuery::Limit => RawKind::List,
        };
        if method == Some(RawMethod::Post) {
            d.error(query.pos, "a create (POST) has no query parameters");
        } else if kind.is_some_and(|k| k != query_kind) {
            d.error(
                query.pos,
                format!(
                    "query `{}` belongs to {} requests, not {}",
                    query_name(query.value),
                    kind_of(query_kind).name(),
                    kind.map_or("", |k| kind_of(k).name())
                ),
            );
        }
    }
    Match::builder()
        .maybe_method(method.map(|m| method_name(m).to_owned()))
        .maybe_resource(raw.resource.as_ref().map(|r| r.value.clone()))
        .maybe_kind(kind.map(kind_of))
        .maybe_tenant(raw.tenant.as_ref().map(|t| t.value.clone()))
        .maybe_query(raw.query.as_ref().map(|q| query_name(q.value).to_owned()))
        .maybe_nth(raw.nth.as_ref().map(|n| n.value))
        .maybe_times(raw.times.as_ref().map(|n| n.value))
        .maybe_steps(steps)
        .build()
}

/// What a rule can match of a profile's lookups: its requests carry the
/// profile's own parameters (Stripe searches with `query=`), not the generic
/// API's that `query` names, and a lookup the profile does not offer for a
/// collection never reaches the rule as that kind.
fn profile_lookup(d: &mut Diagnostics, raw: &RawMatch, declared: &Declared) {
    let profile = &declared.profile;
    if let Some(query) = &raw.query {
        if profile.pages != Pages::Generic {
            d.error(
                query.pos,
                format!(
                    "`query` names the generic API's parameters; profile {} has lookups of its \
                     own: match them by `kind` (search, list) instead",
                    profile.name
                ),
            );
        }
    }
    let (Some(resource), Some(kind)) = (&raw.resource, &raw.kind) else {
        return;
    };
    let Some(offers) = declared.profile_resource(&resource.value).map(|r| r.offers) else {
        return;
    };
    let offered = match kind.value {
        RawKind::Create => true,
        RawKind::Retrieve => offers.retrieve,
        RawKind::Search => offers.search,
        RawKind::List => offers.list,
    };
    if !offered {
        d.error(
            kind.pos,
            format!(
                "profile {} has no {} of {}: the rule never applies",
                profile.name,
                kind_of(kind.value).name(),
                resource.value
            ),
        );
    }
}

/// True when every request the matcher accepts is a create.
fn only_creates(when: &Match) -> bool {
    when.kind == Some(RequestKind::Create) || when.method.as_deref() == Some("POST")
}

fn method_name(method: RawMethod) -> &'static str {
    match method {
        RawMethod::Post => "POST",
        RawMethod::Get => "GET",
    }
}

fn kind_of(kind: RawKind) -> RequestKind {
    match kind {
        RawKind::Create => RequestKind::Create,
        RawKind::Retrieve => RequestKind::Retrieve,
        RawKind::Search => RequestKind::Search,
        RawKind::List => RequestKind::List,
    }
}

fn query_name(query: RawQuery) -> &'static str {
    match query {
        RawQuery::ClientReference => "client_reference",
        RawQuery::CreatedGte => "created_gte",
        RawQuery::Limit => "limit",
    }
}

/// The first matching rule wins, so a rule that an earlier rule always takes
/// first can never fire: that is a mistake in the file, not a plan. `rules`
/// are one family's, with their indexes in `faults:`.
fn unreachable_rules<R>(
    d: &mut Diagnostics,
    raw: &[Sp<RawFault>],
    rules: &[(usize, R)],
    shadows: impl Fn(&R, &R) -> bool,
) {
    for (later, (index, rule)) in rules.iter().enumerate() {
        let earlier = rules[..later]
            .iter()
            .find(|(_, first)| shadows(first, rule))
            .map(|(i, _)| *i);
        if let (Some(earlier), Some(raw_rule)) = (earlier, raw.get(*index)) {
            let line = raw.get(earlier).map_or(0, |r| r.pos.line);
            d.error(
                raw_rule.pos,
                format!(
                    "fault rule {} can never apply: rule {} (line {line}) matches every request \
                     it would, and the first matching rule wins",
                    index + 1,
                    earlier + 1
                ),
            );
        }
    }
}

/// Does `first` take every request that `second` would match?
fn shadows(first: &Match, second: &Match) -> bool {
    fn covers<T: PartialEq>(first: &Option<T>, second: &Option<T>) -> bool {
        first.is_none() || first == second
    }
    let steps_cover = match (&first.steps, &second.steps) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(first), Some(second)) => second.is_subset(first),
    };
    let wider = covers(&first.method, &second.method)
        && covers(&first.resource, &second.resource)
        && covers(&first.kind, &second.kind)
        && covers(&first.tenant, &second.tenant)
        && covers(&first.query, &second.query)
        && steps_cover;
    let same = first.method == second.method
        && first.resource == second.resource
        && first.kind == second.kind
        && first.tenant == second.tenant
        && first.query == second.query
        && first.steps == second.steps;
    // Every request (no count) of a wider filter; or the same count of the very same filter.
    (first.nth.is_none() && first.times.is_none() && wider)
        || (same && first.nth == second.nth && first.times == second.times)
}

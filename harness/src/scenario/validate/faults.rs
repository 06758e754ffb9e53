//! `faults:` -> fault rules, rejecting the ones that cannot mean anything.

use simulator::{FaultResponse, FaultRule, Match, Position, RequestKind, StallThen};

use super::provider::{stall_too_short, tenant};
use super::{duration_in, resource, Declared, MAX_ITEMS, MAX_PARTIAL_BYTES, NONZERO};
use crate::scenario::error::Diagnostics;
use crate::scenario::raw::{
    RawFault, RawKind, RawMatch, RawMethod, RawPosition, RawQuery, RawResponse, RawThen,
    MAPPING_RESPONSES, PLAIN_RESPONSES,
};
use crate::scenario::span::{Pos, Sp};

pub(super) fn faults(
    d: &mut Diagnostics,
    raw: &[Sp<RawFault>],
    declared: &Declared,
) -> Vec<FaultRule> {
    if raw.len() > MAX_ITEMS {
        if let Some(first) = raw.first() {
            d.error(
                first.pos,
                format!("at most {MAX_ITEMS} fault rules, not {}", raw.len()),
            );
        }
    }
    let rules: Vec<FaultRule> = raw.iter().map(|rule| fault(d, rule, declared)).collect();
    unreachable_rules(d, raw, &rules);
    rules
}

fn fault(d: &mut Diagnostics, raw: &Sp<RawFault>, declared: &Declared) -> FaultRule {
    let empty = RawMatch::default();
    let when_raw = raw.value.when.as_ref().map_or(&empty, |w| &w.value);
    let when = matcher(d, when_raw, declared);

    let response_pos = raw.value.response.pos;
    let response = &raw.value.response.value;
    // A stall that says what happens next is about the commit: it defaults to before_commit.
    let default_at = match response {
        RawResponse::Stall { then: Some(_) } => Position::BeforeCommit,
        RawResponse::Ok
        | RawResponse::Drop
        | RawResponse::Reset
        | RawResponse::Idle
        | RawResponse::Stall { then: None }
        | RawResponse::Delay(_)
        | RawResponse::Status(_)
        | RawResponse::Partial(_)
        | RawResponse::Unknown(_) => Position::AfterCommit,
    };
    let (at, at_pos) = raw
        .value
        .at
        .as_ref()
        .map_or((default_at, response_pos), |at| {
            (position(at.value), at.pos)
        });

    let response = match response {
        RawResponse::Unknown(name) => {
            let message = if MAPPING_RESPONSES.contains(&name.as_str()) {
                format!("`{name}` needs a value: write it as {{{name}: ...}}")
            } else {
                format!(
                    "unknown fault response `{name}`: one of {}, or a mapping with one of {}",
                    PLAIN_RESPONSES.join(", "),
                    MAPPING_RESPONSES.join(", ")
                )
            };
            d.error(response_pos, message);
            FaultResponse::Ok
        }
        RawResponse::Ok => FaultResponse::Ok,
        RawResponse::Drop => FaultResponse::Drop,
        RawResponse::Reset => FaultResponse::Reset,
        RawResponse::Idle => {
            needs_response(d, "idle", at, at_pos);
            if let Some(problem) = stall_too_short(declared) {
                d.error(response_pos, problem);
            }
            FaultResponse::Idle
        }
        RawResponse::Stall { then } => {
            if let Some(problem) = stall_too_short(declared) {
                d.error(response_pos, problem);
            }
            let then = match then {
                None => StallThen::Abandon,
                Some(then) => {
                    if at != Position::BeforeCommit {
                        d.error(
                            then.pos,
                            format!(
                                "`then` says what a stall before the commit does once the client \
                                 left; at {} there is nothing left to decide (remove `then` or \
                                 use at: before_commit)",
                                at.name()
                            ),
                        );
                    }
                    match then.value {
                        RawThen::Abandon => StallThen::Abandon,
                        RawThen::Commit => {
                            if !only_creates(&when) {
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
            };
            FaultResponse::Stall { then }
        }
        RawResponse::Delay(delay) => {
            let delay =
                duration_in(d, delay, "delay", NONZERO, declared.stall_cap).unwrap_or(NONZERO);
            FaultResponse::Delay { delay }
        }
        RawResponse::Status(code) => {
            if !(400..=599).contains(&code.value) {
                d.error(
                    code.pos,
                    format!(
                        "status {} is not an HTTP error status (400 to 599)",
                        code.value
                    ),
                );
            }
            FaultResponse::Status {
                code: u16::try_from(code.value).unwrap_or(500),
            }
        }
        RawResponse::Partial(bytes) => {
            needs_response(d, "partial", at, at_pos);
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
    };
    FaultRule { when, at, response }
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

fn matcher(d: &mut Diagnostics, raw: &RawMatch, declared: &Declared) -> Match {
    if let Some(r) = &raw.resource {
        resource(d, r, declared.resources.as_deref());
    }
    if let Some(t) = &raw.tenant {
        tenant(d, t, &declared.tenants);
    }
    if let Some(nth) = &raw.nth {
        if nth.value == 0 {
            d.error(
                nth.pos,
                "nth counts from 1 (nth: 1 is the first matching request)",
            );
        }
    }
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
    Match {
        method: method.map(|m| method_name(m).to_owned()),
        resource: raw.resource.as_ref().map(|r| r.value.clone()),
        kind: kind.map(kind_of),
        tenant: raw.tenant.as_ref().map(|t| t.value.clone()),
        query: raw.query.as_ref().map(|q| query_name(q.value).to_owned()),
        nth: raw.nth.as_ref().map(|n| n.value),
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
/// first can never fire: that is a mistake in the file, not a plan.
fn unreachable_rules(d: &mut Diagnostics, raw: &[Sp<RawFault>], rules: &[FaultRule]) {
    for (later, rule) in rules.iter().enumerate() {
        let earlier = rules[..later]
            .iter()
            .position(|first| shadows(&first.when, &rule.when));
        if let (Some(earlier), Some(raw_rule)) = (earlier, raw.get(later)) {
            let line = raw.get(earlier).map_or(0, |r| r.pos.line);
            d.error(
                raw_rule.pos,
                format!(
                    "fault rule {} can never apply: rule {} (line {line}) matches every request \
                     it would, and the first matching rule wins",
                    later + 1,
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
    let wider = covers(&first.method, &second.method)
        && covers(&first.resource, &second.resource)
        && covers(&first.kind, &second.kind)
        && covers(&first.tenant, &second.tenant)
        && covers(&first.query, &second.query);
    let same = first.method == second.method
        && first.resource == second.resource
        && first.kind == second.kind
        && first.tenant == second.tenant
        && first.query == second.query;
    // Every request (no nth) of a wider filter; or the same nth of the very same filter.
    (first.nth.is_none() && wider) || (same && first.nth == second.nth)
}

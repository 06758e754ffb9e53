//! The simulator's fault rules, placed relative to a real upstream's answer.
//! A rule is checked once at start: a response the proxy cannot make exactly
//! is refused there, naming the rule, rather than ignored or approximated.
//! Matching follows the simulator's (first matching rule wins; every rule
//! counts the requests its fields match, for `nth` and `times`); the
//! simulator's own counters are private to it and read facts its profile
//! routes, so the proxy reads the same facts from the request's path here.

use std::sync::Mutex;

use lostreply_simulator::{FaultResponse, FaultRule, Position, Release, RequestKind};

/// Why a fault rule cannot be applied by the proxy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault rule {rule} (at: {}, response: {}): {why}", .at.name(), response_name(.response))]
pub struct RuleError {
    /// The rule's place in the scenario's `faults` (1-based).
    pub rule: usize,
    /// Where it would strike.
    pub at: Position,
    /// What it would do.
    pub response: FaultResponse,
    /// Why the proxy refuses it.
    pub why: &'static str,
}

/// The name a response has in a scenario file.
pub fn response_name(response: &FaultResponse) -> &'static str {
    match response {
        FaultResponse::Ok => "ok",
        FaultResponse::Drop => "drop",
        FaultResponse::Reset => "reset",
        FaultResponse::Stall { .. } => "stall",
        FaultResponse::Gather { .. } => "gather",
        FaultResponse::Delay { .. } => "delay",
        FaultResponse::Status { .. } => "status",
        FaultResponse::Partial { .. } => "partial",
        FaultResponse::Idle => "idle",
    }
}

/// Whether the proxy faults before forwarding (the upstream never sees the request).
pub fn before_upstream(at: Position) -> bool {
    match at {
        Position::BeforeRead | Position::BeforeCommit => true,
        Position::AfterCommit => false,
    }
}

/// Who runs steps in front of the proxy, which decides whether a rule
/// scoped to steps can ever fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steps {
    /// Nobody: clients send what they send (`lostreply proxy`).
    Absent,
    /// A harness run tells the proxy which step runs (`lostreply run --upstream`).
    Driven,
}

/// Refuses the first rule the proxy cannot make exactly.
pub fn check(rules: &[FaultRule], steps: Steps) -> Result<(), RuleError> {
    for (index, rule) in rules.iter().enumerate() {
        if let Some(why) = refusal(rule, steps) {
            return Err(RuleError {
                rule: index + 1,
                at: rule.at,
                response: rule.response,
                why,
            });
        }
    }
    Ok(())
}

fn refusal(rule: &FaultRule, steps: Steps) -> Option<&'static str> {
    if rule.when.steps.is_some() && steps == Steps::Absent {
        return Some("it is scoped to scenario steps, and nothing runs steps behind the proxy: it would never fire (remove `step`)");
    }
    let before = before_upstream(rule.at);
    match rule.response {
        FaultResponse::Ok | FaultResponse::Drop | FaultResponse::Reset => None,
        FaultResponse::Delay { .. } | FaultResponse::Status { .. } => None,
        FaultResponse::Stall {
            until: Release::StepEnd(_),
            ..
        } if steps == Steps::Absent => Some("a stall released at a step's end needs steps, and nothing runs steps behind the proxy"),
        FaultResponse::Stall { .. } => None,
        FaultResponse::Gather { .. } => Some("the proxy cannot gather requests: it holds no key in flight of its own"),
        FaultResponse::Partial { .. } | FaultResponse::Idle if before => {
            Some("there is no upstream answer to cut before the upstream has answered (use after_commit)")
        }
        FaultResponse::Partial { .. } | FaultResponse::Idle => None,
    }
}

/// What a rule can see of a request.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    /// Upper-case method.
    pub method: &'a str,
    /// The collection: the path's first segment after a version segment (`v1`).
    pub resource: Option<&'a str>,
    /// The kind, read as the generic API's routes read it.
    pub kind: Option<RequestKind>,
    /// The caller's credential (the contract's auth header, prefix removed).
    pub tenant: Option<&'a str>,
    /// The query's parameter names.
    pub query_names: Vec<&'a str>,
    /// The harness step running when the request arrived (0: none).
    pub step: u32,
}

impl<'a> Facts<'a> {
    /// The facts of `method` on `path` (with its query).
    pub fn read(method: &'a str, path: &'a str, tenant: Option<&'a str>) -> Facts<'a> {
        let (path_only, query) = path.split_once('?').unwrap_or((path, ""));
        let mut segments = path_only.split('/').filter(|s| !s.is_empty()).peekable();
        if segments.peek().is_some_and(|s| is_version(s)) {
            segments.next();
        }
        let resource = segments.next();
        let has_id = segments.next().is_some();
        let more = segments.next().is_some();
        let query_names: Vec<&str> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').map_or(p, |(n, _)| n))
            .collect();
        let kind = match (method, resource.is_some(), has_id, more) {
            ("POST" | "PUT", true, false, _) => Some(RequestKind::Create),
            ("GET", true, true, false) => Some(RequestKind::Retrieve),
            ("GET", true, false, _) if query_names.contains(&"client_reference") => {
                Some(RequestKind::Search)
            }
            ("GET", true, false, _) => Some(RequestKind::List),
            _ => None,
        };
        Facts {
            method,
            resource,
            kind,
            tenant,
            query_names,
            step: 0,
        }
    }

    /// The same facts, arrived while harness step `step` runs.
    pub fn during(self, step: u32) -> Facts<'a> {
        Facts { step, ..self }
    }
}

fn is_version(segment: &str) -> bool {
    segment.len() > 1
        && segment.starts_with('v')
        && segment[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The rules with their counts: ordered, first match wins.
#[derive(Debug)]
pub struct Rules {
    rules: Vec<FaultRule>,
    seen: Mutex<Vec<u64>>,
}

impl Rules {
    /// Rules already [`check`]ed.
    pub fn new(rules: Vec<FaultRule>) -> Rules {
        let seen = Mutex::new(vec![0; rules.len()]);
        Rules { rules, seen }
    }

    /// Counts `facts` against every rule and returns the first that matches,
    /// `nth` and `times` included, with its place (0-based). Every rule counts
    /// every request its other fields match, even when an earlier rule wins.
    pub fn select(&self, facts: &Facts<'_>) -> Option<(usize, &FaultRule)> {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut winner = None;
        for (index, rule) in self.rules.iter().enumerate() {
            if !fields_match(rule, facts) {
                continue;
            }
            let Some(count) = seen.get_mut(index) else {
                continue;
            };
            *count += 1;
            let nth_holds = rule.when.nth.is_none_or(|nth| u64::from(nth) == *count);
            let times_hold = rule.when.times.is_none_or(|t| *count <= u64::from(t));
            if nth_holds && times_hold && winner.is_none() {
                winner = Some((index, rule));
            }
        }
        winner
    }
}

fn fields_match(rule: &FaultRule, facts: &Facts<'_>) -> bool {
    let when = &rule.when;
    when.method.as_deref().is_none_or(|m| m == facts.method)
        && when
            .resource
            .as_deref()
            .is_none_or(|r| Some(r) == facts.resource)
        && when.kind.is_none_or(|k| Some(k) == facts.kind)
        && when
            .tenant
            .as_deref()
            .is_none_or(|t| Some(t) == facts.tenant)
        && when
            .query
            .as_deref()
            .is_none_or(|q| facts.query_names.contains(&q))
        && when
            .steps
            .as_ref()
            .is_none_or(|steps| steps.contains(&facts.step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_follow_the_generic_routes() {
        let f = Facts::read("POST", "/v1/orders", None);
        assert_eq!(
            (f.resource, f.kind),
            (Some("orders"), Some(RequestKind::Create))
        );
        let f = Facts::read("GET", "/v1/orders/ord_1", None);
        assert_eq!(f.kind, Some(RequestKind::Retrieve));
        let f = Facts::read("GET", "/orders?client_reference=x&limit=2", None);
        assert_eq!(
            (f.resource, f.kind),
            (Some("orders"), Some(RequestKind::Search))
        );
        assert_eq!(f.query_names, vec!["client_reference", "limit"]);
        let f = Facts::read("DELETE", "/v1/orders/1", None);
        assert_eq!(f.kind, None);
    }

    #[test]
    fn nth_counts_only_matching_requests() {
        let mut when = lostreply_simulator::Match::default();
        when.method = Some("POST".to_owned());
        when.nth = Some(2);
        let rules = Rules::new(vec![FaultRule::builder()
            .when(when)
            .at(Position::AfterCommit)
            .response(FaultResponse::Drop)
            .build()]);
        let post = Facts::read("POST", "/v1/orders", None);
        let get = Facts::read("GET", "/v1/orders", None);
        assert!(rules.select(&post).is_none());
        assert!(rules.select(&get).is_none());
        assert_eq!(rules.select(&post).map(|(i, _)| i), Some(0));
        assert!(rules.select(&post).is_none());
    }

    #[test]
    fn refusals_name_the_rule() {
        let rule = |at, response| {
            FaultRule::builder()
                .when(lostreply_simulator::Match::default())
                .at(at)
                .response(response)
                .build()
        };
        let ok = rule(Position::AfterCommit, FaultResponse::Partial { bytes: 3 });
        let bad = rule(Position::BeforeCommit, FaultResponse::Idle);
        let err = check(&[ok, bad], Steps::Absent).err();
        assert_eq!(err.as_ref().map(|e| e.rule), Some(2));
        assert!(err.is_some_and(|e| e
            .to_string()
            .starts_with("fault rule 2 (at: before_commit, response: idle)")));
    }
}

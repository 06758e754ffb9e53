//! Fault rule selection: ordered rules, first match wins, per-rule counters
//! for `nth` and `times` (counting only the requests a rule's fields, its
//! step scope included, let through).

use crate::plan::{FaultRule, Match, RequestKind};

/// What a rule can see of a request when it arrives (before its body is read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestFacts<'a> {
    pub method: &'a str,
    pub resource: Option<&'a str>,
    pub kind: Option<RequestKind>,
    pub tenant: Option<&'a str>,
    pub query_names: &'a [String],
    /// The harness step running when the request arrived.
    pub step: Option<u32>,
}

/// Per-rule counts of the requests that matched each rule's fields.
#[derive(Debug)]
pub(crate) struct FaultCounters {
    seen: Vec<u64>,
}

impl FaultCounters {
    pub(crate) fn new(rules: usize) -> FaultCounters {
        FaultCounters {
            seen: vec![0; rules],
        }
    }

    /// Counts `facts` against every rule and returns the first rule that matches,
    /// `nth` included. Every rule counts every request that matches its other
    /// fields, even when an earlier rule wins: `nth: 2` is the second such
    /// request, whatever happened to the first.
    pub(crate) fn select(
        &mut self,
        rules: &[FaultRule],
        facts: &RequestFacts<'_>,
    ) -> Option<usize> {
        let mut winner = None;
        for (index, rule) in rules.iter().enumerate() {
            if !rule_matches(rule, facts) {
                continue;
            }
            let Some(seen) = self.seen.get_mut(index) else {
                continue;
            };
            *seen += 1;
            let nth_holds = rule.when.nth.is_none_or(|nth| u64::from(nth) == *seen);
            let times_hold = rule
                .when
                .times
                .is_none_or(|times| *seen <= u64::from(times));
            if nth_holds && times_hold && winner.is_none() {
                winner = Some(index);
            }
        }
        winner
    }
}

fn rule_matches(rule: &FaultRule, facts: &RequestFacts<'_>) -> bool {
    fields_match(&rule.when, facts)
}

/// Whether `when`'s fields (its counts aside) hold of a request with `facts`.
pub(crate) fn fields_match(when: &Match, facts: &RequestFacts<'_>) -> bool {
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
            .is_none_or(|q| facts.query_names.iter().any(|n| n == q))
        && when
            .steps
            .as_ref()
            .is_none_or(|steps| facts.step.is_some_and(|s| steps.contains(&s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FaultResponse, Position};

    fn rule(method: &str, nth: Option<u32>, response: FaultResponse) -> FaultRule {
        FaultRule {
            when: Match {
                method: Some(method.to_owned()),
                nth,
                ..Match::default()
            },
            at: Position::AfterCommit,
            response,
        }
    }

    #[test]
    fn first_match_wins_and_every_rule_counts() {
        let rules = vec![
            rule("POST", Some(1), FaultResponse::Drop),
            rule("POST", Some(2), FaultResponse::Reset),
            rule(
                "POST",
                None,
                FaultResponse::Status {
                    code: 500,
                    retry_after_s: None,
                },
            ),
        ];
        let mut counters = FaultCounters::new(rules.len());
        let facts = RequestFacts {
            method: "POST",
            resource: None,
            kind: None,
            tenant: None,
            query_names: &[],
            step: None,
        };
        let picks: Vec<Option<usize>> = (0..3).map(|_| counters.select(&rules, &facts)).collect();
        assert_eq!(picks, vec![Some(0), Some(1), Some(2)]);
        let get = RequestFacts {
            method: "GET",
            ..facts
        };
        assert!(counters.select(&rules, &get).is_none());
    }

    #[test]
    fn a_step_scoped_rule_counts_only_inside_its_steps() {
        let mut scoped = rule("POST", None, FaultResponse::Drop);
        scoped.when.steps = Some([2].into_iter().collect());
        scoped.when.times = Some(2);
        let rules = vec![scoped];
        let mut counters = FaultCounters::new(rules.len());
        let at = |step| RequestFacts {
            method: "POST",
            resource: None,
            kind: None,
            tenant: None,
            query_names: &[],
            step,
        };
        let picks: Vec<bool> = [Some(1), None, Some(2), Some(2), Some(2), Some(3)]
            .into_iter()
            .map(|step| counters.select(&rules, &at(step)).is_some())
            .collect();
        assert_eq!(picks, vec![false, false, true, true, false, false]);
    }
}

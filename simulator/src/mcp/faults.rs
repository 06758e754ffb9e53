//! MCP fault rule selection, as `crate::faults` does it for `/v1`: ordered
//! rules, the first match wins, and every rule counts every call its fields
//! (tool, steps) let through, so `nth: 2` is the second such call whatever
//! happened to the first.

use super::plan::{McpFault, McpRule};
pub(crate) use crate::shared::mcp_state::McpCounters;

impl McpCounters {
    /// The rule that decides a call of `tool` arriving during `step`.
    pub(crate) fn select(
        &mut self,
        rules: &[McpRule],
        tool: &str,
        step: Option<u32>,
    ) -> Option<(usize, McpRule)> {
        let mut winner = None;
        for (index, rule) in rules.iter().enumerate() {
            let when = &rule.when;
            let fields = when.tool.as_deref().is_none_or(|t| t == tool)
                && when
                    .steps
                    .as_ref()
                    .is_none_or(|steps| step.is_some_and(|s| steps.contains(&s)));
            if !fields {
                continue;
            }
            let Some(seen) = self.seen.get_mut(index) else {
                continue;
            };
            *seen += 1;
            let nth_holds = when.nth.is_none_or(|nth| u64::from(nth) == *seen);
            let times_hold = when.times.is_none_or(|times| *seen <= u64::from(times));
            if nth_holds && times_hold && winner.is_none() {
                winner = Some((index, rule.clone()));
            }
        }
        winner
    }
}

/// The fault's name in the journal and the docs.
pub(crate) fn fault_name(fault: &McpFault) -> &'static str {
    match fault {
        McpFault::Ok => "ok",
        McpFault::Slow { .. } => "slow",
        McpFault::Stall { .. } => "stall",
        McpFault::Late { .. } => "late",
        McpFault::Never => "never",
        McpFault::IsError { .. } => "is_error",
        McpFault::RpcError { .. } => "rpc_error",
        McpFault::Http { .. } => "http",
        McpFault::Drop { .. } => "drop",
        McpFault::Reset { .. } => "reset",
        McpFault::Task { .. } => "task",
        McpFault::PrimeThenClose { .. } => "prime_then_close",
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::{CancelPolicy, McpMatch};
    use super::*;

    fn rule(tool: Option<&str>, times: Option<u32>, steps: Option<&[u32]>) -> McpRule {
        McpRule {
            when: McpMatch {
                tool: tool.map(str::to_owned),
                nth: None,
                times,
                steps: steps.map(|s| s.iter().copied().collect()),
            },
            fault: McpFault::Never,
            cancel: CancelPolicy::Ignore,
        }
    }

    #[test]
    fn first_match_wins_and_times_count_only_inside_steps() {
        let rules = vec![
            rule(Some("create_ticket"), Some(1), Some(&[2])),
            rule(None, None, None),
        ];
        let mut counters = McpCounters::new(rules.len());
        let picks: Vec<Option<usize>> = [
            ("create_ticket", Some(1)),
            ("create_ticket", Some(2)),
            ("create_ticket", Some(2)),
            ("get_operation", Some(2)),
        ]
        .into_iter()
        .map(|(tool, step)| counters.select(&rules, tool, step).map(|(i, _)| i))
        .collect();
        assert_eq!(picks, vec![Some(1), Some(0), Some(1), Some(1)]);
    }
}

//! Checks of the MCP plan at start, with messages that name the field.

use std::collections::BTreeSet;
use std::time::Duration;

use super::plan::{McpFault, McpPlan, Stream};
use super::tools::{GET_OPERATION, LIST_RECENT};
use crate::names::is_valid_resource_name;
use crate::plan::{Limits, Plan, Release};

/// Longest tool name (the MCP spec's advice).
const MAX_TOOL_NAME_BYTES: usize = 128;

fn tool_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Checks `mcp` against the plan it is part of.
pub(crate) fn check(plan: &Plan, mcp: &McpPlan) -> Result<(), String> {
    if mcp.revisions.is_empty() {
        return Err("mcp.revisions: at least one protocol revision is needed".to_owned());
    }
    let unique: BTreeSet<_> = mcp.revisions.iter().collect();
    if unique.len() != mcp.revisions.len() {
        return Err("mcp.revisions: a revision appears twice".to_owned());
    }
    let mut names = BTreeSet::new();
    for (index, tool) in mcp.tools.iter().enumerate() {
        if !tool_name_ok(&tool.name) {
            return Err(format!(
                "mcp.tools[{index}].name: `{}` must be 1-{MAX_TOOL_NAME_BYTES} of A-Z a-z 0-9 _ - .",
                tool.name
            ));
        }
        if tool.name == GET_OPERATION || tool.name == LIST_RECENT {
            return Err(format!(
                "mcp.tools[{index}].name: `{}` is a retrieval tool's name",
                tool.name
            ));
        }
        if !names.insert(tool.name.as_str()) {
            return Err(format!(
                "mcp.tools[{index}].name: `{}` appears twice",
                tool.name
            ));
        }
        let allowed = is_valid_resource_name(&tool.resource)
            && plan
                .resources
                .as_ref()
                .is_none_or(|set| set.contains(&tool.resource));
        if !allowed {
            return Err(format!(
                "mcp.tools[{index}].resource: `{}` is not a resource of the plan",
                tool.resource
            ));
        }
        if tool
            .key_argument
            .as_deref()
            .is_some_and(|k| !tool_name_ok(k))
        {
            return Err(format!(
                "mcp.tools[{index}].key_argument: must be 1-{MAX_TOOL_NAME_BYTES} of A-Z a-z 0-9 _ - ."
            ));
        }
    }
    if mcp.retrieval.retention.is_zero() {
        return Err("mcp.retrieval.retention: must be longer than zero".to_owned());
    }
    if !(1..=1000).contains(&mcp.retrieval.list_limit) {
        return Err("mcp.retrieval.list_limit: 1..=1000".to_owned());
    }
    if mcp.tasks.enabled && mcp.tasks.ttl.is_zero() {
        return Err("mcp.tasks.ttl: must be longer than zero".to_owned());
    }
    let limits = &mcp.limits;
    if limits.max_sessions == 0 || limits.max_tasks == 0 || limits.max_body_bytes == 0 {
        return Err(
            "mcp.limits: max_sessions, max_tasks and max_body_bytes must be at least 1".to_owned(),
        );
    }
    let known = |tool: &str| {
        names.contains(tool)
            || (mcp.retrieval.enabled && (tool == GET_OPERATION || tool == LIST_RECENT))
    };
    for (index, rule) in mcp.faults.iter().enumerate() {
        let when = &rule.when;
        if let Some(tool) = &when.tool {
            if !known(tool) {
                return Err(format!(
                    "mcp.faults[{index}].when.tool: `{tool}` is not a tool of the plan"
                ));
            }
        }
        if when.nth == Some(0) {
            return Err(format!("mcp.faults[{index}].when.nth: counts from 1"));
        }
        if when.times == Some(0) {
            return Err(format!("mcp.faults[{index}].when.times: at least 1"));
        }
        if when.nth.is_some() && when.times.is_some() {
            return Err(format!(
                "mcp.faults[{index}].when: nth and times exclude each other"
            ));
        }
        if when
            .steps
            .as_ref()
            .is_some_and(|s| s.is_empty() || s.contains(&0))
        {
            return Err(format!(
                "mcp.faults[{index}].when.steps: steps count from 1, and at least one is needed"
            ));
        }
        if let Some(why) = fault_error(&rule.fault, mcp, &plan.limits) {
            return Err(format!("mcp.faults[{index}].fault: {why}"));
        }
    }
    Ok(())
}

fn stream_error(stream: Stream, limits: &Limits) -> Option<String> {
    match stream {
        Stream::Nothing | Stream::HeadersThenSilence => None,
        Stream::KeepAlive { every } | Stream::Progress { every } => within(
            "the stream's interval",
            every,
            limits.stall_cap,
            "stall_cap",
        ),
    }
}

fn within(what: &str, value: Duration, cap: Duration, cap_name: &str) -> Option<String> {
    (value.is_zero() || value > cap).then(|| {
        format!(
            "{what} must be more than 0 and at most {cap_name} ({} ms)",
            cap.as_millis()
        )
    })
}

fn status_error(status: u16) -> Option<String> {
    (!(400..=599).contains(&status))
        .then(|| format!("status {status} is not an error status (400..=599)"))
}

fn fault_error(fault: &McpFault, mcp: &McpPlan, limits: &Limits) -> Option<String> {
    match fault {
        McpFault::Ok | McpFault::Never | McpFault::PrimeThenClose { .. } => None,
        McpFault::Slow { work, stream } => within("slow work", *work, limits.hold_cap, "hold_cap")
            .or_else(|| stream_error(*stream, limits)),
        McpFault::Stall { until, stream, .. } => match until {
            Release::StepEnd(0) => {
                Some("a stall until the end of step 0: steps count from 1".to_owned())
            }
            Release::StepEnd(_) | Release::ClientGone => stream_error(*stream, limits),
        },
        McpFault::Late { after } => within("late's wait", *after, limits.stall_cap, "stall_cap"),
        McpFault::IsError { status, .. } | McpFault::Http { status, .. } => status_error(*status),
        McpFault::RpcError { code, message } => {
            if *code == 0 || message.is_empty() {
                Some("an rpc_error needs a non-zero code and a message".to_owned())
            } else {
                None
            }
        }
        McpFault::Drop { .. } | McpFault::Reset { .. } => None,
        McpFault::Task { .. } => {
            (!mcp.tasks.enabled).then(|| "a task fault needs mcp.tasks.enabled".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::{CancelPolicy, McpMatch, McpRule, PaidTool};
    use super::*;

    fn checked(mcp: McpPlan) -> Result<(), String> {
        check(&Plan::default(), &mcp)
    }

    #[test]
    fn the_default_plan_is_valid_and_mistakes_are_named() {
        assert_eq!(checked(McpPlan::default()), Ok(()));
        let mut clash = McpPlan::default();
        clash.tools.push(PaidTool {
            name: GET_OPERATION.to_owned(),
            ..PaidTool::ticket()
        });
        assert!(checked(clash).is_err_and(|e| e.contains("retrieval tool")));
        let mut twice = McpPlan::default();
        twice.tools.push(PaidTool::ticket());
        assert!(checked(twice).is_err_and(|e| e.contains("appears twice")));
        let mut no_revision = McpPlan::default();
        no_revision.revisions.clear();
        assert!(checked(no_revision).is_err_and(|e| e.contains("revisions")));
        let rule = |when: McpMatch, fault: McpFault| McpRule {
            when,
            fault,
            cancel: CancelPolicy::Ignore,
        };
        let cases = [
            (
                rule(
                    McpMatch {
                        tool: Some("nope".to_owned()),
                        ..McpMatch::default()
                    },
                    McpFault::Never,
                ),
                "not a tool",
            ),
            (
                rule(
                    McpMatch {
                        nth: Some(1),
                        times: Some(1),
                        ..McpMatch::default()
                    },
                    McpFault::Never,
                ),
                "exclude",
            ),
            (
                rule(
                    McpMatch::default(),
                    McpFault::Http {
                        status: 200,
                        at: super::super::plan::CommitPoint::AfterCommit,
                    },
                ),
                "not an error status",
            ),
            (
                rule(
                    McpMatch::default(),
                    McpFault::Late {
                        after: Duration::from_secs(3600),
                    },
                ),
                "stall_cap",
            ),
        ];
        for (bad, why) in cases {
            let mut mcp = McpPlan::default();
            mcp.faults.push(bad);
            assert!(checked(mcp).is_err_and(|e| e.contains(why)), "{why}");
        }
    }
}

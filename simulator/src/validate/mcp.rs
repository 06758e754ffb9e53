//! Checks of the MCP plan at start, with messages that name the field.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::names::is_valid_resource_name;
use crate::plan::mcp::{McpFault, McpPlan, Stream, GET_OPERATION, LIST_RECENT};
use crate::plan::{Limits, Plan, Release};

/// Longest tool name (the MCP spec's advice).
const MAX_TOOL_NAME_BYTES: usize = 128;

/// Why an MCP plan is refused; each message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpPlanError {
    /// No protocol revision to negotiate.
    #[error("mcp.revisions: at least one protocol revision is needed")]
    NoRevision,
    /// A protocol revision listed twice.
    #[error("mcp.revisions: a revision appears twice")]
    RepeatedRevision,
    /// A tool name outside the MCP spec's advice.
    #[error(
        "mcp.tools[{index}].name: `{name}` must be 1-{MAX_TOOL_NAME_BYTES} of A-Z a-z 0-9 _ - ."
    )]
    BadToolName {
        /// Which entry of its list, from 0.
        index: usize,
        /// The name as given.
        name: String,
    },
    /// A paid tool named like a retrieval tool.
    #[error("mcp.tools[{index}].name: `{name}` is a retrieval tool's name")]
    RetrievalToolName {
        /// Which entry of its list, from 0.
        index: usize,
        /// The name as given.
        name: String,
    },
    /// Two tools of one name.
    #[error("mcp.tools[{index}].name: `{name}` appears twice")]
    RepeatedToolName {
        /// Which entry of its list, from 0.
        index: usize,
        /// The name as given.
        name: String,
    },
    /// A tool committing into a resource the plan does not have.
    #[error("mcp.tools[{index}].resource: `{resource}` is not a resource of the plan")]
    UnknownResource {
        /// Which entry of its list, from 0.
        index: usize,
        /// The resource as given.
        resource: String,
    },
    /// A key argument named outside the tool-name rules.
    #[error(
        "mcp.tools[{index}].key_argument: must be 1-{MAX_TOOL_NAME_BYTES} of A-Z a-z 0-9 _ - ."
    )]
    BadKeyArgument {
        /// Which entry of its list, from 0.
        index: usize,
    },
    /// Operations that are forgotten at once.
    #[error("mcp.retrieval.retention: must be longer than zero")]
    ZeroRetention,
    /// A list size out of range.
    #[error("mcp.retrieval.list_limit: 1..=1000")]
    ListLimitOutOfRange,
    /// Tasks that expire at once.
    #[error("mcp.tasks.ttl: must be longer than zero")]
    ZeroTaskTtl,
    /// A limit that admits nothing.
    #[error(
        "mcp.limits: max_sessions, max_tasks and max_body_bytes must be at least 1, session_idle longer than zero"
    )]
    ZeroLimit,
    /// A fault rule for a tool the plan does not have.
    #[error("mcp.faults[{index}].when.tool: `{tool}` is not a tool of the plan")]
    UnknownFaultTool {
        /// Which entry of its list, from 0.
        index: usize,
        /// The tool as given.
        tool: String,
    },
    /// `nth: 0`.
    #[error("mcp.faults[{index}].when.nth: counts from 1")]
    NthZero {
        /// Which entry of its list, from 0.
        index: usize,
    },
    /// `times: 0`.
    #[error("mcp.faults[{index}].when.times: at least 1")]
    TimesZero {
        /// Which entry of its list, from 0.
        index: usize,
    },
    /// Both `nth` and `times`.
    #[error("mcp.faults[{index}].when: nth and times exclude each other")]
    NthAndTimes {
        /// Which entry of its list, from 0.
        index: usize,
    },
    /// An empty step list, or step 0.
    #[error("mcp.faults[{index}].when.steps: steps count from 1, and at least one is needed")]
    BadSteps {
        /// Which entry of its list, from 0.
        index: usize,
    },
    /// A fault that cannot happen as written.
    #[error("mcp.faults[{index}].fault: {error}")]
    Fault {
        /// Which entry of its list, from 0.
        index: usize,
        /// Why the fault cannot happen.
        error: McpFaultError,
    },
}

/// Why one MCP fault cannot happen as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpFaultError {
    /// A wait of zero, or beyond its cap.
    #[error("{what} must be more than 0 and at most {cap_name} ({} ms)", .cap.as_millis())]
    OutOfRange {
        /// The wait, by its field's name.
        what: &'static str,
        /// The limit it exceeds, by its field's name.
        cap_name: &'static str,
        /// That limit's value.
        cap: Duration,
    },
    /// An HTTP or tool-error status outside 400..=599.
    #[error("status {0} is not an error status (400..=599)")]
    NotErrorStatus(u16),
    /// A stall until step 0, which never ends.
    #[error("a stall until the end of step 0: steps count from 1")]
    StallUntilStepZero,
    /// A JSON-RPC error without a code or a message.
    #[error("an rpc_error needs a non-zero code and a message")]
    EmptyRpcError,
    /// A task fault while tasks are off.
    #[error("a task fault needs mcp.tasks.enabled")]
    TaskWithoutTasks,
}

fn tool_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Checks `mcp` against the plan it is part of.
pub(crate) fn check(plan: &Plan, mcp: &McpPlan) -> Result<(), McpPlanError> {
    if mcp.revisions.is_empty() {
        return Err(McpPlanError::NoRevision);
    }
    let unique: BTreeSet<_> = mcp.revisions.iter().collect();
    if unique.len() != mcp.revisions.len() {
        return Err(McpPlanError::RepeatedRevision);
    }
    let mut names = BTreeSet::new();
    for (index, tool) in mcp.tools.iter().enumerate() {
        if !tool_name_ok(&tool.name) {
            return Err(McpPlanError::BadToolName {
                index,
                name: tool.name.clone(),
            });
        }
        if tool.name == GET_OPERATION || tool.name == LIST_RECENT {
            return Err(McpPlanError::RetrievalToolName {
                index,
                name: tool.name.clone(),
            });
        }
        if !names.insert(tool.name.as_str()) {
            return Err(McpPlanError::RepeatedToolName {
                index,
                name: tool.name.clone(),
            });
        }
        let allowed = is_valid_resource_name(&tool.resource)
            && plan
                .resources
                .as_ref()
                .is_none_or(|set| set.contains(&tool.resource));
        if !allowed {
            return Err(McpPlanError::UnknownResource {
                index,
                resource: tool.resource.clone(),
            });
        }
        if tool
            .key_argument
            .as_deref()
            .is_some_and(|k| !tool_name_ok(k))
        {
            return Err(McpPlanError::BadKeyArgument { index });
        }
    }
    if mcp.retrieval.retention.is_zero() {
        return Err(McpPlanError::ZeroRetention);
    }
    if !(1..=1000).contains(&mcp.retrieval.list_limit) {
        return Err(McpPlanError::ListLimitOutOfRange);
    }
    if mcp.tasks.enabled && mcp.tasks.ttl.is_zero() {
        return Err(McpPlanError::ZeroTaskTtl);
    }
    let limits = &mcp.limits;
    if limits.max_sessions == 0
        || limits.max_tasks == 0
        || limits.max_body_bytes == 0
        || limits.session_idle.is_zero()
    {
        return Err(McpPlanError::ZeroLimit);
    }
    let known = |tool: &str| {
        names.contains(tool)
            || (mcp.retrieval.enabled && (tool == GET_OPERATION || tool == LIST_RECENT))
    };
    for (index, rule) in mcp.faults.iter().enumerate() {
        let when = &rule.when;
        if let Some(tool) = &when.tool {
            if !known(tool) {
                return Err(McpPlanError::UnknownFaultTool {
                    index,
                    tool: tool.clone(),
                });
            }
        }
        if when.nth == Some(0) {
            return Err(McpPlanError::NthZero { index });
        }
        if when.times == Some(0) {
            return Err(McpPlanError::TimesZero { index });
        }
        if when.nth.is_some() && when.times.is_some() {
            return Err(McpPlanError::NthAndTimes { index });
        }
        if when
            .steps
            .as_ref()
            .is_some_and(|s| s.is_empty() || s.contains(&0))
        {
            return Err(McpPlanError::BadSteps { index });
        }
        if let Some(error) = fault_error(&rule.fault, mcp, &plan.limits) {
            return Err(McpPlanError::Fault { index, error });
        }
    }
    Ok(())
}

fn stream_error(stream: Stream, limits: &Limits) -> Option<McpFaultError> {
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

fn within(
    what: &'static str,
    value: Duration,
    cap: Duration,
    cap_name: &'static str,
) -> Option<McpFaultError> {
    (value.is_zero() || value > cap).then_some(McpFaultError::OutOfRange {
        what,
        cap_name,
        cap,
    })
}

fn status_error(status: u16) -> Option<McpFaultError> {
    (!(400..=599).contains(&status)).then_some(McpFaultError::NotErrorStatus(status))
}

fn fault_error(fault: &McpFault, mcp: &McpPlan, limits: &Limits) -> Option<McpFaultError> {
    match fault {
        McpFault::Ok | McpFault::Never | McpFault::PrimeThenClose { .. } => None,
        McpFault::Slow { work, stream } => within("slow work", *work, limits.hold_cap, "hold_cap")
            .or_else(|| stream_error(*stream, limits)),
        McpFault::Stall { until, stream, .. } => match until {
            Release::StepEnd(0) => Some(McpFaultError::StallUntilStepZero),
            Release::StepEnd(_) | Release::ClientGone => stream_error(*stream, limits),
        },
        McpFault::Late { after } => within("late's wait", *after, limits.stall_cap, "stall_cap"),
        McpFault::IsError { status, .. } | McpFault::Http { status, .. } => status_error(*status),
        McpFault::RpcError { code, message } => {
            if *code == 0 || message.is_empty() {
                Some(McpFaultError::EmptyRpcError)
            } else {
                None
            }
        }
        McpFault::Drop { .. } | McpFault::Reset { .. } => None,
        McpFault::Task { .. } => (!mcp.tasks.enabled).then_some(McpFaultError::TaskWithoutTasks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::mcp::{CancelPolicy, CommitPoint, McpMatch, McpRule, PaidTool};

    /// The refusal's message, as the simulator's start reports it.
    fn refusal(mcp: McpPlan) -> Option<String> {
        check(&Plan::default(), &mcp).err().map(|e| e.to_string())
    }

    #[test]
    fn the_default_plan_is_valid_and_mistakes_are_named() {
        assert_eq!(refusal(McpPlan::default()), None);
        let mut clash = McpPlan::default();
        clash.tools.push(PaidTool {
            name: GET_OPERATION.to_owned(),
            ..PaidTool::ticket()
        });
        assert!(refusal(clash).is_some_and(|e| e.contains("retrieval tool")));
        let mut twice = McpPlan::default();
        twice.tools.push(PaidTool::ticket());
        assert_eq!(
            refusal(twice).as_deref(),
            Some("mcp.tools[2].name: `create_ticket` appears twice")
        );
        let mut no_revision = McpPlan::default();
        no_revision.revisions.clear();
        assert!(refusal(no_revision).is_some_and(|e| e.contains("revisions")));
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
                        at: CommitPoint::AfterCommit,
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
            assert!(refusal(mcp).is_some_and(|e| e.contains(why)), "{why}");
        }
    }
}

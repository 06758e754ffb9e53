//! MCP fault rules (`call:`): the matcher (`tool`, `step`, `nth`/`times`), the
//! fault, its durations scaled like the client's windows, and `cancel`.

use std::time::Duration;

use lostreply_simulator::mcp::{
    CancelPolicy, CommitPoint, McpFault, McpMatch, McpRule, Stream, TaskEnd,
};
use lostreply_simulator::{Release, StallThen};

use super::common::{duration_in, show, MAX_VIRTUAL, NONZERO};
use super::declared::{Declared, McpDeclared};
use super::fault_match::{counts_and_steps, step_end};
use super::mcp::MAX_TEXT;
use crate::scenario::client_profiles::McpClient;
use crate::scenario::error::Diagnostics;
use crate::scenario::raw::{
    DurationText, RawCall, RawCallStall, RawCancel, RawCommitPoint, RawFault, RawIsError, RawMatch,
    RawRpcError, RawStream, RawTaskCall, RawTaskEnd, RawThen, MAPPING_CALLS, PLAIN_CALLS,
};
use crate::scenario::span::{Pos, Sp};

/// One MCP rule. Problems are recorded; the result is a stand-in where the
/// file is wrong.
pub(super) fn rule(
    d: &mut Diagnostics,
    raw: &Sp<RawFault>,
    call: &Sp<RawCall>,
    declared: &Declared,
) -> McpRule {
    let empty = RawMatch::default();
    let when_raw = raw.value.when.as_ref().map_or(&empty, |w| &w.value);
    let mcp = declared.mcp.as_ref();
    let when = matcher(d, when_raw, declared, mcp);
    // Without `mcp:` (already reported) the durations are read unscaled, so
    // that their own problems still show.
    let client = mcp.map(|m| m.client.clone()).unwrap_or(McpClient {
        profile: "custom".to_owned(),
        scale: 1.0,
        real: crate::scenario::client_profiles::Windows::NONE,
    });
    let context = Context {
        declared,
        mcp,
        client: &client,
        tool: when_raw.tool.as_ref(),
    };
    let (fault, held) = fault(d, call, &context);
    let cancel = match &raw.value.cancel {
        None => CancelPolicy::Ignore,
        Some(cancel) => {
            if !held {
                d.error(
                    cancel.pos,
                    "`cancel` says what a notifications/cancelled does while the server holds a \
                     call; this fault answers at once (use it with slow, stall, late, never or \
                     prime_then_close)",
                );
            }
            match cancel.value {
                RawCancel::Honour => CancelPolicy::Honour,
                RawCancel::Ignore => CancelPolicy::Ignore,
                RawCancel::Race => CancelPolicy::Race,
            }
        }
    };
    McpRule::builder()
        .when(when)
        .fault(fault)
        .cancel(cancel)
        .build()
}

/// What the checks of one fault need.
struct Context<'a> {
    declared: &'a Declared,
    mcp: Option<&'a McpDeclared>,
    client: &'a McpClient,
    /// The rule's `when.tool`, if given.
    tool: Option<&'a Sp<String>>,
}

impl Context<'_> {
    /// True when the rule can only match calls of paid tools (which commit).
    fn only_paid(&self) -> bool {
        match (self.tool, self.mcp) {
            (Some(tool), Some(mcp)) => mcp.paid(&tool.value).is_some(),
            // Without `mcp:` there is nothing to tell; that is reported already.
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// Requires a paid tool in `when` for a fault that commits or becomes a task.
    fn needs_paid(&self, d: &mut Diagnostics, pos: Pos, what: &str) {
        if !self.only_paid() {
            let tools = self
                .mcp
                .map(|m| m.paid_names().join(", "))
                .unwrap_or_default();
            d.error(
                pos,
                format!(
                    "{what}, so the rule must match only a paid tool's calls: add `tool:` with \
                     one of ({tools}) to `when`"
                ),
            );
        }
    }

    /// A real-time duration of a fault, written in real figures: scaled like
    /// the client's windows, then at least 1 ms and at most `stall_cap`.
    fn real_time(&self, d: &mut Diagnostics, raw: &Sp<DurationText>, what: &str) -> Duration {
        let Some(real) = duration_in(d, raw, what, NONZERO, MAX_VIRTUAL) else {
            return NONZERO;
        };
        let scaled = self.client.scale(real);
        let cap = self.declared.stall_cap;
        if scaled.is_zero() {
            d.error(
                raw.pos,
                format!(
                    "{what} {} scales to 0 ms at scale {}: write it in real figures, at least \
                     1 ms once scaled",
                    show(real),
                    self.client.scale
                ),
            );
            NONZERO
        } else if scaled > cap {
            d.error(
                raw.pos,
                format!(
                    "{what} {} scales to {}, more than stall_cap ({}): every wait is bounded \
                     (lower it, lower scale, or raise provider.limits.stall_cap)",
                    show(real),
                    show(scaled),
                    show(cap)
                ),
            );
            cap
        } else {
            scaled
        }
    }

    /// A hold that ends when the client leaves must outlast the client's
    /// shortest window, or the server lets go first.
    fn hold_outlasts_client(&self, d: &mut Diagnostics, pos: Pos, name: &str) {
        let cap = self.declared.stall_cap;
        if let Some(shortest) = self.client.scaled().shortest() {
            if cap <= shortest {
                d.error(
                    pos,
                    format!(
                        "`{name}` holds the call until the client gives up, but stall_cap ({}) \
                         is not longer than the client's shortest window ({} scaled): raise \
                         provider.limits.stall_cap or lower scale",
                        show(cap),
                        show(shortest)
                    ),
                );
            }
        }
    }
}

/// The fault, and whether the server holds the call (so `cancel` means something).
fn fault(d: &mut Diagnostics, call: &Sp<RawCall>, cx: &Context) -> (McpFault, bool) {
    let pos = call.pos;
    match &call.value {
        RawCall::Unknown(name) => {
            unknown_call(d, name, pos);
            (McpFault::Ok, false)
        }
        RawCall::Ok => (McpFault::Ok, false),
        RawCall::Never => {
            cx.hold_outlasts_client(d, pos, "never");
            (McpFault::Never, true)
        }
        RawCall::Slow(slow) => {
            let work = cx.real_time(d, &slow.value.work, "work");
            let stream = stream(d, slow.value.stream.as_ref(), slow.value.every.as_ref(), cx);
            (McpFault::Slow { work, stream }, true)
        }
        RawCall::Stall(raw) => (stall(d, raw, pos, cx), true),
        RawCall::Late(after) => {
            let after = cx.real_time(d, after, "late");
            (McpFault::Late { after }, true)
        }
        RawCall::IsError(raw) => (is_error(d, &raw.value), false),
        RawCall::RpcError(raw) => (rpc_error(d, &raw.value), false),
        RawCall::Http(http) => (
            McpFault::Http {
                status: status(d, &http.value.status),
                at: commit_point(http.value.at.as_ref()),
            },
            false,
        ),
        RawCall::Drop(at) => (
            McpFault::Drop {
                at: commit_point(at.as_ref()),
            },
            false,
        ),
        RawCall::Reset(at) => (
            McpFault::Reset {
                at: commit_point(at.as_ref()),
            },
            false,
        ),
        RawCall::Task(raw) => (task(d, &raw.value, pos, cx), false),
        RawCall::PrimeThenClose(prime) => (
            McpFault::PrimeThenClose {
                then: then(d, prime.then.as_ref(), cx),
            },
            true,
        ),
    }
}

/// A call fault's name that is not one, or one that needs a value.
fn unknown_call(d: &mut Diagnostics, name: &str, pos: Pos) {
    let message = if MAPPING_CALLS.contains(&name) {
        format!("`{name}` needs a value: write it as {{{name}: ...}}")
    } else {
        format!(
            "unknown MCP fault `{name}`: one of {}, or a mapping with one of {}",
            PLAIN_CALLS.join(", "),
            MAPPING_CALLS.join(", ")
        )
    };
    d.error(pos, message);
}

/// `{stall: ...}`: held until the client leaves (so the hold must outlast
/// it) or a step ends, streaming or not meanwhile.
fn stall(d: &mut Diagnostics, stall: &RawCallStall, pos: Pos, cx: &Context) -> McpFault {
    let then = then(d, stall.then.as_ref(), cx);
    let until = match &stall.until {
        None => {
            cx.hold_outlasts_client(d, pos, "stall");
            Release::ClientGone
        }
        Some(until) => step_end(d, until, cx.declared),
    };
    let stream = stream(d, stall.stream.as_ref(), stall.every.as_ref(), cx);
    McpFault::Stall {
        then,
        until,
        stream,
    }
}

/// `{is_error: ...}`: a tool result that says the call failed.
fn is_error(d: &mut Diagnostics, e: &RawIsError) -> McpFault {
    let status = status(d, &e.status);
    let message = e
        .message
        .as_ref()
        .map_or_else(|| format!("error {status}"), |m| text(d, m, "message"));
    McpFault::IsError {
        status,
        at: commit_point(e.at.as_ref()),
        message,
    }
}

/// `{rpc_error: ...}`: a JSON-RPC error instead of a result.
fn rpc_error(d: &mut Diagnostics, rpc: &RawRpcError) -> McpFault {
    let message = rpc
        .message
        .as_ref()
        .map_or_else(|| "Internal error".to_owned(), |m| text(d, m, "message"));
    McpFault::RpcError {
        code: rpc.code.value,
        message,
    }
}

/// `{task: ...}`: a paid call turned into a background task, which needs
/// tasks on.
fn task(d: &mut Diagnostics, t: &RawTaskCall, pos: Pos, cx: &Context) -> McpFault {
    cx.needs_paid(
        d,
        pos,
        "a task fault turns a paid call into a background task",
    );
    if let Some(mcp) = cx.mcp {
        if !mcp.tasks {
            d.error(
                pos,
                "a task fault needs tasks: mcp.tasks.enabled (off without a `tasks:` key) and \
                 mcp.revision 2025-11-25 (2025-06-18 has no tasks)",
            );
        }
    }
    let default_after = cx.mcp.map_or(NONZERO, |m| m.task_work);
    let after = t.after.as_ref().map_or(default_after, |a| {
        duration_in(d, a, "after", NONZERO, MAX_VIRTUAL).unwrap_or(default_after)
    });
    let then = match t.then.value {
        RawTaskEnd::Complete => TaskEnd::Complete,
        RawTaskEnd::Fail => TaskEnd::Fail,
        RawTaskEnd::Expire => TaskEnd::Expire,
    };
    McpFault::Task { then, after }
}

fn then(d: &mut Diagnostics, raw: Option<&Sp<RawThen>>, cx: &Context) -> StallThen {
    match raw {
        None => StallThen::Abandon,
        Some(then) => match then.value {
            RawThen::Abandon => StallThen::Abandon,
            RawThen::Commit => {
                cx.needs_paid(d, then.pos, "`then: commit` commits an effect");
                StallThen::Commit
            }
        },
    }
}

fn commit_point(raw: Option<&Sp<RawCommitPoint>>) -> CommitPoint {
    match raw.map(|r| r.value) {
        None | Some(RawCommitPoint::AfterCommit) => CommitPoint::AfterCommit,
        Some(RawCommitPoint::BeforeCommit) => CommitPoint::BeforeCommit,
    }
}

fn status(d: &mut Diagnostics, raw: &Sp<u64>) -> u16 {
    if !(400..=599).contains(&raw.value) {
        d.error(
            raw.pos,
            format!(
                "status {} is not an HTTP error status (400 to 599)",
                raw.value
            ),
        );
    }
    u16::try_from(raw.value).unwrap_or(500)
}

fn text(d: &mut Diagnostics, raw: &Sp<String>, what: &str) -> String {
    if raw.value.len() > MAX_TEXT {
        d.error(
            raw.pos,
            format!("{what} is {} bytes; at most {MAX_TEXT}", raw.value.len()),
        );
    }
    raw.value.clone()
}

/// `stream:` and `every:`: an interval exactly for keep_alive and progress.
fn stream(
    d: &mut Diagnostics,
    raw: Option<&Sp<RawStream>>,
    every: Option<&Sp<DurationText>>,
    cx: &Context,
) -> Stream {
    let kind = raw.map_or(RawStream::Nothing, |s| s.value);
    let interval = |d: &mut Diagnostics| match every {
        Some(every) => cx.real_time(d, every, "every"),
        None => {
            let name = match kind {
                RawStream::KeepAlive => "keep_alive",
                _ => "progress",
            };
            d.error(
                raw.map_or(Pos::START, |s| s.pos),
                format!("stream {name} sends something at an interval: give `every` (real figure)"),
            );
            NONZERO
        }
    };
    match kind {
        RawStream::Nothing | RawStream::Headers => {
            if let Some(every) = every {
                d.error(
                    every.pos,
                    "`every` goes with stream: keep_alive or progress (nothing is sent at an \
                     interval otherwise)",
                );
            }
            if kind == RawStream::Nothing {
                Stream::Nothing
            } else {
                Stream::HeadersThenSilence
            }
        }
        RawStream::KeepAlive => Stream::KeepAlive { every: interval(d) },
        RawStream::Progress => Stream::Progress { every: interval(d) },
    }
}

fn matcher(
    d: &mut Diagnostics,
    raw: &RawMatch,
    declared: &Declared,
    mcp: Option<&McpDeclared>,
) -> McpMatch {
    let http_keys = [
        ("method", raw.method.as_ref().map(|v| v.pos)),
        ("resource", raw.resource.as_ref().map(|v| v.pos)),
        ("kind", raw.kind.as_ref().map(|v| v.pos)),
        ("tenant", raw.tenant.as_ref().map(|v| v.pos)),
        ("query", raw.query.as_ref().map(|v| v.pos)),
    ];
    for (key, pos) in http_keys {
        if let Some(pos) = pos {
            d.error(
                pos,
                format!(
                    "`{key}` matches HTTP requests; an MCP rule (`call:`) matches by tool, step, \
                     nth and times"
                ),
            );
        }
    }
    if let (Some(tool), Some(mcp)) = (&raw.tool, mcp) {
        if !mcp.all_tools().contains(&tool.value.as_str()) {
            d.error(
                tool.pos,
                format!(
                    "the MCP server has no tool `{}` ({})",
                    tool.value,
                    mcp.all_tools().join(", ")
                ),
            );
        }
    }
    let steps = counts_and_steps(d, raw, declared);
    McpMatch::builder()
        .maybe_tool(raw.tool.as_ref().map(|t| t.value.clone()))
        .maybe_nth(raw.nth.as_ref().map(|n| n.value))
        .maybe_times(raw.times.as_ref().map(|n| n.value))
        .maybe_steps(steps)
        .build()
}

/// Does `first` take every call that `second` would match?
pub(super) fn shadows(first: &McpMatch, second: &McpMatch) -> bool {
    let steps_cover = match (&first.steps, &second.steps) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(first), Some(second)) => second.is_subset(first),
    };
    let tool_covers = first.tool.is_none() || first.tool == second.tool;
    let same = first.tool == second.tool && first.steps == second.steps;
    (first.nth.is_none() && first.times.is_none() && tool_covers && steps_cover)
        || (same && first.nth == second.nth && first.times == second.times)
}

//! Raw scenario -> model: every check that needs more than one value's shape.
//! Each check records its problem and carries on with a stand-in, so one pass
//! reports everything it can; the result is used only when nothing was recorded.

mod common;
mod declared;
mod expect;
mod fault_match;
mod faults;
mod mcp;
mod mcp_faults;
mod provider;
mod situations;
mod steps;

pub use mcp::DEFAULT_REVISION;
pub use provider::DEFAULT_STALL_CAP;
pub use steps::DEFAULT_EVIDENCE;

pub(crate) use common::{MAX_DELIVERIES, MAX_PARALLEL, MAX_PARTIAL_BYTES};

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use lostreply_reports::model::SharedJson;
use lostreply_reports::shared_str::Recent;

use common::{args, duration_in, profile_reserved, show, MAX_ITEMS, NONZERO};
use declared::Declared;

use crate::scenario::error::Diagnostics;
use crate::scenario::model::{OpId, OperationFields, OperationSpec, Scenario};
use crate::scenario::raw::{Args, RawOperation, RawScenario};
use crate::scenario::span::Sp;

/// Default `client_timeout`.
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_millis(250);
/// Default `call_deadline`.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(30);
/// Longest `client_timeout` (real time: runs stay short).
const MAX_CLIENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest `call_deadline`.
const MAX_CALL_DEADLINE: Duration = Duration::from_secs(600);

/// Checks everything and builds the scenario (meaningful only if `d` stays empty).
pub(super) fn scenario(raw: &RawScenario, path: &str, d: &mut Diagnostics) -> Scenario {
    // A profile file is named relative to the scenario that names it.
    let base_dir = Path::new(path).parent().unwrap_or(Path::new(""));
    if raw.version.value != 1 {
        d.error(
            raw.version.pos,
            format!(
                "unsupported format version {}: this lostreply reads `version: 1`",
                raw.version.value
            ),
        );
    }
    let id = identifier(d, &raw.id, "scenario id", 80);
    let title = title(d, &raw.title);
    let case = raw.case.as_ref().map(|case| {
        if !(1..=10).contains(&case.value) {
            d.error(
                case.pos,
                format!(
                    "case {} does not exist: the lost-response cases are 1 to 10",
                    case.value
                ),
            );
        }
        case.value
    });
    let tags = tags(d, &raw.tags);

    let (client_timeout, call_deadline) = timeouts(d, raw);

    let (mut plan, mut declared) =
        provider::provider(d, raw.provider.as_ref(), client_timeout, base_dir);
    declared.step_count = raw.steps.value.len();
    let mut mcp_setup = None;
    if let Some(raw_mcp) = &raw.mcp {
        let (mcp_plan, setup, mcp_declared) = mcp::mcp(d, raw_mcp, &declared);
        plan.mcp = Some(mcp_plan);
        mcp_setup = Some(setup);
        declared.mcp = Some(mcp_declared);
    }
    let operations = operations(d, &raw.operations, &mut declared);
    let (http_faults, mcp_faults) = faults::faults(d, &raw.faults, &declared);
    plan.faults = http_faults;
    if let Some(mcp_plan) = &mut plan.mcp {
        mcp_plan.faults = mcp_faults;
    }
    let steps = steps::steps(d, &raw.steps, &declared);
    let expect = expect::expectations(d, raw.expect.as_ref(), &steps, &declared);
    situations::check(
        d,
        &situations::Story {
            raw,
            plan: &plan,
            operations: &operations,
            expect: &expect,
            declared: &declared,
        },
    );
    let steps = steps.into_iter().flatten().collect();

    Scenario {
        path: path.to_owned(),
        id,
        title,
        case,
        tags,
        plan,
        mcp: mcp_setup,
        operations,
        steps,
        expect,
        client_timeout,
        call_deadline,
    }
}

/// `client_timeout` and `call_deadline`, each in its range, the deadline
/// longer than the timeout.
fn timeouts(d: &mut Diagnostics, raw: &RawScenario) -> (Duration, Duration) {
    let client_timeout = raw
        .client_timeout
        .as_ref()
        .map_or(DEFAULT_CLIENT_TIMEOUT, |t| {
            duration_in(d, t, "client_timeout", NONZERO, MAX_CLIENT_TIMEOUT)
                .unwrap_or(DEFAULT_CLIENT_TIMEOUT)
        });
    let call_deadline = raw
        .call_deadline
        .as_ref()
        .map_or(DEFAULT_CALL_DEADLINE, |t| {
            let deadline = duration_in(d, t, "call_deadline", NONZERO, MAX_CALL_DEADLINE)
                .unwrap_or(DEFAULT_CALL_DEADLINE);
            if deadline <= client_timeout {
                d.error(
                    t.pos,
                    format!(
                    "call_deadline ({}) must be longer than client_timeout ({}): an adapter needs \
                     time to retry or give up",
                    show(deadline),
                    show(client_timeout)
                ),
                );
            }
            deadline
        });
    // The deadline given also has to outlast the default timeout; checked once here
    // whichever of the two was written.
    if raw.call_deadline.is_none() && client_timeout >= call_deadline {
        if let Some(t) = &raw.client_timeout {
            d.error(
                t.pos,
                format!(
                    "client_timeout ({}) must be shorter than call_deadline ({})",
                    show(client_timeout),
                    show(call_deadline)
                ),
            );
        }
    }
    (client_timeout, call_deadline)
}

fn operations(
    d: &mut Diagnostics,
    raw: &Sp<Vec<Sp<RawOperation>>>,
    declared: &mut Declared,
) -> Vec<OperationSpec> {
    if raw.value.is_empty() {
        d.error(raw.pos, "a scenario needs at least one operation");
    }
    if raw.value.len() > MAX_ITEMS {
        d.error(
            raw.pos,
            format!("at most {MAX_ITEMS} operations, not {}", raw.value.len()),
        );
    }
    let mut specs = Vec::with_capacity(raw.value.len());
    // Operations name a few collections and tools: one copy of each.
    let mut names = Recent::default();
    for op in &raw.value {
        let id = OpId::from(identifier(d, &op.value.id, "operation id", 64));
        if let Some(first) = declared.operations.get(&id) {
            d.error(
                op.value.id.pos,
                format!(
                    "duplicate operation id `{id}` (first declared at line {})",
                    first.line
                ),
            );
        } else {
            declared.operations.insert(id.clone(), op.value.id.pos);
        }
        let mut args = args(d, op.value.args.as_ref(), declared.max_body_bytes);
        let (resource, tool) = operation_target(d, op, &args, declared);
        if tool.is_none() {
            // An HTTP create travels on the profile's wire: the adapter is
            // given its arguments as that wire carries them (a form body,
            // strings only), so that what it sends and what the ledger holds
            // compare equal to them.
            if let Some(raw_args) = &op.value.args {
                profile_reserved(d, raw_args, &declared.profile);
            }
            args = declared.profile.wire_args(&args);
        }
        specs.push(OperationSpec::new(OperationFields {
            id,
            resource: names.get(&resource),
            tool: tool.map(|tool| names.get(&tool)),
            args: SharedJson::from_map(&args),
        }));
    }
    specs
}

/// An operation's collection, and its tool for an MCP operation: exactly one
/// of `resource:` and `tool:`, and a tool's key argument never among `args`
/// (the adapter adds the key; the server strips it before recording the
/// effect, so effects are attributed by the arguments without it).
fn operation_target(
    d: &mut Diagnostics,
    op: &Sp<RawOperation>,
    args: &Args,
    declared: &Declared,
) -> (String, Option<String>) {
    let raw = &op.value;
    match (&raw.resource, &raw.tool) {
        (Some(name), None) => {
            declared.check_resource(d, name);
            processing_needs_status(d, name, declared);
            (name.value.clone(), None)
        }
        (Some(_), Some(tool)) => {
            d.error(
                tool.pos,
                "an operation has `resource:` (an HTTP create) or `tool:` (an MCP tool call), \
                 not both: a tool's operations create in the tool's collection",
            );
            (String::new(), Some(tool.value.clone()))
        }
        (None, None) => {
            d.error(
                op.pos,
                "an operation needs `resource:` (an HTTP create) or `tool:` (an MCP tool call)",
            );
            (String::new(), None)
        }
        (None, Some(tool)) => {
            let name = &tool.value;
            let Some(mcp) = &declared.mcp else {
                d.error(
                    tool.pos,
                    format!(
                        "operation calls MCP tool `{name}`, but the scenario has no `mcp:` \
                         section (add one, or use `resource:` for an HTTP create)"
                    ),
                );
                return (String::new(), Some(name.clone()));
            };
            let Some((collection, key)) = mcp.paid(name) else {
                let what = if [
                    crate::scenario::model::GET_OPERATION,
                    crate::scenario::model::LIST_RECENT_OPERATIONS,
                ]
                .contains(&name.as_str())
                {
                    format!("`{name}` is a retrieval tool; an operation calls a paid tool")
                } else {
                    format!("the MCP server has no paid tool `{name}`")
                };
                d.error(
                    tool.pos,
                    format!("{what} ({})", mcp.paid_names().join(", ")),
                );
                return (String::new(), Some(name.clone()));
            };
            if let Some(key) = key {
                if args.contains_key(key) {
                    let at = raw.args.as_ref().map_or(tool.pos, |a| a.pos);
                    d.error(
                        at,
                        format!(
                            "`{key}` is {name}'s idempotency key argument: the adapter adds \
                             the key, an operation's args never carry it"
                        ),
                    );
                }
            }
            (collection.to_owned(), Some(name.clone()))
        }
    }
}

/// An asynchronous provider's objects start `processing`, so a profile's
/// collection must have a status field to say so.
fn processing_needs_status(d: &mut Diagnostics, name: &Sp<String>, declared: &Declared) {
    if declared.settle.is_none() {
        return;
    }
    if let Some(collection) = declared.profile_resource(&name.value) {
        if collection.status.is_none() {
            d.error(
                name.pos,
                format!(
                    "provider.asynchronous, but resource `{}` has no status field in profile {}: \
                     its objects cannot be processing",
                    name.value, declared.profile.name
                ),
            );
        }
    }
}

/// `[A-Za-z0-9][A-Za-z0-9._-]*`, at most `max_len`: ids reach test names and file names.
fn identifier(d: &mut Diagnostics, raw: &Sp<String>, what: &str, max_len: usize) -> String {
    let text = &raw.value;
    let starts_well = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !starts_well || !rest_ok || text.len() > max_len {
        d.error(
            raw.pos,
            format!(
                "{what} `{text}` is not valid: use letters, digits, `.`, `_` and `-`, starting with \
                 a letter or digit, at most {max_len} characters"
            ),
        );
    }
    text.clone()
}

fn title(d: &mut Diagnostics, raw: &Sp<String>) -> String {
    let text = raw.value.trim();
    if text.is_empty() {
        d.error(raw.pos, "the title is empty");
    } else if text.contains(['\n', '\r']) || text.chars().count() > 200 {
        d.error(raw.pos, "the title is one line of at most 200 characters");
    }
    text.to_owned()
}

fn tags(d: &mut Diagnostics, raw: &[Sp<String>]) -> Vec<String> {
    let mut seen = BTreeMap::new();
    for tag in raw {
        let text = &tag.value;
        if text.is_empty()
            || text.len() > 64
            || text.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            d.error(
                tag.pos,
                format!("tag `{text}` must be 1 to 64 characters without spaces"),
            );
        }
        if let Some(first) = seen.insert(text.clone(), tag.pos) {
            d.error(
                tag.pos,
                format!("tag `{text}` is listed twice (also at line {})", first.line),
            );
        }
    }
    raw.iter().map(|tag| tag.value.clone()).collect()
}

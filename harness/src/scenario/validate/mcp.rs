//! `mcp:` -> the simulator's `McpPlan` (without faults), the harness's
//! `McpSetup` (revision, client windows), and what later checks need to know.
//! The MCP fault rules themselves are in `faults.rs`, next to the HTTP ones.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use lostreply_simulator::mcp::{
    AnswerStyle, Defect, McpLimits, McpPlan, PaidTool, Retrieval, Revision, TaskSupport,
};

use super::common::{duration_in, is_resource_name, show, MAX_VIRTUAL, NONZERO};
use super::declared::{Declared, McpDeclared};
use crate::scenario::client_profiles::{self, IdleReset, McpClient};
use crate::scenario::error::Diagnostics;
use crate::scenario::model::{McpSetup, GET_OPERATION, LIST_RECENT_OPERATIONS};
use crate::scenario::raw::{
    DefectName, DurationText, RawAnswer, RawClient, RawIdleReset, RawMcp, RawMcpLimits,
    RawRetrieval, RawTasks, RawTool, RevisionName, WindowText,
};
use crate::scenario::span::{Pos, Sp};

/// The revision the adapter is told to ask for when the scenario does not say.
pub const DEFAULT_REVISION: Revision = Revision::V2025_11_25;
/// Most ids `list_recent_operations` may be told to return.
const MAX_LIST_LIMIT: u64 = 1000;
/// Most paid tools.
const MAX_TOOLS: usize = 100;
/// Longest tool name and key argument name.
const MAX_NAME: usize = 64;
/// Longest free text (a duration hint, an error message).
pub(super) const MAX_TEXT: usize = 1024;

/// Checks `mcp:` and builds the plan's MCP face (faults come later) and the setup.
pub(super) fn mcp(
    d: &mut Diagnostics,
    raw: &Sp<RawMcp>,
    declared: &Declared,
) -> (McpPlan, McpSetup, McpDeclared) {
    let raw = &raw.value;
    let defaults = McpPlan::default();
    let (revisions, revision) = revisions_and_revision(d, raw, &defaults);
    let answer = raw
        .answer
        .as_ref()
        .map_or(defaults.answer, |a| match a.value {
            RawAnswer::Json => AnswerStyle::Json,
            RawAnswer::Sse => AnswerStyle::Sse,
        });
    let client = client(d, &raw.client);
    let tools = match &raw.tools {
        None => defaults.tools.clone(),
        Some(list) => tools(d, list, declared),
    };
    let retrieval = raw.retrieval.as_ref().map_or(defaults.retrieval, |r| {
        retrieval(d, &r.value, &defaults.retrieval)
    });
    let tasks = tasks(d, raw.tasks.as_ref(), &defaults.tasks);
    let defects = defects(d, &raw.defects);
    let limits = raw
        .limits
        .as_ref()
        .map_or(defaults.limits, |l| limits(d, &l.value, defaults.limits));

    let mcp_declared = McpDeclared {
        tools: tools
            .iter()
            .map(|t| (t.name.clone(), t.resource.clone(), t.key_argument.clone()))
            .collect(),
        retrieval: retrieval.enabled,
        tasks: tasks.enabled && revision == Revision::V2025_11_25,
        task_work: tasks.work,
        client: client.clone(),
    };
    let plan = McpPlan::builder()
        .revisions(revisions)
        .tools(tools)
        .retrieval(retrieval)
        .answer(answer)
        .tasks(tasks)
        .defects(defects)
        .errors(defaults.errors)
        .faults(Vec::new())
        .limits(limits)
        .build();
    (plan, McpSetup { revision, client }, mcp_declared)
}

/// `mcp.revisions` (the server's) and `mcp.revision` (the adapter's), which
/// must be one of them.
fn revisions_and_revision(
    d: &mut Diagnostics,
    raw: &RawMcp,
    defaults: &McpPlan,
) -> (Vec<Revision>, Revision) {
    let revisions = match &raw.revisions {
        None => defaults.revisions.clone(),
        Some(list) => revisions(d, list),
    };
    let revision = match &raw.revision {
        None => DEFAULT_REVISION,
        Some(name) => revision(d, name).unwrap_or(DEFAULT_REVISION),
    };
    if !revisions.is_empty() && !revisions.contains(&revision) {
        let at = raw
            .revision
            .as_ref()
            .map(|r| r.pos)
            .or(raw.revisions.as_ref().map(|r| r.pos))
            .unwrap_or(Pos::START);
        d.error(
            at,
            format!(
                "the adapter is told to ask for revision {}, which the server does not accept \
                 (revisions: {})",
                revision.name(),
                names(&revisions)
            ),
        );
    }
    (revisions, revision)
}

/// `mcp.retrieval`.
fn retrieval(d: &mut Diagnostics, r: &RawRetrieval, defaults: &Retrieval) -> Retrieval {
    let list_limit = r.list_limit.as_ref().map_or(defaults.list_limit, |n| {
        if !(1..=MAX_LIST_LIMIT).contains(&n.value) {
            d.error(
                n.pos,
                format!(
                    "list_limit must be between 1 and {MAX_LIST_LIMIT}, not {}",
                    n.value
                ),
            );
        }
        usize::try_from(n.value.clamp(1, MAX_LIST_LIMIT)).unwrap_or(1)
    });
    Retrieval::builder()
        .enabled(r.enabled.unwrap_or(true))
        .retention(
            virtual_duration(d, r.retention.as_ref(), "retention").unwrap_or(defaults.retention),
        )
        .list_limit(list_limit)
        .build()
}

/// `mcp.tasks`. Tasks are opt-in per scenario: a caller that can wait for
/// tasks asks for one on every call the server offers them for, and every
/// such call then becomes one, which only the task scenarios are about.
fn tasks(d: &mut Diagnostics, raw: Option<&Sp<RawTasks>>, defaults: &TaskSupport) -> TaskSupport {
    let Some(t) = raw.map(|t| &t.value) else {
        return {
            let mut changed = *defaults;
            changed.enabled = false;
            changed
        };
    };
    TaskSupport::builder()
        .enabled(t.enabled.unwrap_or(true))
        .ttl(virtual_duration(d, t.ttl.as_ref(), "ttl").unwrap_or(defaults.ttl))
        .work(virtual_duration(d, t.work.as_ref(), "work").unwrap_or(defaults.work))
        .build()
}

/// `mcp.defects`: known names, each once.
fn defects(d: &mut Diagnostics, raw: &[Sp<DefectName>]) -> BTreeSet<Defect> {
    let mut defects = BTreeSet::new();
    let mut seen: BTreeMap<&str, Pos> = BTreeMap::new();
    for defect in raw {
        let name = defect.value.0.as_str();
        match Defect::from_name(name) {
            Some(found) => {
                defects.insert(found);
            }
            None => {
                let known: Vec<&str> = Defect::ALL.iter().map(|d| d.name()).collect();
                d.error(
                    defect.pos,
                    format!("unknown defect `{name}`: one of {}", known.join(", ")),
                );
            }
        }
        if let Some(first) = seen.insert(name, defect.pos) {
            d.error(
                defect.pos,
                format!(
                    "defect `{name}` is listed twice (also at line {})",
                    first.line
                ),
            );
        }
    }
    defects
}

/// One bound of `mcp.limits`: its name, its largest value, where the file
/// writes it and where the plan keeps it.
type LimitRule = (
    &'static str,
    u64,
    fn(&RawMcpLimits) -> &Option<Sp<u64>>,
    fn(&mut McpLimits) -> &mut usize,
);

/// Every bound of `mcp.limits`, each from 1 to its largest value.
const LIMITS: [LimitRule; 3] = [
    (
        "max_sessions",
        65_536,
        |l| &l.max_sessions,
        |m| &mut m.max_sessions,
    ),
    (
        "max_tasks",
        1_000_000,
        |l| &l.max_tasks,
        |m| &mut m.max_tasks,
    ),
    (
        "max_body_bytes",
        16 * 1024 * 1024,
        |l| &l.max_body_bytes,
        |m| &mut m.max_body_bytes,
    ),
];

/// `mcp.limits`: each bound written is checked and clamped into its range;
/// each left out keeps its default.
fn limits(d: &mut Diagnostics, raw: &RawMcpLimits, defaults: McpLimits) -> McpLimits {
    let mut limits = defaults;
    for (what, max, written, kept) in LIMITS {
        let Some(n) = written(raw) else { continue };
        if !(1..=max).contains(&n.value) {
            d.error(
                n.pos,
                format!("{what} must be between 1 and {max}, not {}", n.value),
            );
        }
        let slot = kept(&mut limits);
        *slot = usize::try_from(n.value.clamp(1, max)).unwrap_or(*slot);
    }
    limits
}

fn names(revisions: &[Revision]) -> String {
    revisions
        .iter()
        .map(|r| r.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn revision(d: &mut Diagnostics, raw: &Sp<RevisionName>) -> Option<Revision> {
    let found = Revision::from_name(&raw.value.0);
    if found.is_none() {
        d.error(
            raw.pos,
            format!(
                "unknown MCP revision `{}`: one of {}",
                raw.value.0,
                names(&Revision::ALL)
            ),
        );
    }
    found
}

fn revisions(d: &mut Diagnostics, list: &Sp<Vec<Sp<RevisionName>>>) -> Vec<Revision> {
    if list.value.is_empty() {
        d.error(
            list.pos,
            "mcp.revisions needs at least one revision (leave it out to accept both)",
        );
    }
    let mut found = Vec::new();
    let mut seen: BTreeMap<Revision, Pos> = BTreeMap::new();
    for name in &list.value {
        let Some(r) = revision(d, name) else { continue };
        if let Some(first) = seen.insert(r, name.pos) {
            d.error(
                name.pos,
                format!(
                    "revision {} is listed twice (also at line {})",
                    r.name(),
                    first.line
                ),
            );
        } else {
            found.push(r);
        }
    }
    found
}

/// A simulator-clock duration of the MCP section (not scaled).
fn virtual_duration(
    d: &mut Diagnostics,
    raw: Option<&Sp<DurationText>>,
    what: &str,
) -> Option<Duration> {
    raw.and_then(|raw| duration_in(d, raw, what, NONZERO, MAX_VIRTUAL))
}

/// The client windows: the profile's real figures, the overrides (real), the scale.
/// `mcp.client`: a known profile, its scale, and its windows with the
/// file's overrides, none of which may scale to nothing.
fn client(d: &mut Diagnostics, raw: &Sp<RawClient>) -> McpClient {
    let raw_client = &raw.value;
    let name = &raw_client.profile.value.0;
    let profile = client_profiles::profile(name);
    if profile.is_none() {
        d.error(
            raw_client.profile.pos,
            format!(
                "unknown client profile `{name}`: one of {}",
                client_profiles::profile_names().join(", ")
            ),
        );
    }
    let scale = raw_client.scale.as_ref().map_or(1.0, |s| scale(d, s));
    if profile.is_some_and(|p| p.needs_wall_clock) && raw_client.wall_clock.is_none() {
        d.error(
            raw_client.profile.pos,
            format!(
                "profile {name} has no default limit: give `wall_clock` (the client's \
                 read_timeout_seconds, in real figures), or `wall_clock: none` for a client \
                 that waits forever"
            ),
        );
    }
    let mut real = profile.map_or(client_profiles::Windows::NONE, |p| p.windows);
    // Where each window came from, for the message when it scales to nothing.
    let mut from: [Pos; 4] = [raw_client.profile.pos; 4];
    for (slot, (what, written, kept)) in from.iter_mut().zip(WINDOWS) {
        let Some(written) = written(raw_client) else {
            continue;
        };
        *slot = written.pos;
        *kept(&mut real) = window(d, written, what);
    }
    if let Some(reset) = &raw_client.idle_resets_on {
        real.idle_resets_on = match reset.value {
            RawIdleReset::Bytes => IdleReset::Bytes,
            RawIdleReset::Progress => IdleReset::Progress,
        };
    }
    let client = McpClient {
        profile: name.clone(),
        scale,
        real,
    };
    none_scales_to_nothing(d, &client, &from);
    client
}

/// One window of `mcp.client` that a file may override: its name, where
/// the file writes it and where the client keeps it, in the order of
/// [`client_profiles::Windows::named`].
type WindowRule = (
    &'static str,
    fn(&RawClient) -> &Option<Sp<WindowText>>,
    fn(&mut client_profiles::Windows) -> &mut Option<Duration>,
);

/// Every window a file may override.
const WINDOWS: [WindowRule; 4] = [
    ("wall_clock", |c| &c.wall_clock, |w| &mut w.wall_clock),
    ("idle", |c| &c.idle, |w| &mut w.idle),
    ("first_byte", |c| &c.first_byte, |w| &mut w.first_byte),
    (
        "background_after",
        |c| &c.background_after,
        |w| &mut w.background_after,
    ),
];

/// `mcp.client.scale`: more than 0 and at most 1 (1 when it is not).
fn scale(d: &mut Diagnostics, s: &Sp<f64>) -> f64 {
    if s.value.is_finite() && s.value > 0.0 && s.value <= 1.0 {
        s.value
    } else {
        d.error(
            s.pos,
            format!(
                "scale must be more than 0 and at most 1 (it shrinks real figures), not {}",
                s.value
            ),
        );
        1.0
    }
}

/// Every window lasts at least 1 ms once scaled; `from` says where each
/// window was written.
fn none_scales_to_nothing(d: &mut Diagnostics, client: &McpClient, from: &[Pos; 4]) {
    let scaled = client.scaled();
    let pairs = client.real.named().into_iter().zip(scaled.named());
    for (at, ((what, real), (_, scaled))) in from.iter().zip(pairs) {
        if let (Some(real), Some(scaled)) = (real, scaled) {
            if scaled.is_zero() {
                d.error(
                    *at,
                    format!(
                        "{what} {} scales to 0 ms at scale {}: every window must last at \
                         least 1 ms once scaled (raise scale, or write it in real figures)",
                        show(real),
                        client.scale
                    ),
                );
            }
        }
    }
}

/// A window override: a real duration, or `none`.
fn window(d: &mut Diagnostics, raw: &Sp<WindowText>, what: &str) -> Option<Duration> {
    let text = raw.value.0.trim();
    if text == "none" {
        return None;
    }
    let as_duration = Sp {
        value: DurationText(text.to_owned()),
        pos: raw.pos,
    };
    duration_in(d, &as_duration, what, NONZERO, MAX_VIRTUAL)
}

/// `[A-Za-z][A-Za-z0-9_-]*`, at most [`MAX_NAME`].
fn is_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= MAX_NAME
}

/// A tool's `key_argument`: an argument name.
fn key_argument(d: &mut Diagnostics, key: &Sp<String>) -> String {
    let ok = key
        .value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && key.value.len() <= MAX_NAME;
    if !ok {
        d.error(
            key.pos,
            format!(
                "key_argument `{}` is not a valid argument name: letters, digits and \
                 `_`, not starting with a digit, at most {MAX_NAME} characters",
                key.value
            ),
        );
    }
    key.value.clone()
}

/// A tool's `duration_hint`: the ticket tool's when absent, none for `none`,
/// else 1 to [`MAX_TEXT`] bytes of text.
fn duration_hint(d: &mut Diagnostics, hint: Option<&Sp<String>>) -> Option<String> {
    match hint {
        None => PaidTool::ticket().duration_hint,
        Some(hint) if hint.value.trim() == "none" => None,
        Some(hint) => {
            if hint.value.trim().is_empty() || hint.value.len() > MAX_TEXT {
                d.error(
                    hint.pos,
                    format!(
                        "duration_hint is 1 to {MAX_TEXT} bytes of text (or `none`: the \
                         description states no duration)"
                    ),
                );
            }
            Some(hint.value.clone())
        }
    }
}

/// `mcp.tools`: the paid tools, each named once, with a collection, a key
/// argument and a duration hint.
fn tools(d: &mut Diagnostics, list: &Sp<Vec<Sp<RawTool>>>, declared: &Declared) -> Vec<PaidTool> {
    if list.value.is_empty() {
        d.error(
            list.pos,
            "mcp.tools needs at least one paid tool (leave it out for create_ticket and \
             create_charge)",
        );
    }
    if list.value.len() > MAX_TOOLS {
        d.error(list.pos, format!("at most {MAX_TOOLS} paid tools"));
    }
    let mut seen: BTreeMap<&str, Pos> = BTreeMap::new();
    let mut tools = Vec::with_capacity(list.value.len());
    for raw in &list.value {
        let tool: &RawTool = &raw.value;
        let name = tool.name.value.as_str();
        if !is_tool_name(name) {
            d.error(
                tool.name.pos,
                format!(
                    "tool name `{name}` is not valid: a letter, then letters, digits, `_` and \
                     `-`, at most {MAX_NAME} characters"
                ),
            );
        } else if [GET_OPERATION, LIST_RECENT_OPERATIONS].contains(&name) {
            d.error(
                tool.name.pos,
                format!("`{name}` is a retrieval tool of the server, not a paid tool"),
            );
        }
        if let Some(first) = seen.insert(name, tool.name.pos) {
            d.error(
                tool.name.pos,
                format!(
                    "tool `{name}` is listed twice (also at line {})",
                    first.line
                ),
            );
        }
        declared.check_resource(d, &tool.resource);
        let key_argument = tool.key_argument.as_ref().map(|key| key_argument(d, key));
        let duration_hint = duration_hint(d, tool.duration_hint.as_ref());
        // A bad resource name is reported above; keep a valid stand-in.
        let resource = if is_resource_name(&tool.resource.value) {
            tool.resource.value.clone()
        } else {
            "invalid".to_owned()
        };
        tools.push(
            PaidTool::builder()
                .name(name.to_owned())
                .resource(resource)
                .maybe_key_argument(key_argument)
                .maybe_duration_hint(duration_hint)
                .build(),
        );
    }
    tools
}

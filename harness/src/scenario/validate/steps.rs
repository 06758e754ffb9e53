//! `steps:` -> steps. A raw step is a bag of optional keys; here it must turn
//! out to be exactly one action with only the keys that action takes.

use lostreply_reports::model::SharedStr;
use lostreply_simulator::{EventKind, Match, SettleResult};

use super::common::{duration_in, MAX_DELIVERIES, MAX_ITEMS, MAX_PARALLEL, MAX_VIRTUAL, NONZERO};
use super::declared::Declared;
use crate::protocol::OutcomeKind;
use crate::scenario::error::Diagnostics;
use crate::scenario::model::{CrashPoint, OpId, ResolveRef, Step};
use crate::scenario::raw::{RawCrash, RawDuring, RawEvent, RawMatch, RawResolveOutcome, RawStep};
use crate::scenario::span::{Pos, Sp};

/// The evidence an operator gives when the scenario does not say.
pub const DEFAULT_EVIDENCE: &str = "operator decision";

/// The action keys of a step: exactly one per step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Execute,
    Reconcile,
    Status,
    Advance,
    Parallel,
    Webhook,
    Resolve,
}

impl Action {
    /// Every action, in the order messages list them.
    const ALL: [Action; 7] = [
        Action::Execute,
        Action::Reconcile,
        Action::Status,
        Action::Advance,
        Action::Parallel,
        Action::Webhook,
        Action::Resolve,
    ];

    /// Its key in the file.
    fn name(self) -> &'static str {
        match self {
            Action::Execute => "execute",
            Action::Reconcile => "reconcile",
            Action::Status => "status",
            Action::Advance => "advance",
            Action::Parallel => "parallel",
            Action::Webhook => "webhook",
            Action::Resolve => "resolve",
        }
    }

    /// The keys it takes besides itself.
    fn modifiers(self) -> &'static [&'static str] {
        match self {
            Action::Execute | Action::Reconcile => &["crash", "during"],
            Action::Status => &["during"],
            Action::Webhook => &["event", "duplicate", "forged", "during"],
            Action::Resolve => &["outcome", "provider_ref", "evidence", "during"],
            Action::Advance | Action::Parallel => &[],
        }
    }

    /// Where the step writes it, if it does.
    fn written(self, raw: &RawStep) -> Option<Pos> {
        match self {
            Action::Execute => raw.execute.as_ref().map(|v| v.pos),
            Action::Reconcile => raw.reconcile.as_ref().map(|v| v.pos),
            Action::Status => raw.status.as_ref().map(|v| v.pos),
            Action::Advance => raw.advance.as_ref().map(|v| v.pos),
            Action::Parallel => raw.parallel.as_ref().map(|v| v.pos),
            Action::Webhook => raw.webhook.as_ref().map(|v| v.pos),
            Action::Resolve => raw.resolve.as_ref().map(|v| v.pos),
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One entry per step written; `None` for a step too broken to build (already reported),
/// so that step numbers in `expect.after_step` still line up.
pub(super) fn steps(
    d: &mut Diagnostics,
    raw: &Sp<Vec<Sp<RawStep>>>,
    declared: &Declared,
) -> Vec<Option<Step>> {
    if raw.value.is_empty() {
        d.error(raw.pos, "a scenario needs at least one step");
    }
    if raw.value.len() > MAX_ITEMS {
        d.error(
            raw.pos,
            format!("at most {MAX_ITEMS} steps, not {}", raw.value.len()),
        );
    }
    raw.value
        .iter()
        .map(|s| one_step(d, s, declared, false))
        .collect()
}

/// The modifier keys a step carries, with their positions.
fn modifiers(raw: &RawStep) -> Vec<(&'static str, Pos)> {
    let mut found = Vec::new();
    let mut add = |name, pos: Option<Pos>| {
        if let Some(pos) = pos {
            found.push((name, pos));
        }
    };
    add("crash", raw.crash.as_ref().map(|v| v.pos));
    add("event", raw.event.as_ref().map(|v| v.pos));
    add("duplicate", raw.duplicate.as_ref().map(|v| v.pos));
    add("forged", raw.forged.as_ref().map(|v| v.pos));
    add("outcome", raw.outcome.as_ref().map(|v| v.pos));
    add("provider_ref", raw.provider_ref.as_ref().map(|v| v.pos));
    add("evidence", raw.evidence.as_ref().map(|v| v.pos));
    add("during", raw.during.as_ref().map(|v| v.pos));
    found
}

/// The actions a step writes, with their positions, in [`Action::ALL`]'s order.
fn actions(raw: &RawStep) -> Vec<(Action, Pos)> {
    Action::ALL
        .into_iter()
        .filter_map(|action| action.written(raw).map(|pos| (action, pos)))
        .collect()
}

fn one_step(
    d: &mut Diagnostics,
    raw: &Sp<RawStep>,
    declared: &Declared,
    in_parallel: bool,
) -> Option<Step> {
    let step = &raw.value;
    let found = actions(step);
    let (action, action_pos) = match found.as_slice() {
        [] => {
            d.error(
                raw.pos,
                format!(
                    "a step needs one action: {}",
                    Action::ALL.map(Action::name).join(", ")
                ),
            );
            return None;
        }
        [one] => *one,
        [first, second, ..] => {
            d.error(
                second.1,
                format!(
                    "a step has one action, and this one has `{}` and `{}`",
                    first.0, second.0
                ),
            );
            return None;
        }
    };
    let allowed = action.modifiers();
    for (name, pos) in modifiers(step) {
        if !allowed.contains(&name) {
            let takes = if allowed.is_empty() {
                "takes no other keys".to_owned()
            } else {
                format!("takes only {}", allowed.join(", "))
            };
            d.error(
                pos,
                format!("`{name}` does not go with `{action}` (`{action}` {takes})"),
            );
        }
    }
    if in_parallel && matches!(action, Action::Advance | Action::Parallel) {
        d.error(
            action_pos,
            format!("`{action}` cannot run inside `parallel`: only adapter calls run at once"),
        );
        return None;
    }

    let call = action_step(d, raw, declared)?;
    match &step.during {
        Some(during) if allowed.contains(&"during") => {
            if !in_parallel {
                d.error(
                    during.pos,
                    "`during` starts a call once another call's request is held at the \
                     provider: it belongs to a call inside `parallel`",
                );
            }
            Some(Step::During {
                during: Box::new(during_match(d, during, declared)),
                call: Box::new(call),
            })
        }
        Some(_) | None => Some(call),
    }
}

/// `during: {...}` -> the request it waits for, held to what a request can be.
fn during_match(d: &mut Diagnostics, raw: &Sp<RawDuring>, declared: &Declared) -> Match {
    let when = RawMatch {
        method: raw.value.method.clone(),
        resource: raw.value.resource.clone(),
        kind: raw.value.kind.clone(),
        query: raw.value.query.clone(),
        ..RawMatch::default()
    };
    super::faults::matcher(d, &when, declared)
}

/// The step of one action key, its modifiers checked.
fn action_step(d: &mut Diagnostics, raw: &Sp<RawStep>, declared: &Declared) -> Option<Step> {
    let step = &raw.value;
    let crash = step.crash.as_ref().map(|c| match c.value {
        RawCrash::AfterCommit => CrashPoint::AfterCommit,
    });
    if let Some(op) = &step.execute {
        return Some(Step::Execute {
            op: operation(d, op, declared),
            crash,
        });
    }
    if let Some(op) = &step.reconcile {
        return Some(Step::Reconcile {
            op: operation(d, op, declared),
            crash,
        });
    }
    if let Some(op) = &step.status {
        return Some(Step::Status {
            op: operation(d, op, declared),
        });
    }
    if let Some(by) = &step.advance {
        let by = duration_in(d, by, "advance", NONZERO, MAX_VIRTUAL).unwrap_or(NONZERO);
        return Some(Step::Advance { by });
    }
    if let Some(calls) = &step.parallel {
        if calls.value.len() < 2 || calls.value.len() > MAX_PARALLEL {
            d.error(
                calls.pos,
                format!(
                    "`parallel` runs 2 to {MAX_PARALLEL} calls at once, not {}",
                    calls.value.len()
                ),
            );
        }
        let calls: Vec<Step> = calls
            .value
            .iter()
            .filter_map(|c| one_step(d, c, declared, true))
            .collect();
        if calls.iter().all(|c| matches!(c, Step::During { .. })) && !calls.is_empty() {
            d.error(
                raw.pos,
                "every call of this parallel step waits `during` another's request, so none \
                 starts first: leave `during` off at least one call",
            );
        }
        return Some(Step::Parallel(calls));
    }
    if let Some(op) = &step.webhook {
        return Some(webhook(d, raw.pos, step, op, declared));
    }
    if let Some(op) = &step.resolve {
        return Some(resolve(d, raw.pos, step, op, declared));
    }
    // `actions` found exactly one of the keys above.
    None
}

fn webhook(
    d: &mut Diagnostics,
    pos: Pos,
    step: &RawStep,
    op: &Sp<String>,
    declared: &Declared,
) -> Step {
    let op_id = operation(d, op, declared);
    if !declared.webhooks {
        d.error(
            op.pos,
            "a webhook step needs `provider.webhooks` (the provider sends no events)",
        );
    }
    let forged = step.forged.as_ref().is_some_and(|f| f.value);
    let event = match &step.event {
        None => {
            d.error(
                pos,
                "a webhook step needs `event`: created, succeeded or failed",
            );
            EventKind::Created
        }
        Some(event) => {
            let kind = match event.value {
                RawEvent::Created => EventKind::Created,
                RawEvent::Succeeded => EventKind::Succeeded,
                RawEvent::Failed => EventKind::Failed,
            };
            // A genuine event must be one the provider can emit; a forged one is a lie
            // and may claim anything.
            if !forged {
                if let Some(problem) = impossible_event(kind, declared.settle) {
                    d.error(event.pos, problem);
                }
            }
            kind
        }
    };
    let deliveries = step.duplicate.as_ref().map_or(1, |n| {
        if !(1..=MAX_DELIVERIES).contains(&n.value) {
            d.error(
                n.pos,
                format!(
                    "duplicate is the total number of deliveries, 1 to {MAX_DELIVERIES}, not {}",
                    n.value
                ),
            );
        }
        n.value
    });
    Step::Webhook {
        op: op_id,
        event,
        deliveries,
        forged,
    }
}

/// Why the provider could never emit `kind`, if it could not.
fn impossible_event(kind: EventKind, settle: Option<SettleResult>) -> Option<String> {
    match (kind, settle) {
        (EventKind::Created, _)
        | (EventKind::Succeeded, Some(SettleResult::Succeeded))
        | (EventKind::Failed, Some(SettleResult::Failed)) => None,
        (EventKind::Succeeded | EventKind::Failed, None) => Some(format!(
            "the provider never emits `{}`: objects settle only when provider.asynchronous is set \
             (use `created`, or `forged: true` for a fake)",
            kind.name()
        )),
        (EventKind::Succeeded, Some(SettleResult::Failed))
        | (EventKind::Failed, Some(SettleResult::Succeeded)) => Some(format!(
            "the provider never emits `{}`: asynchronous objects settle {} (use `forged: true` for a fake)",
            kind.name(),
            match settle {
                Some(SettleResult::Failed) => "failed",
                Some(SettleResult::Succeeded) | None => "succeeded",
            }
        )),
    }
}

fn resolve(
    d: &mut Diagnostics,
    pos: Pos,
    step: &RawStep,
    op: &Sp<String>,
    declared: &Declared,
) -> Step {
    let op_id = operation(d, op, declared);
    let outcome = match &step.outcome {
        None => {
            d.error(pos, "a resolve step needs `outcome`: succeeded or failed");
            OutcomeKind::Failed
        }
        Some(outcome) => match outcome.value {
            RawResolveOutcome::Succeeded => OutcomeKind::Succeeded,
            RawResolveOutcome::Failed => OutcomeKind::Failed,
        },
    };
    let provider_ref = match &step.provider_ref {
        None => {
            d.error(
                pos,
                "a resolve step needs `provider_ref`: ledger, null, or an object id in quotes",
            );
            ResolveRef::None
        }
        Some(Sp { value: None, .. }) => ResolveRef::None,
        Some(Sp {
            value: Some(text), ..
        }) if text == "ledger" => ResolveRef::Ledger,
        Some(Sp {
            value: Some(text),
            pos,
        }) => {
            if text.is_empty() || text.len() > 255 || text.chars().any(char::is_control) {
                d.error(*pos, "provider_ref must be 1 to 255 characters");
            }
            ResolveRef::Literal(SharedStr::from(text))
        }
    };
    let evidence = step.evidence.as_ref().map_or_else(
        || DEFAULT_EVIDENCE.to_owned(),
        |e| {
            if e.value.trim().is_empty() {
                d.error(e.pos, "evidence is empty: leave it out for the default");
            }
            e.value.clone()
        },
    );
    Step::Resolve {
        op: op_id,
        outcome,
        provider_ref,
        evidence: evidence.into(),
    }
}

/// Checks that a step names a declared operation.
fn operation(d: &mut Diagnostics, raw: &Sp<String>, declared: &Declared) -> OpId {
    if !declared.operations.contains_key(raw.value.as_str()) {
        d.error(raw.pos, undeclared(&raw.value, declared));
    }
    declared.op_id(&raw.value)
}

/// The message for a reference to an operation that `operations:` does not declare.
pub(super) fn undeclared(op: &str, declared: &Declared) -> String {
    let known: Vec<&str> = declared.operations.keys().map(OpId::as_str).collect();
    if known.is_empty() {
        format!("operation `{op}` is not declared (operations: is empty)")
    } else {
        format!(
            "operation `{op}` is not declared in operations: ({})",
            known.join(", ")
        )
    }
}

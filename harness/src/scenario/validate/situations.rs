//! Situations a file sets up that no step can carry out, or that no correct
//! adapter can pass, found from the whole file: the order of the steps, the
//! simulator clock they move (known in advance: only `advance` moves it),
//! the fault rules and the expectations. Each is refused where it is
//! written, with the reason. What depends on an adapter's design is left to
//! `lostreply validate --prove`, which runs the file against many designs.

use std::collections::BTreeMap;
use std::time::Duration;

use lostreply_simulator::{
    FaultResponse, FaultRule, IdempotencyMode, Plan, Position, Release, RequestKind, SettleResult,
    StallThen,
};

use super::common::show;
use super::declared::Declared;
use crate::protocol::OutcomeKind;
use crate::scenario::error::Diagnostics;
use crate::scenario::model::{Allowed, Expectations, OperationSpec};
use crate::scenario::raw::{RawEvent, RawExpect, RawScenario, RawStep};
use crate::scenario::span::Sp;

/// What the whole file says, as the checks below read it.
pub(super) struct Story<'a> {
    pub raw: &'a RawScenario,
    pub plan: &'a Plan,
    pub operations: &'a [OperationSpec],
    pub expect: &'a Expectations,
    pub declared: &'a Declared,
}

/// One adapter call as written, with the step (0-based) it runs in.
struct Call<'a> {
    step: usize,
    raw: &'a RawStep,
    in_parallel: bool,
}

impl Story<'_> {
    /// Every call in file order (a `parallel` step's calls share its number).
    fn calls(&self) -> Vec<Call<'_>> {
        let mut calls = Vec::new();
        for (step, raw) in self.raw.steps.value.iter().enumerate() {
            match &raw.value.parallel {
                Some(inner) => calls.extend(inner.value.iter().map(|c| Call {
                    step,
                    raw: &c.value,
                    in_parallel: true,
                })),
                None => calls.push(Call {
                    step,
                    raw: &raw.value,
                    in_parallel: false,
                }),
            }
        }
        calls
    }

    /// The simulator clock when each step starts, from the clock's start
    /// (an unreadable `advance` counts as none: it is reported elsewhere).
    fn clock(&self) -> Vec<Duration> {
        let mut at = Duration::ZERO;
        let mut clock = Vec::with_capacity(self.raw.steps.value.len());
        for raw in &self.raw.steps.value {
            clock.push(at);
            if let Some(by) = &raw.value.advance {
                at += humantime::parse_duration(by.value.0.trim()).unwrap_or_default();
            }
        }
        clock
    }

    /// The step of each operation's first `execute`.
    fn first_execute(&self) -> BTreeMap<&str, usize> {
        let mut first = BTreeMap::new();
        for call in self.calls() {
            if let Some(op) = &call.raw.execute {
                first.entry(op.value.as_str()).or_insert(call.step);
            }
        }
        first
    }

    fn operation(&self, id: &str) -> Option<&OperationSpec> {
        self.operations.iter().find(|o| o.id == id)
    }
}

/// Runs every check of this module.
pub(super) fn check(d: &mut Diagnostics, story: &Story<'_>) {
    let first = story.first_execute();
    let clock = story.clock();
    for call in story.calls() {
        webhook(d, story, &call, &first, &clock);
        resolve(d, story, &call, &first);
    }
    held_creates(d, story, &first, &clock);
}

/// A webhook delivers an event the provider emitted about the operation's
/// object: something must be able to have created that object, and for a
/// settling event, to have settled it, by the time the step runs.
fn webhook(
    d: &mut Diagnostics,
    story: &Story<'_>,
    call: &Call<'_>,
    first: &BTreeMap<&str, usize>,
    clock: &[Duration],
) {
    let Some(op) = &call.raw.webhook else {
        return;
    };
    let number = call.step + 1;
    let Some(&created) = first.get(op.value.as_str()).filter(|s| **s <= call.step) else {
        if story.declared.operations.contains_key(op.value.as_str()) {
            d.error(
                op.pos,
                format!(
                    "no effect of `{op}` can exist at step {number}: no `execute: {op}` comes \
                     before it (or beside it in this parallel step), so the provider has no \
                     event to deliver",
                    op = op.value
                ),
            );
        }
        return;
    };
    let (Some(event), Some(asynchronous)) = (&call.raw.event, story.plan.asynchronous) else {
        return;
    };
    if event.value == RawEvent::Created {
        return;
    }
    let settle = asynchronous.settle_after;
    let name = match (event.value, asynchronous.result) {
        (RawEvent::Succeeded, SettleResult::Succeeded) => "succeeded",
        (RawEvent::Failed, SettleResult::Failed) => "failed",
        // An event the provider never emits is refused (or, forged, allowed) elsewhere.
        (RawEvent::Succeeded | RawEvent::Failed | RawEvent::Created, _) => return,
    };
    if created == call.step {
        d.error(
            event.pos,
            format!(
                "`{name}` comes when an object settles, {} after its commit, and the clock \
                 moves only in `advance` steps: an object created in this step cannot settle \
                 in it",
                show(settle)
            ),
        );
        return;
    }
    let passed = clock[call.step].saturating_sub(clock[created]);
    if passed < settle {
        d.error(
            event.pos,
            format!(
                "no `{name}` event of `{}` exists yet at step {number}: its object settles {} \
                 after its commit (step {} at the earliest), and only {} pass on the simulator \
                 clock in between",
                op.value,
                show(settle),
                created + 1,
                show(passed)
            ),
        );
    }
}

/// An operator resolves an operation the adapter has started; `ledger`
/// names its effect, so the operation must be able to have one.
fn resolve(d: &mut Diagnostics, story: &Story<'_>, call: &Call<'_>, first: &BTreeMap<&str, usize>) {
    let Some(op) = &call.raw.resolve else {
        return;
    };
    if !story.declared.operations.contains_key(op.value.as_str()) {
        return;
    }
    let number = call.step + 1;
    let ledger = call
        .raw
        .provider_ref
        .as_ref()
        .filter(|r| r.value.as_deref() == Some("ledger"));
    match first.get(op.value.as_str()) {
        Some(&started) if started < call.step => {}
        Some(&started) if started == call.step && call.in_parallel => {
            if call.raw.during.is_none() {
                d.error(
                    op.pos,
                    format!(
                        "`resolve: {op}` runs beside the first `execute: {op}`, so it may reach \
                         the adapter before the execute has recorded anything: give it \
                         `during: {{kind: create}}` so that it starts once the create is held \
                         at the provider",
                        op = op.value
                    ),
                );
            }
        }
        _ => {
            let also = if ledger.is_some() {
                ", and `provider_ref: ledger` would name no effect"
            } else {
                ""
            };
            d.error(
                op.pos,
                format!(
                    "`resolve: {op}` at step {number} comes before any `execute: {op}`: the \
                     adapter has no record of it, so it answers `unknown` and records nothing \
                     (docs/adapter-protocol.md){also}",
                    op = op.value
                ),
            );
            return;
        }
    }
    if let Some(ledger) = ledger {
        ledger_has_an_effect(d, story, op, ledger);
    }
}

/// `provider_ref: ledger` names the operation's effect: one the
/// expectations and the fault rules let it have.
fn ledger_has_an_effect(
    d: &mut Diagnostics,
    story: &Story<'_>,
    op: &Sp<String>,
    ledger: &Sp<Option<String>>,
) {
    if story.expect.effects.get(op.value.as_str()) == Some(&0) {
        d.error(
            ledger.pos,
            format!(
                "`provider_ref: ledger` names the effect of `{}`, and expect.effects says it \
                 has none: the operator would name nothing (null)",
                op.value
            ),
        );
        return;
    }
    let refused = story
        .operation(&op.value)
        .filter(|spec| spec.tool.is_none())
        .and_then(|spec| creates_never_commit(story, &spec.resource));
    if let Some(rule) = refused {
        d.error(
            ledger.pos,
            format!(
                "`provider_ref: ledger` names the effect of `{}`, which it can never have: \
                 fault rule {} (line {}) refuses every create of `{}` before its commit",
                op.value,
                rule + 1,
                rule_line(story, rule),
                story
                    .operation(&op.value)
                    .map_or("", |s| s.resource.as_str())
            ),
        );
    }
}

fn rule_line(story: &Story<'_>, rule: usize) -> u64 {
    story.raw.faults.get(rule).map_or(0, |r| r.pos.line)
}

/// Could `rule` match a create of `resource` by the adapter's tenant?
fn may_match_create(story: &Story<'_>, rule: &FaultRule, resource: &str) -> bool {
    let when = &rule.when;
    let tenant = story.plan.tenants.first().map(String::as_str);
    when.method.as_deref().is_none_or(|m| m == "POST")
        && when.kind.is_none_or(|k| k == RequestKind::Create)
        && when.resource.as_deref().is_none_or(|r| r == resource)
        && when.tenant.as_deref().is_none_or(|t| Some(t) == tenant)
        && when.query.is_none()
}

/// Does a create that `rule` takes never commit?
fn refuses(rule: &FaultRule) -> bool {
    match (rule.at, rule.response) {
        (Position::AfterCommit, _)
        | (_, FaultResponse::Ok | FaultResponse::Delay { .. } | FaultResponse::Gather { .. })
        | (_, FaultResponse::Partial { .. } | FaultResponse::Idle) => false,
        (Position::BeforeCommit, FaultResponse::Stall { then, .. }) => then == StallThen::Abandon,
        (
            Position::BeforeRead,
            FaultResponse::Stall { .. }
            | FaultResponse::Drop
            | FaultResponse::Reset
            | FaultResponse::Status { .. },
        )
        | (
            Position::BeforeCommit,
            FaultResponse::Drop | FaultResponse::Reset | FaultResponse::Status { .. },
        ) => true,
    }
}

/// The rule that refuses every create of `resource` before its commit, when
/// every rule that may take one refuses it and one takes them all.
fn creates_never_commit(story: &Story<'_>, resource: &str) -> Option<usize> {
    let mut catch_all = None;
    for (index, rule) in story.plan.faults.iter().enumerate() {
        if !may_match_create(story, rule, resource) {
            continue;
        }
        if !refuses(rule) {
            return None;
        }
        let when = &rule.when;
        if when.steps.is_none() && when.nth.is_none() && when.times.is_none() {
            catch_all = catch_all.or(Some(index));
        }
    }
    catch_all
}

/// A create held before its commit until a later step's end, by a rule
/// scoped to the one step that executes its operation first.
struct Held {
    op: String,
    rule: usize,
    /// The step (0-based) whose create is held.
    from: usize,
    /// The step (0-based) whose end commits it.
    until: usize,
}

/// The held creates the fault rules set up, each certain to hold its
/// operation's first create: the rule is scoped to one step, that step is a
/// plain `execute` of an HTTP operation executed there first, and no earlier
/// rule may take a create of that step.
fn holds(story: &Story<'_>, first: &BTreeMap<&str, usize>) -> Vec<Held> {
    let mut found = Vec::new();
    for (index, rule) in story.plan.faults.iter().enumerate() {
        let (Position::BeforeCommit, FaultResponse::Stall { then, until }) =
            (rule.at, rule.response)
        else {
            continue;
        };
        let (StallThen::Commit, Release::StepEnd(end)) = (then, until) else {
            continue;
        };
        let Some(steps) = &rule.when.steps else {
            continue;
        };
        let [step] = steps.iter().copied().collect::<Vec<u32>>()[..] else {
            continue;
        };
        let from = step as usize - 1;
        let Some(raw) = story.raw.steps.value.get(from).map(|s| &s.value) else {
            continue;
        };
        let (Some(op), None) = (&raw.execute, &raw.crash) else {
            continue;
        };
        let Some(spec) = story.operation(&op.value).filter(|s| s.tool.is_none()) else {
            continue;
        };
        let first_create = rule.when.nth.is_none_or(|n| n == 1);
        let earlier_free = story.plan.faults[..index].iter().all(|r| {
            !may_match_create(story, r, &spec.resource)
                || r.when.steps.as_ref().is_some_and(|s| !s.contains(&step))
        });
        if first.get(op.value.as_str()) == Some(&from)
            && first_create
            && earlier_free
            && may_match_create(story, rule, &spec.resource)
            && end as usize > from
        {
            found.push(Held {
                op: op.value.clone(),
                rule: index,
                from,
                until: end as usize - 1,
            });
        }
    }
    found
}

/// What no correct adapter can report about an operation whose create is
/// held before its commit: while it is held, no effect exists, so only
/// `unknown` (and, with a key the provider answers "in flight", `pending`)
/// can be known; after it commits, only a later step that can find it
/// (a replay of a key still retained, a lookup that needs no id, a genuine
/// event, a person) can tell the adapter.
fn held_creates(
    d: &mut Diagnostics,
    story: &Story<'_>,
    first: &BTreeMap<&str, usize>,
    clock: &[Duration],
) {
    let keyed = match story.plan.idempotency.mode {
        IdempotencyMode::None => false,
        IdempotencyMode::Stripe | IdempotencyMode::Ietf => true,
        // Known-bad servers: what an adapter can learn from them is not the contract's.
        IdempotencyMode::FingerprintInKey
        | IdempotencyMode::NoFingerprint
        | IdempotencyMode::Racy
        | IdempotencyMode::GlobalScope
        | IdempotencyMode::StuckInFlight
        | IdempotencyMode::ReleaseOnError => return,
    };
    let Some(expect) = story.raw.expect.as_ref().map(|e| &e.value) else {
        return;
    };
    let knowable: Allowed = if keyed {
        [OutcomeKind::Unknown, OutcomeKind::Pending]
            .into_iter()
            .collect()
    } else {
        [OutcomeKind::Unknown].into_iter().collect()
    };
    let judge = HeldJudge {
        story,
        expect,
        knowable,
        keyed,
    };
    for held in holds(story, first) {
        let rule = format!(
            "fault rule {} (line {}) holds its create before the commit until step {} ends",
            held.rule + 1,
            rule_line(story, held.rule),
            held.until + 1
        );
        judge.while_held(d, &held, &rule);
        if let Some(expected) = expect
            .effects
            .iter()
            .flat_map(|m| m.0.iter())
            .find(|(op, n)| op.value == held.op && n.value == 0)
        {
            impossible(
                d,
                &expected.0,
                &format!("{rule}, then commits it: `{}` has an effect", held.op),
            );
        }
        if let Some(blind) = blind_after(story, &held, clock, keyed) {
            judge.finally(d, &held, &rule, &blind);
        }
    }
}

/// What the expectations about a held create are judged by.
struct HeldJudge<'j> {
    story: &'j Story<'j>,
    expect: &'j RawExpect,
    /// The outcomes an adapter can know while the create is held.
    knowable: Allowed,
    /// The provider keeps idempotency keys the contract's way.
    keyed: bool,
}

impl HeldJudge<'_> {
    /// Lists nothing the adapter can know.
    fn unknowable(&self, allowed: &Allowed) -> bool {
        !allowed.iter().any(|k| self.knowable.contains(k))
    }

    /// `after_step` of the steps the create is held through: only what can
    /// be known of a create in flight.
    fn while_held(&self, d: &mut Diagnostics, held: &Held, rule: &str) {
        let during = if self.keyed {
            "`pending` (its key in flight) is the most it can learn"
        } else {
            "with no key, nothing tells it the create is in flight: `unknown` is all it can say"
        };
        for (number, map) in self.expect.after_step.iter().flat_map(|m| m.0.iter()) {
            let Ok(n) = usize::try_from(number.value) else {
                continue;
            };
            if !(held.from + 1..=held.until + 1).contains(&n) {
                continue;
            }
            for (op, _) in map.0.iter().filter(|(op, _)| op.value == held.op) {
                let allowed = self
                    .story
                    .expect
                    .after_step
                    .get(&n)
                    .and_then(|m| m.get(held.op.as_str()));
                if allowed.is_some_and(|a| self.unknowable(a)) {
                    impossible(
                        d,
                        op,
                        &format!(
                            "at step {n} {rule}, so no effect of `{}` exists yet (`succeeded` has \
                         none to name, `failed` is proven wrong when it commits), and {during}",
                            held.op
                        ),
                    );
                }
            }
        }
    }

    /// `final`, when no later step can tell the adapter the create
    /// committed (`blind` says why): its record stays as it was.
    fn finally(&self, d: &mut Diagnostics, held: &Held, rule: &str, blind: &str) {
        for (op, _) in self.expect.final_outcomes.iter().flat_map(|m| m.0.iter()) {
            let allowed = self.story.expect.final_outcomes.get(op.value.as_str());
            if op.value == held.op && allowed.is_some_and(|a| self.unknowable(a)) {
                impossible(
                    d,
                    op,
                    &format!(
                        "{rule}, and then {blind}: the adapter cannot learn that it committed, so \
                     its final record stays as it was (list `unknown`{})",
                        if self.keyed { " or `pending`" } else { "" }
                    ),
                );
            }
        }
    }
}

/// Why no step after the held create's commit can tell the adapter, or
/// `None` when one can.
fn blind_after(story: &Story<'_>, held: &Held, clock: &[Duration], keyed: bool) -> Option<String> {
    let retention = story.plan.idempotency.retention;
    let lookup = story.plan.lookup.client_reference || story.plan.lookup.list_recent;
    for call in story.calls().iter().filter(|c| c.step > held.until) {
        let about = |name: &Option<Sp<String>>| name.as_ref().is_some_and(|n| n.value == held.op);
        let retained = keyed && clock[call.step].saturating_sub(clock[held.from]) < retention;
        let climbs = about(&call.raw.execute) || about(&call.raw.reconcile);
        let genuine =
            about(&call.raw.webhook) && !call.raw.forged.as_ref().is_some_and(|f| f.value);
        if (climbs && (retained || lookup)) || genuine || about(&call.raw.resolve) {
            return None;
        }
    }
    let key = if keyed {
        let expires = clock
            .iter()
            .position(|at| at.saturating_sub(clock[held.from]) >= retention);
        match expires {
            Some(step) => format!(
                "its key's retention ({}) has passed by step {}, so a replay would create anew",
                show(retention),
                step + 1
            ),
            None => "no later execute or reconcile replays its key".to_owned(),
        }
    } else {
        "the provider has no keys".to_owned()
    };
    let found = if lookup {
        "no later execute or reconcile looks it up".to_owned()
    } else {
        "the provider has no lookup that finds an object without its id".to_owned()
    };
    Some(format!(
        "{key}, {found}, and no genuine webhook or resolve of `{}` comes after step {}",
        held.op,
        held.until + 1
    ))
}

fn impossible(d: &mut Diagnostics, at: &Sp<String>, why: &str) {
    d.error(
        at.pos,
        format!(
            "no correct adapter can meet this expectation of `{}`: {why}",
            at.value
        ),
    );
}

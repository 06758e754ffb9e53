//! The grammar of situations, as proptest strategies: their value trees
//! generate a situation and shrink it (fewer operations, steps and faults,
//! smaller clock moves, earlier requests, plainer providers).
//!
//! Fair by construction: in every situation it makes, a correct adapter can
//! keep all seven invariants and the review rule. The provider keeps its
//! documented contract (no known-bad idempotency mode); an answer that says
//! "not done" (429) is only sent before the commit, and an answer after the
//! commit is a lost or cut answer or a 5xx, which says nothing about the
//! commit; every fault is scoped to one step; the clock moves only between
//! steps; a request held in flight is held only as long as a correct adapter
//! can tell it apart from an absence (`hold_until`); events are the
//! provider's own (or forged, which a correct adapter refuses); a person's
//! decision is the person's word, which the harness never holds against the
//! adapter. What a correct adapter may not be able to do is finish (it may
//! stay `unknown` or ask a person): explore judges truth, not completion.

use std::time::Duration;

use proptest::prelude::*;

use crate::shape::Collection;
use crate::situation::{
    Asynchronous, At, Decision, Delivery, Event, Fault, Keys, Kind, Lookups, Provider, Response,
    Settles, Situation, Step,
};

/// Most operations in one situation.
pub const MAX_OPERATIONS: usize = 3;
/// Most steps in one situation.
pub const MAX_STEPS: usize = 6;
/// Most fault rules in one situation.
pub const MAX_FAULTS: usize = 4;
/// Most steps past its own that a request is held in flight.
const MAX_HOLD_EXTENSION: u32 = 2;

fn provider() -> impl Strategy<Value = Provider> {
    let keys = prop_oneof![Just(Keys::Stripe), Just(Keys::Ietf), Just(Keys::None)];
    let retention = prop_oneof![
        Just(Duration::from_secs(24 * 3600)),
        Just(Duration::from_secs(3600))
    ];
    let lookups = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(no_retrieve, no_search, no_list)| Lookups {
            retrieve: !no_retrieve,
            client_reference: !no_search,
            list_recent: !no_list,
        },
    );
    let asynchronous = prop_oneof![
        3 => Just(None),
        1 => Just(Some(Asynchronous { after: Duration::from_secs(60), result: Settles::Succeeded })),
        1 => Just(Some(Asynchronous { after: Duration::from_secs(60), result: Settles::Failed })),
    ];
    (keys, retention, lookups, asynchronous).prop_map(|(keys, retention, lookups, asynchronous)| {
        Provider {
            keys,
            retention,
            lookups,
            asynchronous,
            // Set by `normalized`: a provider signs events where a step delivers one.
            webhooks: false,
        }
    })
}

fn delivery() -> impl Strategy<Value = Delivery> {
    let event = prop_oneof![Just(Event::Created), Just(Event::Settled)];
    let forged = prop_oneof![2 => Just(false), 1 => Just(true)];
    let deliveries = prop_oneof![2 => Just(1u8), 1 => Just(2u8)];
    (event, forged, deliveries).prop_map(|(event, forged, deliveries)| Delivery {
        event,
        forged,
        deliveries,
    })
}

fn decision() -> impl Strategy<Value = Decision> {
    prop_oneof![
        Just(Decision::SucceededLedger),
        Just(Decision::SucceededWithoutId),
        Just(Decision::Failed),
    ]
}

/// A step over operation `op` (taken modulo the operations there are).
fn step() -> impl Strategy<Value = Step> {
    let op = 0..MAX_OPERATIONS;
    let gathered = prop_oneof![
        1 => Just(None),
        2 => Just(Some(Kind::Search)),
        1 => Just(Some(Kind::Retrieve)),
        1 => Just(Some(Kind::List)),
    ];
    prop_oneof![
        4 => op.clone().prop_map(Step::Execute),
        3 => op.clone().prop_map(Step::Reconcile),
        1 => op.clone().prop_map(Step::Status),
        1 => op.clone().prop_map(Step::ExecuteCrash),
        1 => (op.clone(), gathered).prop_map(|(op, kind)| Step::RacingReconcilers(op, kind)),
        3 => (op.clone(), delivery()).prop_map(|(op, d)| Step::Webhook(op, d)),
        2 => (op, decision()).prop_map(|(op, d)| Step::Resolve(op, d)),
        1 => prop_oneof![
            Just(Duration::from_secs(30 * 60)),
            Just(Duration::from_secs(2 * 3600)),
            Just(Duration::from_secs(25 * 3600)),
        ]
        .prop_map(Step::Advance),
    ]
}

/// What a fault does at `at`: only answers a correct adapter can read truly.
/// A hold's `until_step` is, until `normalized`, how many steps past its
/// own it lasts.
fn response(at: At) -> BoxedStrategy<Response> {
    match at {
        At::BeforeRead => prop_oneof![
            Just(Response::Drop),
            Just(Response::Reset),
            Just(Response::Status(503)),
            Just(Response::Status(429)),
            Just(Response::Status(500)),
        ]
        .boxed(),
        At::BeforeCommit => prop_oneof![
            1 => Just(Response::Drop),
            1 => Just(Response::Reset),
            1 => Just(Response::Status(503)),
            1 => Just(Response::Status(429)),
            1 => Just(Response::Status(500)),
            2 => (0..=MAX_HOLD_EXTENSION).prop_map(|until_step| Response::Hold { until_step }),
        ]
        .boxed(),
        At::AfterCommit => prop_oneof![
            Just(Response::Drop),
            Just(Response::Reset),
            Just(Response::Status(500)),
            Just(Response::Partial(5)),
            Just(Response::Status(503)),
        ]
        .boxed(),
    }
}

fn fault() -> impl Strategy<Value = Fault> {
    let kind = prop_oneof![
        3 => Just(Kind::Create),
        1 => Just(Kind::Search),
        1 => Just(Kind::Retrieve),
        1 => Just(Kind::List),
    ];
    let at = prop_oneof![
        Just(At::AfterCommit),
        Just(At::BeforeCommit),
        Just(At::BeforeRead)
    ];
    // The step is the one the fault is made for (`situation`).
    (Just(0u32), kind, 1..=2u32, at).prop_flat_map(|(step, kind, nth, at)| {
        response(at).prop_map(move |response| Fault {
            step,
            kind,
            nth,
            at,
            response,
        })
    })
}

/// Every situation of the generic API the grammar makes.
pub fn situation() -> impl Strategy<Value = Situation> {
    situation_on(Just(Collection::Tickets))
}

/// Situations creating in a collection `collection` draws. Each step
/// carries its own fault rules, so that shrinking a step away takes its
/// faults with it and leaves the others on the steps they were made for.
pub(crate) fn situation_on(
    collection: impl Strategy<Value = Collection>,
) -> impl Strategy<Value = Situation> {
    let amounts = prop::collection::vec(
        prop_oneof![Just(1200u32), Just(4200u32)],
        1..=MAX_OPERATIONS,
    );
    let step_with_faults = (step(), prop::collection::vec(fault(), 0..=2));
    let steps = prop::collection::vec(step_with_faults, 1..=MAX_STEPS);
    (collection, provider(), amounts, steps).prop_map(|(collection, provider, amounts, steps)| {
        let faults = step_scoped(&steps, |f: &Fault, step| Fault { step, ..*f });
        normalized(Situation {
            provider: fitted(provider, collection),
            collection,
            amounts,
            steps: steps.into_iter().map(|(step, _)| step).collect(),
            faults,
            mcp: None,
        })
    })
}

/// The fault rules drawn with each step, in order, each set to the step it
/// was drawn with (from 1), at most `MAX_FAULTS` in all.
pub(crate) fn step_scoped<S, F>(steps: &[(S, Vec<F>)], on_step: impl Fn(&F, u32) -> F) -> Vec<F> {
    let mut faults: Vec<F> = steps
        .iter()
        .zip(1u32..)
        .flat_map(|((_, drawn), step)| drawn.iter().map(move |f| (f, step)))
        .map(|(f, step)| on_step(f, step))
        .collect();
    faults.truncate(MAX_FAULTS);
    faults
}

/// The provider as `collection`'s profile has it: its own idempotency (a
/// real provider's contract, never another's), only the lookups it offers,
/// and settling later only where its objects carry a status.
fn fitted(mut p: Provider, collection: Collection) -> Provider {
    let offers = collection.offers();
    p.lookups = Lookups {
        retrieve: p.lookups.retrieve && offers.retrieve,
        client_reference: p.lookups.client_reference && offers.client_reference,
        list_recent: p.lookups.list_recent && offers.list_recent,
    };
    if !collection.has_status() {
        p.asynchronous = None;
    }
    if let Some(profile) = collection.profile() {
        p.keys = if profile.keys_creates() {
            Keys::Stripe
        } else {
            Keys::None
        };
        p.retention = Duration::from_secs(24 * 3600);
    }
    p
}

/// Steps about operations that exist and that the scenario reader accepts
/// where they stand, and fault rules that strike what they can: see
/// `normalized_steps` and `fair_fault`.
fn normalized(mut s: Situation) -> Situation {
    s.steps = normalized_steps(&s.provider, s.amounts.len(), &s.steps);
    s.provider.webhooks = s.steps.iter().any(|step| matches!(step, Step::Webhook(..)));
    let mut seen: Vec<Fault> = Vec::new();
    let mut kept = Vec::new();
    for f in &s.faults {
        // A rule that an earlier one shadows would never apply.
        let shadowed = seen
            .iter()
            .any(|e| e.step == f.step && e.kind == f.kind && e.nth == f.nth);
        seen.push(*f);
        if shadowed {
            continue;
        }
        if let Some(fault) = fair_fault(&s, *f) {
            kept.push(fault);
        }
    }
    s.faults = kept;
    s
}

/// Each step about an operation that exists, and readable where it stands:
/// a webhook or a resolution only of an operation already executed (else
/// it becomes that execute), a settling event only once the clock has
/// passed its settling since that execute (else `created`), racing
/// reconcilers gathering a lookup the provider answers.
pub(crate) fn normalized_steps(p: &Provider, ops: usize, steps: &[Step]) -> Vec<Step> {
    // Per operation: executed yet, and the clock moved since its first execute.
    let mut executed = vec![false; ops];
    let mut settled = vec![false; ops];
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let step = match *step {
            Step::Execute(op) => Step::Execute(op % ops),
            Step::ExecuteCrash(op) => Step::ExecuteCrash(op % ops),
            Step::Reconcile(op) => Step::Reconcile(op % ops),
            Step::Status(op) => Step::Status(op % ops),
            Step::RacingReconcilers(op, kind) => {
                Step::RacingReconcilers(op % ops, kind.and_then(|k| answered_lookup(p, k)))
            }
            Step::Webhook(op, _) | Step::Resolve(op, _) if !executed[op % ops] => {
                Step::Execute(op % ops)
            }
            Step::Webhook(op, mut d) => {
                if d.event == Event::Settled && !(p.asynchronous.is_some() && settled[op % ops]) {
                    d.event = Event::Created;
                }
                Step::Webhook(op % ops, d)
            }
            Step::Resolve(op, decision) => Step::Resolve(op % ops, decision),
            advance @ Step::Advance(_) => advance,
        };
        match step {
            Step::Execute(op) | Step::ExecuteCrash(op) => executed[op] = true,
            Step::Advance(_) => {
                for (settled, executed) in settled.iter_mut().zip(&executed) {
                    *settled |= *executed;
                }
            }
            _ => {}
        }
        out.push(step);
    }
    out
}

/// Whether `collection`'s profile has requests of `kind` (a rule for one
/// it lacks could never apply, and the scenario reader refuses it).
fn offered(collection: Collection, kind: Kind) -> bool {
    let offers = collection.offers();
    match kind {
        Kind::Create => true,
        Kind::Retrieve => offers.retrieve,
        Kind::Search => offers.client_reference,
        Kind::List => offers.list_recent,
    }
}

/// `kind` if the provider answers it, else the first lookup it answers.
fn answered_lookup(p: &Provider, kind: Kind) -> Option<Kind> {
    let answers = |k: Kind| match k {
        Kind::Search => p.lookups.client_reference,
        Kind::Retrieve => p.lookups.retrieve,
        Kind::List => p.lookups.list_recent,
        Kind::Create => false,
    };
    std::iter::once(kind)
        .chain([Kind::Search, Kind::Retrieve, Kind::List])
        .find(|&k| answers(k))
}

/// The rule as it may stand, or none: no rule on an `advance` (it sends
/// nothing); a hold only of a create before its commit, in a step whose
/// calls may create, and only as long as a correct adapter can tell it
/// apart (`hold_until`).
fn fair_fault(s: &Situation, mut f: Fault) -> Option<Fault> {
    let (p, steps) = (&s.provider, &s.steps);
    let step = steps.get(f.step as usize - 1)?;
    if matches!(step, Step::Advance(_)) || !offered(s.collection, f.kind) {
        return None;
    }
    if let Response::Hold { until_step } = f.response {
        if f.kind != Kind::Create || f.at != At::BeforeCommit {
            return None;
        }
        let until = hold_until(p, steps, f.step, until_step)?;
        f.response = Response::Hold { until_step: until };
    }
    Some(f)
}

/// The step whose end releases a create held in step `from` for `extension`
/// steps past it, or none where no hold is fair.
///
/// Without keys, a held create is seen by nothing but lookups, and a lookup
/// made in a later call is proof of absence for a correct adapter (one made
/// in the same call is not): so the hold ends with its own step, and only
/// in a step of one call. With keys, a retry meets the key in flight (409)
/// whatever the step, as long as the key is still remembered: so the hold
/// lasts past no `advance` (which may outrun the key's retention) and past
/// no crash (which waits for its own create to commit).
fn hold_until(p: &Provider, steps: &[Step], from: u32, extension: u32) -> Option<u32> {
    let own = steps.get(from as usize - 1)?;
    let creates = matches!(own, Step::Execute(_) | Step::Reconcile(_));
    if p.keys == Keys::None {
        return creates.then_some(from);
    }
    if !creates && !matches!(own, Step::RacingReconcilers(..)) {
        return None;
    }
    Some(held_until(steps, from, extension))
}

/// The step whose end releases a request held in step `from` for
/// `extension` steps past it, past no `advance` and no crash.
pub(crate) fn held_until(steps: &[Step], from: u32, extension: u32) -> u32 {
    let mut until = from;
    while until < from + extension && (until as usize) < steps.len() {
        match steps[until as usize] {
            Step::Advance(_) | Step::ExecuteCrash(_) => break,
            _ => until += 1,
        }
    }
    until
}

//! The grammar of MCP situations (`--mcp`), as proptest strategies, fair by
//! the argument of [`crate::mcp`]: the steps of the HTTP grammar but
//! webhooks (the MCP face sends no events) and gathered lookups (an HTTP
//! rule), with call fault rules in place of HTTP ones.

use std::time::Duration;

use proptest::prelude::*;

use crate::grammar::{held_until, normalized_steps, step_scoped, MAX_OPERATIONS, MAX_STEPS};
use crate::mcp::{Call, Cancel, Client, McpFault, McpSide, Retrieval, Struck, TaskEnd, Tool};
use crate::shape::Collection;
use crate::situation::{Decision, Keys, Lookups, Provider, Situation, Step};

/// Most steps past its own that a call is held in flight.
const MAX_HOLD_EXTENSION: u32 = 2;

fn step() -> impl Strategy<Value = Step> {
    let op = 0..MAX_OPERATIONS;
    let decision = prop_oneof![
        Just(Decision::SucceededLedger),
        Just(Decision::SucceededWithoutId),
        Just(Decision::Failed),
    ];
    prop_oneof![
        4 => op.clone().prop_map(Step::Execute),
        3 => op.clone().prop_map(Step::Reconcile),
        1 => op.clone().prop_map(Step::Status),
        1 => op.clone().prop_map(Step::ExecuteCrash),
        1 => op.clone().prop_map(|op| Step::RacingReconcilers(op, None)),
        2 => (op, decision).prop_map(|(op, d)| Step::Resolve(op, d)),
        1 => prop_oneof![
            // Past a task's work, past two hours, past the retrieval's and
            // the keys' seven days.
            Just(Duration::from_secs(10)),
            Just(Duration::from_secs(2 * 3600)),
            Just(Duration::from_secs(8 * 24 * 3600)),
        ]
        .prop_map(Step::Advance),
    ]
}

/// What a fault may do to a paid call: a rejection only before the commit.
fn paid_call() -> impl Strategy<Value = Call> {
    let committed = any::<bool>;
    let ambiguous = prop_oneof![Just(500u16), Just(503u16), Just(504u16)];
    let cancel = prop_oneof![
        Just(Cancel::Ignore),
        Just(Cancel::Honour),
        Just(Cancel::Race)
    ];
    let task = prop_oneof![
        Just(TaskEnd::Complete),
        Just(TaskEnd::Fail),
        Just(TaskEnd::Expire)
    ];
    prop_oneof![
        2 => committed().prop_map(|committed| Call::Drop { committed }),
        1 => committed().prop_map(|committed| Call::Reset { committed }),
        2 => (ambiguous, committed(), any::<bool>()).prop_map(|(status, committed, says_timeout)| {
            Call::IsError { status, committed, says_timeout }
        }),
        1 => (prop_oneof![Just(400u16), Just(429u16)], any::<bool>()).prop_map(
            |(status, says_timeout)| Call::IsError { status, committed: false, says_timeout }
        ),
        1 => (prop_oneof![Just(502u16), Just(503u16)], committed())
            .prop_map(|(status, committed)| Call::Http { status, committed }),
        1 => Just(Call::RpcError),
        2 => (any::<bool>(), any::<bool>(), cancel)
            .prop_map(|(commit, headers, cancel)| Call::Stall { commit, headers, cancel }),
        2 => (0..=MAX_HOLD_EXTENSION).prop_map(|until_step| Call::Hold { until_step }),
        1 => Just(Call::Never),
        1 => any::<bool>().prop_map(|commit| Call::PrimeThenClose { commit }),
        1 => task.prop_map(Call::Task),
    ]
}

/// What a fault may do to a retrieval: it fails, and changes nothing.
fn retrieval_call() -> impl Strategy<Value = Call> {
    prop_oneof![
        Just(Call::Drop { committed: true }),
        Just(Call::Reset { committed: true }),
        Just(Call::IsError {
            status: 503,
            committed: true,
            says_timeout: false
        }),
    ]
}

fn fault() -> impl Strategy<Value = McpFault> {
    let struck = prop_oneof![
        3 => Just(None),
        1 => Just(Some(Retrieval::GetOperation)),
        1 => Just(Some(Retrieval::ListRecent)),
    ];
    (struck, 1..=2u32).prop_flat_map(|(retrieval, nth)| {
        let call = match retrieval {
            None => paid_call().boxed(),
            Some(_) => retrieval_call().boxed(),
        };
        call.prop_map(move |call| McpFault {
            // The step and the paid tool are the step's (`situation`, `fair_fault`).
            step: 0,
            tool: retrieval.map_or(Struck::Paid(Tool::Ticket), Struck::Retrieval),
            nth,
            call,
        })
    })
}

/// Every MCP situation the grammar makes.
pub fn situation() -> impl Strategy<Value = Situation> {
    let client = prop_oneof![Just(Client::TypescriptSdk), Just(Client::ClaudeCodeHttp)];
    let retrieval = prop_oneof![3 => Just(true), 1 => Just(false)];
    let tasks = prop_oneof![3 => Just(false), 1 => Just(true)];
    let operations = prop::collection::vec(
        (
            prop_oneof![Just(Tool::Ticket), Just(Tool::Charge)],
            prop_oneof![Just(1200u32), Just(4200u32)],
        ),
        1..=MAX_OPERATIONS,
    );
    let steps = prop::collection::vec(
        (step(), prop::collection::vec(fault(), 0..=2)),
        1..=MAX_STEPS,
    );
    (client, retrieval, tasks, operations, steps).prop_map(
        |(client, retrieval, tasks, operations, steps)| {
            let faults = step_scoped(&steps, |f: &McpFault, step| McpFault { step, ..*f });
            let (tools, amounts) = operations.into_iter().unzip();
            let side = McpSide {
                client,
                retrieval,
                tasks,
                tools,
                faults,
            };
            normalized(side, amounts, steps.into_iter().map(|(s, _)| s).collect())
        },
    )
}

/// The provider behind the MCP face: its HTTP side is not called.
fn provider() -> Provider {
    Provider {
        keys: Keys::None,
        retention: Duration::from_secs(24 * 3600),
        lookups: Lookups {
            retrieve: true,
            client_reference: true,
            list_recent: true,
        },
        asynchronous: None,
        webhooks: false,
    }
}

fn normalized(mut side: McpSide, amounts: Vec<u32>, steps: Vec<Step>) -> Situation {
    let provider = provider();
    let mut steps = normalized_steps(&provider, amounts.len(), &steps);
    if side.tasks {
        // A task commits on the clock, in whichever step moves it: the
        // crash would strike another step than its own.
        for step in &mut steps {
            if let Step::ExecuteCrash(op) = *step {
                *step = Step::Execute(op);
            }
        }
    }
    let mut kept: Vec<McpFault> = Vec::new();
    for f in &side.faults {
        let Some(fault) = fair_fault(&side, &steps, *f) else {
            continue;
        };
        // A rule that an earlier one shadows would never apply.
        let shadowed = kept
            .iter()
            .any(|e| e.step == fault.step && e.tool == fault.tool && e.nth == fault.nth);
        if !shadowed {
            kept.push(fault);
        }
    }
    side.faults = kept;
    Situation {
        provider,
        collection: Collection::Tickets,
        amounts,
        faults: Vec::new(),
        steps,
        mcp: Some(side),
    }
}

/// The rule as it may stand, or none: none on an `advance`; a paid rule
/// names the tool of its step's operation; a task only where calls may
/// become tasks; a retrieval rule only where retrieval is offered; a crash
/// step's call answered at once (its commit is what kills the adapter); a
/// hold only in a step that may call, and past no clock move and no crash.
fn fair_fault(side: &McpSide, steps: &[Step], mut f: McpFault) -> Option<McpFault> {
    let step = *steps.get(f.step as usize - 1)?;
    let op = step.op()?;
    match f.tool {
        Struck::Paid(_) => f.tool = Struck::Paid(side.tools[op]),
        Struck::Retrieval(_) if !side.retrieval => return None,
        Struck::Retrieval(_) => {}
    }
    let answered_at_once = matches!(
        f.call,
        Call::Drop { .. }
            | Call::Reset { .. }
            | Call::IsError { .. }
            | Call::Http { .. }
            | Call::RpcError
    );
    match f.call {
        Call::Task(_) if !side.tasks => return None,
        _ if matches!(step, Step::ExecuteCrash(_)) && !answered_at_once => return None,
        Call::Hold { until_step } => {
            let calls = matches!(
                step,
                Step::Execute(_) | Step::Reconcile(_) | Step::RacingReconcilers(..)
            );
            if !calls {
                return None;
            }
            f.call = Call::Hold {
                until_step: held_until(steps, f.step, until_step),
            };
        }
        _ => {}
    }
    Some(f)
}

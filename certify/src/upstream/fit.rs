//! Which scenarios a proxy in front of a real service can stage. The proxy
//! places faults around the upstream's answer and knows which step runs; it
//! cannot move a real service's clock, sign its events, hold a request inside
//! its key store or read its ledger at a given moment, so a scenario that
//! needs any of these is left out of an upstream run, with the reason.

use lostreply_harness::scenario::model::{ResolveRef, Scenario, Step};

use crate::proxy::rules::{check, Steps};

/// Whether the contract declares the service's clock (`readback.clock`),
/// which stages `advance` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Declared: `advance` moves it.
    Declared,
    /// Not declared: the service keeps its own time.
    Absent,
}

/// Why `scenario` cannot run behind the proxy, or `None` when it can.
pub fn unfit(scenario: &Scenario, clock: Clock) -> Option<String> {
    if scenario.plan.mcp.is_some() || scenario.mcp.is_some() {
        return Some(
            "it drives an MCP server, and the proxy forwards HTTP requests to a service".to_owned(),
        );
    }
    if let Err(e) = check(&scenario.plan.faults, Steps::Driven) {
        return Some(e.to_string());
    }
    scenario
        .steps
        .iter()
        .find_map(|step| step_unfit(step, clock))
}

fn step_unfit(step: &Step, clock: Clock) -> Option<String> {
    match step {
        Step::Execute { .. } | Step::Reconcile { .. } | Step::Status { .. } => None,
        Step::Resolve {
            provider_ref: ResolveRef::Ledger,
            ..
        } => Some(
            "a `resolve` names the ledger's object at that moment (`provider_ref: ledger`), \
             and a real service has no ledger the harness can read then"
                .to_owned(),
        ),
        Step::Resolve { .. } => None,
        Step::Parallel(inner) => inner.iter().find_map(|step| step_unfit(step, clock)),
        Step::Advance { .. } if clock == Clock::Declared => None,
        Step::Advance { .. } => Some(
            "it moves the provider's clock (`advance`), and the contract declares no clock \
             endpoint (`readback.clock`) to move"
                .to_owned(),
        ),
        Step::Webhook { .. } => Some(
            "it delivers signed provider events (`webhook`), which only the simulator makes"
                .to_owned(),
        ),
        Step::During { .. } => Some(
            "a call waits for another's request held inside the provider (`during`), \
             which only the simulator can hold"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn library(file: &str) -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(file);
        lostreply_harness::scenario::load(&path).unwrap()
    }

    #[test]
    fn a_lost_answer_with_its_step_scoped_rule_fits() {
        assert_eq!(
            unfit(&library("case02-lost-after-commit.yaml"), Clock::Absent),
            None
        );
        let crash = library("case08-crash-after-remote-success.yaml");
        assert_eq!(unfit(&crash, Clock::Absent), None);
        let held = library("case01-timeout-before-receipt.yaml");
        assert_eq!(unfit(&held, Clock::Absent), None);
    }

    #[test]
    fn a_clock_move_needs_a_declared_clock() {
        let expiry = library("case09-key-retention-expired.yaml");
        let why = unfit(&expiry, Clock::Absent).unwrap();
        assert!(why.contains("`readback.clock`"), "{why}");
        assert_eq!(unfit(&expiry, Clock::Declared), None);
    }

    #[test]
    fn what_only_the_simulator_does_is_named() {
        let unfit = |file| unfit(&library(file), Clock::Declared).unwrap();
        let events = unfit("case06-webhook-around-reconcile.yaml");
        assert!(events.contains("`webhook`"), "{events}");
        let gather = unfit("case07-racing-reconcilers.yaml");
        assert!(gather.starts_with("fault rule"), "{gather}");
        let mcp = unfit("mcp-lost-after-commit.yaml");
        assert!(mcp.contains("MCP"), "{mcp}");
    }
}

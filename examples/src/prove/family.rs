//! Which adapters judge a scenario file: the correct designs that must all
//! pass it, and the flawed adapters it may catch. Both lists are read from
//! the modules that define the adapters, so a design added there is judged
//! with here without a change.

use std::sync::Arc;

use lostreply_harness::adapter::AdapterFactory;
use lostreply_harness::scenario::model::Scenario;
use lostreply_simulator::profile::Profile;
use serde::Serialize;

use crate::naive::kit::Factory;

/// What a scenario asks of its adapter, and so which family judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// The generic HTTP API: the reference adapter and the designs of
    /// `crate::designs`, flawed by the designs' flawed variants and the
    /// naive adapter of each lost-response case.
    Http,
    /// An `mcp:` section: the reference adapter's MCP side, flawed by the
    /// naive MCP callers of `crate::naive_mcp`. (The designs speak HTTP only.)
    Mcp,
}

/// A scenario on another wire than the generic API's: no family judges it,
/// since the bundled adapters speak the generic API only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the provider speaks profile {profile}, and the bundled adapters the generic API only")]
pub struct OtherWire {
    /// The profile's name.
    pub profile: String,
}

/// The family that judges `scenario`, or why none can.
pub fn family_of(scenario: &Scenario) -> Result<Family, OtherWire> {
    if *scenario.plan.profile != Profile::generic() {
        return Err(OtherWire {
            profile: scenario.plan.profile.name.clone(),
        });
    }
    Ok(match scenario.mcp {
        Some(_) => Family::Mcp,
        None => Family::Http,
    })
}

/// One adapter of a family, by the name `lostreply adapter NAME` serves it under.
#[derive(Clone)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Builds it in process.
    pub factory: Arc<dyn AdapterFactory>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member").field("name", &self.name).finish()
    }
}

fn member(factory: Arc<dyn AdapterFactory>) -> Member {
    Member {
        name: factory.name(),
        factory,
    }
}

fn naive(factory: &Factory) -> Member {
    member(Arc::new(Factory {
        name: factory.name,
        build: factory.build,
    }))
}

/// The correct adapters of `family`: a file that fails one of them asks
/// for something the contract does not.
pub fn correct(family: Family) -> Vec<Member> {
    let reference = member(Arc::new(lostreply_reference::ReferenceFactory));
    match family {
        Family::Http => std::iter::once(reference)
            .chain(
                crate::designs::correct_designs()
                    .into_iter()
                    .map(|f| member(Arc::from(f))),
            )
            .collect(),
        Family::Mcp => vec![reference],
    }
}

/// The flawed adapters of `family`, each with one deliberate mistake.
pub fn flawed(family: Family) -> Vec<Member> {
    match family {
        Family::Http => crate::designs::flawed_designs()
            .into_iter()
            .map(|f| member(Arc::from(f)))
            .chain(
                crate::naive::naive_adapters()
                    .into_iter()
                    .map(|(_, f)| member(Arc::from(f))),
            )
            .collect(),
        Family::Mcp => crate::naive_mcp::FACTORIES.iter().map(naive).collect(),
    }
}

/// Every adapter of every family, each once, by name: what `lostreply
/// adapter NAME` serves, so that each run `prove` makes can be reproduced
/// with the adapter as a process.
pub fn every_member() -> Vec<Member> {
    let mut all: Vec<Member> = Vec::new();
    for family in [Family::Http, Family::Mcp] {
        for m in correct(family).into_iter().chain(flawed(family)) {
            if !all.iter().any(|a| a.name == m.name) {
                all.push(m);
            }
        }
    }
    all
}

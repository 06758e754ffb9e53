//! What the later checks need to know about what the file declared (its
//! operations, tenants, collections, profile, limits and MCP server),
//! gathered by the provider and MCP checks and read by every other part.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use lostreply_simulator::Profile;

use super::common::{in_profile, is_resource_name, resource};
use crate::scenario::client_profiles::McpClient;
use crate::scenario::error::Diagnostics;
use crate::scenario::model::{OpId, GET_OPERATION, LIST_RECENT_OPERATIONS};
use crate::scenario::span::{Pos, Sp};

/// What later checks need to know about what the file declared.
#[derive(Debug)]
pub(super) struct Declared {
    /// Operation ids (the copy every reference shares) and where each was declared.
    pub operations: BTreeMap<OpId, Pos>,
    /// Tenant credentials.
    pub tenants: Vec<String>,
    /// `provider.resources`, if given.
    pub resources: Option<Vec<String>>,
    /// `provider.profile` (generic when absent).
    pub profile: Arc<Profile>,
    /// The profile's collections, where it declares them (`None`: any valid name).
    pub profile_resources: Option<Vec<String>>,
    /// `provider.webhooks` is present.
    pub webhooks: bool,
    /// What asynchronous objects settle to, if the provider is asynchronous.
    pub settle: Option<lostreply_simulator::SettleResult>,
    /// `provider.limits.stall_cap`.
    pub stall_cap: Duration,
    /// `provider.limits.max_body_bytes`.
    pub max_body_bytes: usize,
    /// `client_timeout`.
    pub client_timeout: Duration,
    /// How many steps the scenario has (fault rules may name them).
    pub step_count: usize,
    /// The MCP server, when the file has an `mcp:` section.
    pub mcp: Option<McpDeclared>,
}

impl Declared {
    /// The declared copy of the operation id `name`; a copy of its own for an
    /// id not declared (an error reported where it is named).
    pub fn op_id(&self, name: &str) -> OpId {
        self.operations
            .get_key_value(name)
            .map_or_else(|| OpId::from(name), |(id, _)| id.clone())
    }

    /// Checks a collection name, that the profile has it and that
    /// `provider.resources` lists it. A name the profile lacks is reported
    /// once, as the profile's: `provider.resources` is held to the profile too.
    pub fn check_resource(&self, d: &mut Diagnostics, raw: &Sp<String>) {
        if is_resource_name(&raw.value)
            && !in_profile(d, raw, &self.profile, self.profile_resources.as_deref())
        {
            return;
        }
        resource(d, raw, self.resources.as_deref());
    }

    /// The profile's collection `name`, where the profile declares its collections.
    pub fn profile_resource(&self, name: &str) -> Option<&lostreply_simulator::profile::Resource> {
        self.profile.resource(name)
    }
}

/// What fault rules and operations need to know about the MCP server.
#[derive(Debug, Clone)]
pub(crate) struct McpDeclared {
    /// Paid tools: name, collection and key argument.
    pub tools: Vec<(String, String, Option<String>)>,
    /// The retrieval tools are listed.
    pub retrieval: bool,
    /// Tasks can be asked for: enabled, and the adapter's revision has them.
    pub tasks: bool,
    /// `tasks.work`: a task fault's default `after`.
    pub task_work: Duration,
    /// The client windows and their scale.
    pub client: McpClient,
}

impl McpDeclared {
    /// The paid tool called `name`: its collection and key argument.
    pub fn paid(&self, name: &str) -> Option<(&str, Option<&str>)> {
        self.tools
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, resource, key)| (resource.as_str(), key.as_deref()))
    }

    /// Every tool the server lists, paid tools first.
    pub fn all_tools(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tools.iter().map(|(n, _, _)| n.as_str()).collect();
        if self.retrieval {
            names.extend([GET_OPERATION, LIST_RECENT_OPERATIONS]);
        }
        names
    }

    /// The paid tools' names.
    pub fn paid_names(&self) -> Vec<&str> {
        self.tools.iter().map(|(n, _, _)| n.as_str()).collect()
    }
}

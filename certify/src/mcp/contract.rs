//! The MCP contract (`kind: mcp`): where the server is, which credentials to
//! present, which paid tool (if any) certification may call and with what
//! arguments, and how retrieval answers are read. Same conventions as the
//! HTTP contract: YAML with positions, secrets from the environment, every
//! problem located.
//!
//! Safety lives here as much as in the client: no paid tool is ever called
//! unless `paid` names it, and then once per run.

use std::collections::BTreeSet;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::contract::{
    self, bounded, duration, max_response_bytes, path_check, pointer, read_yaml, resolve, Bound,
    ContractError, Found, RawValue, Sp,
};

/// Requests per run when the contract sets none: a certification needs about 20.
pub const DEFAULT_BUDGET: u32 = 60;
/// Most requests per second when the contract sets none.
pub const DEFAULT_RATE_PER_S: u32 = 20;
/// Largest answer read when the contract sets none.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// The paid call certification may make.
#[derive(Debug, Clone, PartialEq)]
pub struct PaidCall {
    /// The tool's name.
    pub tool: String,
    /// Its arguments; `{marker}` in a string is replaced by the run's marker.
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// How retrieval is called and read (defaults: mcp.md's names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrievalSpec {
    /// `get_operation`.
    pub get: String,
    /// `list_recent_operations`.
    pub list: String,
    /// The argument of `get` carrying the id (`id`).
    pub id_argument: String,
    /// JSON pointer, in the list's `structuredContent`, to the array (`/operations`).
    pub items_at: String,
    /// JSON pointer, in a listed item and in a paid result's
    /// `structuredContent`, to the operation id (`/operation_id`).
    pub id_at: String,
    /// JSON pointer, in `get`'s `structuredContent`, to the original payload (`/result`).
    pub payload_at: String,
}

impl Default for RetrievalSpec {
    fn default() -> Self {
        RetrievalSpec {
            get: "get_operation".to_owned(),
            list: "list_recent_operations".to_owned(),
            id_argument: "id".to_owned(),
            items_at: "/operations".to_owned(),
            id_at: "/operation_id".to_owned(),
            payload_at: "/result".to_owned(),
        }
    }
}

/// A validated MCP contract.
#[derive(Debug, Clone)]
pub struct McpContract {
    /// Where it came from (a path, or `--mcp`).
    pub source: String,
    /// A one-line name.
    pub name: String,
    /// `http://host:port/path` (or `https://`): the Streamable HTTP endpoint.
    pub url: String,
    /// `http://host:port` (or `https://`): the origin every request goes to.
    pub origin: String,
    /// The endpoint's path (`/mcp`).
    pub path: String,
    /// Hosts the URL may name.
    pub allowed_hosts: BTreeSet<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// The transport's bearer credential (`None`: no `Authorization` header).
    pub primary: Option<String>,
    /// Another tenant's credential: enables the behaviour findings.
    pub second_tenant: Option<String>,
    /// The one paid call allowed, if any.
    pub paid: Option<PaidCall>,
    /// Retrieval tool names and answer shapes.
    pub retrieval: RetrievalSpec,
    /// Declared retention, when the contract states it (else read from answers).
    pub retention: Option<Duration>,
    /// The simulator's clock control path (same origin): makes ids expire on demand.
    pub clock: Option<String>,
    /// Request budget.
    pub budget: u32,
    /// Requests per second.
    pub rate_per_s: u32,
    /// Largest answer read.
    pub max_response_bytes: usize,
}

/// The file as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpContract {
    /// Always 1.
    pub version: Sp<u32>,
    /// Always `mcp`.
    pub kind: Sp<String>,
    /// A one-line name for reports.
    pub name: Sp<String>,
    /// The endpoint.
    pub target: RawMcpTarget,
    /// Bearer credentials (values or `{env: NAME}`).
    #[serde(default)]
    pub auth: Option<RawMcpAuth>,
    /// The one paid tool certification may call (once per run). Absent: none.
    #[serde(default)]
    pub paid: Option<RawPaid>,
    /// Retrieval tool names and answer shapes (mcp.md's by default).
    #[serde(default)]
    pub retrieval: Option<RawRetrieval>,
    /// What the vendor declares.
    #[serde(default)]
    pub declares: Option<RawMcpDeclares>,
    /// The simulator's clock control path: `{path: /_lostreply/clock}`.
    #[serde(default)]
    pub clock: Option<RawClock>,
    /// Bounds.
    #[serde(default)]
    pub limits: Option<RawMcpLimits>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpTarget {
    /// `http://host:port/path` or `https://host:port/path`.
    pub url: Sp<RawValue>,
    /// Hosts the URL may name.
    pub allowed_hosts: Sp<Vec<String>>,
    /// Per-request timeout (default 10s, at most 120s).
    #[serde(default)]
    pub timeout: Option<Sp<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpAuth {
    /// The tenant under test.
    #[serde(default)]
    pub primary: Option<Sp<RawValue>>,
    /// Another tenant.
    #[serde(default)]
    pub second_tenant: Option<Sp<RawValue>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPaid {
    /// The tool's name as `tools/list` gives it.
    pub tool: Sp<String>,
    /// Its arguments (an object; `{marker}` in strings is filled in).
    #[serde(default)]
    pub arguments: Option<Sp<serde_json::Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRetrieval {
    /// Default `get_operation`.
    #[serde(default)]
    pub get: Option<Sp<String>>,
    /// Default `list_recent_operations`.
    #[serde(default)]
    pub list: Option<Sp<String>>,
    /// Default `id`.
    #[serde(default)]
    pub id_argument: Option<Sp<String>>,
    /// Default `/operations`.
    #[serde(default)]
    pub items_at: Option<Sp<String>>,
    /// Default `/operation_id`.
    #[serde(default)]
    pub id_at: Option<Sp<String>>,
    /// Default `/result`.
    #[serde(default)]
    pub payload_at: Option<Sp<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpDeclares {
    /// How long ids retrieve (`7d`).
    #[serde(default)]
    pub retention: Option<Sp<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClock {
    /// A path on the same origin.
    pub path: Sp<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpLimits {
    /// Most requests per run (default 60).
    #[serde(default)]
    pub budget: Option<Sp<u32>>,
    /// Most requests per second (default 20).
    #[serde(default)]
    pub rate_per_s: Option<Sp<u32>>,
    /// Largest answer read (default 1 MiB).
    #[serde(default)]
    pub max_response_bytes: Option<Sp<u64>>,
}

/// Splits `http://host:port/path` (or `https://`) into the origin, the host
/// and the path.
pub fn split_url(url: &str) -> Option<(String, String, String)> {
    let (scheme, rest) = [contract::Scheme::Http, contract::Scheme::Https]
        .into_iter()
        .find_map(|s| url.strip_prefix(s.prefix()).map(|rest| (s, rest)))?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if path.contains(['?', '#']) || path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let origin = format!("{}{authority}", scheme.prefix());
    let host = contract::split_base_url(&origin)?.host;
    Some((origin, host, path.to_owned()))
}

/// Reads and validates an MCP contract file's text; `env` looks variables up.
pub fn parse(
    text: &str,
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<McpContract, ContractError> {
    let raw = read_yaml::<RawMcpContract>(text, path)?;
    let mut d = Found::new(path, text);
    let contract = validate(raw, path, env, &mut d);
    if d.found.is_empty() {
        Ok(contract)
    } else {
        Err(d.into_error())
    }
}

/// Reads and validates an MCP contract file.
pub fn load(path: &std::path::Path) -> Result<McpContract, ContractError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ContractError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&text, &shown, &|name| std::env::var(name).ok())
}

/// The contract of `--mcp URL`: that URL's host only, the credentials from
/// the environment, mcp.md's retrieval names, and no paid call at all.
pub fn quick(
    url: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<McpContract, ContractError> {
    let Some((origin, host, path)) = split_url(url) else {
        return Err(contract::invalid(
            "--mcp",
            "",
            contract::Pos::START,
            &format!("{url:?}: expected http://host:port/path or https://host:port/path"),
        ));
    };
    let nonempty = |name: &str| env(name).filter(|v| !v.is_empty());
    Ok(McpContract {
        source: "--mcp".to_owned(),
        name: format!("MCP server at {url}"),
        url: url.to_owned(),
        origin,
        path,
        allowed_hosts: BTreeSet::from([host.to_ascii_lowercase()]),
        timeout: Duration::from_secs(10),
        primary: nonempty(PRIMARY_ENV),
        second_tenant: nonempty(SECOND_ENV),
        paid: None,
        retrieval: RetrievalSpec::default(),
        retention: None,
        clock: None,
        budget: DEFAULT_BUDGET,
        rate_per_s: DEFAULT_RATE_PER_S,
        max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
    })
}

/// The credential `--mcp URL` presents.
pub const PRIMARY_ENV: &str = "LOSTREPLY_MCP_CREDENTIAL";
/// A second tenant's credential for `--mcp URL`.
pub const SECOND_ENV: &str = "LOSTREPLY_MCP_SECOND_CREDENTIAL";

/// A tool name as MCP allows it (1-128 of `A-Za-z0-9_-.`).
fn tool_name(d: &mut Found<'_>, sp: &Sp<String>) -> String {
    let ok = (1..=128).contains(&sp.value.len())
        && sp
            .value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    if !ok {
        d.error(
            sp.pos,
            format!(
                "{:?} is not a tool name (1 to 128 of A-Z a-z 0-9 _ - .)",
                sp.value
            ),
        );
    }
    sp.value.clone()
}

/// Looks environment variables up.
type Env<'e> = &'e dyn Fn(&str) -> Option<String>;

fn validate(raw: RawMcpContract, path: &str, env: Env<'_>, d: &mut Found<'_>) -> McpContract {
    header(&raw, d);
    let target = target(&raw.target, env, d);
    let (primary, second_tenant) = credentials(raw.auth.as_ref(), env, d);
    let paid = raw.paid.as_ref().map(|p| paid_call(p, d));
    let retrieval = retrieval(raw.retrieval.as_ref(), d);
    if let (Some(p), Some(raw_paid)) = (&paid, &raw.paid) {
        if p.tool == retrieval.get || p.tool == retrieval.list {
            d.error(
                raw_paid.tool.pos,
                "the paid tool cannot be a retrieval tool",
            );
        }
    }
    let retention = raw
        .declares
        .as_ref()
        .and_then(|dec| dec.retention.as_ref())
        .map(|sp| {
            duration(
                d,
                sp,
                Duration::from_secs(1),
                Duration::from_secs(3650 * 86400),
            )
        });
    let clock = raw.clock.as_ref().map(|c| path_check(d, &c.path, None));
    let limits = raw.limits.as_ref();
    McpContract {
        source: path.to_owned(),
        name: raw.name.value.clone(),
        url: target.url,
        origin: target.origin,
        path: target.path,
        allowed_hosts: target.allowed_hosts,
        timeout: target.timeout,
        primary: primary.filter(|p| !p.is_empty()),
        second_tenant: second_tenant.filter(|p| !p.is_empty()),
        paid,
        retrieval,
        retention,
        clock,
        budget: bounded(d, limits.and_then(|l| l.budget.as_ref()), &BUDGET),
        rate_per_s: bounded(d, limits.and_then(|l| l.rate_per_s.as_ref()), &RATE_PER_S),
        max_response_bytes: max_response_bytes(
            d,
            limits.and_then(|l| l.max_response_bytes.as_ref()),
            DEFAULT_MAX_RESPONSE_BYTES,
        ),
    }
}

/// `version`, `kind` and `name`.
fn header(raw: &RawMcpContract, d: &mut Found<'_>) {
    if raw.version.value != 1 {
        d.error(raw.version.pos, "only `version: 1` exists");
    }
    if raw.kind.value != "mcp" {
        d.error(raw.kind.pos, "this file format is `kind: mcp`");
    }
    if raw.name.value.trim().is_empty() || raw.name.value.len() > 200 {
        d.error(raw.name.pos, "a name of 1 to 200 characters");
    }
}

struct Target {
    url: String,
    origin: String,
    path: String,
    allowed_hosts: BTreeSet<String>,
    timeout: Duration,
}

/// The endpoint and its allowlist: nothing is sent to a host the contract does not name.
fn target(raw: &RawMcpTarget, env: Env<'_>, d: &mut Found<'_>) -> Target {
    let url = resolve(d, &raw.url, env, "target.url");
    let allowed = contract::allowed_hosts(d, &raw.allowed_hosts);
    let (origin, path) = match split_url(&url) {
        _ if url.is_empty() => (String::new(), String::new()),
        None => {
            d.error(
                raw.url.pos,
                format!("{url:?}: expected http://host:port/path or https://host:port/path"),
            );
            (String::new(), String::new())
        }
        Some((_, host, _)) if !allowed.contains(&host.to_ascii_lowercase()) => {
            d.error(
                raw.url.pos,
                format!(
                    "refusing {url:?}: its host {host:?} is not in target.allowed_hosts ({})",
                    allowed.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            );
            (String::new(), String::new())
        }
        Some((origin, _, p)) => (origin, p),
    };
    let timeout = raw.timeout.as_ref().map_or(Duration::from_secs(10), |t| {
        duration(d, t, Duration::from_millis(1), Duration::from_secs(120))
    });
    Target {
        url,
        origin,
        path,
        allowed_hosts: allowed,
        timeout,
    }
}

/// The primary's and the second tenant's credentials, which must differ.
fn credentials(
    auth: Option<&RawMcpAuth>,
    env: Env<'_>,
    d: &mut Found<'_>,
) -> (Option<String>, Option<String>) {
    let Some(auth) = auth else {
        return (None, None);
    };
    let mut credential =
        |sp: &Option<Sp<RawValue>>, what: &str| sp.as_ref().map(|sp| resolve(d, sp, env, what));
    let primary = credential(&auth.primary, "auth.primary");
    let second_tenant = credential(&auth.second_tenant, "auth.second_tenant");
    if let (Some(a), Some(b), Some(sp)) = (&primary, &second_tenant, &auth.second_tenant) {
        if !a.is_empty() && a == b {
            d.error(
                sp.pos,
                "the second tenant's credential is the primary's: the not-yours finding needs another tenant",
            );
        }
    }
    (primary, second_tenant)
}

/// The one paid call allowed: a tool name and an object of arguments.
fn paid_call(p: &RawPaid, d: &mut Found<'_>) -> PaidCall {
    let tool = tool_name(d, &p.tool);
    let arguments = match &p.arguments {
        None => serde_json::Map::new(),
        Some(Sp {
            value: serde_json::Value::Object(m),
            ..
        }) => m.clone(),
        Some(sp) => {
            d.error(
                sp.pos,
                "paid.arguments is an object of the tool's arguments",
            );
            serde_json::Map::new()
        }
    };
    PaidCall { tool, arguments }
}

/// One retrieval setting: where it is written, where it goes, and its check.
type RetrievalField = (
    fn(&RawRetrieval) -> Option<&Sp<String>>,
    fn(&mut RetrievalSpec) -> &mut String,
    fn(&mut Found<'_>, &Sp<String>) -> String,
);

/// Every retrieval setting, in file order; each absent one keeps mcp.md's name.
const RETRIEVAL_FIELDS: [RetrievalField; 6] = [
    (|r| r.get.as_ref(), |s| &mut s.get, tool_name),
    (|r| r.list.as_ref(), |s| &mut s.list, tool_name),
    (
        |r| r.id_argument.as_ref(),
        |s| &mut s.id_argument,
        argument_name,
    ),
    (|r| r.items_at.as_ref(), |s| &mut s.items_at, pointer),
    (|r| r.id_at.as_ref(), |s| &mut s.id_at, pointer),
    (|r| r.payload_at.as_ref(), |s| &mut s.payload_at, pointer),
];

/// Retrieval tool names and answer shapes (mcp.md's where not given).
fn retrieval(raw: Option<&RawRetrieval>, d: &mut Found<'_>) -> RetrievalSpec {
    let mut retrieval = RetrievalSpec::default();
    if let Some(r) = raw {
        for (written, setting, check) in RETRIEVAL_FIELDS {
            if let Some(sp) = written(r) {
                *setting(&mut retrieval) = check(d, sp);
            }
        }
    }
    retrieval
}

/// An argument name: anything but empty.
fn argument_name(d: &mut Found<'_>, sp: &Sp<String>) -> String {
    if sp.value.is_empty() {
        d.error(sp.pos, "an argument name");
    }
    sp.value.clone()
}

const BUDGET: Bound = Bound {
    name: "budget",
    default: DEFAULT_BUDGET,
    lo: 1,
    hi: 10_000,
};
const RATE_PER_S: Bound = Bound {
    name: "rate_per_s",
    default: DEFAULT_RATE_PER_S,
    lo: 1,
    hi: 10_000,
};

/// The JSON Schema of the MCP contract format (draft 2020-12), for editors.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RawMcpContract)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "A" => Some("sk_a".to_owned()),
            "B" => Some("sk_b".to_owned()),
            _ => None,
        }
    }

    const GOOD: &str = "version: 1
kind: mcp
name: x
target:
  url: http://127.0.0.1:9/mcp
  allowed_hosts: [127.0.0.1]
auth:
  primary: {env: A}
  second_tenant: {env: B}
paid:
  tool: create_ticket
  arguments: {title: \"t {marker}\"}
";

    #[test]
    fn a_good_contract_reads_with_defaults() {
        let c = parse(GOOD, "c.yaml", &env).expect("valid");
        assert_eq!(c.origin, "http://127.0.0.1:9");
        assert_eq!(c.path, "/mcp");
        assert_eq!(c.primary.as_deref(), Some("sk_a"));
        assert_eq!(c.second_tenant.as_deref(), Some("sk_b"));
        assert_eq!(
            c.paid.as_ref().map(|p| p.tool.as_str()),
            Some("create_ticket")
        );
        assert_eq!(c.retrieval, RetrievalSpec::default());
        assert_eq!(c.budget, DEFAULT_BUDGET);
        assert_eq!(contract::kind_of(GOOD), contract::Kind::Mcp);
    }

    #[test]
    fn problems_are_located() {
        let text = GOOD
            .replace("127.0.0.1:9/mcp", "evil.example:9/mcp")
            .replace("tool: create_ticket", "tool: \"create ticket\"");
        let err = parse(&text, "c.yaml", &env)
            .expect_err("invalid")
            .to_string();
        assert!(err.contains("c.yaml:5:"), "{err}");
        assert!(err.contains("not in target.allowed_hosts"), "{err}");
        assert!(err.contains("c.yaml:11:"), "{err}");
        assert!(err.contains("not a tool name"), "{err}");
        let err = parse(&GOOD.replace("{env: A}", "{env: NOPE}"), "c.yaml", &env)
            .expect_err("unset")
            .to_string();
        assert!(err.contains("NOPE is not set"), "{err}");
        let err = parse(&GOOD.replace("{env: B}", "{env: A}"), "c.yaml", &env)
            .expect_err("same tenant")
            .to_string();
        assert!(err.contains("c.yaml:9:"), "{err}");
    }

    #[test]
    fn urls_split_into_origin_and_path() {
        assert_eq!(
            split_url("http://localhost:8080/v1/mcp"),
            Some((
                "http://localhost:8080".to_owned(),
                "localhost".to_owned(),
                "/v1/mcp".to_owned()
            ))
        );
        assert_eq!(
            split_url("https://x/mcp"),
            Some(("https://x".to_owned(), "x".to_owned(), "/mcp".to_owned()))
        );
        assert_eq!(split_url("ftp://x/mcp"), None);
        assert_eq!(split_url("http://x/mcp?q=1"), None);
        assert!(quick("http://127.0.0.1:1/mcp", &env).is_ok());
        assert!(quick("ftp://x", &env).is_err());
    }
}

//! The contract file: what the endpoint under test is, how to read back what
//! it created, and what its vendor declares. Parsed from YAML with positions;
//! every problem names `file:line:column` (the harness's [`Diagnostic`] renders
//! it, caret and all).

pub(crate) mod raw;

use std::collections::BTreeSet;
use std::time::Duration;

pub use lostreply_harness::scenario::Diagnostic;
pub(crate) use raw::{Pos, RawValue, Sp};

/// The largest contract file read.
pub const MAX_CONTRACT_BYTES: usize = 1024 * 1024;

/// Why a contract could not be loaded (always bad input: exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    /// The file could not be read.
    #[error("{path}: cannot read the contract: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid contract.
    #[error("{}", diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// The problems, in file order.
        diagnostics: Vec<Diagnostic>,
    },
}

/// How the request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentType {
    /// `application/json`.
    Json,
    /// `application/x-www-form-urlencoded` (flat bodies only).
    Form,
}

/// How the idempotency key travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySyntax {
    /// A header with the bare token.
    Token {
        /// Header name.
        header: String,
    },
    /// A header with a structured-field string (`"…"`, RFC 8941).
    SfString {
        /// Header name.
        header: String,
    },
    /// A top-level body field.
    BodyField {
        /// Field name.
        field: String,
    },
}

/// What the second request meets while the first is in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InFlight {
    /// It waits for the first and replays its result.
    Waits,
    /// It is refused with one of these statuses.
    Status(Vec<u16>),
}

/// What a create without a key gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingKey {
    /// Processed like any create.
    Processed,
    /// Refused with one of these statuses.
    Status(Vec<u16>),
}

/// A collection read back: where the items are and where the marker sits in one.
#[derive(Debug, Clone)]
pub struct Collection {
    /// Path and query (may hold `{marker}`).
    pub path: String,
    /// JSON pointer to the array (`""`: the whole answer).
    pub items_at: String,
    /// JSON pointer to the marker in an item.
    pub marker_at: String,
    /// Whether the credential is sent.
    pub auth: bool,
}

/// A plain path (`{id}` for retrieve).
#[derive(Debug, Clone)]
pub struct PathSpec {
    /// Path and query.
    pub path: String,
    /// Whether the credential is sent.
    pub auth: bool,
}

/// A validated contract.
#[derive(Debug, Clone)]
pub struct Contract {
    /// Where it was read from.
    pub source: String,
    /// A one-line name.
    pub name: String,
    /// `http://host:port`, without a trailing slash.
    pub base_url: String,
    /// Hosts the base URL may name.
    pub allowed_hosts: BTreeSet<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Credential header.
    pub auth_header: String,
    /// Written before the credential.
    pub auth_prefix: String,
    /// The tenant under test.
    pub primary: String,
    /// Another tenant, when given.
    pub second_tenant: Option<String>,
    /// `POST` or `PUT`.
    pub method: String,
    /// Create path.
    pub path: String,
    /// Body encoding.
    pub content_type: ContentType,
    /// Body template (an object).
    pub body: serde_json::Map<String, serde_json::Value>,
    /// Field changed by the mismatch probes.
    pub vary: String,
    /// Statuses meaning "created".
    pub success: Vec<u16>,
    /// JSON pointer to the id.
    pub id_at: String,
    /// Another endpoint for the scope probe.
    pub other_path: Option<String>,
    /// A slow create path for the in-flight probes.
    pub slow_path: Option<String>,
    /// When the in-flight probes send their second request.
    pub in_flight_after: Duration,
    /// The rejected request: path, body, statuses.
    pub rejected: Option<(String, serde_json::Map<String, serde_json::Value>, Vec<u16>)>,
    /// The key.
    pub key: KeySyntax,
    /// Longest key accepted.
    pub key_max_bytes: usize,
    /// Ground truth.
    pub ground_truth: Option<Collection>,
    /// Retrieve by id.
    pub retrieve: Option<PathSpec>,
    /// Search by marker.
    pub search: Option<Collection>,
    /// List recent.
    pub list: Option<Collection>,
    /// Clock control (simulator).
    pub clock: Option<PathSpec>,
    /// POSTed once before the probes: restores the provider's deliberate faults (simulator).
    pub reset: Option<PathSpec>,
    /// Declared retention.
    pub retention: Duration,
    /// Replay marker header and value.
    pub replay_marker: Option<(String, String)>,
    /// Declared mismatch statuses.
    pub mismatch_status: Vec<u16>,
    /// Declared in-flight behaviour.
    pub in_flight: InFlight,
    /// Whether errors are replayed.
    pub errors_replayed: bool,
    /// Declared missing-key behaviour.
    pub missing_key: MissingKey,
    /// Declared malformed-key statuses.
    pub malformed_key_status: Vec<u16>,
    /// Declared oversized-key statuses.
    pub oversized_key_status: Vec<u16>,
    /// Request budget.
    pub budget: u32,
    /// Requests per second.
    pub rate_per_s: u32,
    /// Concurrent duplicates.
    pub concurrency: u32,
    /// Lost-response waits.
    pub lost_response_waits: Vec<Duration>,
    /// Largest answer read.
    pub max_response_bytes: usize,
    /// Retention probe's wait.
    pub retention_sample: Duration,
    /// Wait the retention out.
    pub wait_out_retention: bool,
}

/// The JSON Schema of the contract format (draft 2020-12), for editors.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(raw::RawContract)).unwrap_or_default()
}

/// Reads and validates a contract file.
pub fn load(path: &std::path::Path) -> Result<Contract, ContractError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ContractError::Read {
        path: shown.clone(),
        source,
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => {
            return Err(invalid(&shown, "", Pos::START, "the file is not UTF-8"));
        }
    };
    parse(&text, &shown, &|name| std::env::var(name).ok())
}

pub(crate) fn invalid(path: &str, source: &str, pos: Pos, message: &str) -> ContractError {
    let mut d = Found::new(path, source);
    d.error(pos, message);
    d.into_error()
}

/// Parses and validates contract text; `env` looks variables up.
pub fn parse(
    text: &str,
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Contract, ContractError> {
    let raw = read_yaml::<raw::RawContract>(text, path)?;
    let mut d = Found::new(path, text);
    let contract = validate(raw, path, env, &mut d);
    match contract {
        Some(c) if d.found.is_empty() => Ok(c),
        _ => Err(d.into_error()),
    }
}

/// What a contract file certifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An HTTP idempotency contract (no `kind`, or `kind: http`).
    Http,
    /// An MCP server (`kind: mcp`, see [`crate::mcp::contract`]).
    Mcp,
}

/// The `kind` a contract text declares, read before the whole file is
/// validated (each kind has its own fields). Anything but `mcp` is HTTP, whose
/// validation then names a bad `kind` with its position.
pub fn kind_of(text: &str) -> Kind {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(default)]
        kind: Option<String>,
    }
    let options = serde_saphyr::options! { strict_booleans: true, with_snippet: false };
    match serde_saphyr::from_str_with_options::<Peek>(text, options) {
        Ok(Peek { kind: Some(k) }) if k == "mcp" => Kind::Mcp,
        Ok(_) | Err(_) => Kind::Http,
    }
}

/// Reads YAML text into `T` with the checks every contract kind shares: a
/// size bound, an empty file named as such, and parse errors located.
pub(crate) fn read_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &str,
) -> Result<T, ContractError> {
    if text.len() > MAX_CONTRACT_BYTES {
        return Err(invalid(
            path,
            "",
            Pos::START,
            &format!("the file is larger than {MAX_CONTRACT_BYTES} bytes"),
        ));
    }
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim().starts_with('#'))
    {
        return Err(invalid(
            path,
            text,
            Pos::START,
            "the file is empty: a contract starts with `version: 1`",
        ));
    }
    let options = serde_saphyr::options! {
        strict_booleans: true,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<T>(text, options).map_err(|err| {
        use serde_saphyr::MessageFormatter as _;
        let pos = err.location().map_or(Pos::START, |at| Pos {
            line: at.line(),
            column: at.column(),
        });
        let message = serde_saphyr::DefaultMessageFormatter
            .format_message(&err)
            .into_owned();
        invalid(path, text, pos, &message)
    })
}

pub(crate) struct Found<'a> {
    path: &'a str,
    source: &'a str,
    pub(crate) found: Vec<(Pos, String)>,
}

impl<'a> Found<'a> {
    pub(crate) fn new(path: &'a str, source: &'a str) -> Self {
        Found {
            path,
            source,
            found: Vec::new(),
        }
    }
    pub(crate) fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.found.push((pos, message.into()));
    }
    pub(crate) fn into_error(mut self) -> ContractError {
        self.found.sort_by_key(|(p, _)| *p);
        self.found.truncate(50);
        let lines: Vec<&str> = self.source.lines().collect();
        let diagnostics = self
            .found
            .into_iter()
            .map(|(pos, message)| Diagnostic {
                path: self.path.to_owned(),
                line: pos.line,
                column: pos.column,
                message: clean(&message),
                source_line: usize::try_from(pos.line)
                    .ok()
                    .and_then(|l| l.checked_sub(1))
                    .and_then(|i| lines.get(i))
                    .map(|l| clean(l)),
            })
            .collect();
        ContractError::Invalid { diagnostics }
    }
}

fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

pub(crate) fn duration(
    d: &mut Found<'_>,
    sp: &Sp<String>,
    min: Duration,
    max: Duration,
) -> Duration {
    match humantime::parse_duration(&sp.value) {
        Ok(v) if v >= min && v <= max => v,
        Ok(_) => {
            d.error(
                sp.pos,
                format!(
                    "{:?} is out of range ({} to {})",
                    sp.value,
                    humantime::format_duration(min),
                    humantime::format_duration(max)
                ),
            );
            min
        }
        Err(e) => {
            d.error(
                sp.pos,
                format!(
                    "{:?}: {e} (a duration with its unit: 300ms, 10s, 24h)",
                    sp.value
                ),
            );
            min
        }
    }
}

/// `target.allowed_hosts`, lower-cased: the only hosts a certification may
/// send a byte to (HTTP and MCP contracts alike). At least one.
pub(crate) fn allowed_hosts(d: &mut Found<'_>, sp: &Sp<Vec<String>>) -> BTreeSet<String> {
    let allowed: BTreeSet<String> = sp.value.iter().map(|h| h.to_ascii_lowercase()).collect();
    if allowed.is_empty() {
        d.error(sp.pos, "name at least one host");
    }
    allowed
}

pub(crate) fn resolve(
    d: &mut Found<'_>,
    sp: &Sp<RawValue>,
    env: &dyn Fn(&str) -> Option<String>,
    what: &str,
) -> String {
    match &sp.value {
        RawValue::Literal(text) => text.clone(),
        RawValue::Env(e) => match env(&e.env).or_else(|| e.default.clone()) {
            Some(v) if !v.is_empty() => v,
            _ => {
                d.error(
                    sp.pos,
                    format!("{what}: the environment variable {} is not set", e.env),
                );
                String::new()
            }
        },
    }
}

pub(crate) fn path_check(d: &mut Found<'_>, sp: &Sp<String>, needs: Option<&str>) -> String {
    let p = &sp.value;
    if !p.starts_with('/') || p.chars().any(|c| c.is_whitespace() || c.is_control()) {
        d.error(
            sp.pos,
            format!("{p:?}: a path starts with `/` and has no spaces"),
        );
    } else if p.starts_with("//") {
        d.error(
            sp.pos,
            format!("{p:?}: a path cannot name another host (`//`)"),
        );
    }
    if let Some(placeholder) = needs {
        if !p.contains(placeholder) {
            d.error(sp.pos, format!("{p:?}: the path must hold {placeholder}"));
        }
    }
    p.clone()
}

pub(crate) fn pointer(d: &mut Found<'_>, sp: &Sp<String>) -> String {
    if !(sp.value.is_empty() || sp.value.starts_with('/')) {
        d.error(
            sp.pos,
            format!(
                "{:?}: a JSON pointer is empty or starts with `/` (e.g. /id, /data)",
                sp.value
            ),
        );
    }
    sp.value.clone()
}

fn statuses(d: &mut Found<'_>, sp: &Sp<Vec<u16>>) -> Vec<u16> {
    if sp.value.is_empty() {
        d.error(sp.pos, "list at least one status");
    }
    for s in &sp.value {
        if !(100..=599).contains(s) {
            d.error(sp.pos, format!("{s} is not an HTTP status (100 to 599)"));
        }
    }
    sp.value.clone()
}

pub(crate) fn header_name(d: &mut Found<'_>, sp: &Sp<String>) -> String {
    let ok = !sp.value.is_empty()
        && sp
            .value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !ok {
        d.error(sp.pos, format!("{:?} is not a header name", sp.value));
    }
    sp.value.clone()
}

fn collection(d: &mut Found<'_>, raw: &raw::RawCollection, needs: Option<&str>) -> Collection {
    Collection {
        path: path_check(d, &raw.path, needs),
        items_at: raw
            .items_at
            .as_ref()
            .map_or_else(|| "/data".to_owned(), |p| pointer(d, p)),
        marker_at: pointer(d, &raw.marker_at),
        auth: raw.auth.unwrap_or(true),
    }
}

/// Splits `http://host:port` into host and port; `None` for anything else.
pub(crate) fn split_base_url(url: &str) -> Option<(String, u16)> {
    let rest = url.strip_prefix("http://")?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#', '@']) || rest.is_empty() {
        return None;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (h, p.parse().ok()?),
        _ => (rest, 80),
    };
    if host.is_empty() {
        return None;
    }
    Some((host.to_owned(), port))
}

fn validate(
    raw: raw::RawContract,
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
    d: &mut Found<'_>,
) -> Option<Contract> {
    if raw.version.value != 1 {
        d.error(raw.version.pos, "only `version: 1` exists");
    }
    if let Some(kind) = raw.kind.as_ref().filter(|k| k.value != "http") {
        d.error(
            kind.pos,
            format!("{:?}: kind is `http` (the default) or `mcp`", kind.value),
        );
    }
    if raw.name.value.trim().is_empty() || raw.name.value.len() > 200 {
        d.error(raw.name.pos, "a name of 1 to 200 characters");
    }
    // Target and its allowlist: nothing is sent to a host the contract does not name.
    let base = resolve(d, &raw.target.base_url, env, "base_url");
    let allowed = allowed_hosts(d, &raw.target.allowed_hosts);
    let base_url = base.trim_end_matches('/').to_owned();
    if !base.is_empty() {
        match split_base_url(&base) {
            None => d.error(
                raw.target.base_url.pos,
                format!("{base:?}: expected http://host:port (plain HTTP, no path; put a TLS proxy in front for HTTPS)"),
            ),
            Some((host, _)) if !allowed.contains(&host.to_ascii_lowercase()) => d.error(
                raw.target.base_url.pos,
                format!(
                    "refusing {base:?}: its host {host:?} is not in target.allowed_hosts ({})",
                    allowed.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ),
            Some(_) => {}
        }
    }
    let timeout = raw
        .target
        .timeout
        .as_ref()
        .map_or(Duration::from_secs(10), |t| {
            duration(d, t, Duration::from_millis(1), Duration::from_secs(120))
        });
    let auth_header = raw
        .auth
        .header
        .as_ref()
        .map_or_else(|| "Authorization".to_owned(), |h| header_name(d, h));
    let primary = resolve(d, &raw.auth.primary, env, "auth.primary");
    let second_tenant = raw
        .auth
        .second_tenant
        .as_ref()
        .map(|s| resolve(d, s, env, "auth.second_tenant"));
    let auth_prefix = raw
        .auth
        .prefix
        .clone()
        .unwrap_or_else(|| "Bearer ".to_owned());
    for (value, pos) in
        [(Some(&primary), raw.auth.primary.pos)]
            .into_iter()
            .chain(second_tenant.iter().map(|s| {
                (
                    Some(s),
                    raw.auth
                        .second_tenant
                        .as_ref()
                        .map_or(Pos::START, |p| p.pos),
                )
            }))
    {
        if let Some(v) = value {
            if v.chars().any(|c| c.is_control()) {
                d.error(pos, "a credential cannot hold control characters");
            }
        }
    }
    if second_tenant.as_deref() == Some(primary.as_str()) && !primary.is_empty() {
        d.error(
            raw.auth
                .second_tenant
                .as_ref()
                .map_or(Pos::START, |p| p.pos),
            "second_tenant must differ from primary",
        );
    }

    let c = &raw.create;
    let method = c.method.as_ref().map_or_else(
        || "POST".to_owned(),
        |m| {
            if m.value != "POST" && m.value != "PUT" {
                d.error(
                    m.pos,
                    format!("{:?}: the create method is POST or PUT", m.value),
                );
            }
            m.value.clone()
        },
    );
    let create_path = path_check(d, &c.path, None);
    let content_type = match c.content_type.as_ref().map(|s| (s.value.as_str(), s.pos)) {
        None | Some(("json", _)) => ContentType::Json,
        Some(("form", _)) => ContentType::Form,
        Some((other, pos)) => {
            d.error(pos, format!("{other:?}: content_type is `json` or `form`"));
            ContentType::Json
        }
    };
    let body = body_object(d, &c.body, content_type);
    if !body_has_marker(&serde_json::Value::Object(body.clone())) {
        d.error(
            c.body.pos,
            "the body must hold `{marker}` in some string, so effects can be counted",
        );
    }
    match body.get(&c.vary.value) {
        Some(serde_json::Value::Number(_) | serde_json::Value::String(_)) => {}
        Some(_) => d.error(
            c.vary.pos,
            format!(
                "vary: the field {:?} must be a number or a string",
                c.vary.value
            ),
        ),
        None => d.error(
            c.vary.pos,
            format!("vary: the body has no top-level field {:?}", c.vary.value),
        ),
    }
    if let Some(serde_json::Value::String(s)) = body.get(&c.vary.value) {
        if s.contains("{marker}") {
            d.error(
                c.vary.pos,
                "vary: the field must not hold the marker (the marker counts effects)",
            );
        }
    }
    let success = c
        .success
        .as_ref()
        .map_or_else(|| vec![200, 201, 202], |s| statuses(d, s));
    let id_at = c
        .id_at
        .as_ref()
        .map_or_else(|| "/id".to_owned(), |p| pointer(d, p));
    let other_path = c.other_path.as_ref().map(|p| path_check(d, p, None));
    let slow_path = c.slow_path.as_ref().map(|p| path_check(d, p, None));
    let in_flight_after = c
        .in_flight_after
        .as_ref()
        .map_or(Duration::from_millis(100), |t| {
            duration(d, t, Duration::ZERO, Duration::from_secs(60))
        });
    let rejected = c.rejected.as_ref().map(|r| {
        let p = r
            .path
            .as_ref()
            .map_or_else(|| create_path.clone(), |p| path_check(d, p, None));
        let b = r
            .body
            .as_ref()
            .map_or_else(|| body.clone(), |b| body_object(d, b, content_type));
        (p, b, statuses(d, &r.status))
    });

    let k = &raw.key;
    let header = k
        .header
        .as_ref()
        .map_or_else(|| "Idempotency-Key".to_owned(), |h| header_name(d, h));
    let key = match k.syntax.value.as_str() {
        "token" => KeySyntax::Token { header },
        "sf_string" => KeySyntax::SfString { header },
        "body_field" => match &k.field {
            Some(f) if !f.value.is_empty() => KeySyntax::BodyField {
                field: f.value.clone(),
            },
            _ => {
                d.error(
                    k.syntax.pos,
                    "body_field needs key.field: the body field that carries the key",
                );
                KeySyntax::BodyField {
                    field: String::new(),
                }
            }
        },
        other => {
            d.error(
                k.syntax.pos,
                format!("{other:?}: key.syntax is token, sf_string or body_field"),
            );
            KeySyntax::Token { header }
        }
    };
    let key_max_bytes = match &k.max_bytes {
        Some(m) if m.value < 16 || m.value > 65536 => {
            d.error(m.pos, "max_bytes from 16 to 65536");
            255
        }
        Some(m) => m.value as usize,
        None => 255,
    };

    let r = &raw.readback;
    let ground_truth = r.ground_truth.as_ref().map(|g| collection(d, g, None));
    let retrieve = r.retrieve.as_ref().map(|p| PathSpec {
        path: path_check(d, &p.path, Some("{id}")),
        auth: p.auth.unwrap_or(true),
    });
    let search = r
        .search
        .as_ref()
        .map(|s| collection(d, s, Some("{marker}")));
    let list = r.list.as_ref().map(|s| collection(d, s, None));
    let clock = r.clock.as_ref().map(|p| PathSpec {
        path: path_check(d, &p.path, None),
        auth: p.auth.unwrap_or(false),
    });
    let reset = r.reset.as_ref().map(|p| PathSpec {
        path: path_check(d, &p.path, None),
        auth: p.auth.unwrap_or(false),
    });
    if ground_truth.is_none() && search.is_none() && list.is_none() {
        d.error(
            Pos::START,
            "readback: give at least one of ground_truth, search or list, so effects can be counted",
        );
    }

    let dec = &raw.declares;
    let retention = duration(
        d,
        &dec.retention,
        Duration::from_secs(1),
        Duration::from_secs(3650 * 86400),
    );
    let in_flight = match &dec.in_flight.value {
        raw::RawInFlight::Word(w) if w == "waits" => InFlight::Waits,
        raw::RawInFlight::Word(w) => {
            d.error(
                dec.in_flight.pos,
                format!("{w:?}: in_flight is `waits` or {{status: [409]}}"),
            );
            InFlight::Waits
        }
        raw::RawInFlight::Status(s) => InFlight::Status(statuses(
            d,
            &Sp {
                value: s.status.clone(),
                pos: dec.in_flight.pos,
            },
        )),
    };
    let missing_key = match &dec.missing_key.value {
        raw::RawStatusOr::Word(w) if w == "processed" => MissingKey::Processed,
        raw::RawStatusOr::Word(w) => {
            d.error(
                dec.missing_key.pos,
                format!("{w:?}: missing_key is `processed` or {{status: [400]}}"),
            );
            MissingKey::Processed
        }
        raw::RawStatusOr::Status(s) => MissingKey::Status(statuses(
            d,
            &Sp {
                value: s.status.clone(),
                pos: dec.missing_key.pos,
            },
        )),
    };

    let l = &raw.limits;
    let bounded = |d: &mut Found<'_>,
                   v: &Option<Sp<u32>>,
                   default: u32,
                   lo: u32,
                   hi: u32,
                   what: &str| match v {
        Some(s) if s.value < lo || s.value > hi => {
            d.error(s.pos, format!("{what} from {lo} to {hi}"));
            default
        }
        Some(s) => s.value,
        None => default,
    };
    let budget = bounded(d, &l.budget, 500, 1, 100_000, "budget");
    let rate_per_s = bounded(d, &l.rate_per_s, 20, 1, 10_000, "rate_per_s");
    let concurrency = bounded(d, &l.concurrency, 16, 8, 32, "concurrency");
    let lost_response_waits = match &l.lost_response_waits {
        Some(ws) => {
            if ws.value.is_empty() || ws.value.len() > 5 {
                d.error(ws.pos, "one to five waits");
            }
            ws.value
                .iter()
                .map(|w| {
                    duration(
                        d,
                        &Sp {
                            value: w.clone(),
                            pos: ws.pos,
                        },
                        Duration::ZERO,
                        Duration::from_secs(600),
                    )
                })
                .collect()
        }
        None => vec![
            Duration::ZERO,
            Duration::from_secs(1),
            Duration::from_secs(10),
        ],
    };
    let max_response_bytes = match &l.max_response_bytes {
        Some(m) if m.value < 1024 || m.value > 16 * 1024 * 1024 => {
            d.error(m.pos, "max_response_bytes from 1024 to 16777216");
            1 << 20
        }
        Some(m) => usize::try_from(m.value).unwrap_or(1 << 20),
        None => 1 << 20,
    };
    let retention_sample = l
        .retention_sample
        .as_ref()
        .map_or(Duration::from_secs(1), |s| {
            duration(d, s, Duration::ZERO, Duration::from_secs(3600))
        });

    Some(Contract {
        source: path.to_owned(),
        name: raw.name.value,
        base_url,
        allowed_hosts: allowed,
        timeout,
        auth_header,
        auth_prefix,
        primary,
        second_tenant,
        method,
        path: create_path,
        content_type,
        body,
        vary: c.vary.value.clone(),
        success,
        id_at,
        other_path,
        slow_path,
        in_flight_after,
        rejected,
        key,
        key_max_bytes,
        ground_truth,
        retrieve,
        search,
        list,
        clock,
        reset,
        retention,
        replay_marker: dec
            .replay_marker
            .as_ref()
            .map(|m| (m.header.clone(), m.value.clone())),
        mismatch_status: statuses(d, &dec.mismatch_status),
        in_flight,
        errors_replayed: dec.errors_replayed.unwrap_or(false),
        missing_key,
        malformed_key_status: statuses(d, &dec.malformed_key_status),
        oversized_key_status: statuses(d, &dec.oversized_key_status),
        budget,
        rate_per_s,
        concurrency,
        lost_response_waits,
        max_response_bytes,
        retention_sample,
        wait_out_retention: l.wait_out_retention.unwrap_or(false),
    })
}

fn body_object(
    d: &mut Found<'_>,
    sp: &Sp<serde_json::Value>,
    content_type: ContentType,
) -> serde_json::Map<String, serde_json::Value> {
    let serde_json::Value::Object(map) = &sp.value else {
        d.error(sp.pos, "the body is a mapping of fields");
        return serde_json::Map::new();
    };
    if content_type == ContentType::Form {
        for (k, v) in map {
            if v.is_object() || v.is_array() {
                d.error(
                    sp.pos,
                    format!("form bodies are flat: the field {k:?} is nested"),
                );
            }
        }
    }
    map.clone()
}

fn body_has_marker(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains("{marker}"),
        serde_json::Value::Array(a) => a.iter().any(body_has_marker),
        serde_json::Value::Object(o) => o.values().any(body_has_marker),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(
            split_base_url("http://127.0.0.1:8080"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            split_base_url("http://localhost/"),
            Some(("localhost".into(), 80))
        );
        assert_eq!(split_base_url("https://x"), None);
        assert_eq!(split_base_url("http://x/y"), None);
        assert_eq!(split_base_url("http://u@x"), None);
    }
}

//! Validation of an HTTP contract file, section by section in the order the
//! file is written: each section checks its fields, records every problem
//! where it sits, and returns usable values so the rest is still checked.

use std::time::Duration;

use super::declares::{at, declares};
use super::fields::{
    allowed_hosts, bounded, duration, header_name, max_response_bytes, path_check, pointer,
    resolve, split_base_url, statuses, written, Bound, Origin,
};
use super::found::Found;
use super::model::{
    Collection, ContentType, Contract, ErrorAfterCommit, KeySyntax, PathSpec, Tally, Written,
};
use super::raw::{self, Pos, RawContract, Sp};

/// Looks environment variables up.
type Env<'e> = &'e dyn Fn(&str) -> Option<String>;

/// A whole contract from its file; the problems go to `d`.
pub(super) fn validate(raw: RawContract, path: &str, env: Env<'_>, d: &mut Found<'_>) -> Contract {
    header(&raw, d);
    let target = target(&raw.target, env, d);
    let auth = auth(&raw.auth, env, d);
    let create = create(&raw.create, d);
    let key = key(&raw.key, d);
    let readback = readback(&raw.readback, d);
    let declared = declares(&raw.declares, d);
    let limits = limits(&raw.limits, d);
    Contract {
        source: path.to_owned(),
        name: raw.name.value,
        base_url: target.base_url,
        allowed_hosts: target.allowed_hosts,
        timeout: target.timeout,
        auth_header: auth.header,
        auth_prefix: auth.prefix,
        primary: auth.primary,
        second_tenant: auth.second_tenant,
        method: create.method,
        path: create.path,
        content_type: create.content_type,
        body: create.body,
        vary: create.vary,
        success: create.success,
        id_at: create.id_at,
        other_path: create.other_path,
        slow_path: create.slow_path,
        in_flight_after: create.in_flight_after,
        rejected: create.rejected,
        error_after_commit: create.error_after_commit,
        key: key.syntax,
        key_max_bytes: key.max_bytes,
        ground_truth: readback.ground_truth,
        retrieve: readback.retrieve,
        search: readback.search,
        list: readback.list,
        clock: readback.clock,
        reset: readback.reset,
        retention: declared.retention,
        replay_marker: declared.replay_marker,
        fingerprint: declared.fingerprint,
        key_scope: declared.key_scope,
        mismatch_status: declared.mismatch_status,
        in_flight: declared.in_flight,
        errors_replayed: declared.errors_replayed,
        missing_key: declared.missing_key,
        key_checks: declared.key_checks,
        budget: limits.budget,
        rate_per_s: limits.rate_per_s,
        concurrency: limits.concurrency,
        lost_response_waits: limits.lost_response_waits,
        max_response_bytes: limits.max_response_bytes,
        retention_sample: limits.retention_sample,
        wait_out_retention: limits.wait_out_retention,
    }
}

/// `version`, `kind` and `name`.
fn header(raw: &RawContract, d: &mut Found<'_>) {
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
}

struct Target {
    base_url: String,
    allowed_hosts: std::collections::BTreeSet<String>,
    timeout: Duration,
}

/// The target and its allowlist: nothing is sent to a host the contract does not name.
fn target(raw: &raw::RawTarget, env: Env<'_>, d: &mut Found<'_>) -> Target {
    let base = resolve(d, &raw.base_url, env, "base_url");
    let allowed = allowed_hosts(d, &raw.allowed_hosts);
    if !base.is_empty() {
        match split_base_url(&base) {
            None => d.error(
                raw.base_url.pos,
                format!("{base:?}: expected http://host:port or https://host:port (no path)"),
            ),
            Some(Origin { host, .. }) if !allowed.contains(&host.to_ascii_lowercase()) => d.error(
                raw.base_url.pos,
                format!(
                    "refusing {base:?}: its host {host:?} is not in target.allowed_hosts ({})",
                    allowed.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ),
            Some(_) => {}
        }
    }
    let timeout = raw.timeout.as_ref().map_or(Duration::from_secs(10), |t| {
        duration(d, t, Duration::from_millis(1), Duration::from_secs(120))
    });
    Target {
        base_url: base.trim_end_matches('/').to_owned(),
        allowed_hosts: allowed,
        timeout,
    }
}

struct Auth {
    header: String,
    prefix: String,
    primary: String,
    second_tenant: Option<String>,
}

/// The credential header and the tenants' credentials.
fn auth(raw: &raw::RawAuth, env: Env<'_>, d: &mut Found<'_>) -> Auth {
    let header = raw
        .header
        .as_ref()
        .map_or_else(|| "Authorization".to_owned(), |h| header_name(d, h));
    let primary = resolve(d, &raw.primary, env, "auth.primary");
    let second_tenant = raw
        .second_tenant
        .as_ref()
        .map(|s| resolve(d, s, env, "auth.second_tenant"));
    let prefix = raw.prefix.clone().unwrap_or_else(|| "Bearer ".to_owned());
    let second_pos = raw.second_tenant.as_ref().map_or(Pos::START, |p| p.pos);
    let credentials = [(&primary, raw.primary.pos)]
        .into_iter()
        .chain(second_tenant.iter().map(|s| (s, second_pos)));
    for (value, pos) in credentials {
        if value.chars().any(|c| c.is_control()) {
            d.error(pos, "a credential cannot hold control characters");
        }
    }
    if second_tenant.as_deref() == Some(primary.as_str()) && !primary.is_empty() {
        d.error(second_pos, "second_tenant must differ from primary");
    }
    Auth {
        header,
        prefix,
        primary,
        second_tenant,
    }
}

struct Create {
    method: String,
    path: String,
    content_type: ContentType,
    body: serde_json::Map<String, serde_json::Value>,
    vary: String,
    success: Vec<u16>,
    id_at: String,
    other_path: Option<String>,
    slow_path: Option<String>,
    in_flight_after: Written,
    rejected: Option<(String, serde_json::Map<String, serde_json::Value>, Vec<u16>)>,
    error_after_commit: Option<ErrorAfterCommit>,
}

/// The create request under test.
fn create(c: &raw::RawCreate, d: &mut Found<'_>) -> Create {
    let method = c
        .method
        .as_ref()
        .map_or(raw::CreateMethod::Post, |m| m.value)
        .name()
        .to_owned();
    let path = path_check(d, &c.path, None);
    let content_type = c
        .content_type
        .as_ref()
        .map_or(ContentType::Json, |s| s.value);
    let body = body_object(d, &c.body, content_type);
    if !body_has_marker(&serde_json::Value::Object(body.clone())) {
        d.error(
            c.body.pos,
            "the body must hold `{marker}` in some string, so effects can be counted",
        );
    }
    vary_check(d, &body, &c.vary);
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
    let in_flight_after = c.in_flight_after.as_ref().map_or_else(
        || Written::default_of("100ms", Duration::from_millis(100)),
        |t| written(d, t, Duration::ZERO, Duration::from_secs(60)),
    );
    let rejected = c.rejected.as_ref().map(|r| {
        let p = r
            .path
            .as_ref()
            .map_or_else(|| path.clone(), |p| path_check(d, p, None));
        let b = r
            .body
            .as_ref()
            .map_or_else(|| body.clone(), |b| body_object(d, b, content_type));
        (p, b, statuses(d, &r.status))
    });
    let error_after_commit = c
        .error_after_commit
        .as_ref()
        .map(|e| error_after_commit(d, e, &path, &body, content_type));
    Create {
        method,
        path,
        content_type,
        body,
        vary: c.vary.value.clone(),
        success,
        id_at,
        other_path,
        slow_path,
        in_flight_after,
        rejected,
        error_after_commit,
    }
}

/// The request the sandbox commits and then fails: what is not given is the create's.
fn error_after_commit(
    d: &mut Found<'_>,
    e: &Sp<raw::RawErrorAfterCommit>,
    path: &str,
    body: &serde_json::Map<String, serde_json::Value>,
    content_type: ContentType,
) -> ErrorAfterCommit {
    let raw = &e.value;
    let headers = raw.headers.as_ref().map_or_else(Vec::new, |h| {
        h.value
            .iter()
            .map(|(name, value)| {
                header_name(d, &at(name.clone(), h.pos));
                if value.chars().any(|c| c.is_control()) {
                    d.error(
                        h.pos,
                        format!("the header {name:?} holds a control character"),
                    );
                }
                (name.clone(), value.clone())
            })
            .collect()
    });
    let status = raw
        .status
        .as_ref()
        .map_or_else(|| vec![500, 502, 503, 504], |s| statuses(d, s));
    if status.iter().any(|s| *s < 500) {
        d.error(
            raw.status.as_ref().map_or(e.pos, |s| s.pos),
            "error_after_commit.status lists server errors (500 to 599)",
        );
    }
    ErrorAfterCommit {
        path: raw
            .path
            .as_ref()
            .map_or_else(|| path.to_owned(), |p| path_check(d, p, None)),
        body: raw
            .body
            .as_ref()
            .map_or_else(|| body.clone(), |b| body_object(d, b, content_type)),
        headers,
        status,
    }
}

/// `vary` names a top-level number or string of the body, without the marker.
fn vary_check(
    d: &mut Found<'_>,
    body: &serde_json::Map<String, serde_json::Value>,
    vary: &Sp<String>,
) {
    match body.get(&vary.value) {
        Some(serde_json::Value::Number(_) | serde_json::Value::String(_)) => {}
        Some(_) => d.error(
            vary.pos,
            format!(
                "vary: the field {:?} must be a number or a string",
                vary.value
            ),
        ),
        None => d.error(
            vary.pos,
            format!("vary: the body has no top-level field {:?}", vary.value),
        ),
    }
    if let Some(serde_json::Value::String(s)) = body.get(&vary.value) {
        if s.contains("{marker}") {
            d.error(
                vary.pos,
                "vary: the field must not hold the marker (the marker counts effects)",
            );
        }
    }
}

struct Key {
    syntax: KeySyntax,
    max_bytes: usize,
}

/// How the idempotency key travels, and its longest accepted length.
fn key(k: &raw::RawKey, d: &mut Found<'_>) -> Key {
    let header = k
        .header
        .as_ref()
        .map_or_else(|| "Idempotency-Key".to_owned(), |h| header_name(d, h));
    let syntax = match k.syntax.value {
        raw::RawSyntax::Token => KeySyntax::Token { header },
        raw::RawSyntax::SfString => KeySyntax::SfString { header },
        raw::RawSyntax::BodyField => match &k.field {
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
    };
    let max_bytes = match &k.max_bytes {
        Some(m) if m.value < 16 || m.value > 65536 => {
            d.error(m.pos, "max_bytes from 16 to 65536");
            255
        }
        Some(m) => m.value as usize,
        None => 255,
    };
    Key { syntax, max_bytes }
}

struct Readback {
    ground_truth: Option<Collection>,
    retrieve: Option<PathSpec>,
    search: Option<Collection>,
    list: Option<Collection>,
    clock: Option<PathSpec>,
    reset: Option<PathSpec>,
}

/// How effects are counted from the outside; at least one way must count.
fn readback(sp: &Sp<raw::RawReadback>, d: &mut Found<'_>) -> Readback {
    let r = &sp.value;
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
    let unauthenticated = |d: &mut Found<'_>, p: &raw::RawPath| PathSpec {
        path: path_check(d, &p.path, None),
        auth: p.auth.unwrap_or(false),
    };
    let clock = r.clock.as_ref().map(|p| unauthenticated(d, p));
    let reset = r.reset.as_ref().map(|p| unauthenticated(d, p));
    if ground_truth.is_none() && search.is_none() && list.is_none() {
        d.mapping_error(
            sp.pos,
            "readback: give at least one of ground_truth, search or list, so effects can be counted",
        );
    }
    Readback {
        ground_truth,
        retrieve,
        search,
        list,
        clock,
        reset,
    }
}

const BUDGET: Bound = Bound {
    name: "budget",
    default: 500,
    lo: 1,
    hi: 100_000,
};
const RATE_PER_S: Bound = Bound {
    name: "rate_per_s",
    default: 20,
    lo: 1,
    hi: 10_000,
};
const CONCURRENCY: Bound = Bound {
    name: "concurrency",
    default: 16,
    lo: 8,
    hi: 32,
};

struct Limits {
    budget: u32,
    rate_per_s: u32,
    concurrency: u32,
    lost_response_waits: Vec<Written>,
    max_response_bytes: usize,
    retention_sample: Written,
    wait_out_retention: bool,
}

/// Bounds every run honours.
fn limits(l: &raw::RawLimits, d: &mut Found<'_>) -> Limits {
    let budget = bounded(d, l.budget.as_ref(), &BUDGET);
    let rate_per_s = bounded(d, l.rate_per_s.as_ref(), &RATE_PER_S);
    let concurrency = bounded(d, l.concurrency.as_ref(), &CONCURRENCY);
    let lost_response_waits = match &l.lost_response_waits {
        Some(ws) => {
            if ws.value.is_empty() || ws.value.len() > 5 {
                d.error(ws.pos, "one to five waits");
            }
            ws.value
                .iter()
                .map(|w| written(d, w, Duration::ZERO, Duration::from_secs(600)))
                .collect()
        }
        None => vec![
            Written::default_of("0s", Duration::ZERO),
            Written::default_of("1s", Duration::from_secs(1)),
            Written::default_of("10s", Duration::from_secs(10)),
        ],
    };
    let max_response_bytes = max_response_bytes(d, l.max_response_bytes.as_ref(), 1 << 20);
    let retention_sample = l.retention_sample.as_ref().map_or_else(
        || Written::default_of("1s", Duration::from_secs(1)),
        |s| written(d, s, Duration::ZERO, Duration::from_secs(3600)),
    );
    Limits {
        budget,
        rate_per_s,
        concurrency,
        lost_response_waits,
        max_response_bytes,
        retention_sample,
        wait_out_retention: l.wait_out_retention.unwrap_or(false),
    }
}

/// A read-back collection: items with markers (`marker_at`), or a count
/// (`count_at`, with `{marker}` in the path).
fn collection(d: &mut Found<'_>, raw: &raw::RawCollection, needs: Option<&str>) -> Collection {
    let tally = match (&raw.count_at, &raw.marker_at) {
        (Some(count_at), None) => {
            if let Some(items) = &raw.items_at {
                d.error(
                    items.pos,
                    "items_at lists items: a count (count_at) has none",
                );
            }
            Tally::Count {
                count_at: pointer(d, count_at),
            }
        }
        (None, Some(marker_at)) => Tally::Items {
            items_at: raw
                .items_at
                .as_ref()
                .map_or_else(|| "/data".to_owned(), |p| pointer(d, p)),
            marker_at: pointer(d, marker_at),
        },
        (Some(count_at), Some(_)) => {
            d.error(
                count_at.pos,
                "give marker_at (a list of items) or count_at (a count), not both",
            );
            Tally::Count {
                count_at: count_at.value.clone(),
            }
        }
        (None, None) => {
            d.error(
                raw.path.pos,
                "give marker_at (where an item holds the marker) or count_at (where the answer holds the count)",
            );
            Tally::Count {
                count_at: String::new(),
            }
        }
    };
    // A count is of one marker's effects, so its path must name the marker.
    let needs = if raw.count_at.is_some() {
        Some("{marker}")
    } else {
        needs
    };
    Collection {
        path: path_check(d, &raw.path, needs),
        tally,
        auth: raw.auth.unwrap_or(true),
    }
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

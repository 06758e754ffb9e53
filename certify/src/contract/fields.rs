//! Checks of single fields that both contract kinds share: durations with
//! their units, the host allowlist, values from the environment, paths, JSON
//! pointers, statuses and header names. Each records its problem where the
//! field sits and returns a usable value, so validation goes on and reports
//! every problem at once.

use std::collections::BTreeSet;
use std::time::Duration;

use super::found::Found;
use super::model::Written;
use super::raw::{RawValue, Sp};

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

/// A duration kept with the text it was written as (reports print it as written).
pub(crate) fn written(d: &mut Found<'_>, sp: &Sp<String>, min: Duration, max: Duration) -> Written {
    Written {
        value: duration(d, sp, min, max),
        text: sp.value.trim().to_owned(),
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

pub(crate) fn statuses(d: &mut Found<'_>, sp: &Sp<Vec<u16>>) -> Vec<u16> {
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

/// A bounded whole number of `limits`: its name, default and range.
pub(crate) struct Bound {
    /// The field's name, as the problem names it.
    pub(crate) name: &'static str,
    /// Taken when the field is absent or out of range.
    pub(crate) default: u32,
    /// The smallest value allowed.
    pub(crate) lo: u32,
    /// The largest value allowed.
    pub(crate) hi: u32,
}

/// A number of `limits` within its bound (its default when absent or out of it).
pub(crate) fn bounded(d: &mut Found<'_>, v: Option<&Sp<u32>>, b: &Bound) -> u32 {
    match v {
        Some(s) if s.value < b.lo || s.value > b.hi => {
            d.error(s.pos, format!("{} from {} to {}", b.name, b.lo, b.hi));
            b.default
        }
        Some(s) => s.value,
        None => b.default,
    }
}

/// `limits.max_response_bytes`: 1 KiB to 16 MiB, `default` when absent or out of range.
pub(crate) fn max_response_bytes(d: &mut Found<'_>, v: Option<&Sp<u64>>, default: usize) -> usize {
    match v {
        Some(m) if !(1024..=16 * 1024 * 1024).contains(&m.value) => {
            d.error(m.pos, "max_response_bytes from 1024 to 16777216");
            default
        }
        Some(m) => usize::try_from(m.value).unwrap_or(default),
        None => default,
    }
}

/// How a base URL is reached: plain HTTP, or HTTP inside TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`.
    Http,
    /// `https://`.
    Https,
}

impl Scheme {
    /// The URL prefix (`http://`, `https://`).
    pub fn prefix(self) -> &'static str {
        match self {
            Scheme::Http => "http://",
            Scheme::Https => "https://",
        }
    }

    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// Where a base URL points: its scheme, host (as written, lower case kept
/// for the allowlist's comparison by the caller) and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// HTTP or HTTPS.
    pub scheme: Scheme,
    /// The host as written (an IPv6 address keeps its brackets).
    pub host: String,
    /// The port, or the scheme's default.
    pub port: u16,
}

/// Splits `http://host:port` or `https://host:port` into its origin; `None`
/// for anything else.
pub(crate) fn split_base_url(url: &str) -> Option<Origin> {
    let (scheme, rest) = [Scheme::Http, Scheme::Https]
        .into_iter()
        .find_map(|s| url.strip_prefix(s.prefix()).map(|rest| (s, rest)))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#', '@']) || rest.is_empty() {
        return None;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (h, p.parse().ok()?),
        _ => (rest, scheme.default_port()),
    };
    if host.is_empty() {
        return None;
    }
    Some(Origin {
        scheme,
        host: host.to_owned(),
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        let origin = |scheme, host: &str, port| Origin {
            scheme,
            host: host.to_owned(),
            port,
        };
        assert_eq!(
            split_base_url("http://127.0.0.1:8080"),
            Some(origin(Scheme::Http, "127.0.0.1", 8080))
        );
        assert_eq!(
            split_base_url("http://localhost/"),
            Some(origin(Scheme::Http, "localhost", 80))
        );
        assert_eq!(
            split_base_url("https://x"),
            Some(origin(Scheme::Https, "x", 443))
        );
        assert_eq!(
            split_base_url("https://127.0.0.1:8443/"),
            Some(origin(Scheme::Https, "127.0.0.1", 8443))
        );
        assert_eq!(split_base_url("ftp://x"), None);
        assert_eq!(split_base_url("http://x/y"), None);
        assert_eq!(split_base_url("https://u@x"), None);
    }
}

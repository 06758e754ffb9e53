//! The checks and limits more than one part of the validation uses: the
//! caps on a file's sizes, durations, collection names and create arguments.
//! It imports no other part of the validation, so every part can import it.

use std::time::Duration;

use lostreply_simulator::Profile;

use crate::scenario::error::Diagnostics;
use crate::scenario::raw::{Args, DurationText};
use crate::scenario::span::Sp;

/// Most body bytes a `{partial: N}` fault may let through (a response is never that large).
pub(crate) const MAX_PARTIAL_BYTES: u64 = 1 << 20;
/// Most deliveries of one webhook event in one step.
pub(crate) const MAX_DELIVERIES: u32 = 100;
/// Most calls in one `parallel` step.
pub(crate) const MAX_PARALLEL: usize = 16;
/// Most operations, steps and fault rules in one file (a scenario is a small story).
pub(crate) const MAX_ITEMS: usize = 1000;

/// Longest simulator-clock duration (retention, settle_after, age, advance): ten years
/// keeps every clock sum far from overflowing.
pub(super) const MAX_VIRTUAL: Duration = Duration::from_secs(3650 * 24 * 3600);
/// Shortest duration that is not zero, for the checks that forbid zero.
pub(super) const NONZERO: Duration = Duration::from_millis(1);

/// The reserved create fields: they are not arguments.
const RESERVED_FIELDS: [&str; 2] = ["client_reference", "metadata"];

/// Is `name` a valid collection name: `[a-z][a-z0-9_]{0,39}`.
pub(super) fn is_resource_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 40
}

/// Checks a collection name and that the provider has it.
pub(super) fn resource(d: &mut Diagnostics, raw: &Sp<String>, resources: Option<&[String]>) {
    let name = &raw.value;
    if !is_resource_name(name) {
        d.error(
            raw.pos,
            format!(
                "resource name `{name}` is not valid: lower-case letters, digits and `_`, starting \
                 with a letter, at most 40 characters"
            ),
        );
    } else if let Some(resources) = resources {
        if !resources.contains(name) {
            d.error(
                raw.pos,
                format!(
                    "resource `{name}` is not one of provider.resources ({})",
                    resources.join(", ")
                ),
            );
        }
    }
}

/// Checks that a profile that declares its collections has `raw`'s (true
/// when it has, or declares none). `names`: the profile's, once collected.
pub(super) fn in_profile(
    d: &mut Diagnostics,
    raw: &Sp<String>,
    profile: &Profile,
    names: Option<&[String]>,
) -> bool {
    let Some(names) = names else {
        return true;
    };
    let known = names.contains(&raw.value);
    if !known {
        d.error(
            raw.pos,
            format!(
                "resource `{}` is not one of profile {}'s resources ({})",
                raw.value,
                profile.name,
                names.join(", ")
            ),
        );
    }
    known
}

/// A profile's own body fields that are not arguments (its reference and
/// metadata fields, and the fields it drops, such as Stripe's `expand`): the
/// provider would never record them as an argument, so an operation that
/// names one could never match its effect.
pub(super) fn profile_reserved(d: &mut Diagnostics, raw: &Sp<Args>, profile: &Profile) {
    let body = &profile.body;
    let reserved = body
        .client_reference
        .iter()
        .chain(body.metadata.iter())
        .chain(body.ignored.iter())
        .filter(|field| !RESERVED_FIELDS.contains(&field.as_str()));
    for field in reserved {
        if raw.value.contains_key(field) {
            d.error(
                raw.pos,
                format!(
                    "`{field}` is a field of profile {}'s create body that is not an argument",
                    profile.name
                ),
            );
        }
    }
}

/// Checks an `args:` mapping (none: empty).
pub(super) fn args(d: &mut Diagnostics, raw: Option<&Sp<Args>>, max_body_bytes: usize) -> Args {
    let Some(raw) = raw else {
        return Args::new();
    };
    for reserved in RESERVED_FIELDS {
        if raw.value.contains_key(reserved) {
            d.error(
                raw.pos,
                format!("`{reserved}` is a reserved field of the create body, not an argument"),
            );
        }
    }
    let size = serde_json::to_vec(&raw.value).map_or(usize::MAX, |body| body.len());
    if size > max_body_bytes {
        d.error(
            raw.pos,
            format!(
                "these arguments make a {size}-byte body, more than max_body_bytes ({max_body_bytes})"
            ),
        );
    }
    raw.value.clone()
}

/// Parses a duration and checks `min <= it <= max`.
pub(super) fn duration_in(
    d: &mut Diagnostics,
    raw: &Sp<DurationText>,
    what: &str,
    min: Duration,
    max: Duration,
) -> Option<Duration> {
    let text = raw.value.0.trim();
    match humantime::parse_duration(text) {
        Err(err) => {
            d.error(
                raw.pos,
                format!(
                    "bad duration `{text}` for {what}: {err} (write it like 300ms, 60s, 2m or 24h)"
                ),
            );
            None
        }
        Ok(value) if value < min || value > max => {
            let range = if min.is_zero() {
                format!("at most {}", show(max))
            } else {
                format!("between {} and {}", show(min), show(max))
            };
            d.error(raw.pos, format!("{what} must be {range}, not {text}"));
            None
        }
        Ok(value) => Some(value),
    }
}

/// A duration the way a scenario writes it.
pub(super) fn show(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

//! `provider:` -> the simulator's plan (without faults) and what later checks need.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use lostreply_simulator::profile::Keys;
use lostreply_simulator::{
    Asynchronous, Idempotency, IdempotencyMode, Limits, Lookup, Plan, Profile, SeedObject,
    SettleResult, Webhooks,
};

use super::common::{
    args, duration_in, in_profile, is_resource_name, profile_reserved, resource, show, MAX_ITEMS,
    MAX_VIRTUAL, NONZERO,
};
use super::declared::Declared;
use crate::scenario::error::Diagnostics;
use crate::scenario::provider_profile::ProfileChoice;
use crate::scenario::raw::{
    ProviderProfileName, RawAsynchronous, RawIdempotency, RawProvider, RawSeedObject, RawSettle,
};
use crate::scenario::span::Sp;

/// Default `provider.limits.stall_cap`: short, so that a stalled run stays short.
pub const DEFAULT_STALL_CAP: Duration = Duration::from_secs(3);
/// Longest `stall_cap` (real time).
const MAX_STALL_CAP: Duration = Duration::from_secs(60);
/// Largest `max_body_bytes`.
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// Longest credential or `client_reference` (provider-api.md).
const MAX_TOKEN_BYTES: usize = 255;

/// Checks `provider:` and builds the plan's provider (without faults) and
/// what later checks need to know of it.
pub(super) fn provider(
    d: &mut Diagnostics,
    raw: Option<&Sp<RawProvider>>,
    client_timeout: Duration,
    base_dir: &Path,
) -> (Plan, Declared) {
    let Some(raw) = raw.map(|p| &p.value) else {
        return no_provider(client_timeout);
    };
    let defaults = Plan::default();

    let profile = raw.profile.as_ref().map_or_else(
        || Arc::clone(&defaults.profile),
        |p| profile(d, p, base_dir),
    );
    let tenants = match &raw.tenants {
        None => defaults.tenants.clone(),
        Some(list) => tenants(d, list),
    };
    // An empty list is reported once; later checks then treat it as absent rather
    // than repeating "not one of ()" for every name.
    let resources = raw
        .resources
        .as_ref()
        .map(|list| resources(d, list, &profile))
        .filter(|r| !r.is_empty());
    let limits = limits(d, raw, defaults.limits);

    let idempotency = match &raw.idempotency {
        // A provider keys creates as its profile says when the file says nothing.
        None => Idempotency::builder()
            .mode(profile.keys.default_mode)
            .retention(profile.keys.default_retention)
            .required(false)
            .build(),
        Some(idem) => idempotency(d, &idem.value, &profile.keys),
    };

    let lookup = raw.lookup.as_ref().map_or(defaults.lookup, |l| {
        Lookup::builder()
            .retrieve(l.value.retrieve.unwrap_or(true))
            .client_reference(l.value.client_reference.unwrap_or(true))
            .list_recent(l.value.list_recent.unwrap_or(true))
            .build()
    });

    let asynchronous = raw.asynchronous.as_ref().map(|a| asynchronous(d, &a.value));

    let webhooks = raw.webhooks.as_ref().map(|w| {
        webhook_secret(d, &w.value.secret);
        Webhooks::builder()
            .secret(w.value.secret.value.clone())
            .build()
    });

    let mut plan = Plan::builder()
        .tenants(tenants)
        .maybe_resources(resources.map(|list| list.into_iter().collect::<BTreeSet<_>>()))
        .idempotency(idempotency)
        .lookup(lookup)
        .maybe_asynchronous(asynchronous)
        .maybe_webhooks(webhooks)
        .seed_objects(Vec::new())
        .faults(Vec::new())
        .clock_start_ms(defaults.clock_start_ms)
        .seed(0)
        .limits(limits)
        .profile(profile)
        .build();
    let declared = declared(&plan, limits, client_timeout);
    plan.seed_objects = raw
        .seed_objects
        .iter()
        .map(|s| seed_object(d, s, &declared))
        .collect();
    (plan, declared)
}

/// The provider of a scenario without `provider:`: the defaults, with the
/// default stall cap.
fn no_provider(client_timeout: Duration) -> (Plan, Declared) {
    let defaults = Plan::default();
    let limits = {
        let mut changed = defaults.limits;
        changed.stall_cap = DEFAULT_STALL_CAP;
        changed
    };
    let declared = declared(&defaults, limits, client_timeout);
    (
        {
            let mut changed = defaults;
            changed.limits = limits;
            changed
        },
        declared,
    )
}

/// `provider.asynchronous`: when objects settle, and to what.
fn asynchronous(d: &mut Diagnostics, raw: &RawAsynchronous) -> Asynchronous {
    Asynchronous::builder()
        .settle_after(
            duration_in(d, &raw.settle_after, "settle_after", NONZERO, MAX_VIRTUAL)
                .unwrap_or(NONZERO),
        )
        .result(match raw.result {
            None | Some(RawSettle::Succeeded) => SettleResult::Succeeded,
            Some(RawSettle::Failed) => SettleResult::Failed,
        })
        .build()
}

/// `provider.profile`: a built-in profile, or a file beside the scenario.
/// The generic profile stands in for one that cannot be had (reported at its name).
fn profile(d: &mut Diagnostics, raw: &Sp<ProviderProfileName>, base_dir: &Path) -> Arc<Profile> {
    let loaded = ProfileChoice::parse(&raw.value.0).and_then(|choice| choice.load(base_dir));
    match loaded {
        Ok(profile) => Arc::new(profile),
        Err(err) => {
            // A profile file's own error names its file, line and column; the
            // first line says it, the rest is that file's snippet.
            let text = err.to_string();
            let first = text.lines().next().unwrap_or_default();
            d.error(raw.pos, first.to_owned());
            Arc::new(Profile::generic())
        }
    }
}

/// `provider.idempotency`: the retention defaults to the profile's.
fn idempotency(d: &mut Diagnostics, idem: &RawIdempotency, keys: &Keys) -> Idempotency {
    let mode = IdempotencyMode::from_name(&idem.mode.value.0).unwrap_or_else(|| {
        let names: Vec<&str> = IdempotencyMode::ALL.iter().map(|m| m.name()).collect();
        d.error(
            idem.mode.pos,
            format!(
                "unknown idempotency mode `{}`: one of {}",
                idem.mode.value.0,
                names.join(", ")
            ),
        );
        IdempotencyMode::None
    });
    let retention = idem.retention.as_ref().map_or(keys.default_retention, |r| {
        if mode == IdempotencyMode::None {
            d.error(
                r.pos,
                "`retention` is how long the provider remembers keys, and mode `none` \
                 remembers none: remove it, or choose a mode with keys (stripe, ietf)",
            );
        }
        duration_in(d, r, "retention", NONZERO, MAX_VIRTUAL).unwrap_or(keys.default_retention)
    });
    let required = idem.required.as_ref().is_some_and(|required| {
        if required.value && mode != IdempotencyMode::Ietf {
            d.error(
                required.pos,
                format!(
                    "`required: true` is an ietf rule; mode `{}` processes creates without a key",
                    mode.name()
                ),
            );
        }
        required.value
    });
    Idempotency::builder()
        .mode(mode)
        .retention(retention)
        .required(required)
        .build()
}

fn declared(plan: &Plan, limits: Limits, client_timeout: Duration) -> Declared {
    Declared {
        operations: BTreeMap::new(),
        tenants: plan.tenants.clone(),
        resources: plan
            .resources
            .as_ref()
            .map(|set| set.iter().cloned().collect()),
        profile: Arc::clone(&plan.profile),
        profile_resources: plan
            .profile
            .resource_names()
            .map(|names| names.into_iter().collect()),
        webhooks: plan.webhooks.is_some(),
        settle: plan.asynchronous.map(|a| a.result),
        stall_cap: limits.stall_cap,
        max_body_bytes: limits.max_body_bytes,
        client_timeout,
        step_count: 0,
        mcp: None,
    }
}

fn tenants(d: &mut Diagnostics, list: &Sp<Vec<Sp<String>>>) -> Vec<String> {
    if list.value.is_empty() {
        d.error(
            list.pos,
            "provider.tenants needs at least one credential (the adapter's)",
        );
    }
    if list.value.len() > MAX_ITEMS {
        d.error(list.pos, format!("at most {MAX_ITEMS} tenants"));
    }
    let mut seen = BTreeMap::new();
    for tenant in &list.value {
        let text = &tenant.value;
        // It travels in `Authorization: Bearer ...`: visible ASCII only.
        if text.is_empty()
            || text.len() > MAX_TOKEN_BYTES
            || !text.bytes().all(|b| b.is_ascii_graphic())
        {
            d.error(
                tenant.pos,
                format!(
                    "tenant credential `{text}` must be 1 to {MAX_TOKEN_BYTES} visible ASCII \
                     characters (it is sent as a bearer token)"
                ),
            );
        }
        if let Some(first) = seen.insert(text.clone(), tenant.pos) {
            d.error(
                tenant.pos,
                format!(
                    "tenant `{text}` is listed twice (also at line {})",
                    first.line
                ),
            );
        }
    }
    list.value.iter().map(|t| t.value.clone()).collect()
}

fn resources(d: &mut Diagnostics, list: &Sp<Vec<Sp<String>>>, profile: &Profile) -> Vec<String> {
    if list.value.is_empty() {
        d.error(
            list.pos,
            "provider.resources is empty: leave it out to allow any collection",
        );
    }
    if list.value.len() > MAX_ITEMS {
        d.error(list.pos, format!("at most {MAX_ITEMS} resources"));
    }
    let mut seen = BTreeMap::new();
    let profile_resources: Option<Vec<String>> = profile
        .resource_names()
        .map(|names| names.into_iter().collect());
    for name in &list.value {
        resource(d, name, None);
        // provider.resources restricts the profile's collections further.
        if is_resource_name(&name.value) {
            in_profile(d, name, profile, profile_resources.as_deref());
        }
        if let Some(first) = seen.insert(name.value.clone(), name.pos) {
            d.error(
                name.pos,
                format!(
                    "resource `{}` is listed twice (also at line {})",
                    name.value, first.line
                ),
            );
        }
    }
    list.value.iter().map(|n| n.value.clone()).collect()
}

fn limits(d: &mut Diagnostics, raw: &RawProvider, defaults: Limits) -> Limits {
    let mut limits = {
        let mut changed = defaults;
        changed.stall_cap = DEFAULT_STALL_CAP;
        changed
    };
    let Some(raw) = &raw.limits else {
        return limits;
    };
    if let Some(cap) = &raw.value.stall_cap {
        limits.stall_cap =
            duration_in(d, cap, "stall_cap", NONZERO, MAX_STALL_CAP).unwrap_or(DEFAULT_STALL_CAP);
    }
    if let Some(max) = &raw.value.max_body_bytes {
        if (1..=MAX_BODY_BYTES).contains(&max.value) {
            limits.max_body_bytes = usize::try_from(max.value).unwrap_or(defaults.max_body_bytes);
        } else {
            d.error(
                max.pos,
                format!(
                    "max_body_bytes must be between 1 and {MAX_BODY_BYTES}, not {}",
                    max.value
                ),
            );
        }
    }
    limits
}

/// `whsec_` + base64 of a non-empty key, as Standard Webhooks define it.
fn webhook_secret(d: &mut Diagnostics, secret: &Sp<String>) {
    let key = secret.value.strip_prefix("whsec_").map(|encoded| {
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map(|key| key.len())
    });
    match key {
        Some(Ok(len)) if len > 0 => {}
        Some(Ok(_)) => d.error(secret.pos, "the webhook secret's key is empty"),
        Some(Err(err)) => d.error(
            secret.pos,
            format!("the webhook secret after `whsec_` is not valid base64: {err}"),
        ),
        None => d.error(
            secret.pos,
            "a webhook secret starts with `whsec_` (then base64)",
        ),
    }
}

fn seed_object(d: &mut Diagnostics, raw: &Sp<RawSeedObject>, declared: &Declared) -> SeedObject {
    let seed = &raw.value;
    tenant(d, &seed.tenant, &declared.tenants);
    declared.check_resource(d, &seed.resource);
    let client_reference = seed.client_reference.as_ref().map(|reference| {
        if reference.value.len() > MAX_TOKEN_BYTES {
            d.error(
                reference.pos,
                format!(
                    "client_reference is {} bytes; the provider keeps at most {MAX_TOKEN_BYTES}",
                    reference.value.len()
                ),
            );
        }
        reference.value.clone()
    });
    let age = seed.age.as_ref().map_or(Duration::ZERO, |age| {
        duration_in(d, age, "age", Duration::ZERO, MAX_VIRTUAL).unwrap_or(Duration::ZERO)
    });
    let seed_args = args(d, seed.args.as_ref(), declared.max_body_bytes);
    if let Some(raw_args) = &seed.args {
        profile_reserved(d, raw_args, &declared.profile);
    }
    SeedObject::builder()
        .tenant(seed.tenant.value.clone())
        .resource(seed.resource.value.clone())
        .args(declared.profile.wire_args(&seed_args))
        .maybe_client_reference(client_reference)
        .age(age)
        .build()
}

/// Checks that a credential is one of the declared tenants.
pub(super) fn tenant(d: &mut Diagnostics, raw: &Sp<String>, tenants: &[String]) {
    if !tenants.contains(&raw.value) {
        d.error(
            raw.pos,
            format!(
                "tenant `{}` is not one of provider.tenants ({})",
                raw.value,
                tenants.join(", ")
            ),
        );
    }
}

/// Used by fault checks: the stall cap against the client's timeout, in words.
pub(super) fn stall_too_short(declared: &Declared) -> Option<String> {
    (declared.stall_cap <= declared.client_timeout).then(|| {
        format!(
            "a stall must outlast the client, but stall_cap ({}) is not longer than \
             client_timeout ({})",
            show(declared.stall_cap),
            show(declared.client_timeout)
        )
    })
}

//! Raw profile -> the simulator's `Profile`: every check that needs more than
//! one value's shape. Each check records its problem and carries on with a
//! stand-in, so one pass reports everything it can; the result is used only
//! when nothing was recorded.

mod fields;
mod resources;
mod shapes;
mod wire;

use lostreply_simulator::profile::Routes;
use lostreply_simulator::Profile;

use super::common::Found;
use super::raw::{RawProfile, RawRoutes};
use crate::scenario::span::Sp;

/// Checks everything and builds the profile (meaningful only if `found` stays empty).
pub(super) fn profile(raw: &RawProfile, found: &mut Found) -> Profile {
    if raw.version.value != 1 {
        found.error(
            raw.version.pos,
            format!(
                "unsupported format version {}: this lostreply reads profile files of `version: 1`",
                raw.version.value
            ),
        );
    }
    let name = profile_name(found, &raw.name);
    let routes = routes(found, raw);
    let profile = Profile {
        name,
        auth: wire::auth(found, raw.auth.as_ref()),
        body: wire::body(found, raw.body.as_ref()),
        objects: shapes::objects(found, raw.objects.as_ref()),
        errors: shapes::errors(found, raw.errors.as_ref()),
        pages: shapes::pages(found, raw.pages.as_ref()),
        keys: wire::keys(found, raw.keys.as_ref()),
        retry_hints: wire::retry_hints(found, raw.retry_hints.as_ref()),
        webhooks: wire::webhooks(found, raw.webhooks.as_ref()),
        routes,
    };
    wire::headers_apart(found, raw, &profile);
    resources::searches_reachable(found, raw, &profile);
    profile
}

/// `[a-z][a-z0-9_-]{0,39}`: a profile's name reaches reports, banners and file names.
fn profile_name(found: &mut Found, raw: &Sp<String>) -> String {
    let name = &raw.value;
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && name.len() <= 40;
    if !valid {
        found.error(
            raw.pos,
            format!(
                "profile name `{name}` is not valid: lower-case letters, digits, `_` and `-`, \
                 starting with a letter, at most 40 characters"
            ),
        );
    }
    name.clone()
}

fn routes(found: &mut Found, raw: &RawProfile) -> Routes {
    match (&raw.routes, &raw.resources) {
        (Some(routes), None) => match routes.value {
            RawRoutes::Generic => Routes::Generic,
        },
        (Some(routes), Some(_)) => {
            found.error(
                routes.pos,
                "`routes: generic` and `resources:` exclude each other: the generic routes \
                 take any collection, declared resources only theirs",
            );
            Routes::Generic
        }
        (None, Some(list)) => Routes::Declared(resources::resources(found, list)),
        (None, None) => {
            found.error(
                raw.name.pos,
                "a profile needs `resources:` (its collections and their paths) or \
                 `routes: generic` (the simulator's own /v1/{resource} paths)",
            );
            Routes::Generic
        }
    }
}

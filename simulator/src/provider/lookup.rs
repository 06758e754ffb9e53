//! Retrieve, search and list: read-only answers from the store, each lookup
//! offered only when the plan says the provider has it. The generic API's
//! are here; a declared profile's pages are in `shaped_lookup`.

use super::ctx::Ctx;
use crate::plan::RequestKind;
use crate::profile::Profile;
use crate::query;
use crate::responses::{self, Prepared};
use crate::store::{object_body, object_json, Stored};
use crate::time::parse_rfc3339;

/// Most objects one search or list answer carries.
pub const MAX_PAGE_OBJECTS: usize = 100;
/// Default `limit` of list recent.
pub const DEFAULT_LIST_LIMIT: usize = 10;

/// The generic API's reads (docs/provider-api.md).
pub(super) fn generic_lookup(
    ctx: &Ctx,
    profile: &Profile,
    tenant: &str,
    kind: RequestKind,
    (resource, id): (&str, Option<&str>),
    raw_query: Option<&str>,
) -> Prepared {
    let lookups = ctx.shared.plan.lookup;
    let pairs = match query::parse(raw_query) {
        Ok(pairs) => pairs,
        Err(why) => return responses::invalid_request(profile, &why.to_string()),
    };
    let state = ctx.shared.state();
    match (kind, id) {
        (RequestKind::Retrieve, Some(id)) => {
            // Never a 404: that would read as proof that the object is absent.
            if !lookups.retrieve {
                return responses::unsupported_query(
                    profile,
                    "this provider offers no retrieve by id",
                );
            }
            if let Some((name, _)) = pairs.first() {
                return responses::invalid_request(
                    profile,
                    &format!("retrieve takes no query parameters; got `{name}`"),
                );
            }
            match state.store.get(tenant, resource, id) {
                Some(effect) => Prepared::json_body(200, object_body(profile, effect)),
                None => responses::not_found(profile),
            }
        }
        (RequestKind::Search, None) => {
            if !lookups.client_reference {
                return responses::unsupported_query(
                    profile,
                    "this provider offers no search by client_reference",
                );
            }
            let mut reference = None;
            for (name, value) in &pairs {
                match name.as_str() {
                    "client_reference" => reference = Some(value.clone()),
                    other => {
                        return responses::invalid_request(
                            profile,
                            &format!(
                            "unknown query parameter `{other}`: search takes only client_reference"
                        ),
                        )
                    }
                }
            }
            let reference = reference.unwrap_or_default();
            let found = state.store.newest_first(tenant, resource, |e| {
                e.client_reference.as_deref() == Some(reference.as_str())
            });
            page(profile, &found, MAX_PAGE_OBJECTS)
        }
        (RequestKind::List, None) => {
            if !lookups.list_recent {
                return responses::unsupported_query(
                    profile,
                    "this provider offers no list of recent objects",
                );
            }
            let mut since_ms = i64::MIN;
            let mut limit = DEFAULT_LIST_LIMIT;
            for (name, value) in &pairs {
                match name.as_str() {
                    "created_gte" => match parse_rfc3339(value) {
                        Some(ms) => since_ms = ms,
                        None => {
                            return responses::invalid_request(profile, &format!(
                                "created_gte `{value}` is not an RFC 3339 time such as 2026-01-01T00:00:00Z"
                            ))
                        }
                    },
                    "limit" => match value.parse::<usize>() {
                        Ok(n) if (1..=MAX_PAGE_OBJECTS).contains(&n) => limit = n,
                        _ => {
                            return responses::invalid_request(profile, &format!(
                                "limit `{value}` must be an integer from 1 to {MAX_PAGE_OBJECTS}"
                            ))
                        }
                    },
                    other => {
                        return responses::invalid_request(profile, &format!(
                            "unknown query parameter `{other}`: list takes created_gte and limit"
                        ))
                    }
                }
            }
            let found = state
                .store
                .newest_first(tenant, resource, |e| e.created_at_ms >= since_ms);
            page(profile, &found, limit)
        }
        (
            RequestKind::Create | RequestKind::Retrieve | RequestKind::Search | RequestKind::List,
            _,
        ) => responses::not_found(profile),
    }
}

fn page(profile: &Profile, found: &[&Stored], limit: usize) -> Prepared {
    let data = found
        .iter()
        .take(limit)
        .map(|e| object_json(profile, e))
        .collect();
    responses::list(data, found.len() > limit)
}

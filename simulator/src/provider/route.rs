//! Where a request goes: the resource and kind its path and method name, the
//! tenant its credential names, and the answer when the method does not fit.

use http::{HeaderMap, Method};
use lostreply_text::SharedStr;

use crate::names::is_valid_resource_name;
use crate::plan::RequestKind;
use crate::shared::Shared;

/// Where the path points: parts of the path itself, borrowed. A request's
/// future keeps the path and reads its route again where it needs it:
/// parsing is a few comparisons, and owned copies of the collection and the
/// id would be two allocations per request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Route<'a> {
    Collection(&'a str),
    Item(&'a str, &'a str),
    /// Not a provider path; the resource is named when the path had a valid one.
    Unknown(Option<&'a str>),
}

impl<'a> Route<'a> {
    /// The collection the path named, when it named a valid one.
    pub(crate) fn resource(&self) -> Option<&'a str> {
        match *self {
            Route::Collection(r) | Route::Item(r, _) => Some(r),
            Route::Unknown(r) => r,
        }
    }
}

pub(crate) fn parse_route(path: &str) -> Route<'_> {
    let Some(rest) = path.strip_prefix("/v1/") else {
        return Route::Unknown(None);
    };
    // Split by hand: collecting the segments would allocate on every request.
    let (first, after) = match slash_in(rest) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let resource = is_valid_resource_name(first).then_some(first);
    match (resource, after) {
        (Some(resource), None) => Route::Collection(resource),
        (Some(resource), Some(id)) if !id.is_empty() && slash_in(id).is_none() => {
            Route::Item(resource, id)
        }
        (resource, _) => Route::Unknown(resource),
    }
}

/// Where the first `/` of `text` is. A byte loop: `str::split_once('/')`
/// searches for a char, which on paths this short costs about 160
/// instructions a call (callgrind), twice per request.
fn slash_in(text: &str) -> Option<usize> {
    text.bytes().position(|byte| byte == b'/')
}

pub(crate) fn request_kind(
    method: &Method,
    route: &Route<'_>,
    query_names: &[String],
) -> Option<RequestKind> {
    match route {
        Route::Collection(_) if method == Method::POST => Some(RequestKind::Create),
        Route::Collection(_) if method == Method::GET => {
            if query_names.iter().any(|n| n == "client_reference") {
                Some(RequestKind::Search)
            } else {
                Some(RequestKind::List)
            }
        }
        Route::Item(..) if method == Method::GET => Some(RequestKind::Retrieve),
        Route::Collection(_) | Route::Item(..) | Route::Unknown(_) => None,
    }
}

/// The tenant whose credential the request carries where the profile
/// looks for it (`Authorization: Bearer <credential>` in the generic API).
pub(crate) fn authenticate(shared: &Shared, headers: &HeaderMap) -> Option<SharedStr> {
    tenant_of(shared, shared.plan.profile.auth.credential(headers)?)
}

/// The tenant of a bearer credential, whatever the profile: the MCP face
/// always takes `Authorization: Bearer`.
pub(crate) fn authenticate_bearer(shared: &Shared, headers: &HeaderMap) -> Option<SharedStr> {
    tenant_of(shared, crate::profile::Auth::Bearer.credential(headers)?)
}

fn tenant_of(shared: &Shared, credential: &str) -> Option<SharedStr> {
    shared
        .tenants
        .iter()
        .find(|t| t.as_str() == credential)
        .cloned()
}

/// Whether the plan offers `resource`: a plan that lists no resources offers
/// every valid name.
pub(crate) fn resource_exists(shared: &Shared, resource: &str) -> bool {
    shared
        .plan
        .resources
        .as_ref()
        .is_none_or(|set| set.contains(resource))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(path: &str) -> String {
        match parse_route(path) {
            Route::Collection(r) => format!("collection {r}"),
            Route::Item(r, id) => format!("item {r} {id}"),
            Route::Unknown(r) => format!("unknown {r:?}"),
        }
    }

    #[test]
    fn a_path_names_a_collection_an_item_or_nothing_known() {
        assert_eq!(shape("/v1/tickets"), "collection tickets");
        assert_eq!(shape("/v1/tickets/tkt_1"), "item tickets tkt_1");
        assert_eq!(shape("/v1/tickets/"), r#"unknown Some("tickets")"#);
        assert_eq!(shape("/v1/tickets/a/b"), r#"unknown Some("tickets")"#);
        assert_eq!(shape("/v1/tickets//"), r#"unknown Some("tickets")"#);
        assert_eq!(shape("/v1/Tickets/x"), "unknown None");
        assert_eq!(shape("/v1/"), "unknown None");
        assert_eq!(shape("/v2/tickets"), "unknown None");
        assert_eq!(parse_route("/v1/tickets/x").resource(), Some("tickets"));
        assert_eq!(parse_route("/v1/Tickets").resource(), None);
    }
}

//! Where a request goes: the resource and kind its path and method name, the
//! tenant its credential names, and the answer when the method does not fit.

use http::{HeaderMap, Method};

use crate::names::is_valid_resource_name;
use crate::plan::RequestKind;
use crate::responses::{self, Prepared};
use crate::shared::Shared;

/// Where the path points.
pub(crate) enum Route {
    Collection(String),
    Item(String, String),
    /// Not a provider path; the resource is named when the path had a valid one.
    Unknown(Option<String>),
}

pub(crate) fn parse_route(path: &str) -> Route {
    let Some(rest) = path.strip_prefix("/v1/") else {
        return Route::Unknown(None);
    };
    let segments: Vec<&str> = rest.split('/').collect();
    let resource = segments
        .first()
        .filter(|r| is_valid_resource_name(r))
        .map(|r| (*r).to_owned());
    match (resource, segments.as_slice()) {
        (Some(resource), [_]) => Route::Collection(resource),
        (Some(resource), [_, id]) if !id.is_empty() => Route::Item(resource, (*id).to_owned()),
        (resource, _) => Route::Unknown(resource),
    }
}

pub(crate) fn request_kind(
    method: &Method,
    route: &Route,
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

/// The tenant whose credential is in `Authorization: Bearer <credential>`.
pub(crate) fn authenticate(shared: &Shared, headers: &HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, credential) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let credential = credential.trim();
    shared
        .plan
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

/// 405 with the methods the route does take.
pub(crate) fn method_not_allowed(allow: &str) -> Prepared {
    responses::bare_error(405, "method_not_allowed").with_header("allow", allow)
}

//! A request under a declared profile: which resource and kind its method
//! and path name, and where its credential is.

use http::Method;

use super::{Pages, Profile, Resource, Routes, SearchSyntax};
use crate::plan::RequestKind;
use crate::provider::route::Route;

/// The route and kind of a request to a declared profile's paths. A path
/// the profile has, for a read the collection does not offer, is
/// `Unknown(Some(resource))`: the provider's 404, with the collection
/// still named for the journal and the fault rules.
pub(crate) fn declared_route<'a>(
    profile: &'a Profile,
    resources: &'a [Resource],
    method: &Method,
    path: &'a str,
    raw_query: Option<&str>,
) -> (Route<'a>, Option<RequestKind>) {
    let syntax = match &profile.pages {
        Pages::Shaped(shape) => Some(shape.search),
        Pages::Generic => None,
    };
    for resource in resources {
        let name = resource.name.as_str();
        if resource.search_path.as_deref() == Some(path) {
            return match (method == Method::GET, resource.offers.search) {
                (true, true) => (Route::Collection(name), Some(RequestKind::Search)),
                (true, false) => (Route::Unknown(Some(name)), None),
                (false, _) => (Route::Collection(name), None),
            };
        }
        if path == resource.path {
            let kind = if method == Method::POST {
                Some(RequestKind::Create)
            } else if method == Method::GET {
                let by_metadata = syntax == Some(SearchSyntax::MetadataParams)
                    && raw_query
                        .unwrap_or("")
                        .split('&')
                        .any(|pair| pair.starts_with("metadata"));
                let (kind, offered) = if by_metadata {
                    (RequestKind::Search, resource.offers.search)
                } else {
                    (RequestKind::List, resource.offers.list)
                };
                if !offered {
                    return (Route::Unknown(Some(name)), None);
                }
                Some(kind)
            } else {
                None
            };
            return (Route::Collection(name), kind);
        }
        let id = path
            .strip_prefix(resource.path.as_str())
            .and_then(|rest| rest.strip_prefix('/'));
        if let Some(id) = id.filter(|id| !id.is_empty() && !id.contains('/')) {
            return match (method == Method::GET, resource.offers.retrieve) {
                (true, true) => (Route::Item(name, id), Some(RequestKind::Retrieve)),
                (true, false) => (Route::Unknown(Some(name)), None),
                (false, _) => (Route::Item(name, id), None),
            };
        }
    }
    (Route::Unknown(None), None)
}

/// The route and kind of any request under `profile` (`query_names`: the
/// raw query's names, which the generic API's kinds read).
pub(crate) fn route<'a>(
    profile: &'a Profile,
    method: &Method,
    path: &'a str,
    raw_query: Option<&str>,
    query_names: &[String],
) -> (Route<'a>, Option<RequestKind>) {
    match &profile.routes {
        Routes::Generic => {
            let route = crate::provider::route::parse_route(path);
            let kind = crate::provider::route::request_kind(method, &route, query_names);
            (route, kind)
        }
        Routes::Declared(resources) => declared_route(profile, resources, method, path, raw_query),
    }
}

/// [`route`] without the kind: read again where a request's future needs
/// it, without the query's names (the generic route reads only the path).
pub(crate) fn route_only<'a>(
    profile: &'a Profile,
    method: &Method,
    path: &'a str,
    raw_query: Option<&str>,
) -> Route<'a> {
    match &profile.routes {
        Routes::Generic => crate::provider::route::parse_route(path),
        Routes::Declared(resources) => {
            declared_route(profile, resources, method, path, raw_query).0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::builtin::{anthropic, openai, stripe};
    use crate::profile::Auth;
    use http::HeaderMap;

    fn shape(profile: &Profile, method: Method, path: &str, query: &[&str]) -> String {
        let names: Vec<String> = query.iter().map(|q| (*q).to_owned()).collect();
        let raw = names
            .iter()
            .map(|n| format!("{n}=x"))
            .collect::<Vec<_>>()
            .join("&");
        let (route, kind) = route(profile, &method, path, Some(&raw), &names);
        let kind = kind.map_or("none", RequestKind::name);
        match route {
            Route::Collection(r) => format!("{kind} {r}"),
            Route::Item(r, id) => format!("{kind} {r} {id}"),
            Route::Unknown(r) => format!("{kind} unknown {r:?}"),
        }
    }

    #[test]
    fn stripe_paths_name_their_collection_and_kind() {
        let p = stripe();
        assert_eq!(
            shape(&p, Method::POST, "/v1/customers", &[]),
            "create customers"
        );
        assert_eq!(
            shape(&p, Method::GET, "/v1/customers", &["created[gte]"]),
            "list customers"
        );
        assert_eq!(
            shape(&p, Method::GET, "/v1/customers/search", &["query"]),
            "search customers"
        );
        assert_eq!(
            shape(&p, Method::GET, "/v1/payment_intents/pi_1", &[]),
            "retrieve payment_intents pi_1"
        );
        assert_eq!(
            shape(&p, Method::POST, "/v1/payment_intents/pi_1", &[]),
            "none payment_intents pi_1"
        );
        assert_eq!(
            shape(&p, Method::GET, "/v1/refunds/search", &[]),
            "retrieve refunds search"
        );
        assert_eq!(
            shape(&p, Method::GET, "/v1/charges", &[]),
            "none unknown None"
        );
    }

    #[test]
    fn openai_and_anthropic_paths_offer_only_what_the_providers_do() {
        let o = openai();
        assert_eq!(
            shape(&o, Method::POST, "/v1/chat/completions", &[]),
            "create chat_completions"
        );
        assert_eq!(
            shape(
                &o,
                Method::GET,
                "/v1/chat/completions",
                &["metadata[operation_id]"]
            ),
            "search chat_completions"
        );
        assert_eq!(
            shape(&o, Method::GET, "/v1/responses/resp_1", &[]),
            "retrieve responses resp_1"
        );
        assert_eq!(
            shape(&o, Method::GET, "/v1/responses", &[]),
            "none unknown Some(\"responses\")"
        );
        let a = anthropic();
        assert_eq!(
            shape(&a, Method::POST, "/v1/messages", &[]),
            "create messages"
        );
        assert_eq!(
            shape(&a, Method::GET, "/v1/messages/msg_1", &[]),
            "none unknown Some(\"messages\")"
        );
    }

    #[test]
    fn the_credential_is_where_the_profile_says() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            http::HeaderValue::from_static("Bearer sk_a"),
        );
        headers.insert("x-api-key", http::HeaderValue::from_static("sk_b"));
        assert_eq!(Auth::Bearer.credential(&headers), Some("sk_a"));
        assert_eq!(
            Auth::Header("x-api-key".to_owned()).credential(&headers),
            Some("sk_b")
        );
        assert_eq!(
            Auth::Header("x-other".to_owned()).credential(&headers),
            None
        );
    }
}

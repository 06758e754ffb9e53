//! A declared profile's reads: retrieve by id, search in the profile's
//! syntax, list by creation time with a cursor, each page in the profile's
//! envelope. Parameters the profile lists as ignored (`expand[]`) are
//! accepted; any other unknown one is refused by name, as the real
//! providers do, so a mistyped filter never reads as "nothing found".

use serde_json::{Map, Value};

use super::ctx::Ctx;
use super::lookup::MAX_PAGE_OBJECTS;
use crate::plan::RequestKind;
use crate::profile::render::{page_body, PageKind};
use crate::profile::search::{matches, parse_query, Clause, SearchQueryError};
use crate::profile::{PageShape, SearchSyntax, TimeFormat};
use crate::query;
use crate::responses::{self, Prepared};
use crate::store::{object_body, object_json, Stored};
use crate::time::parse_rfc3339;

/// One read, as routed.
pub(super) struct Read<'a> {
    pub(super) tenant: &'a str,
    pub(super) kind: RequestKind,
    pub(super) resource: &'a str,
    pub(super) id: Option<&'a str>,
    pub(super) path: &'a str,
    pub(super) raw_query: Option<&'a str>,
}

/// Why a search or list request's parameters are refused, in the words the
/// real providers use where they have them.
#[derive(Debug, thiserror::Error)]
enum PageAskError {
    /// A parameter this read does not take.
    #[error("Received unknown parameter: {0}")]
    UnknownParameter(String),
    /// The page size is not an integer in range: (parameter, value).
    #[error("{0} `{1}` must be an integer from 1 to {MAX_PAGE_OBJECTS}")]
    BadLimit(String, String),
    /// A creation-time bound not in the profile's format: (parameter, value).
    #[error("{0} `{1}` is not a time in this provider's format")]
    BadTime(String, String),
    /// A Stripe-syntax search without its `query`.
    #[error("Missing required param: query.")]
    MissingQuery,
    /// The search query does not parse.
    #[error(transparent)]
    Query(#[from] SearchQueryError),
}

/// What a page asks for once its parameters are read.
#[derive(Default)]
struct PageAsk {
    clauses: Vec<Clause>,
    since_ms: Option<i64>,
    limit: Option<usize>,
    after: Option<String>,
}

pub(super) fn shaped_lookup(ctx: &Ctx, shape: &PageShape, read: Read<'_>) -> Prepared {
    let profile = &ctx.shared.plan.profile;
    let lookups = ctx.shared.plan.lookup;
    let pairs = match query::parse_all(read.raw_query) {
        Ok(pairs) => pairs,
        Err(why) => return responses::invalid_request(profile, &why.to_string()),
    };
    let ignored = |name: &str| {
        shape.ignored.iter().any(|i| {
            name == i
                || name
                    .strip_prefix(i.as_str())
                    .is_some_and(|r| r.starts_with('['))
        })
    };
    let pairs: Vec<(String, String)> = pairs.into_iter().filter(|(n, _)| !ignored(n)).collect();
    match (read.kind, read.id) {
        (RequestKind::Retrieve, Some(id)) => {
            if !lookups.retrieve {
                return responses::unsupported_query(
                    profile,
                    "this provider offers no retrieve by id",
                );
            }
            if let Some((name, _)) = pairs.first() {
                return responses::invalid_request(
                    profile,
                    &format!("Received unknown parameter: {name}"),
                );
            }
            let state = ctx.shared.state();
            match state.store.get(read.tenant, read.resource, id) {
                Some(object) => Prepared::json_body(200, object_body(profile, object)),
                None => responses::not_found(profile),
            }
        }
        (RequestKind::Search, None) if lookups.client_reference => {
            match search_ask(shape, &pairs) {
                Ok(ask) => page(ctx, shape, &read, PageKind::Search, ask),
                Err(why) => responses::invalid_request(profile, &why.to_string()),
            }
        }
        (RequestKind::Search, None) => {
            responses::unsupported_query(profile, "this provider offers no search")
        }
        (RequestKind::List, None) if lookups.list_recent => match list_ask(shape, &pairs) {
            Ok(ask) => page(ctx, shape, &read, PageKind::List, ask),
            Err(why) => responses::invalid_request(profile, &why.to_string()),
        },
        (RequestKind::List, None) => {
            responses::unsupported_query(profile, "this provider offers no list of recent objects")
        }
        (
            RequestKind::Create | RequestKind::Retrieve | RequestKind::Search | RequestKind::List,
            _,
        ) => responses::not_found(profile),
    }
}

/// Reads the page size and the cursor; `Ok(false)` for any other parameter.
fn paging(
    shape: &PageShape,
    ask: &mut PageAsk,
    name: &str,
    value: &str,
) -> Result<bool, PageAskError> {
    if name == shape.limit {
        match value.parse::<usize>() {
            Ok(n) if (1..=MAX_PAGE_OBJECTS).contains(&n) => ask.limit = Some(n),
            _ => return Err(PageAskError::BadLimit(name.to_owned(), value.to_owned())),
        }
        return Ok(true);
    }
    if shape.starting_after.as_deref() == Some(name) {
        ask.after = Some(value.to_owned());
        return Ok(true);
    }
    Ok(false)
}

fn search_ask(shape: &PageShape, pairs: &[(String, String)]) -> Result<PageAsk, PageAskError> {
    let mut ask = PageAsk::default();
    let mut query = None;
    for (name, value) in pairs {
        if paging(shape, &mut ask, name, value)? {
            continue;
        }
        match shape.search {
            SearchSyntax::StripeQuery if name == "query" => query = Some(value.as_str()),
            SearchSyntax::MetadataParams => match metadata_key(name) {
                Some(key) => ask
                    .clauses
                    .push(Clause::Metadata(key.to_owned(), value.clone())),
                None => return Err(PageAskError::UnknownParameter(name.clone())),
            },
            SearchSyntax::StripeQuery => return Err(PageAskError::UnknownParameter(name.clone())),
        }
    }
    if shape.search == SearchSyntax::StripeQuery {
        let query = query.ok_or(PageAskError::MissingQuery)?;
        ask.clauses = parse_query(query)?;
    }
    Ok(ask)
}

/// `metadata[key]` to `key`.
fn metadata_key(name: &str) -> Option<&str> {
    name.strip_prefix("metadata[")?.strip_suffix(']')
}

fn list_ask(shape: &PageShape, pairs: &[(String, String)]) -> Result<PageAsk, PageAskError> {
    let mut ask = PageAsk::default();
    for (name, value) in pairs {
        if paging(shape, &mut ask, name, value)? {
            continue;
        }
        match &shape.created_gte {
            Some((param, format)) if param == name => {
                ask.since_ms = Some(
                    parse_time(value, *format)
                        .ok_or_else(|| PageAskError::BadTime(name.clone(), value.clone()))?,
                );
            }
            _ => return Err(PageAskError::UnknownParameter(name.clone())),
        }
    }
    Ok(ask)
}

fn parse_time(value: &str, format: TimeFormat) -> Option<i64> {
    match format {
        TimeFormat::Rfc3339 => parse_rfc3339(value),
        TimeFormat::UnixSeconds => value.parse::<i64>().ok()?.checked_mul(1000),
    }
}

fn page(ctx: &Ctx, shape: &PageShape, read: &Read<'_>, kind: PageKind, ask: PageAsk) -> Prepared {
    let profile = &ctx.shared.plan.profile;
    let state = ctx.shared.state();
    let since_ms = ask.since_ms.unwrap_or(i64::MIN);
    let found = state
        .store
        .newest_first(read.tenant, read.resource, |object| {
            object.created_at_ms >= since_ms
                && (ask.clauses.is_empty() || passes(&ask.clauses, object))
        });
    let start = match &ask.after {
        None => 0,
        Some(after) => match found.iter().position(|o| &*o.id == after.as_str()) {
            Some(at) => at + 1,
            None => {
                return responses::invalid_request(profile, &format!("No such object: '{after}'"))
            }
        },
    };
    let limit = ask
        .limit
        .unwrap_or(shape.default_limit)
        .clamp(1, MAX_PAGE_OBJECTS);
    let rest = found.get(start..).unwrap_or_default();
    let data = rest
        .iter()
        .take(limit)
        .map(|o| (o.id.to_string(), object_json(profile, o)))
        .collect();
    Prepared::json_body(
        200,
        page_body(shape, kind, read.path, data, rest.len() > limit),
    )
}

fn passes(clauses: &[Clause], object: &Stored) -> bool {
    let metadata = object
        .metadata
        .as_ref()
        .map_or_else(Map::new, |m| m.to_map());
    let args: Map<String, Value> = object.args.to_map();
    matches(clauses, &args, &metadata)
}

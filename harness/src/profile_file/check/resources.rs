//! `resources:`: names, paths, reads, ids, status words and constants, and
//! the paths apart from each other (the simulator routes a request to the
//! first resource whose paths match it, so two resources must never claim
//! the same request).

use lostreply_simulator::names::{id_prefix, is_valid_resource_name};
use lostreply_simulator::profile::{Offers, Pages, Resource, Routes, SearchSyntax, StatusValues};
use lostreply_simulator::Profile;
use serde_json::Map;

use super::fields::{constants, distinct, field_name, word};
use crate::profile_file::common::Found;
use crate::profile_file::common::MAX_RESOURCES;
use crate::profile_file::raw::{RawProfile, RawResource, RawStatus};
use crate::scenario::span::{Pos, Sp};

/// Longest path.
const MAX_PATH_BYTES: usize = 200;
/// Longest id prefix.
const MAX_ID_PREFIX_BYTES: usize = 32;
/// Paths the simulator answers itself, ahead of any profile.
const RESERVED_PATHS: [&str; 2] = ["/_lostreply", "/mcp"];

pub(super) fn resources(found: &mut Found, list: &Sp<Vec<Sp<RawResource>>>) -> Vec<Resource> {
    if list.value.is_empty() {
        found.error(
            list.pos,
            "`resources:` is empty: declare at least one collection, or write `routes: generic`",
        );
    }
    if list.value.len() > MAX_RESOURCES {
        found.error(
            list.pos,
            format!(
                "{} resources; a profile declares at most {MAX_RESOURCES}",
                list.value.len()
            ),
        );
    }
    let mut names: Vec<(String, Pos)> = Vec::new();
    let resources: Vec<Resource> = list
        .value
        .iter()
        .map(|raw| {
            let resource = resource(found, &raw.value);
            let name = &raw.value.name;
            if let Some((_, first)) = names.iter().find(|(known, _)| *known == name.value) {
                found.error(
                    name.pos,
                    format!(
                        "resource `{}` is declared twice (first at line {})",
                        name.value, first.line
                    ),
                );
            } else {
                names.push((name.value.clone(), name.pos));
            }
            resource
        })
        .collect();
    paths_apart(found, &list.value);
    resources
}

fn resource(found: &mut Found, raw: &RawResource) -> Resource {
    let name = &raw.name.value;
    if !is_valid_resource_name(name) {
        found.error(
            raw.name.pos,
            format!(
                "resource name `{name}` is not valid: lower-case letters, digits and `_`, \
                 starting with a letter, at most 40 characters"
            ),
        );
    }
    let path = path_text(found, &raw.path, "path");
    let search_path = raw.search_path.as_ref().map(|p| {
        let search = path_text(found, p, "search_path");
        if search == path {
            found.error(
                p.pos,
                "search_path is the collection's own path: a search path is a path of its own",
            );
        }
        search
    });
    let offers = raw.offers.as_ref().map_or(
        Offers {
            retrieve: true,
            list: true,
            search: true,
        },
        |o| Offers {
            retrieve: o.value.retrieve.unwrap_or(true),
            list: o.value.list.unwrap_or(true),
            search: o.value.search.unwrap_or(true),
        },
    );
    let constants = match &raw.constants {
        None => Map::new(),
        Some(node) => constants(found, node, "a resource's constants"),
    };
    Resource {
        name: name.clone(),
        path,
        search_path,
        offers,
        id_prefix: raw
            .id_prefix
            .as_ref()
            .map_or_else(|| format!("{}_", id_prefix(name)), |p| prefix(found, p)),
        object: raw
            .object
            .as_ref()
            .map_or_else(|| name.clone(), |o| word(found, o, "object")),
        status: raw.status.as_ref().map(|s| status(found, &s.value)),
        constants,
    }
}

/// An absolute path without query, fragment, trailing slash, empty or dot
/// segments, in the characters a path may hold unescaped.
fn path_text(found: &mut Found, raw: &Sp<String>, what: &str) -> String {
    let text = &raw.value;
    let problem = if !text.starts_with('/') {
        Some("must start with `/`".to_owned())
    } else if text.len() > MAX_PATH_BYTES {
        Some(format!("is longer than {MAX_PATH_BYTES} bytes"))
    } else if text.contains('?') {
        Some("has a query: a path here is the path alone".to_owned())
    } else if text.contains('{') {
        Some(
            "holds a placeholder: write the collection's path; the simulator adds `/{id}`"
                .to_owned(),
        )
    } else if text.len() > 1 && text.ends_with('/') || text == "/" {
        Some("ends with `/`: write it without the trailing slash".to_owned())
    } else if let Some(bad) = text.chars().find(|c| !is_path_char(*c)) {
        Some(format!(
            "holds `{}`, which a path cannot hold unescaped",
            bad.escape_default()
        ))
    } else if text[1..]
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        Some("has an empty, `.` or `..` segment".to_owned())
    } else if RESERVED_PATHS.iter().any(|r| {
        text == r
            || text
                .strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('/'))
    }) {
        Some(
            "is the simulator's own (its control API is under /_lostreply, its MCP face at /mcp)"
                .to_owned(),
        )
    } else {
        None
    };
    if let Some(problem) = problem {
        found.error(raw.pos, format!("{what} `{text}` {problem}"));
    }
    text.clone()
}

/// RFC 3986's `pchar` and `/`.
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/-._~!$&'()*+,;=:@%".contains(c)
}

fn prefix(found: &mut Found, raw: &Sp<String>) -> String {
    let text = &raw.value;
    let fits = text.len() <= MAX_ID_PREFIX_BYTES
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-'));
    if !fits {
        found.error(
            raw.pos,
            format!(
                "id_prefix `{text}` must be at most {MAX_ID_PREFIX_BYTES} of A-Z a-z 0-9 . _ ~ - \
                 (an id travels in paths unescaped)"
            ),
        );
    }
    text.clone()
}

fn status(found: &mut Found, raw: &RawStatus) -> StatusValues {
    let field = raw.field.as_ref().map_or_else(
        || "status".to_owned(),
        |f| field_name(found, f, "status field"),
    );
    let words = [
        (&raw.processing, "processing"),
        (&raw.succeeded, "succeeded"),
        (&raw.failed, "failed"),
    ];
    let mut seen: Vec<(String, Pos, String)> = Vec::new();
    for (sp, what) in words {
        let text = word(found, sp, what);
        distinct(found, &mut seen, &text, sp.pos, format!("the {what} word"));
    }
    StatusValues {
        field,
        processing: raw.processing.value.clone(),
        succeeded: raw.succeeded.value.clone(),
        failed: raw.failed.value.clone(),
    }
}

/// One path a resource claims, for the checks across resources.
struct Claim<'a> {
    owner: &'a str,
    path: &'a str,
    pos: Pos,
    search: bool,
}

/// No request may reach two resources: no path is another resource's path
/// or search path, and none sits one segment under another's collection
/// path (it would read as an id there).
fn paths_apart(found: &mut Found, list: &[Sp<RawResource>]) {
    let mut claims: Vec<Claim> = Vec::new();
    for raw in list {
        let r = &raw.value;
        claims.push(Claim {
            owner: &r.name.value,
            path: &r.path.value,
            pos: r.path.pos,
            search: false,
        });
        if let Some(search) = &r.search_path {
            claims.push(Claim {
                owner: &r.name.value,
                path: &search.value,
                pos: search.pos,
                search: true,
            });
        }
    }
    for (index, claim) in claims.iter().enumerate() {
        for earlier in &claims[..index] {
            if earlier.owner == claim.owner {
                continue;
            }
            let kind = if earlier.search {
                "search path"
            } else {
                "path"
            };
            if earlier.path == claim.path {
                found.error(
                    claim.pos,
                    format!(
                        "`{}` is already resource `{}`'s {kind} (line {}): each path belongs to \
                         one resource",
                        claim.path, earlier.owner, earlier.pos.line
                    ),
                );
            }
        }
        for other in claims
            .iter()
            .filter(|c| !c.search && c.owner != claim.owner)
        {
            let under = claim
                .path
                .strip_prefix(other.path)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'));
            if under {
                found.error(
                    claim.pos,
                    format!(
                        "`{}` would read as an id of resource `{}` ({}/{{id}}, line {}): put it \
                         elsewhere",
                        claim.path, other.owner, other.path, other.pos.line
                    ),
                );
            }
        }
    }
}

/// Stripe's query language is served on a resource's search path only: a
/// resource that offers search without one could never be searched.
pub(super) fn searches_reachable(found: &mut Found, raw: &RawProfile, profile: &Profile) {
    let (Routes::Declared(resources), Pages::Shaped(pages)) = (&profile.routes, &profile.pages)
    else {
        return;
    };
    if pages.search != SearchSyntax::StripeQuery {
        return;
    }
    let raws = raw.resources.iter().flat_map(|list| list.value.iter());
    for (resource, raw) in resources.iter().zip(raws) {
        if resource.offers.search && resource.search_path.is_none() {
            found.error(
                raw.value.name.pos,
                format!(
                    "resource `{}` offers search, and stripe_query searches go to a resource's \
                     search_path: give it one, or `offers: {{search: false}}`",
                    resource.name
                ),
            );
        }
    }
}

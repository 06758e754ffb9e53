//! Counting effects from the outside: how many objects carry a marker, by the
//! best means the contract offers (ground truth, then search, then list).

use crate::client::{Client, ClientError, Request};
use crate::contract::{Collection, Contract, Tally};

/// How a count was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The vendor's (or simulator's) ledger of every effect.
    GroundTruth,
    /// Search by the marker.
    Search,
    /// A list of recent objects, filtered by the marker.
    List,
}

impl Method {
    /// The word in reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::GroundTruth => "ground_truth",
            Method::Search => "search",
            Method::List => "list",
        }
    }
}

/// What went wrong reading back.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadbackError {
    /// The request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The answer was not what the contract says it is.
    #[error("read-back {0}")]
    Shape(String),
}

/// The means the contract gives, best first.
pub fn method(contract: &Contract) -> Option<(Method, &Collection)> {
    if let Some(c) = &contract.ground_truth {
        return Some((Method::GroundTruth, c));
    }
    if let Some(c) = &contract.search {
        return Some((Method::Search, c));
    }
    contract.list.as_ref().map(|c| (Method::List, c))
}

/// Counts the objects carrying `marker`, as seen by `credential`'s tenant
/// (ground truth sees every tenant).
pub async fn count(
    client: &Client,
    contract: &Contract,
    credential: &str,
    marker: &str,
) -> Result<(Method, usize), ReadbackError> {
    let found = effects(client, contract, credential, marker).await?;
    Ok((found.method, found.count))
}

/// What a read-back found of one marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// How it was read.
    pub method: Method,
    /// How many objects carry the marker.
    pub count: usize,
    /// Their ids (at the create's `id_at` in each item), when the read-back
    /// lists items; `None` when it states a count. An item without a string
    /// id there is counted without one.
    pub ids: Option<Vec<String>>,
}

/// The objects carrying `marker`, as seen by `credential`'s tenant: their
/// count and, where the read-back lists them, their ids.
pub async fn effects(
    client: &Client,
    contract: &Contract,
    credential: &str,
    marker: &str,
) -> Result<Found, ReadbackError> {
    let Some((method, collection)) = method(contract) else {
        return Err(ReadbackError::Shape("is not configured".to_owned()));
    };
    let path = collection.path.replace("{marker}", &percent(marker));
    let mut headers = Vec::new();
    if collection.auth {
        headers.push((
            contract.auth_header.clone(),
            format!("{}{credential}", contract.auth_prefix),
        ));
    }
    let response = client
        .send(&Request {
            method: "GET".to_owned(),
            path: path.clone(),
            headers,
            body: Vec::new(),
        })
        .await?;
    if !(200..300).contains(&response.status) {
        return Err(ReadbackError::Shape(format!(
            "GET {path} answered {}",
            response.status
        )));
    }
    let Some(json) = response.json() else {
        return Err(ReadbackError::Shape(format!(
            "GET {path}: the answer is not JSON"
        )));
    };
    let (count, ids) = tally(&json, &collection.tally, marker, &contract.id_at)
        .map_err(|why| ReadbackError::Shape(format!("GET {path}: {why}")))?;
    Ok(Found { method, count, ids })
}

/// The effects carrying `marker` in a read-back answer: the items whose
/// marker matches (with the ids at `id_at`), or the count the answer states.
fn tally(
    json: &serde_json::Value,
    tally: &Tally,
    marker: &str,
    id_at: &str,
) -> Result<(usize, Option<Vec<String>>), String> {
    match tally {
        Tally::Items {
            items_at,
            marker_at,
        } => {
            let Some(serde_json::Value::Array(items)) = json.pointer(items_at) else {
                return Err(format!("no array at {items_at:?}"));
            };
            let ours: Vec<&serde_json::Value> = items
                .iter()
                .filter(|item| {
                    item.pointer(marker_at)
                        .and_then(|v| v.as_str())
                        .is_some_and(|v| v == marker)
                })
                .collect();
            let ids = ours
                .iter()
                .filter_map(|item| item.pointer(id_at)?.as_str().map(str::to_owned))
                .collect();
            Ok((ours.len(), Some(ids)))
        }
        Tally::Count { count_at } => json
            .pointer(count_at)
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .map(|n| (n, None))
            .ok_or_else(|| format!("no whole number at {count_at:?}")),
    }
}

/// Percent-encodes a query value (markers are already URL-safe; this is a guard).
pub fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

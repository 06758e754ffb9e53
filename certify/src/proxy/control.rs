//! The proxy's own API under `/_lostreply/`, never forwarded: its journal,
//! and the effects a marker has as the contract's read-back counts them at
//! the upstream, so that a test or a person judges a fault by what the
//! service holds rather than by what the client was told.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Response, StatusCode};

use super::state::{json, plain, State};
use crate::readback;

/// Answers `GET /_lostreply/{rest}`.
pub(crate) async fn control(state: &State, method: &Method, rest: &str) -> Response<Full<Bytes>> {
    if method != Method::GET {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the proxy's API is read-only: GET",
        );
    }
    let (name, query) = rest.split_once('?').unwrap_or((rest, ""));
    match name {
        "journal" => json(StatusCode::OK, &state.journal.to_json()),
        "effects" => effects(state, query).await,
        _ => plain(
            StatusCode::NOT_FOUND,
            "the proxy answers /_lostreply/journal and /_lostreply/effects?marker=X",
        ),
    }
}

async fn effects(state: &State, query: &str) -> Response<Full<Bytes>> {
    let marker = query
        .split('&')
        .find_map(|p| p.strip_prefix("marker="))
        .map(percent_decoded);
    let Some(Some(marker)) = marker.filter(|m| m.as_ref().is_some_and(|m| !m.is_empty())) else {
        return plain(
            StatusCode::BAD_REQUEST,
            "expected ?marker=X (percent-encoded UTF-8)",
        );
    };
    let contract = &state.contract;
    match readback::count(&state.client, contract, &contract.primary, &marker).await {
        Ok((method, count)) => json(
            StatusCode::OK,
            &serde_json::json!({"marker": marker, "count": count, "method": method.name()}),
        ),
        Err(e) => plain(
            StatusCode::BAD_GATEWAY,
            &format!("the read-back failed: {e}"),
        ),
    }
}

/// `%XX` and `+` decoded; `None` when the result is not UTF-8 or an escape is broken.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::percent_decoded;

    #[test]
    fn markers_are_percent_decoded() {
        assert_eq!(percent_decoded("a%20b+c").as_deref(), Some("a b c"));
        assert_eq!(percent_decoded("bad%2"), None);
        assert_eq!(percent_decoded("%FF"), None);
    }
}

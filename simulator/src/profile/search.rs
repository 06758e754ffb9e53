//! Stripe's search query language, the part a reconciler uses: exact
//! matches on metadata and on top-level fields, joined by `AND`
//! (`metadata['order_id']:'6735' AND currency:"usd"`). Anything else is
//! refused with a message that says what is supported, rather than
//! answered with a guess.

use serde_json::{Map, Value};

/// Why a search query is refused; each message says what is supported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SearchQueryError {
    /// Nothing to search for.
    #[error("query is empty: search wants e.g. metadata['order_id']:'6735'")]
    Empty,
    /// Something other than `AND` follows a clause: the rest of the query.
    #[error("query: expected `AND` before `{0}` (the simulator's search supports exact matches joined by AND)")]
    ExpectedAnd(String),
    /// `metadata['key']` is not followed by `:`: the key.
    #[error("query: expected `]:` after metadata['{0}']")]
    ExpectedMetadataColon(String),
    /// A clause does not start with a field name: the rest of the query.
    #[error("query: expected a field name at `{0}`")]
    ExpectedField(String),
    /// A field is not followed by `:`: the field.
    #[error(
        "query: expected `:` after `{0}` (the simulator's search supports exact matches only)"
    )]
    ExpectedColon(String),
    /// A value is not quoted: the rest of the query.
    #[error("query: expected a quoted value at `{0}`")]
    ExpectedQuoted(String),
    /// A quoted value has no closing quote: the rest of the query.
    #[error("query: a quoted value is never closed in `{0}`")]
    Unclosed(String),
}

/// One `key:'value'` clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Clause {
    /// `metadata['key']:'value'`.
    Metadata(String, String),
    /// `field:'value'`.
    Field(String, String),
}

/// Parses a query into its clauses.
pub(crate) fn parse_query(query: &str) -> Result<Vec<Clause>, SearchQueryError> {
    let mut clauses = Vec::new();
    let mut rest = query.trim();
    if rest.is_empty() {
        return Err(SearchQueryError::Empty);
    }
    loop {
        let (clause, after) = clause(rest)?;
        clauses.push(clause);
        let after = after.trim_start();
        if after.is_empty() {
            return Ok(clauses);
        }
        rest = after
            .strip_prefix("AND ")
            .or_else(|| after.strip_prefix("and "))
            .ok_or_else(|| SearchQueryError::ExpectedAnd(after.to_owned()))?
            .trim_start();
    }
}

fn clause(text: &str) -> Result<(Clause, &str), SearchQueryError> {
    if let Some(inner) = text.strip_prefix("metadata[") {
        let (key, after) = quoted(inner)?;
        let after = after
            .strip_prefix("]:")
            .ok_or_else(|| SearchQueryError::ExpectedMetadataColon(key.clone()))?;
        let (value, after) = quoted(after)?;
        return Ok((Clause::Metadata(key, value), after));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(text.len());
    let (field, after) = text.split_at(end);
    if field.is_empty() {
        return Err(SearchQueryError::ExpectedField(text.to_owned()));
    }
    let after = after
        .strip_prefix(':')
        .ok_or_else(|| SearchQueryError::ExpectedColon(field.to_owned()))?;
    let (value, after) = quoted(after)?;
    Ok((Clause::Field(field.to_owned(), value), after))
}

/// A single- or double-quoted string with backslash escapes.
fn quoted(text: &str) -> Result<(String, &str), SearchQueryError> {
    let mut chars = text.char_indices();
    let quote = match chars.next() {
        Some((_, q @ ('\'' | '"'))) => q,
        _ => return Err(SearchQueryError::ExpectedQuoted(text.to_owned())),
    };
    let mut out = String::new();
    let mut escaped = false;
    for (at, c) in chars {
        match (escaped, c) {
            (true, c) => {
                out.push(c);
                escaped = false;
            }
            (false, '\\') => escaped = true,
            (false, c) if c == quote => return Ok((out, &text[at + c.len_utf8()..])),
            (false, c) => out.push(c),
        }
    }
    Err(SearchQueryError::Unclosed(text.to_owned()))
}

/// Whether an object with these arguments and metadata passes every clause.
pub(crate) fn matches(
    clauses: &[Clause],
    args: &Map<String, Value>,
    metadata: &Map<String, Value>,
) -> bool {
    let equal = |found: Option<&Value>, wanted: &str| match found {
        Some(Value::String(s)) => s == wanted,
        Some(Value::Number(n)) => n.to_string() == wanted,
        Some(Value::Bool(b)) => b.to_string() == wanted,
        _ => false,
    };
    clauses.iter().all(|clause| match clause {
        Clause::Metadata(key, value) => equal(metadata.get(key), value),
        Clause::Field(field, value) => equal(args.get(field), value),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_and_fields_joined_by_and() {
        assert_eq!(
            parse_query(r#"metadata['order_id']:'op \'1\'' AND currency:"usd""#).unwrap(),
            vec![
                Clause::Metadata("order_id".to_owned(), "op '1'".to_owned()),
                Clause::Field("currency".to_owned(), "usd".to_owned()),
            ]
        );
        let Value::Object(args) = json!({"currency": "usd", "amount": "5"}) else {
            panic!()
        };
        let Value::Object(meta) = json!({"order_id": "op '1'"}) else {
            panic!()
        };
        let clauses = parse_query("metadata['order_id']:\"op '1'\" AND amount:'5'").unwrap();
        assert!(matches(&clauses, &args, &meta));
        let other = parse_query("metadata['order_id']:'op 2'").unwrap();
        assert!(!matches(&other, &args, &meta));
    }

    #[test]
    fn what_is_not_supported_is_refused_by_name() {
        let message = |query| parse_query(query).unwrap_err().to_string();
        assert!(message("").contains("empty"));
        assert!(message("amount>100").contains("exact matches"));
        assert!(message("a:'1' OR b:'2'").contains("AND"));
        assert!(message("a:'1").contains("never closed"));
        assert!(message("metadata['a'] :'1'").contains("`]:`"));
        assert!(message("a:1").contains("quoted"));
        assert_eq!(message("a:1"), "query: expected a quoted value at `1`",);
    }
}

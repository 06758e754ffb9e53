//! Query strings: names for fault matching, decoded pairs for the handlers.

/// Why percent-encoded text cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PercentDecodeError {
    /// A `%` not followed by two hex digits, at this byte offset.
    #[error("bad percent-encoding at byte {0}")]
    BadEscape(usize),
    /// The decoded bytes are not UTF-8.
    #[error("not valid UTF-8 once decoded")]
    NotUtf8,
}

/// Why a query string is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum QueryError {
    /// A parameter name does not decode.
    #[error(transparent)]
    Name(PercentDecodeError),
    /// A parameter's value does not decode.
    #[error("query parameter `{name}`: {error}")]
    Value {
        /// The parameter, decoded.
        name: String,
        /// Why its value does not decode.
        error: PercentDecodeError,
    },
    /// A parameter that may appear once appears again.
    #[error("query parameter `{0}` appears more than once")]
    Repeated(String),
}

/// The parameter names present in a raw query (undecoded, for fault matching).
pub(crate) fn names(raw: Option<&str>) -> Vec<String> {
    raw.unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split('=').next().unwrap_or("").to_owned())
        .collect()
}

/// Decodes `application/x-www-form-urlencoded` pairs; a name may appear once.
pub(crate) fn parse(raw: Option<&str>) -> Result<Vec<(String, String)>, QueryError> {
    let pairs = parse_all(raw)?;
    for (index, (name, _)) in pairs.iter().enumerate() {
        if pairs[..index].iter().any(|(seen, _)| seen == name) {
            return Err(QueryError::Repeated(name.clone()));
        }
    }
    Ok(pairs)
}

/// Decodes `application/x-www-form-urlencoded` pairs, repeated names kept
/// (`expand[]=a&expand[]=b`).
pub(crate) fn parse_all(raw: Option<&str>) -> Result<Vec<(String, String)>, QueryError> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pair in raw.unwrap_or("").split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode(name).map_err(QueryError::Name)?;
        let value = match decode(value) {
            Ok(value) => value,
            Err(error) => return Err(QueryError::Value { name, error }),
        };
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// Percent-decodes one name or value, `+` as a space.
pub(crate) fn decode(text: &str) -> Result<String, PercentDecodeError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(index + 1..index + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                let Some(byte) = byte else {
                    return Err(PercentDecodeError::BadEscape(index));
                };
                out.push(byte);
                index += 2;
            }
            other => out.push(other),
        }
        index += 1;
    }
    String::from_utf8(out).map_err(|_| PercentDecodeError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_refuses_bad_input() {
        assert_eq!(
            parse(Some("client_reference=a%20b+c&limit=3")),
            Ok(vec![
                ("client_reference".to_owned(), "a b c".to_owned()),
                ("limit".to_owned(), "3".to_owned())
            ])
        );
        let message = |raw| parse(Some(raw)).map_err(|e| e.to_string());
        assert_eq!(
            message("a=%zz"),
            Err("query parameter `a`: bad percent-encoding at byte 0".to_owned())
        );
        assert_eq!(
            message("a=%e9"),
            Err("query parameter `a`: not valid UTF-8 once decoded".to_owned())
        );
        assert_eq!(
            message("a=1&a=2"),
            Err("query parameter `a` appears more than once".to_owned())
        );
        assert_eq!(
            message("%zz=1"),
            Err("bad percent-encoding at byte 0".to_owned())
        );
        assert_eq!(
            names(Some("x=1&client_reference")),
            vec!["x".to_owned(), "client_reference".to_owned()]
        );
    }
}

//! Query strings: names for fault matching, decoded pairs for the handlers.

/// The parameter names present in a raw query (undecoded, for fault matching).
pub(crate) fn names(raw: Option<&str>) -> Vec<String> {
    raw.unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split('=').next().unwrap_or("").to_owned())
        .collect()
}

/// Decodes `application/x-www-form-urlencoded` pairs; a name may appear once.
pub(crate) fn parse(raw: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let pairs = parse_all(raw)?;
    for (index, (name, _)) in pairs.iter().enumerate() {
        if pairs[..index].iter().any(|(seen, _)| seen == name) {
            return Err(format!("query parameter `{name}` appears more than once"));
        }
    }
    Ok(pairs)
}

/// Decodes `application/x-www-form-urlencoded` pairs, repeated names kept
/// (`expand[]=a&expand[]=b`).
pub(crate) fn parse_all(raw: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pair in raw.unwrap_or("").split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode(name)?;
        let value = decode(value).map_err(|e| format!("query parameter `{name}`: {e}"))?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

pub(crate) fn decode(text: &str) -> Result<String, String> {
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
                    return Err(format!("bad percent-encoding at byte {index}"));
                };
                out.push(byte);
                index += 2;
            }
            other => out.push(other),
        }
        index += 1;
    }
    String::from_utf8(out).map_err(|_| "not valid UTF-8 once decoded".to_owned())
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
        assert!(parse(Some("a=%zz")).is_err());
        assert!(parse(Some("a=%e9")).is_err());
        assert!(parse(Some("a=1&a=2")).is_err());
        assert_eq!(
            names(Some("x=1&client_reference")),
            vec!["x".to_owned(), "client_reference".to_owned()]
        );
    }
}

//! The `Idempotency-Key` table and the modes of provider-api.md, good and known-bad.
//!
//! A key's life: [`KeyTable::check`] at intake either answers from the table
//! (replay, mismatch, in flight) or lets the request proceed, usually after
//! claiming the key as in flight; the request then ends in [`KeyTable::succeed`]
//! (the response is saved) or [`KeyTable::fail`] (released, saved or stuck,
//! depending on the mode). Keys expire `retention` after first use.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::HeaderValue;

use crate::plan::IdempotencyMode;

/// Longest key accepted, in bytes (stripe's documented limit, applied to every mode).
pub const MAX_KEY_BYTES: usize = 255;

/// A response kept for replays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Saved {
    pub status: u16,
    pub body: Bytes,
    pub location: Option<http::HeaderValue>,
}

/// Where a key lives: tenant (unless the mode leaks across tenants) + method + path + key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Scope {
    tenant: Option<String>,
    method: String,
    path: String,
    key: String,
}

#[derive(Debug, Clone)]
enum KeyState {
    InFlight,
    Done(Saved),
}

#[derive(Debug, Clone)]
struct KeyEntry {
    fingerprint: String,
    first_used_ms: i64,
    state: KeyState,
}

/// What intake decided.
#[derive(Debug)]
pub(crate) enum Decision {
    /// No key (or a mode that ignores keys): do the work, remember nothing.
    Untracked,
    /// Do the work; the key is claimed in flight (or, in `racy`, merely checked).
    Proceed(Scope),
    /// Same key, same fingerprint, finished: answer with the saved response.
    Replay(Saved),
    /// Same key, another fingerprint.
    Mismatch,
    /// Same key, first request still in flight.
    InFlight,
}

/// How a request that claimed a key ended without committing.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// Abandoned (dropped, reset, stalled away): no result to save.
    Abandoned,
    /// Answered with an error status.
    Status(Saved),
}

/// Why an `Idempotency-Key` header was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// Malformed for the mode; the message says how.
    Invalid(String),
    /// `ietf` with `required: true` and no key.
    Missing,
}

/// Parses the raw `Idempotency-Key` headers into the key value the mode uses.
/// `Ok(None)`: no key (or the mode ignores keys).
pub(crate) fn parse_key(
    mode: IdempotencyMode,
    required: bool,
    values: &[&HeaderValue],
) -> Result<Option<String>, KeyError> {
    if mode == IdempotencyMode::None {
        return Ok(None);
    }
    let raw = match values {
        [] if required && mode == IdempotencyMode::Ietf => return Err(KeyError::Missing),
        [] => return Ok(None),
        [one] => *one,
        [_, _, ..] => {
            return Err(KeyError::Invalid(
                "send one Idempotency-Key header, not several".to_owned(),
            ))
        }
    };
    let Ok(text) = raw.to_str() else {
        return Err(KeyError::Invalid(
            "Idempotency-Key must be visible ASCII".to_owned(),
        ));
    };
    let key = match mode {
        IdempotencyMode::Ietf => parse_structured_key(text)?,
        IdempotencyMode::None
        | IdempotencyMode::Stripe
        | IdempotencyMode::FingerprintInKey
        | IdempotencyMode::NoFingerprint
        | IdempotencyMode::Racy
        | IdempotencyMode::GlobalScope
        | IdempotencyMode::StuckInFlight
        | IdempotencyMode::ReleaseOnError => parse_bare_key(text)?,
    };
    if key.len() > MAX_KEY_BYTES {
        return Err(KeyError::Invalid(format!(
            "Idempotency-Key is {} bytes; at most {MAX_KEY_BYTES} are accepted",
            key.len()
        )));
    }
    Ok(Some(key))
}

fn parse_bare_key(text: &str) -> Result<String, KeyError> {
    if text.is_empty() {
        return Err(KeyError::Invalid("Idempotency-Key is empty".to_owned()));
    }
    if let Some(bad) = text.bytes().find(|b| !(0x21..=0x7e).contains(b)) {
        return Err(KeyError::Invalid(format!(
            "Idempotency-Key contains byte 0x{bad:02x}; only visible ASCII without spaces is accepted"
        )));
    }
    Ok(text.to_owned())
}

/// RFC 8941 sf-string (`"abc"`, escapes `\"` and `\\`) or, leniently, an sf-token.
fn parse_structured_key(text: &str) -> Result<String, KeyError> {
    let invalid = |why: &str| {
        KeyError::Invalid(format!(
            "Idempotency-Key is not a structured-field string: {why}"
        ))
    };
    if let Some(inner) = text.strip_prefix('"') {
        let mut key = String::new();
        let mut chars = inner.chars();
        loop {
            match chars.next() {
                None => return Err(invalid("missing closing quote")),
                Some('"') => break,
                Some('\\') => match chars.next() {
                    Some(c @ ('"' | '\\')) => key.push(c),
                    _ => return Err(invalid("only \\\" and \\\\ may be escaped")),
                },
                Some(c) if (' '..='~').contains(&c) => key.push(c),
                Some(_) => return Err(invalid("non-printable character")),
            }
        }
        if chars.next().is_some() {
            return Err(invalid("text after the closing quote"));
        }
        if key.is_empty() {
            return Err(invalid("empty string"));
        }
        return Ok(key);
    }
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '*' => {}
        Some(_) => {
            return Err(invalid(
                "a bare token must start with a letter or `*`; quote the key",
            ))
        }
        None => return Err(invalid("empty")),
    }
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~:/".contains(c);
    if let Some(bad) = chars.find(|c| !tchar(*c)) {
        return Err(invalid(&format!(
            "`{bad}` is not allowed in a bare token; quote the key"
        )));
    }
    Ok(text.to_owned())
}

/// Every key the provider remembers.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    entries: BTreeMap<Scope, KeyEntry>,
}

impl KeyTable {
    /// Intake: decides what a create with `key` does. Forgets the key first if it expired.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check(
        &mut self,
        mode: IdempotencyMode,
        retention_ms: i64,
        tenant: &str,
        path: &str,
        key: Option<&str>,
        fingerprint: &str,
        now_ms: i64,
    ) -> Decision {
        let Some(key) = key else {
            return Decision::Untracked;
        };
        let scoped_key = match mode {
            // Known-bad: the body becomes part of the key, so a changed body is a new key.
            IdempotencyMode::FingerprintInKey => format!("{key}\u{0}{fingerprint}"),
            IdempotencyMode::None
            | IdempotencyMode::Stripe
            | IdempotencyMode::Ietf
            | IdempotencyMode::NoFingerprint
            | IdempotencyMode::Racy
            | IdempotencyMode::GlobalScope
            | IdempotencyMode::StuckInFlight
            | IdempotencyMode::ReleaseOnError => key.to_owned(),
        };
        let scope = Scope {
            // Known-bad: keys shared across tenants.
            tenant: (mode != IdempotencyMode::GlobalScope).then(|| tenant.to_owned()),
            method: "POST".to_owned(),
            path: path.to_owned(),
            key: scoped_key,
        };
        if let Some(entry) = self.entries.get(&scope) {
            if entry.first_used_ms.saturating_add(retention_ms) <= now_ms {
                self.entries.remove(&scope);
            }
        }
        match self.entries.get(&scope) {
            Some(entry) => match &entry.state {
                KeyState::InFlight => Decision::InFlight,
                // Known-bad: no_fingerprint never compares bodies.
                KeyState::Done(saved)
                    if entry.fingerprint == fingerprint
                        || mode == IdempotencyMode::NoFingerprint =>
                {
                    Decision::Replay(saved.clone())
                }
                KeyState::Done(_) => Decision::Mismatch,
            },
            None => {
                // Known-bad: racy checks now and sets only when the work is done, so
                // duplicates arriving in between all run.
                if mode != IdempotencyMode::Racy {
                    let entry = KeyEntry {
                        fingerprint: fingerprint.to_owned(),
                        first_used_ms: now_ms,
                        state: KeyState::InFlight,
                    };
                    self.entries.insert(scope.clone(), entry);
                }
                Decision::Proceed(scope)
            }
        }
    }

    /// Known-bad (`release_on_error`): the key is released although its work
    /// committed, so a retry runs again.
    pub(crate) fn forget(&mut self, scope: &Scope) {
        self.entries.remove(scope);
    }

    /// The work committed: save its response for replays.
    pub(crate) fn succeed(&mut self, scope: Scope, fingerprint: &str, saved: Saved, now_ms: i64) {
        let entry = self.entries.entry(scope).or_insert_with(|| KeyEntry {
            fingerprint: fingerprint.to_owned(),
            first_used_ms: now_ms,
            state: KeyState::InFlight,
        });
        entry.state = KeyState::Done(saved);
    }

    /// The work ended without committing.
    pub(crate) fn fail(
        &mut self,
        mode: IdempotencyMode,
        scope: Scope,
        fingerprint: &str,
        failure: Failure,
        now_ms: i64,
    ) {
        match mode {
            // Known-bad: the key stays in flight until it expires.
            IdempotencyMode::StuckInFlight => {}
            // Stripe saves server errors (the endpoint ran) but not what never ran.
            IdempotencyMode::Stripe
            | IdempotencyMode::FingerprintInKey
            | IdempotencyMode::NoFingerprint
            | IdempotencyMode::Racy
            | IdempotencyMode::GlobalScope => match failure {
                Failure::Status(saved) if saved.status >= 500 => {
                    self.succeed(scope, fingerprint, saved, now_ms)
                }
                Failure::Status(_) | Failure::Abandoned => {
                    self.entries.remove(&scope);
                }
            },
            IdempotencyMode::Ietf | IdempotencyMode::None | IdempotencyMode::ReleaseOnError => {
                self.entries.remove(&scope);
            }
        }
    }

    /// Forgets every key whose retention ran out by `now_ms`.
    pub(crate) fn expire(&mut self, retention_ms: i64, now_ms: i64) {
        self.entries
            .retain(|_, entry| entry.first_used_ms.saturating_add(retention_ms) > now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ietf(text: &str) -> Result<Option<String>, KeyError> {
        let value =
            HeaderValue::from_str(text).map_err(|_| KeyError::Invalid("header".to_owned()))?;
        parse_key(IdempotencyMode::Ietf, false, &[&value])
    }

    #[test]
    fn ietf_keys_are_strings_or_tokens() {
        assert_eq!(ietf("\"abc\""), Ok(Some("abc".to_owned())));
        assert_eq!(ietf("abc"), Ok(Some("abc".to_owned())));
        assert_eq!(ietf("\"a b\\\"c\""), Ok(Some("a b\"c".to_owned())));
        assert!(ietf("\"abc").is_err());
        assert!(ietf("\"\"").is_err());
        assert!(ietf("\"a\\nb\"").is_err());
        assert!(ietf("1abc").is_err());
        assert!(ietf("a b").is_err());
        assert!(ietf("\"abc\"x").is_err());
    }

    #[test]
    fn stripe_keys_are_bounded() {
        let ok = HeaderValue::from_static("k-1");
        assert_eq!(
            parse_key(IdempotencyMode::Stripe, false, &[&ok]),
            Ok(Some("k-1".to_owned()))
        );
        let long = HeaderValue::from_str(&"k".repeat(256)).unwrap_or(ok.clone());
        assert!(parse_key(IdempotencyMode::Stripe, false, &[&long]).is_err());
        assert!(parse_key(IdempotencyMode::Stripe, false, &[&ok, &ok]).is_err());
        assert_eq!(
            parse_key(IdempotencyMode::Ietf, true, &[]),
            Err(KeyError::Missing)
        );
        assert_eq!(parse_key(IdempotencyMode::None, true, &[&ok]), Ok(None));
    }
}

//! The contract file: what the endpoint under test is, how to read back what
//! it created, and what its vendor declares. Parsed from YAML with positions;
//! every problem names `file:line:column` (the harness's [`Diagnostic`] renders
//! it, caret and all).
//!
//! Map: `raw` (the file as written), `model` (the validated contract),
//! `validate` (section by section), `declares` (the vendor's declarations and
//! their defaults from the IETF draft), `fields` and `found` (the checks and the
//! located problems both contract kinds share). The MCP face builds on these;
//! nothing here knows of it.

mod declares;
mod fields;
mod found;
mod model;
pub(crate) mod raw;
mod validate;

pub(crate) use fields::{
    allowed_hosts, bounded, duration, max_response_bytes, path_check, pointer, resolve,
    split_base_url, Bound,
};
pub use fields::{Origin, Scheme};
pub(crate) use found::{invalid, mapping_around, Found};
pub use found::{ContractError, Diagnostic};
pub use model::{
    Collection, ContentType, Contract, ErrorAfterCommit, ErrorsReplayed, Fingerprint, InFlight,
    KeyChecks, KeyScope, KeySyntax, KeyValidation, MissingKey, PathSpec, Tally, Written,
};
pub(crate) use raw::{Pos, RawValue, Sp};

/// The largest contract file read.
pub const MAX_CONTRACT_BYTES: usize = 1024 * 1024;

/// The JSON Schema of the contract format (draft 2020-12), for editors.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(raw::RawContract)).unwrap_or_default()
}

/// Reads and validates a contract file.
pub fn load(path: &std::path::Path) -> Result<Contract, ContractError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ContractError::Read {
        path: shown.clone(),
        source,
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => {
            return Err(invalid(&shown, "", Pos::START, "the file is not UTF-8"));
        }
    };
    parse(&text, &shown, &|name| std::env::var(name).ok())
}

/// Parses and validates contract text; `env` looks variables up.
pub fn parse(
    text: &str,
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Contract, ContractError> {
    let raw = read_yaml::<raw::RawContract>(text, path)?;
    let mut d = Found::new(path, text);
    let contract = validate::validate(raw, path, env, &mut d);
    if d.found.is_empty() {
        Ok(contract)
    } else {
        Err(d.into_error())
    }
}

/// What a contract file certifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An HTTP idempotency contract (no `kind`, or `kind: http`).
    Http,
    /// An MCP server (`kind: mcp`, a format of its own that the MCP face reads).
    Mcp,
}

/// The `kind` a contract text declares, read before the whole file is
/// validated (each kind has its own fields). Anything but `mcp` is HTTP, whose
/// validation then names a bad `kind` with its position.
pub fn kind_of(text: &str) -> Kind {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(default)]
        kind: Option<String>,
    }
    let options = serde_saphyr::options! { strict_booleans: true, with_snippet: false };
    match serde_saphyr::from_str_with_options::<Peek>(text, options) {
        Ok(Peek { kind: Some(k) }) if k == "mcp" => Kind::Mcp,
        Ok(_) | Err(_) => Kind::Http,
    }
}

/// Reads YAML text into `T` with the checks every contract kind shares: a
/// size bound, an empty file named as such, and parse errors located.
pub(crate) fn read_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &str,
) -> Result<T, ContractError> {
    if text.len() > MAX_CONTRACT_BYTES {
        return Err(invalid(
            path,
            "",
            Pos::START,
            &format!("the file is larger than {MAX_CONTRACT_BYTES} bytes"),
        ));
    }
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim().starts_with('#'))
    {
        return Err(invalid(
            path,
            text,
            Pos::START,
            "the file is empty: a contract starts with `version: 1`",
        ));
    }
    let options = serde_saphyr::options! {
        strict_booleans: true,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<T>(text, options).map_err(|err| {
        use serde_saphyr::MessageFormatter as _;
        let pos = err.location().map_or(Pos::START, |at| Pos {
            line: at.line(),
            column: at.column(),
        });
        let message = serde_saphyr::DefaultMessageFormatter
            .format_message(&err)
            .into_owned();
        let pos = if message.starts_with("missing field") {
            mapping_around(text, pos)
        } else {
            pos
        };
        invalid(path, text, pos, &with_forms(message))
    })
}

/// The forms a value written in several shapes takes, by the type the reader
/// names when none matched. Its own message names a Rust type, not the
/// contract's key, so it is replaced by the forms the key takes.
const FORMS: [(&str, &str); 4] = [
    (
        "RawInFlight",
        "in_flight is `waits`, {status: [409]} or {waits: 15s, then: [409]}",
    ),
    (
        "RawErrorsReplayed",
        "errors_replayed is true, false or a list of statuses",
    ),
    (
        "RawStatusOr",
        "missing_key is `processed` or {status: [400]}",
    ),
    (
        "RawValue",
        "a value is text, or {env: NAME} (with an optional default)",
    ),
];

fn with_forms(message: String) -> String {
    match FORMS
        .iter()
        .find(|(name, _)| message.contains("untagged enum") && message.ends_with(name))
    {
        Some((_, forms)) => format!("{forms}; this value is none of them"),
        None => message,
    }
}

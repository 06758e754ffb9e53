//! How the project reads YAML: the reader's options, its messages made
//! readable, and the checks made before reading (an empty file, the place of
//! a bad byte). Scenario and profile files share them, so both kinds of file
//! are read and reported alike.

use crate::scenario::span::Pos;

/// The reader's options, the same for every YAML file the project reads.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        // `y`, `no`, `on` stay strings inside `args` and a profile's templates
        // (the YAML 1.1 "Norway problem").
        strict_booleans: true,
        // Snippets are rendered by `Diagnostic`, once, the same way for every error.
        with_snippet: false,
    }
}

/// The reader's message, with its terse type names made readable.
pub(crate) fn yaml_message(err: &serde_saphyr::Error) -> String {
    use serde_saphyr::MessageFormatter as _;
    let message = serde_saphyr::DefaultMessageFormatter
        .format_message(err)
        .into_owned();
    let whole = |max: u64| format!("expected a whole number from 0 to {max}");
    match message.as_str() {
        "invalid u8" => whole(u8::MAX.into()),
        "invalid u16" => whole(u16::MAX.into()),
        "invalid u32" => whole(u32::MAX.into()),
        "invalid u64" => whole(u64::MAX),
        "expected mapping start" => {
            "expected a mapping (`key: value` lines or {key: value})".to_owned()
        }
        "expected sequence start" => "expected a list (`- item` lines or [a, b])".to_owned(),
        _ => message,
    }
}

/// Only whitespace and comments: no document at all.
pub(crate) fn is_blank(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with('#')
    })
}

/// The position just after `text` (where the first bad byte of a file sits).
pub(crate) fn end_of(text: &str) -> Pos {
    let line = text.matches('\n').count() as u64 + 1;
    let column = text
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count()) as u64
        + 1;
    Pos { line, column }
}

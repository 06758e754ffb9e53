//! What is wrong with a scenario file, and where.

use std::fmt;

use super::span::Pos;

/// Most diagnostics kept for one file: past this, the rest are counted, not kept
/// (a file of junk should not print a million lines).
pub const MAX_DIAGNOSTICS: usize = 50;

/// One problem in a scenario file, at a line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file, as given to [`super::parse`] or [`super::load`].
    pub path: String,
    /// 1-based line; 0 when the problem has no place in the file.
    pub line: u64,
    /// 1-based column, in characters (not bytes).
    pub column: u64,
    /// What is wrong, in one line.
    pub message: String,
    /// The offending source line (control characters replaced), for the caret.
    pub source_line: Option<String>,
}

impl fmt::Display for Diagnostic {
    /// `path:line:col: message`, then the source line with a caret under the column.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "{}: {}", self.path, self.message);
        }
        write!(
            f,
            "{}:{}:{}: {}",
            self.path, self.line, self.column, self.message
        )?;
        if let Some(source) = &self.source_line {
            let (shown, caret_at) = window(source, self.column);
            let gutter = self.line.to_string();
            let pad = " ".repeat(gutter.len());
            // Tabs before the column are repeated so the caret lands under the character.
            let indent: String = shown
                .chars()
                .take(caret_at)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(f, "\n{gutter} | {shown}\n{pad} | {indent}^")?;
        }
        Ok(())
    }
}

/// Longest part of a source line shown under a diagnostic.
const SHOWN_CHARS: usize = 100;

/// The part of `line` worth showing around `column`, and where the caret goes in it.
fn window(line: &str, column: u64) -> (String, usize) {
    let caret = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    let total = line.chars().count();
    if total <= SHOWN_CHARS {
        return (line.to_owned(), caret.min(total));
    }
    let start = caret
        .saturating_sub(SHOWN_CHARS / 2)
        .min(total - SHOWN_CHARS);
    let shown: String = line.chars().skip(start).take(SHOWN_CHARS).collect();
    let prefix = if start > 0 { "…" } else { "" };
    (
        format!("{prefix}{shown}…"),
        caret - start + usize::from(start > 0),
    )
}

/// Why a scenario could not be loaded. Both variants are bad input (the CLI's exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{path}: cannot read the scenario: {source}")]
    Read {
        /// The path given to [`super::load`].
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not a valid scenario.
    #[error("{}", render(diagnostics, *omitted))]
    Invalid {
        /// The problems found, ordered by position (at most [`MAX_DIAGNOSTICS`]).
        diagnostics: Vec<Diagnostic>,
        /// How many more problems were found than are kept.
        omitted: usize,
    },
}

impl ScenarioError {
    /// The problems found (empty for a read error).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            ScenarioError::Read { .. } => &[],
            ScenarioError::Invalid { diagnostics, .. } => diagnostics,
        }
    }
}

fn render(diagnostics: &[Diagnostic], omitted: usize) -> String {
    let mut text = diagnostics
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    if omitted > 0 {
        text.push_str(&format!("\n... and {omitted} more"));
    }
    text
}

/// Collects diagnostics for one file.
#[derive(Debug)]
pub(crate) struct Diagnostics<'a> {
    path: &'a str,
    source: &'a str,
    found: Vec<(Pos, String)>,
}

impl<'a> Diagnostics<'a> {
    pub fn new(path: &'a str, source: &'a str) -> Self {
        Diagnostics {
            path,
            source,
            found: Vec::new(),
        }
    }

    /// Records a problem at `pos`.
    pub fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.found.push((pos, message.into()));
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The error for everything recorded so far, in file order.
    pub fn into_error(self) -> ScenarioError {
        let (diagnostics, omitted) = self.into_parts();
        ScenarioError::Invalid {
            diagnostics,
            omitted,
        }
    }

    /// Everything recorded so far, in file order, at most
    /// [`MAX_DIAGNOSTICS`] of them, and how many more were left out: what a
    /// profile file's error is made of too.
    pub fn into_parts(self) -> (Vec<Diagnostic>, usize) {
        let mut found = self.found;
        // Stable: two problems at one place keep the order they were found in.
        found.sort_by_key(|(pos, _)| *pos);
        found.dedup();
        let omitted = found.len().saturating_sub(MAX_DIAGNOSTICS);
        let diagnostics = found
            .into_iter()
            .take(MAX_DIAGNOSTICS)
            .map(|(pos, message)| Diagnostic {
                path: self.path.to_owned(),
                line: pos.line,
                column: pos.column,
                message: clean(&message),
                source_line: source_line(self.source, pos.line),
            })
            .collect();
        (diagnostics, omitted)
    }
}

/// The text of 1-based line `line`, with control characters made visible.
fn source_line(source: &str, line: u64) -> Option<String> {
    let index = usize::try_from(line.checked_sub(1)?).ok()?;
    split_yaml_lines(source).nth(index).map(clean)
}

/// Lines the way YAML counts them: `\r\n`, `\n` and a lone `\r` each end a line.
fn split_yaml_lines(source: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(source);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\n', '\r']) {
            Some(end) => {
                let skip = if text[end..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = Some(&text[end + skip..]);
                Some(&text[..end])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// Makes user-controlled text safe for a terminal: control characters (other
/// than tab) become escapes, so junk input cannot move the cursor or ring bells.
fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let visible: Vec<char> = if c.is_control() && c != '\t' {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            visible
        })
        .collect()
}

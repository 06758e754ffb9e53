//! Problems found in a contract file, each at its `file:line:column`, and
//! the error that carries them (the harness's [`Diagnostic`] renders each,
//! caret and all). Shared by the HTTP and the MCP contract.

pub use lostreply_harness::scenario::Diagnostic;

use super::raw::Pos;

/// Why a contract could not be loaded (always bad input: exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    /// The file could not be read.
    #[error("{path}: cannot read the contract: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid contract.
    #[error("{}", diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// The problems, in file order.
        diagnostics: Vec<Diagnostic>,
    },
}

pub(crate) fn invalid(path: &str, source: &str, pos: Pos, message: &str) -> ContractError {
    let mut d = Found::new(path, source);
    d.error(pos, message);
    d.into_error()
}

pub(crate) struct Found<'a> {
    path: &'a str,
    source: &'a str,
    pub(crate) found: Vec<(Pos, String)>,
}

impl<'a> Found<'a> {
    pub(crate) fn new(path: &'a str, source: &'a str) -> Self {
        Found {
            path,
            source,
            found: Vec::new(),
        }
    }
    pub(crate) fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.found.push((pos, message.into()));
    }
    /// A problem of a whole mapping whose first entry is at `pos`: placed at
    /// the key that holds the mapping (or its `{`).
    pub(crate) fn mapping_error(&mut self, pos: Pos, message: impl Into<String>) {
        let at = mapping_around(self.source, pos);
        self.error(at, message);
    }
    pub(crate) fn into_error(mut self) -> ContractError {
        self.found.sort_by_key(|(p, _)| *p);
        self.found.truncate(50);
        let lines: Vec<&str> = self.source.lines().collect();
        let diagnostics = self
            .found
            .into_iter()
            .map(|(pos, message)| Diagnostic {
                path: self.path.to_owned(),
                line: pos.line,
                column: pos.column,
                message: clean(&message),
                source_line: usize::try_from(pos.line)
                    .ok()
                    .and_then(|l| l.checked_sub(1))
                    .and_then(|i| lines.get(i))
                    .map(|l| clean(l)),
            })
            .collect();
        ContractError::Invalid { diagnostics }
    }
}

/// Where the mapping that holds `pos` starts: a missing field is the
/// mapping's fault, while the parser stops at its last key. In a flow mapping
/// (`{...}`) that is the brace; in a block mapping, the key of the nearest
/// line above indented less (the document itself when there is none).
pub(crate) fn mapping_around(text: &str, pos: Pos) -> Pos {
    let lines: Vec<&str> = text.lines().collect();
    let Some(index) = usize::try_from(pos.line)
        .ok()
        .and_then(|l| l.checked_sub(1))
        .filter(|i| *i < lines.len())
    else {
        return pos;
    };
    let column = usize::try_from(pos.column).unwrap_or(1).max(1);
    let here = lines[index];
    if here.chars().nth(column - 1) == Some('{') {
        return pos;
    }
    let before: String = here.chars().take(column - 1).collect();
    if let Some(brace) = before.rfind('{') {
        return Pos {
            line: pos.line,
            column: u64_of(before[..brace].chars().count() + 1),
        };
    }
    let indent = |l: &str| l.chars().take_while(|c| *c == ' ').count();
    let own = indent(here);
    let parent = lines[..index].iter().enumerate().rev().find(|(_, l)| {
        let t = l.trim_start();
        !t.is_empty() && !t.starts_with('#') && indent(l) < own
    });
    match parent {
        Some((i, l)) => Pos {
            line: u64_of(i + 1),
            column: u64_of(indent(l) + 1),
        },
        None => Pos::START,
    }
}

fn u64_of(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

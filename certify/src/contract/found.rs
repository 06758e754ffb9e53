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

//! Located-error assertions shared by the scenario error tests: a problem
//! must be reported at its line and column, anchored on text in that line.

use lostreply_harness::scenario::{self, Diagnostic, ScenarioError};

/// Every diagnostic of a text that must not parse.
pub fn diagnostics(text: &str) -> Vec<Diagnostic> {
    match scenario::parse(text, "case.yaml") {
        Ok(s) => panic!("expected an error, parsed {s:?}"),
        Err(err) => {
            assert!(matches!(err, ScenarioError::Invalid { .. }));
            err.diagnostics().to_vec()
        }
    }
}

/// Exactly one diagnostic, on `line`, at the first `anchor` in that line, whose
/// message contains `needle`. Anchors instead of column numbers keep the
/// expectations readable (and counted by the machine).
#[track_caller]
pub fn one_error(text: &str, line: u64, anchor: &str, needle: &str) {
    let found = diagnostics(text);
    assert_eq!(found.len(), 1, "expected one diagnostic, got {found:#?}");
    let d = &found[0];
    assert_eq!(
        (d.line, d.column),
        (line, column_of(text, line, anchor)),
        "wrong place for {:?}",
        d.message
    );
    assert!(
        d.message.contains(needle),
        "message {:?} lacks {needle:?}",
        d.message
    );
    assert_eq!(d.path, "case.yaml");
}

/// 1-based character column of the first `anchor` on 1-based `line`.
#[track_caller]
pub fn column_of(text: &str, line: u64, anchor: &str) -> u64 {
    let source = text
        .lines()
        .nth(usize::try_from(line - 1).unwrap())
        .unwrap();
    let byte = source
        .find(anchor)
        .unwrap_or_else(|| panic!("{anchor:?} not in line {line}: {source:?}"));
    source[..byte].chars().count() as u64 + 1
}

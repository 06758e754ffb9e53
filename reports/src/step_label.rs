//! A step's label as its report keeps it: its text, or, for the common step
//! that is one call about one operation with nothing noted (`execute op-1`),
//! the call's verb and the operation's shared id.
//!
//! Why: a million-operation scenario has a million such steps, and as a
//! string of its own each label would take some 30 bytes and an allocation to
//! spell out an id the scenario already holds. The kept form is taken only
//! when it spells the label exactly ([`StepLabel::of`]), and it is written,
//! compared and read as that text, so every writer shows the same label.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::shared_str::SharedStr;

/// A step's short description: `execute op-1 (crash after_commit)`,
/// `advance 25h`. One text to every reader; how it is kept is private.
#[derive(Clone)]
pub struct StepLabel(Label);

/// How a [`StepLabel`] is held.
#[derive(Clone)]
enum Label {
    /// The label's text.
    Text(SharedStr),
    /// `<verb> <operation id>`.
    Call {
        /// The call the step made.
        verb: StepVerb,
        /// The operation's id.
        op: SharedStr,
    },
}

/// The call of a step that is one call about one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepVerb {
    /// `execute`.
    Execute,
    /// `reconcile`.
    Reconcile,
    /// `status`.
    Status,
}

impl StepVerb {
    /// The word the label starts with.
    pub fn as_str(self) -> &'static str {
        match self {
            StepVerb::Execute => "execute",
            StepVerb::Reconcile => "reconcile",
            StepVerb::Status => "status",
        }
    }
}

impl StepLabel {
    /// `label`, kept as `verb` and `op` when it is exactly `<verb> <op>`,
    /// and as its text otherwise (anything noted after it, another verb).
    pub fn of(label: &str, verb: StepVerb, op: &SharedStr) -> StepLabel {
        let spelled = label
            .strip_prefix(verb.as_str())
            .and_then(|rest| rest.strip_prefix(' '))
            == Some(op.as_str());
        if spelled {
            StepLabel(Label::Call {
                verb,
                op: op.clone(),
            })
        } else {
            StepLabel::from(label)
        }
    }

    /// The step's call and operation, when the label is kept as them. For
    /// the tests that hold the compact form to the code that builds it.
    #[doc(hidden)]
    pub fn call(&self) -> Option<(StepVerb, &SharedStr)> {
        match &self.0 {
            Label::Call { verb, op } => Some((*verb, op)),
            Label::Text(_) => None,
        }
    }

    /// The label's text (borrowed when kept as text).
    pub fn text(&self) -> Cow<'_, str> {
        match &self.0 {
            Label::Text(text) => Cow::Borrowed(text),
            Label::Call { .. } => Cow::Owned(self.to_string()),
        }
    }
}

impl From<SharedStr> for StepLabel {
    fn from(text: SharedStr) -> StepLabel {
        StepLabel(Label::Text(text))
    }
}

impl From<&str> for StepLabel {
    fn from(text: &str) -> StepLabel {
        StepLabel(Label::Text(text.into()))
    }
}

impl From<String> for StepLabel {
    fn from(text: String) -> StepLabel {
        StepLabel(Label::Text(text.into()))
    }
}

/// Equal when the texts are, however each is kept.
impl PartialEq for StepLabel {
    fn eq(&self, other: &StepLabel) -> bool {
        match (&self.0, &other.0) {
            (Label::Text(a), Label::Text(b)) => a == b,
            _ => self.text() == other.text(),
        }
    }
}

impl Eq for StepLabel {}

/// As the string it is.
impl fmt::Debug for StepLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

/// The label's text.
impl fmt::Display for StepLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Label::Text(text) => f.write_str(text),
            Label::Call { verb, op } => write!(f, "{} {op}", verb.as_str()),
        }
    }
}

/// A JSON string, as the text would be.
impl Serialize for StepLabel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Label::Text(text) => serializer.serialize_str(text),
            Label::Call { .. } => serializer.collect_str(self),
        }
    }
}

/// Read back as text.
impl<'de> Deserialize<'de> for StepLabel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<StepLabel, D::Error> {
        SharedStr::deserialize(deserializer).map(StepLabel::from)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Serialize)]
    struct Step<'a> {
        number: usize,
        label: &'a StepLabel,
    }

    #[test]
    fn a_label_that_spells_its_call_is_kept_as_it_and_reads_the_same() {
        for op in ["op-1", "a \"quoted\" \\ id", "caf\u{e9} \u{1F600}\n", ""] {
            let id = SharedStr::from(op);
            for verb in [StepVerb::Execute, StepVerb::Reconcile, StepVerb::Status] {
                let text = format!("{} {op}", verb.as_str());
                let kept = StepLabel::of(&text, verb, &id);
                assert!(kept.call().is_some(), "{text:?}");
                let plain = StepLabel::from(text.as_str());
                assert_eq!(kept.text(), text);
                assert_eq!(kept.to_string(), text);
                assert_eq!(kept, plain);
                assert_eq!(plain, kept);
                assert_eq!(format!("{kept:?}"), format!("{text:?}"));
                let step = |label| Step { number: 1, label };
                assert_eq!(
                    serde_json::to_string_pretty(&step(&kept)).unwrap(),
                    serde_json::to_string_pretty(&step(&plain)).unwrap()
                );
                let mut a = Vec::new();
                let mut b = Vec::new();
                crate::pretty::write_pretty(&mut a, &step(&kept)).unwrap();
                crate::pretty::write_pretty(&mut b, &step(&plain)).unwrap();
                assert_eq!(a, b);
                let back: StepLabel =
                    serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
                assert!(back.call().is_none());
                assert_eq!(back, kept);
            }
        }
    }

    #[test]
    fn a_label_that_says_more_or_else_keeps_its_text() {
        let id = SharedStr::from("op-1");
        for text in [
            "execute op-1 (crash point not reached)",
            "execute op-10",
            "execute  op-1",
            "executeop-1",
            "status op-1",
            "execute",
            "",
        ] {
            let kept = StepLabel::of(text, StepVerb::Execute, &id);
            assert!(kept.call().is_none(), "{text:?}");
            assert_eq!(kept.text(), text);
        }
    }
}

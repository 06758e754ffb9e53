//! The calls of a run, as they are recorded: what a call says that the
//! previous call about the same operation said already is kept once.
//!
//! Why: a run ends with a `status` call for every operation, and its reply
//! usually repeats the operation's last answer word for word. A
//! million-operation run holds two million calls; each reply's text with its
//! parsed outcome is some 300 bytes, half of them saying again what the
//! execute call's reply said. Only equal values are replaced (a reply by
//! an equal reply, an outcome by an equal outcome), so what the observation
//! says is unchanged; only where it is kept.

use lostreply_reports::model::SharedStr;

use super::observation::{Call, CallStderr, Reply};
use crate::by_key::PositionTable;
use crate::position::pos;

/// The calls so far, and each operation's latest one. Public so that
/// synthetic observations (the bench's) record their calls as a run does.
#[derive(Debug)]
pub struct CallLog {
    calls: Vec<Call>,
    /// The calls' stderr tails, where not empty.
    stderr: CallStderr,
    /// Position in `calls` of each operation's latest call, by the
    /// operation's id, read from that call (dropped with the log when the
    /// run ends: only recording needs it). A table of positions, not a map
    /// from ids: at a million operations a map would be some 34 MB, held to
    /// the end of the run beside everything it observed; this is some 10.
    latest: PositionTable,
}

impl Default for CallLog {
    fn default() -> CallLog {
        CallLog::new()
    }
}

impl CallLog {
    /// An empty log.
    pub fn new() -> CallLog {
        CallLog::with_capacity(0, 0)
    }

    /// An empty log with room for `calls` calls about `operations` operations.
    pub fn with_capacity(calls: usize, operations: usize) -> CallLog {
        CallLog {
            calls: Vec::with_capacity(calls),
            stderr: CallStderr::default(),
            latest: PositionTable::with_capacity(operations),
        }
    }

    /// The call at `index`, if it was recorded.
    pub fn get(&self, index: usize) -> Option<&Call> {
        self.calls.get(index)
    }

    /// Records `call` as the next one, with the tail of stderr it wrote,
    /// sharing with the same operation's previous call whatever the two
    /// have equal. Returns its position.
    pub fn push(&mut self, mut call: Call, mut stderr: SharedStr) -> usize {
        let index = self.calls.len();
        let about_an_operation = call.operation_id.is_some();
        if let Some(op) = call.operation_id.as_deref() {
            let calls = &self.calls;
            let previous = self.latest.find(op, |p| operation_of(calls, p));
            if let Some(previous) = previous.and_then(|p| calls.get(p as usize)) {
                share_equal_parts(&mut call, previous);
            }
            // An adapter that writes the same line for every call of an
            // operation keeps it once.
            if let Some(before) = previous.and_then(|p| self.stderr.of(p as usize)) {
                if *before == stderr {
                    stderr = before.clone();
                }
            }
        }
        self.stderr.push(index, stderr);
        share_operation_id(&mut call);
        self.calls.push(call);
        if about_an_operation {
            let calls = &self.calls;
            if let Some(held) = self
                .latest
                .insert_or_held(pos(index), |p| operation_of(calls, p))
            {
                *held = pos(index);
            }
        }
        index
    }

    /// Every call, in order, and their stderr tails.
    pub fn into_calls(self) -> (Vec<Call>, CallStderr) {
        (self.calls, self.stderr)
    }
}

/// The operation the call at `position` is about, if one.
fn operation_of(calls: &[Call], position: u32) -> Option<&str> {
    calls.get(position as usize)?.operation_id.as_deref()
}

/// Replaces each part of `call` equal to `previous`'s by `previous`'s copy.
fn share_equal_parts(call: &mut Call, previous: &Call) {
    if call.operation_id == previous.operation_id {
        call.operation_id.clone_from(&previous.operation_id);
    }
    if let (Reply::Text(kept), Reply::Text(before)) = (&mut call.reply, &previous.reply) {
        if kept.text == before.text {
            kept.text.clone_from(&before.text);
        }
    }
    if let (Some(outcome), Some(before)) = (call.reply.outcome_mut(), previous.outcome()) {
        if outcome == before {
            outcome.clone_from(before);
        }
    }
}

/// An outcome naming the call's own operation shares the call's copy of its id.
fn share_operation_id(call: &mut Call) {
    if let (Some(op), Some(outcome)) = (&call.operation_id, call.reply.outcome_mut()) {
        if outcome.operation_id == *op {
            outcome.operation_id = op.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use lostreply_reports::model::{CallEnd, SharedJson, SharedStr};
    use serde_json::json;

    use super::*;
    use crate::protocol::{CallName, OutcomeKind, OutcomeReply};
    use crate::run::observation::JournalWindow;

    fn call(name: CallName, op: &str, reply: serde_json::Value) -> Call {
        let outcome: Option<OutcomeReply> = serde_json::from_value(reply.clone()).ok();
        Call {
            step: 1,
            name,
            probe: false,
            start_ms: 0,
            end_ms: 1,
            journal_window: JournalWindow::NONE,
            operation_id: Some(op.into()),
            request: json!({"operation_id": op}).into(),
            reply: Reply::recorded(Some(SharedJson::new(&reply)), outcome),
            end: CallEnd::Replied,
            sim_ms: 0,
        }
    }

    /// An answer in the protocol's order (kept as its outcome's fields).
    fn succeeded(op: &str, id: &str) -> serde_json::Value {
        json!({"operation_id": op, "outcome": "succeeded", "provider_ref": id,
               "needs_review": false, "evidence": format!("created {id}")})
    }

    /// The same answer in another order (kept as text).
    fn reordered(op: &str, id: &str) -> serde_json::Value {
        json!({"outcome": "succeeded", "operation_id": op, "provider_ref": id,
               "needs_review": false, "evidence": format!("created {id}")})
    }

    /// The same copy, not merely equal text.
    fn same(a: &str, b: &str) -> bool {
        std::ptr::eq(a.as_ptr(), b.as_ptr())
    }

    #[test]
    fn a_repeated_answer_is_kept_once_and_says_the_same() {
        for (answer, in_order) in [
            (succeeded as fn(&str, &str) -> serde_json::Value, true),
            (reordered, false),
        ] {
            let mut log = CallLog::new();
            let first = call(CallName::Execute, "op-1", answer("op-1", "tkt_1"));
            let other = call(CallName::Execute, "op-2", answer("op-2", "tkt_2"));
            let again = call(CallName::Status, "op-1", answer("op-1", "tkt_1"));
            let expected = again.clone();
            assert_eq!(log.push(first, SharedStr::default()), 0);
            assert_eq!(log.push(other, SharedStr::default()), 1);
            assert_eq!(log.push(again, SharedStr::default()), 2);
            let calls = log.into_calls().0;
            let (first, again) = (&calls[0], &calls[2]);
            // It says what it said, however its reply is kept.
            assert_eq!(again.reply(), expected.reply());
            assert_eq!(*again, expected);
            if in_order {
                assert!(matches!(again.reply, Reply::Outcome(_)));
            } else {
                let (a, b) = (first.reply.text().unwrap(), again.reply.text().unwrap());
                assert!(same(&a.text(), &b.text()));
            }
            let (a, b) = (first.outcome().unwrap(), again.outcome().unwrap());
            assert!(same(&a.evidence, &b.evidence));
            // The outcome names its call's operation with the call's own copy.
            assert!(same(
                &a.operation_id,
                first.operation_id.as_deref().unwrap()
            ));
            assert!(same(
                again.operation_id.as_deref().unwrap(),
                first.operation_id.as_deref().unwrap()
            ));
        }
    }

    #[test]
    fn a_reply_is_kept_as_its_outcome_only_when_it_is_exactly_its_fields() {
        let cases = [
            (succeeded("op-1", "tkt_1"), true),
            (reordered("op-1", "tkt_1"), false),
            // `provider_ref` left out reads as `None`, but the text lacks it.
            (
                json!({"operation_id": "op-1", "outcome": "unknown", "needs_review": false, "evidence": ""}),
                false,
            ),
            // A field outside the protocol is kept (the report shows it).
            (
                json!({"operation_id": "op-1", "outcome": "unknown", "provider_ref": null,
                       "needs_review": false, "evidence": "", "note": "x"}),
                false,
            ),
            (
                json!({"operation_id": "op-1", "outcome": "unknown", "provider_ref": null,
                       "needs_review": false, "evidence": "caf\u{e9} \"q\"\n"}),
                true,
            ),
            // Not an outcome at all.
            (json!({"accepted": true, "operation_id": "op-1"}), false),
        ];
        for (reply, as_outcome) in cases {
            let mut log = CallLog::new();
            log.push(
                call(CallName::Execute, "op-1", reply.clone()),
                SharedStr::default(),
            );
            let kept = &log.into_calls().0[0];
            assert_eq!(
                matches!(kept.reply, Reply::Outcome(_)),
                as_outcome,
                "{reply}"
            );
            assert_eq!(kept.reply.text().is_none(), as_outcome, "{reply}");
            let written = kept.reply().unwrap();
            assert_eq!(written.text(), SharedJson::new(&reply).text(), "{reply}");
            assert_eq!(written.to_value(), reply);
        }
    }

    #[test]
    fn a_different_answer_keeps_its_own_and_becomes_the_latest() {
        let mut log = CallLog::new();
        log.push(
            call(
                CallName::Execute,
                "op-1",
                json!({"operation_id": "op-1", "outcome": "unknown"}),
            ),
            SharedStr::default(),
        );
        log.push(
            call(CallName::Reconcile, "op-1", succeeded("op-1", "tkt_1")),
            SharedStr::default(),
        );
        log.push(
            call(CallName::Status, "op-1", succeeded("op-1", "tkt_1")),
            SharedStr::default(),
        );
        let calls = log.into_calls().0;
        assert_eq!(calls[0].outcome().unwrap().outcome, OutcomeKind::Unknown);
        assert_eq!(calls[1].outcome().unwrap().outcome, OutcomeKind::Succeeded);
        // The status call shares the reconcile's answer, not the execute's.
        let (a, b) = (calls[1].outcome().unwrap(), calls[2].outcome().unwrap());
        assert!(same(&a.evidence, &b.evidence));
        assert_eq!(calls[2].reply(), calls[1].reply());
        assert_ne!(calls[0].reply(), calls[1].reply());
        // The execute's short reply is its own text.
        assert!(calls[0].reply.text().is_some());
    }

    #[test]
    fn stderr_is_kept_beside_the_calls_that_wrote_any_and_a_repeated_tail_once() {
        let mut log = CallLog::new();
        let answer = || succeeded("op-1", "tkt_1");
        log.push(call(CallName::Execute, "op-1", answer()), "retrying".into());
        log.push(
            call(CallName::Execute, "op-2", answer()),
            SharedStr::default(),
        );
        log.push(call(CallName::Status, "op-1", answer()), "retrying".into());
        log.push(call(CallName::Status, "op-2", answer()), "other".into());
        let (_, stderr) = log.into_calls();
        let kept: Vec<(usize, &str)> = stderr.iter().map(|(p, t)| (p, t.as_str())).collect();
        assert_eq!(kept, [(0, "retrying"), (2, "retrying"), (3, "other")]);
        assert_eq!(stderr.of(1), None);
        assert!(same(stderr.of(0).unwrap(), stderr.of(2).unwrap()));
    }
}

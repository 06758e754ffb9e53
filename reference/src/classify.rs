//! What an answer means. Pure functions from a provider answer to a verdict,
//! following the reference algorithm: only evidence makes an outcome terminal,
//! and every lost or unreadable answer is ambiguous.

use serde_json::Value;

use crate::client::{Answer, HttpAnswer};
use lostreply_harness::protocol::OutcomeKind;

/// What one provider answer or event proves: an outcome and what it rests
/// on (the report's verdict on a scenario is another thing: this is the
/// adapter's own conclusion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conclusion {
    /// The claim.
    pub outcome: OutcomeKind,
    /// The provider object, when the answer named one.
    pub provider_ref: Option<String>,
    /// Automation must stop here.
    pub needs_review: bool,
    /// One sentence naming the evidence.
    pub evidence: String,
}

impl Conclusion {
    fn new(outcome: OutcomeKind, provider_ref: Option<String>, evidence: String) -> Conclusion {
        Conclusion {
            outcome,
            provider_ref,
            needs_review: false,
            evidence,
        }
    }

    fn unknown(evidence: String) -> Conclusion {
        Conclusion::new(OutcomeKind::Unknown, None, evidence)
    }

    /// No evidence either way (and no reason yet to stop automation).
    pub fn is_ambiguous(&self) -> bool {
        self.outcome == OutcomeKind::Unknown && !self.needs_review
    }
}

/// The `error.type` of a generic error body, or the `type` of a problem+json
/// body; `None` when the body says neither.
fn error_type(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let text = value
        .pointer("/error/type")
        .or_else(|| value.get("type"))
        .and_then(Value::as_str)?;
    Some(text.to_owned())
}

/// A provider object's status as a verdict; `None` when the object has no
/// string `id` or an unrecognised `status`.
pub fn object_verdict(object: &Value, source: &str) -> Option<Conclusion> {
    let id = object.get("id").and_then(Value::as_str)?.to_owned();
    let status = object.get("status").and_then(Value::as_str)?;
    let outcome = match status {
        "succeeded" => OutcomeKind::Succeeded,
        "processing" => OutcomeKind::Pending,
        "failed" => OutcomeKind::Failed,
        _ => return None,
    };
    Some(Conclusion::new(
        outcome,
        Some(id.clone()),
        format!("{source}: object {id} is {status}"),
    ))
}

/// The answer to a create (first send, immediate retry, replay or re-create).
pub fn create_verdict(answer: &Answer, timeout_ms: u64) -> Conclusion {
    let HttpAnswer {
        status,
        replayed,
        body,
    } = match answer {
        Ok(answer) => answer,
        Err(lost) => {
            return Conclusion::unknown(format!(
                "{}: the request may or may not have committed",
                lost.describe(timeout_ms)
            ))
        }
    };
    let status = *status;
    let what = if *replayed {
        "replayed answer"
    } else {
        "answer"
    };
    let error = || error_type(body).unwrap_or_else(|| "without an error type".to_owned());
    match status {
        200..=202 => {
            let object = serde_json::from_slice::<Value>(body).ok();
            match object.as_ref().and_then(|o| object_verdict(o, &format!("{status} {what}"))) {
                Some(verdict) => verdict,
                None => Conclusion::unknown(format!(
                    "{status} {what} without a readable object: the request may or may not have committed"
                )),
            }
        }
        400 if error_type(body).as_deref() == Some("idempotency_error") => Conclusion {
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: true,
            evidence: "400 idempotency_error: our key was already used with other arguments; a person must check"
                .to_owned(),
        },
        422 => Conclusion {
            outcome: OutcomeKind::Unknown,
            provider_ref: None,
            needs_review: true,
            evidence: "422: our key was already used with other arguments; a person must check".to_owned(),
        },
        409 => Conclusion::unknown(format!("409 {}: provider reports the key in flight", error())),
        // Rejected before execution: the provider API guarantees no effect.
        400 | 401 | 404 | 413 | 429 => Conclusion::new(
            OutcomeKind::Failed,
            None,
            format!("rejected before execution: {status} {}", error()),
        ),
        // 5xx, and any status the provider API does not document for a create:
        // nothing says whether the effect committed.
        _ => Conclusion::unknown(format!(
            "{status} {}: the request may or may not have committed",
            error()
        )),
    }
}

/// The answer to a create sent again after an ambiguous attempt (a same-key
/// retry or replay). A refusal (400, 401, 404, 413, 429) refuses this
/// request only: the earlier attempt may have committed, so it proves
/// nothing about the operation.
pub fn retry_verdict(answer: &Answer, timeout_ms: u64) -> Conclusion {
    let verdict = create_verdict(answer, timeout_ms);
    let refused = verdict.outcome == OutcomeKind::Failed && verdict.provider_ref.is_none();
    if refused {
        Conclusion::unknown(format!(
            "{}: a refusal of a request sent again says nothing about the earlier attempt",
            verdict
                .evidence
                .replacen("rejected before execution", "refused", 1)
        ))
    } else {
        verdict
    }
}

/// What a lookup established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Our object, and its verdict.
    Found(Conclusion),
    /// A readable answer with no object of ours: proof of absence.
    Absent(String),
    /// Nothing learned (error, loss, malformed answer): evidence says why.
    Failed(String),
}

/// The answer to `GET /v1/{resource}/{id}`.
pub fn retrieve_lookup(answer: &Answer, id: &str, timeout_ms: u64) -> Lookup {
    match answer {
        Err(lost) => Lookup::Failed(format!("retrieve {id}: {}", lost.describe(timeout_ms))),
        Ok(HttpAnswer {
            status: 200, body, ..
        }) => {
            let object = serde_json::from_slice::<Value>(body).ok();
            match object.as_ref().and_then(|o| object_verdict(o, "retrieve")) {
                Some(verdict) if verdict.provider_ref.as_deref() == Some(id) => {
                    Lookup::Found(verdict)
                }
                Some(_) | None => {
                    Lookup::Failed(format!("retrieve {id}: 200 without a readable object"))
                }
            }
        }
        Ok(HttpAnswer { status: 404, .. }) => {
            Lookup::Absent(format!("retrieve {id}: 404 not found"))
        }
        Ok(HttpAnswer { status, body, .. }) => Lookup::Failed(format!(
            "retrieve {id}: {status} {}",
            error_type(body).unwrap_or_default()
        )),
    }
}

/// How a listed object is recognised as ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Correlation {
    /// Only `client_reference` counts (search by correlation).
    ClientReference,
    /// `client_reference` or `metadata.operation_id` (list recent). Never
    /// arguments: another actor's look-alike object is not ours.
    ClientReferenceOrMetadata,
}

/// The answer to a search or list: our object if listed, else proof of absence.
pub fn list_lookup(
    answer: &Answer,
    op_id: &str,
    correlation: Correlation,
    source: &str,
    timeout_ms: u64,
) -> Lookup {
    let body = match answer {
        Err(lost) => return Lookup::Failed(format!("{source}: {}", lost.describe(timeout_ms))),
        Ok(HttpAnswer {
            status: 200, body, ..
        }) => body,
        Ok(HttpAnswer { status, body, .. }) => {
            return Lookup::Failed(format!(
                "{source}: {status} {}",
                error_type(body).unwrap_or_default()
            ))
        }
    };
    let Some(data) = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("data").and_then(Value::as_array).cloned())
    else {
        return Lookup::Failed(format!("{source}: 200 without a readable list"));
    };
    let ours = |object: &&Value| {
        let by_reference = object.get("client_reference").and_then(Value::as_str) == Some(op_id);
        let by_metadata = object
            .pointer("/metadata/operation_id")
            .and_then(Value::as_str)
            == Some(op_id);
        match correlation {
            Correlation::ClientReference => by_reference,
            Correlation::ClientReferenceOrMetadata => by_reference || by_metadata,
        }
    };
    // Newest first: adopt the oldest of ours, the first one that was created.
    match data.iter().rev().find(ours) {
        Some(object) => match object_verdict(object, source) {
            Some(verdict) => Lookup::Found(verdict),
            None => Lookup::Failed(format!("{source}: our object is unreadable")),
        },
        None => Lookup::Absent(format!("{source}: {} objects, none of ours", data.len())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::{LossKind, Lost};

    fn http(status: u16, body: Value) -> Answer {
        Ok(HttpAnswer {
            status,
            replayed: false,
            body: body.to_string().into_bytes(),
        })
    }

    fn object(status: &str) -> Value {
        json!({"id": "tkt_1", "object": "tickets", "status": status, "client_reference": "op-1",
               "created_at": "2026-01-01T00:00:00Z", "args": {}, "metadata": {"operation_id": "op-1"}})
    }

    fn outcome(v: &Conclusion) -> (OutcomeKind, Option<&str>, bool) {
        (v.outcome, v.provider_ref.as_deref(), v.needs_review)
    }

    #[test]
    fn created_objects_are_classified_by_their_status() {
        use OutcomeKind::*;
        for (status, obj, want) in [
            (201, "succeeded", Succeeded),
            (201, "processing", Pending),
            (201, "failed", Failed),
            (202, "processing", Pending),
            (200, "succeeded", Succeeded),
        ] {
            let v = create_verdict(&http(status, object(obj)), 250);
            assert_eq!(outcome(&v), (want, Some("tkt_1"), false), "{status} {obj}");
        }
        let replay = Ok(HttpAnswer {
            status: 201,
            replayed: true,
            body: object("succeeded").to_string().into_bytes(),
        });
        let v = create_verdict(&replay, 250);
        assert_eq!(outcome(&v), (Succeeded, Some("tkt_1"), false));
        assert!(v.evidence.contains("replayed"), "{}", v.evidence);
    }

    /// The statuses the provider API documents as refused before
    /// execution, with the error type each carries.
    const REFUSALS: [(u16, &str); 5] = [
        (400, "invalid_request"),
        (401, "unauthorized"),
        (404, "not_found"),
        (413, "too_large"),
        (429, "rate_limited"),
    ];

    #[test]
    fn rejections_before_execution_are_failures() {
        for (status, kind) in REFUSALS {
            let v = create_verdict(&http(status, json!({"error": {"type": kind}})), 250);
            assert_eq!(outcome(&v), (OutcomeKind::Failed, None, false), "{status}");
            assert_eq!(
                v.evidence,
                format!("rejected before execution: {status} {kind}")
            );
        }
        // ietf: a missing-key 400 is problem+json; still a rejection.
        let v = create_verdict(
            &http(400, json!({"type": "about:blank", "title": "key required"})),
            250,
        );
        assert_eq!(v.outcome, OutcomeKind::Failed);
    }

    #[test]
    fn a_refused_retry_says_nothing_about_the_earlier_attempt() {
        for (status, kind) in REFUSALS {
            let v = retry_verdict(&http(status, json!({"error": {"type": kind}})), 250);
            assert_eq!(outcome(&v), (OutcomeKind::Unknown, None, false), "{status}");
            assert!(
                v.evidence.starts_with(&format!("refused: {status} {kind}")),
                "{}",
                v.evidence
            );
        }
        // What a retry proves, it proves as a first attempt would.
        let replay = Ok(HttpAnswer {
            status: 201,
            replayed: true,
            body: object("succeeded").to_string().into_bytes(),
        });
        assert_eq!(
            outcome(&retry_verdict(&replay, 250)),
            (OutcomeKind::Succeeded, Some("tkt_1"), false)
        );
        let mismatch = http(400, json!({"error": {"type": "idempotency_error"}}));
        assert!(retry_verdict(&mismatch, 250).needs_review);
    }

    #[test]
    fn key_mismatch_needs_review_and_key_in_flight_does_not() {
        let stripe = http(400, json!({"error": {"type": "idempotency_error"}}));
        assert_eq!(
            outcome(&create_verdict(&stripe, 250)),
            (OutcomeKind::Unknown, None, true)
        );
        let ietf = http(422, json!({"type": "about:blank", "title": "mismatch"}));
        assert_eq!(
            outcome(&create_verdict(&ietf, 250)),
            (OutcomeKind::Unknown, None, true)
        );
        let in_flight = http(
            409,
            json!({"error": {"type": "idempotency_error", "code": "idempotency_key_in_use"}}),
        );
        let v = create_verdict(&in_flight, 250);
        assert!(v.is_ambiguous());
        assert!(v.evidence.contains("in flight"), "{}", v.evidence);
    }

    #[test]
    fn server_errors_losses_and_garbage_are_ambiguous() {
        let cases: Vec<Answer> = vec![
            http(500, json!({"error": {"type": "internal"}})),
            http(503, json!(null)),
            http(403, json!({})),
            Ok(HttpAnswer {
                status: 201,
                replayed: false,
                body: b"{\"id\":\"tk".to_vec(),
            }),
            http(201, json!({"id": "tkt_1", "status": "weird"})),
            http(201, json!({"status": "succeeded"})),
            Err(Lost {
                kind: LossKind::Timeout,
                status: None,
                detail: String::new(),
            }),
            Err(Lost {
                kind: LossKind::Reset,
                status: None,
                detail: "reset by peer".into(),
            }),
            Err(Lost {
                kind: LossKind::Closed,
                status: Some(201),
                detail: "eof".into(),
            }),
        ];
        for answer in &cases {
            let v = create_verdict(answer, 250);
            assert!(v.is_ambiguous(), "{answer:?} -> {v:?}");
            assert!(
                v.evidence.contains("may or may not have committed"),
                "{}",
                v.evidence
            );
        }
        let timeout = Err(Lost {
            kind: LossKind::Timeout,
            status: None,
            detail: String::new(),
        });
        assert_eq!(
            create_verdict(&timeout, 250).evidence,
            "timeout after 250 ms: the request may or may not have committed"
        );
    }

    #[test]
    fn retrieve_finds_the_object_or_proves_nothing() {
        let found = retrieve_lookup(&http(200, object("processing")), "tkt_1", 250);
        assert!(
            matches!(found, Lookup::Found(ref v) if v.outcome == OutcomeKind::Pending),
            "{found:?}"
        );
        assert!(matches!(
            retrieve_lookup(&http(404, json!({})), "tkt_1", 250),
            Lookup::Absent(_)
        ));
        assert!(matches!(
            retrieve_lookup(&http(500, json!({})), "tkt_1", 250),
            Lookup::Failed(_)
        ));
        // Another id in the body is not what we asked for.
        assert!(matches!(
            retrieve_lookup(&http(200, object("succeeded")), "tkt_2", 250),
            Lookup::Failed(_)
        ));
    }

    #[test]
    fn lists_adopt_only_our_object() {
        let theirs = json!({"id": "tkt_9", "status": "succeeded", "client_reference": null,
                            "args": {"title": "Purchase review"}, "metadata": {}});
        let by_metadata = json!({"id": "tkt_2", "status": "succeeded", "client_reference": null,
                                 "metadata": {"operation_id": "op-1"}});
        let only_theirs = http(200, json!({"data": [theirs], "has_more": false}));
        for c in [
            Correlation::ClientReference,
            Correlation::ClientReferenceOrMetadata,
        ] {
            assert!(matches!(
                list_lookup(&only_theirs, "op-1", c, "search", 250),
                Lookup::Absent(_)
            ));
        }
        let with_ours = http(
            200,
            json!({"data": [theirs, object("succeeded")], "has_more": false}),
        );
        let found = list_lookup(
            &with_ours,
            "op-1",
            Correlation::ClientReference,
            "search",
            250,
        );
        assert!(
            matches!(found, Lookup::Found(ref v) if v.provider_ref.as_deref() == Some("tkt_1"))
        );
        let meta = http(200, json!({"data": [by_metadata], "has_more": false}));
        assert!(matches!(
            list_lookup(&meta, "op-1", Correlation::ClientReference, "search", 250),
            Lookup::Absent(_)
        ));
        assert!(matches!(
            list_lookup(
                &meta,
                "op-1",
                Correlation::ClientReferenceOrMetadata,
                "list",
                250
            ),
            Lookup::Found(_)
        ));
        let disabled = http(400, json!({"error": {"type": "unsupported_query"}}));
        assert!(matches!(
            list_lookup(&disabled, "op-1", Correlation::ClientReference, "search", 250),
            Lookup::Failed(ref e) if e.contains("unsupported_query")
        ));
        let garbage = http(200, json!({"items": []}));
        assert!(matches!(
            list_lookup(
                &garbage,
                "op-1",
                Correlation::ClientReference,
                "search",
                250
            ),
            Lookup::Failed(_)
        ));
    }
}

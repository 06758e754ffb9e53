//! What an answer means, as pure functions of the bytes that arrived: the
//! create table of the contract, and what a lookup does or does not prove.

use lostreply_harness::protocol::OutcomeKind;
use serde_json::Value;

use super::client::{Answer, Reply};
use super::keys::KeyMode;

/// Objects a listing is read for; the provider never returns more per page.
pub const MAX_LISTED: usize = 100;

/// What one create request's answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateVerdict {
    /// The provider has an object for it (a first answer or a replay).
    Effect {
        /// `succeeded`, `pending` or `failed`, from the object's status.
        outcome: OutcomeKind,
        /// The object's id.
        id: String,
        /// What was seen.
        evidence: String,
    },
    /// Refused before execution: this request had no effect, and sending it
    /// again would be refused again.
    Rejected {
        /// What was seen.
        evidence: String,
    },
    /// Refused for now (429): this request had no effect, and the same
    /// request may be sent again later.
    RateLimited {
        /// What was seen.
        evidence: String,
    },
    /// The provider is still running an earlier request with our key.
    InFlight {
        /// What was seen.
        evidence: String,
    },
    /// The provider holds our key for other arguments: impossible with
    /// per-operation keys and fixed arguments, so a person must look.
    Mismatch {
        /// What was seen.
        evidence: String,
    },
    /// The request may or may not have committed.
    Ambiguous {
        /// What was seen.
        evidence: String,
    },
}

impl CreateVerdict {
    /// The evidence sentence.
    pub fn evidence(&self) -> &str {
        match self {
            CreateVerdict::Effect { evidence, .. }
            | CreateVerdict::Rejected { evidence }
            | CreateVerdict::RateLimited { evidence }
            | CreateVerdict::InFlight { evidence }
            | CreateVerdict::Mismatch { evidence }
            | CreateVerdict::Ambiguous { evidence } => evidence,
        }
    }
}

/// The provider's status word as an outcome; `None` for a word the contract
/// does not define.
pub fn outcome_of_status(status: &str) -> Option<OutcomeKind> {
    match status {
        "succeeded" => Some(OutcomeKind::Succeeded),
        "processing" => Some(OutcomeKind::Pending),
        "failed" => Some(OutcomeKind::Failed),
        _ => None,
    }
}

/// An id fit to put in a URL path: the provider's ids are `prefix_` plus
/// alphanumerics, so anything else is not one of its ids.
pub fn usable_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The `error.type` of an error body.
fn error_type(body: &Value) -> Option<&str> {
    body.pointer("/error/type").and_then(Value::as_str)
}

/// Reads a create answer by the contract's table.
pub fn create_verdict(answer: &Answer, mode: KeyMode, what: &str) -> CreateVerdict {
    let reply = match answer {
        Ok(reply) => reply,
        Err(lost) => {
            return CreateVerdict::Ambiguous {
                evidence: format!(
                    "{what} lost ({}): the create may or may not have committed",
                    lost.describe()
                ),
            }
        }
    };
    let status = reply.status;
    let body: Option<Value> = serde_json::from_slice(&reply.body).ok();
    let seen = |detail: &str| format!("{what} answered {status}{detail}");
    let ambiguous = |why: &str| CreateVerdict::Ambiguous {
        evidence: format!("{}: the create may or may not have committed", seen(why)),
    };
    let Some(body) = body else {
        return ambiguous(" with an unreadable body");
    };
    match status {
        200..=299 => effect_verdict(reply, &body, &seen("")),
        400 if error_type(&body) == Some("invalid_request") => CreateVerdict::Rejected {
            evidence: format!("{}: rejected before execution", seen(" invalid_request")),
        },
        400 if error_type(&body) == Some("idempotency_error") => {
            mismatch(&seen(" idempotency_error"))
        }
        // ietf refuses a missing or malformed key before reading further.
        400 if mode == KeyMode::Ietf && reply.problem_json => CreateVerdict::Rejected {
            evidence: format!("{}: key refused before execution", seen(" (problem)")),
        },
        401 | 404 | 413 => CreateVerdict::Rejected {
            evidence: format!(
                "{}: rejected before execution",
                seen(&format!(" {}", error_type(&body).unwrap_or("error")))
            ),
        },
        409 if in_flight(reply, &body, mode) => CreateVerdict::InFlight {
            evidence: format!(
                "{}: the provider is still running an earlier request with our key",
                seen(" (key in use)")
            ),
        },
        422 if mode == KeyMode::Ietf => mismatch(&seen(" (key reused)")),
        429 => CreateVerdict::RateLimited {
            evidence: format!(
                "{}: nothing executed; a later reconcile sends the same request again",
                seen(" rate_limited")
            ),
        },
        _ => ambiguous(&format!(" {}", error_type(&body).unwrap_or("error"))),
    }
}

fn effect_verdict(reply: &Reply, body: &Value, seen: &str) -> CreateVerdict {
    let id = body
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| usable_id(id));
    let status = body.get("status").and_then(Value::as_str);
    let replayed = if reply.replayed { " (replayed)" } else { "" };
    match (id, status.and_then(outcome_of_status)) {
        (Some(id), Some(outcome)) => CreateVerdict::Effect {
            outcome,
            id: id.to_owned(),
            evidence: format!(
                "{seen}{replayed}: object {id} is {}",
                status.unwrap_or_default()
            ),
        },
        _ => CreateVerdict::Ambiguous {
            evidence: format!(
                "{seen}{replayed} without a readable object: the create may or may not have committed"
            ),
        },
    }
}

fn mismatch(seen: &str) -> CreateVerdict {
    CreateVerdict::Mismatch {
        evidence: format!(
            "{seen}: the provider holds our key for other arguments; a person must check"
        ),
    }
}

fn in_flight(reply: &Reply, body: &Value, mode: KeyMode) -> bool {
    match mode {
        KeyMode::Stripe => {
            error_type(body) == Some("idempotency_error")
                && body.pointer("/error/code").and_then(Value::as_str)
                    == Some("idempotency_key_in_use")
        }
        KeyMode::Ietf => reply.problem_json,
        KeyMode::None => false,
    }
}

/// An object of ours a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sighting {
    /// Its id.
    pub id: String,
    /// Its outcome, when its status is one the contract defines.
    pub outcome: Option<OutcomeKind>,
    /// What was seen.
    pub evidence: String,
}

/// What one lookup proves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// An object of ours exists.
    Found(Sighting),
    /// A clean, complete answer with nothing of ours: proof of absence.
    Absent(String),
    /// Proves nothing (an error, a loss, garbage, a cut-short page).
    NoEvidence(String),
}

/// True when the object carries our reference or our operation id. Equal
/// arguments are never enough: another actor may create an identical object.
pub fn is_ours(object: &Value, op_id: &str) -> bool {
    object.get("client_reference").and_then(Value::as_str) == Some(op_id)
        || object
            .pointer("/metadata/operation_id")
            .and_then(Value::as_str)
            == Some(op_id)
}

fn sighting(object: &Value, how: &str) -> Option<Sighting> {
    let id = object
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| usable_id(id))?;
    let status = object.get("status").and_then(Value::as_str);
    let described = status.unwrap_or("without a status");
    Some(Sighting {
        id: id.to_owned(),
        outcome: status.and_then(outcome_of_status),
        evidence: format!("{how} found ours: object {id} is {described}"),
    })
}

fn lookup_failed(answer: &Answer, how: &str) -> Option<Lookup> {
    let reply = match answer {
        Ok(reply) => reply,
        Err(lost) => {
            return Some(Lookup::NoEvidence(format!(
                "{how} proved nothing ({})",
                lost.describe()
            )))
        }
    };
    if reply.status == 200 {
        return None;
    }
    let kind = serde_json::from_slice::<Value>(&reply.body)
        .ok()
        .and_then(|b| error_type(&b).map(str::to_owned))
        .unwrap_or_else(|| "error".to_owned());
    Some(Lookup::NoEvidence(format!(
        "{how} proved nothing (answered {} {kind})",
        reply.status
    )))
}

/// Reads `GET /v1/{resource}/{id}` for an id we know is ours. A 404 for it
/// is no proof of anything (a disabled retrieve answers the same bytes).
pub fn retrieve_lookup(answer: &Answer, id: &str) -> Lookup {
    let how = format!("retrieve of {id}");
    if let Some(failed) = lookup_failed(answer, &how) {
        return failed;
    }
    let object = answer
        .as_ref()
        .ok()
        .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok());
    match object.as_ref().and_then(|o| sighting(o, &how)) {
        Some(seen) if seen.id == id => Lookup::Found(seen),
        _ => Lookup::NoEvidence(format!("{how} proved nothing (unreadable object)")),
    }
}

/// Reads a search or list answer. Found: an object of ours (the known one
/// if it is there, else the oldest). Absent: the page is complete
/// (`has_more: false`) and holds nothing of ours.
pub fn listing_lookup(answer: &Answer, op_id: &str, known: Option<&str>, how: &str) -> Lookup {
    if let Some(failed) = lookup_failed(answer, how) {
        return failed;
    }
    let page = answer
        .as_ref()
        .ok()
        .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok());
    let data = page
        .as_ref()
        .and_then(|p| p.get("data"))
        .and_then(Value::as_array);
    let has_more = page
        .as_ref()
        .and_then(|p| p.get("has_more"))
        .and_then(Value::as_bool);
    let (Some(data), Some(has_more)) = (data, has_more) else {
        return Lookup::NoEvidence(format!("{how} proved nothing (unreadable page)"));
    };
    let ours: Vec<&Value> = data
        .iter()
        .take(MAX_LISTED)
        .filter(|o| is_ours(o, op_id))
        .collect();
    // Pages are newest first, so the last of ours is the first created.
    let chosen = ours
        .iter()
        .find(|o| known.is_some() && o.get("id").and_then(Value::as_str) == known)
        .or_else(|| ours.last());
    if let Some(object) = chosen {
        return match sighting(object, how) {
            Some(mut seen) => {
                if ours.len() > 1 {
                    seen.evidence
                        .push_str(&format!(" ({} objects carry our reference)", ours.len()));
                }
                Lookup::Found(seen)
            }
            None => Lookup::NoEvidence(format!("{how} found ours without a readable id")),
        };
    }
    if has_more || data.len() > MAX_LISTED {
        Lookup::NoEvidence(format!(
            "{how} proved nothing (page cut short, none of ours on it)"
        ))
    } else {
        Lookup::Absent(format!(
            "{how} answered a complete page with nothing of ours"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::designs::client::{Loss, Lost};
    use serde_json::json;

    fn reply(status: u16, body: &Value) -> Answer {
        Ok(Reply {
            status,
            replayed: false,
            problem_json: false,
            body: body.to_string().into_bytes(),
        })
    }

    fn verdict(answer: &Answer, mode: KeyMode) -> &'static str {
        match create_verdict(answer, mode, "create") {
            CreateVerdict::Effect {
                outcome: OutcomeKind::Succeeded,
                ..
            } => "succeeded",
            CreateVerdict::Effect {
                outcome: OutcomeKind::Pending,
                ..
            } => "pending",
            CreateVerdict::Effect { .. } => "effect",
            CreateVerdict::Rejected { .. } => "rejected",
            CreateVerdict::RateLimited { .. } => "rate-limited",
            CreateVerdict::InFlight { .. } => "in-flight",
            CreateVerdict::Mismatch { .. } => "mismatch",
            CreateVerdict::Ambiguous { .. } => "ambiguous",
        }
    }

    #[test]
    fn create_answers_follow_the_contract_table() {
        let object = |status| json!({"id": "tkt_abc", "status": status});
        let error = |kind| json!({"error": {"type": kind}});
        let stripe = KeyMode::Stripe;
        assert_eq!(
            verdict(&reply(201, &object("succeeded")), stripe),
            "succeeded"
        );
        assert_eq!(
            verdict(&reply(202, &object("processing")), stripe),
            "pending"
        );
        assert_eq!(verdict(&reply(201, &object("weird")), stripe), "ambiguous");
        assert_eq!(
            verdict(&reply(400, &error("invalid_request")), stripe),
            "rejected"
        );
        assert_eq!(
            verdict(&reply(401, &error("unauthorized")), stripe),
            "rejected"
        );
        assert_eq!(
            verdict(&reply(404, &error("not_found")), stripe),
            "rejected"
        );
        assert_eq!(
            verdict(&reply(413, &error("payload_too_large")), stripe),
            "rejected"
        );
        assert_eq!(
            verdict(&reply(429, &error("rate_limited")), stripe),
            "rate-limited"
        );
        assert_eq!(
            verdict(&reply(400, &error("idempotency_error")), stripe),
            "mismatch"
        );
        let in_use =
            json!({"error": {"type": "idempotency_error", "code": "idempotency_key_in_use"}});
        assert_eq!(verdict(&reply(409, &in_use), stripe), "in-flight");
        assert_eq!(
            verdict(&reply(409, &error("conflict")), stripe),
            "ambiguous"
        );
        assert_eq!(
            verdict(&reply(500, &error("api_error")), stripe),
            "ambiguous"
        );
        assert_eq!(
            verdict(&reply(503, &error("api_error")), stripe),
            "ambiguous"
        );
        let garbled = Ok(Reply {
            status: 201,
            replayed: false,
            problem_json: false,
            body: b"{\"id\":\"tk".to_vec(),
        });
        assert_eq!(verdict(&garbled, stripe), "ambiguous");
        let timeout = Err(Lost {
            request: "POST /v1/tickets".to_owned(),
            loss: Loss::Timeout {
                status: None,
                received: 0,
            },
            timeout_ms: 250,
        });
        assert_eq!(verdict(&timeout, stripe), "ambiguous");
    }

    #[test]
    fn ietf_speaks_problem_json() {
        let problem = |status: u16| {
            Ok(Reply {
                status,
                replayed: false,
                problem_json: true,
                body: json!({"type": "urn:lostreply:problem:x", "status": status})
                    .to_string()
                    .into_bytes(),
            })
        };
        assert_eq!(verdict(&problem(409), KeyMode::Ietf), "in-flight");
        assert_eq!(verdict(&problem(422), KeyMode::Ietf), "mismatch");
        assert_eq!(verdict(&problem(400), KeyMode::Ietf), "rejected");
    }

    #[test]
    fn only_a_complete_page_without_ours_proves_absence() {
        let page = |data: Value, has_more| reply(200, &json!({"data": data, "has_more": has_more}));
        let theirs = json!({"id": "tkt_1", "status": "succeeded", "client_reference": null,
                            "args": {"title": "same"}, "metadata": {}});
        let ours = json!({"id": "tkt_2", "status": "processing", "client_reference": null,
                          "metadata": {"operation_id": "op-1"}});
        let absent = listing_lookup(&page(json!([theirs.clone()]), false), "op-1", None, "list");
        assert!(matches!(absent, Lookup::Absent(_)));
        let cut = listing_lookup(&page(json!([theirs.clone()]), true), "op-1", None, "list");
        assert!(matches!(cut, Lookup::NoEvidence(_)));
        let found = listing_lookup(&page(json!([theirs, ours]), true), "op-1", None, "list");
        assert!(
            matches!(found, Lookup::Found(Sighting { ref id, outcome: Some(OutcomeKind::Pending), .. }) if id == "tkt_2")
        );
        let unsupported = reply(400, &json!({"error": {"type": "unsupported_query"}}));
        assert!(matches!(
            listing_lookup(&unsupported, "op-1", None, "search"),
            Lookup::NoEvidence(_)
        ));
        let no_has_more = reply(200, &json!({"data": []}));
        assert!(matches!(
            listing_lookup(&no_has_more, "op-1", None, "search"),
            Lookup::NoEvidence(_)
        ));
    }

    #[test]
    fn a_404_on_retrieve_proves_nothing() {
        let missing = reply(404, &json!({"error": {"type": "not_found"}}));
        assert!(matches!(
            retrieve_lookup(&missing, "tkt_1"),
            Lookup::NoEvidence(_)
        ));
        let found = reply(200, &json!({"id": "tkt_1", "status": "succeeded"}));
        assert!(matches!(retrieve_lookup(&found, "tkt_1"), Lookup::Found(_)));
    }
}

//! The JSON Schema of the scenario format, for editors. Derived from the raw
//! serde types; the few types with a hand-written `Deserialize` get a
//! hand-written schema here, kept next to each other so they change together.

use std::borrow::Cow;

use lostreply_simulator::IdempotencyMode;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::raw::{
    DurationText, ModeName, RawCrash, RawEvent, RawGather, RawResolveOutcome, RawResponse,
    RawScenario, RawStallOptions, RawStep,
};

/// A JSON Schema (draft 2020-12) describing scenario files, format v1.
///
/// Point an editor's YAML language server at it to complete and check scenarios.
/// Checks that need the whole file (undeclared operations, impossible fault
/// rules, step numbers) are the parser's alone.
pub fn schema() -> serde_json::Value {
    schemars::schema_for!(RawScenario).to_value()
}

/// The pattern a duration must have (humantime's grammar, loosely: the parser is
/// the judge of unit names).
const DURATION_PATTERN: &str = r"^\s*([0-9]+\s*[a-zA-Zµ]+\s*)+$";

impl JsonSchema for DurationText {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": DURATION_PATTERN,
            "description": "A duration with its unit: 300ms, 60s, 2m, 25h, 1h 30m.",
            "examples": ["300ms", "60s", "2m", "25h"],
        })
    }
}

impl JsonSchema for ModeName {
    fn schema_name() -> Cow<'static, str> {
        "IdempotencyMode".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = IdempotencyMode::ALL.iter().map(|m| m.name()).collect();
        json_schema!({
            "type": "string",
            "enum": names,
            "description": "none, stripe and ietf are honest; the others are known-bad \
                            servers for vendor certification.",
        })
    }
}

impl JsonSchema for RawResponse {
    fn schema_name() -> Cow<'static, str> {
        "FaultResponse".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let stall = generator.subschema_for::<RawStallOptions>();
        let gather = generator.subschema_for::<RawGather>();
        let duration = generator.subschema_for::<DurationText>();
        json_schema!({
            "description": "What the client observes.",
            "oneOf": [
                {
                    "type": "string",
                    "enum": ["drop", "reset", "stall", "idle", "ok"],
                    "description": "drop: close without a byte; reset: TCP RST; stall: hold \
                                    until the client gives up; idle: headers then silence; \
                                    ok: served normally.",
                },
                one_key("stall", stall, "Hold the response; `then` says what a before_commit stall does once the hold ends, `until` when it ends."),
                one_key("delay", duration, "Wait this long (real time), then serve normally."),
                one_key(
                    "status",
                    json_schema!({"type": "integer", "minimum": 400, "maximum": 599}),
                    "Answer with this HTTP error status instead.",
                ),
                one_key(
                    "partial",
                    json_schema!({"type": "integer", "minimum": 0, "maximum": super::validate::MAX_PARTIAL_BYTES}),
                    "Send status, headers and this many body bytes, then close.",
                ),
                one_key("gather", gather, "Hold matching requests until enough of them meet, then serve them all."),
            ],
        })
    }
}

/// `{key: value}` and nothing else.
fn one_key(key: &str, value: Schema, description: &str) -> Schema {
    json_schema!({
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": false,
        "description": description,
    })
}

impl JsonSchema for RawStep {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let op = json_schema!({"type": "string", "description": "An operation id."});
        let crash = generator.subschema_for::<RawCrash>();
        let event = generator.subschema_for::<RawEvent>();
        let outcome = generator.subschema_for::<RawResolveOutcome>();
        let duration = generator.subschema_for::<DurationText>();

        let execute = form(
            "Call `execute` for an operation; `crash` kills the adapter when the effect commits.",
            &[("execute", op.clone()), ("crash", crash.clone())],
            &["execute"],
        );
        let reconcile = form(
            "Call `reconcile` for an operation.",
            &[("reconcile", op.clone()), ("crash", crash)],
            &["reconcile"],
        );
        let status = form(
            "Call `status` (it must send nothing to the provider).",
            &[("status", op.clone())],
            &["status"],
        );
        let advance = form(
            "Move the simulator clock.",
            &[("advance", duration)],
            &["advance"],
        );
        let webhook = form(
            "Deliver the provider's event about the operation's object to the adapter.",
            &[
                ("webhook", op.clone()),
                ("event", event),
                (
                    "duplicate",
                    json_schema!({
                        "type": "integer", "minimum": 1, "maximum": super::validate::MAX_DELIVERIES,
                        "description": "Total deliveries of the same event (default 1).",
                    }),
                ),
                (
                    "forged",
                    json_schema!({"type": "boolean", "description": "Sign with a wrong secret (default false)."}),
                ),
            ],
            &["webhook", "event"],
        );
        let resolve = form(
            "An operator's decision.",
            &[
                ("resolve", op),
                ("outcome", outcome),
                (
                    "provider_ref",
                    json_schema!({
                        "type": ["string", "null"],
                        "description": "`ledger` (the operation's effect in the ledger), null, or a literal object id.",
                    }),
                ),
                (
                    "evidence",
                    json_schema!({"type": "string", "description": "Default: operator decision."}),
                ),
            ],
            &["resolve", "outcome", "provider_ref"],
        );
        let parallel = form(
            "Run adapter calls at once (no advance and no nested parallel inside).",
            &[(
                "parallel",
                json_schema!({
                    "type": "array",
                    "minItems": 2,
                    "maxItems": super::validate::MAX_PARALLEL,
                    "items": {"oneOf": [
                        execute.clone(), reconcile.clone(), status.clone(), webhook.clone(), resolve.clone(),
                    ]},
                }),
            )],
            &["parallel"],
        );
        json_schema!({
            "description": "One step: exactly one action key.",
            "oneOf": [execute, reconcile, status, advance, parallel, webhook, resolve],
        })
    }
}

/// A closed mapping with these keys.
fn form(description: &str, keys: &[(&str, Schema)], required: &[&str]) -> Schema {
    let properties: serde_json::Map<String, serde_json::Value> = keys
        .iter()
        .map(|(key, schema)| ((*key).to_owned(), schema.clone().to_value()))
        .collect();
    json_schema!({
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

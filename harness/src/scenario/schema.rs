//! The JSON Schema of the scenario format, for editors. Derived from the raw
//! serde types; the few types with a hand-written `Deserialize` get a
//! hand-written schema here, kept next to each other so they change together.

use std::borrow::Cow;

use lostreply_simulator::mcp::{Defect, Revision};
use lostreply_simulator::IdempotencyMode;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::client_profiles::profile_names;
use super::raw::{
    DefectName, DurationText, ModeName, ProfileName, ProviderProfileName, RawCall, RawCallStall,
    RawCommitPoint, RawCrash, RawDuring, RawEvent, RawGather, RawHttpCall, RawIsError, RawPrime,
    RawResolveOutcome, RawResponse, RawRpcError, RawScenario, RawSlow, RawStallOptions,
    RawStatusFull, RawStep, RawTaskCall, RevisionName, WindowText,
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

impl JsonSchema for ProviderProfileName {
    fn schema_name() -> Cow<'static, str> {
        "ProviderProfile".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The wire the provider speaks: a built-in profile, or a profile file \
                            relative to the scenario's directory.",
            "anyOf": [
                {"type": "string", "enum": lostreply_simulator::profile::PROFILE_NAMES},
                {
                    "type": "string",
                    "pattern": PROFILE_PATH_PATTERN,
                    "description": "A profile file: a path with `/`, or ending .yaml or .yml.",
                },
            ],
        })
    }
}

/// What makes a profile's name a path (`provider_profile::looks_like_path`).
const PROFILE_PATH_PATTERN: &str = r"(/|\.ya?ml$)";

impl JsonSchema for RawResponse {
    fn schema_name() -> Cow<'static, str> {
        "FaultResponse".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let stall = generator.subschema_for::<RawStallOptions>();
        let gather = generator.subschema_for::<RawGather>();
        let duration = generator.subschema_for::<DurationText>();
        let status_full = generator.subschema_for::<RawStatusFull>();
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
                    json_schema!({"oneOf": [
                        {"type": "integer", "minimum": 400, "maximum": 599},
                        status_full,
                    ]}),
                    "Answer with this HTTP error status instead; as {code, retry_after}, with \
                     the Retry-After it carries (whole seconds; 429 and 503 only).",
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

impl JsonSchema for RevisionName {
    fn schema_name() -> Cow<'static, str> {
        "McpRevision".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = Revision::ALL.iter().map(|r| r.name()).collect();
        json_schema!({
            "type": "string",
            "enum": names,
            "description": "An MCP protocol revision (the MCP-Protocol-Version value).",
        })
    }
}

impl JsonSchema for DefectName {
    fn schema_name() -> Cow<'static, str> {
        "McpDefect".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = Defect::ALL.iter().map(|d| d.name()).collect();
        json_schema!({
            "type": "string",
            "enum": names,
            "description": "A known-bad behaviour of the MCP server.",
        })
    }
}

impl JsonSchema for ProfileName {
    fn schema_name() -> Cow<'static, str> {
        "ClientProfile".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "enum": profile_names(),
            "description": "A named MCP client profile with real clients' windows (docs/scenario-format.md).",
        })
    }
}

impl JsonSchema for WindowText {
    fn schema_name() -> Cow<'static, str> {
        "Window".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let duration = generator.subschema_for::<DurationText>();
        json_schema!({
            "description": "A client window in real figures (scaled by client.scale), or `none`: no such limit.",
            "anyOf": [duration, {"type": "string", "const": "none"}],
        })
    }
}

impl JsonSchema for RawCall {
    fn schema_name() -> Cow<'static, str> {
        "McpFault".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let slow = generator.subschema_for::<RawSlow>();
        let stall = generator.subschema_for::<RawCallStall>();
        let duration = generator.subschema_for::<DurationText>();
        let is_error = generator.subschema_for::<RawIsError>();
        let rpc_error = generator.subschema_for::<RawRpcError>();
        let http = generator.subschema_for::<RawHttpCall>();
        let at = generator.subschema_for::<RawCommitPoint>();
        let task = generator.subschema_for::<RawTaskCall>();
        let prime = generator.subschema_for::<RawPrime>();
        json_schema!({
            "description": "What a matching MCP tools/call meets. Real-time durations are written in real figures and scaled by mcp.client.scale.",
            "oneOf": [
                {
                    "type": "string",
                    "enum": super::raw::PLAIN_CALLS,
                    "description": "ok: served normally; never: commit, then no answer; stall: \
                                    hold until the client leaves, then abandon; drop/reset: \
                                    close (FIN) or abort (RST) after the commit; \
                                    prime_then_close: one priming event, then the stream closes \
                                    (abandon).",
                },
                one_key("slow", slow, "Work this long, then commit and answer; the stream carries `stream` meanwhile."),
                one_key("stall", stall, "Hold the call, then commit or abandon."),
                one_key("late", duration, "Commit, then answer this late, whether or not the client still waits."),
                one_key("is_error", is_error, "A tool error result (isError: true) carrying an HTTP-like status."),
                one_key("rpc_error", rpc_error, "A JSON-RPC error after the commit."),
                one_key("http", http, "An HTTP status instead of a JSON-RPC answer."),
                one_key("drop", at.clone(), "Close the connection without an answer (FIN)."),
                one_key("reset", at, "Abort the connection (RST)."),
                one_key("task", task, "The call becomes a background task (when the client asks for one)."),
                one_key("prime_then_close", prime, "One priming SSE event, then the stream closes without the response."),
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
        let webhook = webhook_form(op.clone(), event);
        let resolve = resolve_form(op, outcome);
        let during = generator.subschema_for::<RawDuring>();
        let items: Vec<Schema> = [&execute, &reconcile, &status, &webhook, &resolve]
            .into_iter()
            .map(|call| with_during(call, &during))
            .collect();
        let parallel = parallel_form(items);
        json_schema!({
            "description": "One step: exactly one action key.",
            "oneOf": [execute, reconcile, status, advance, parallel, webhook, resolve],
        })
    }
}

/// The `webhook` step's form.
fn webhook_form(op: Schema, event: Schema) -> Schema {
    form(
        "Deliver the provider's event about the operation's object to the adapter.",
        &[
            ("webhook", op),
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
    )
}

/// The `resolve` step's form.
fn resolve_form(op: Schema, outcome: Schema) -> Schema {
    form(
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
    )
}

/// The `parallel` step's form, its calls one of `items`.
fn parallel_form(items: Vec<Schema>) -> Schema {
    form(
        "Run adapter calls at once (no advance and no nested parallel inside). A call \
         with `during` starts once the provider holds another call's request that \
         matches, and that answer waits until the call has returned.",
        &[(
            "parallel",
            json_schema!({
                "type": "array",
                "minItems": 2,
                "maxItems": super::validate::MAX_PARALLEL,
                "items": {"oneOf": items},
            }),
        )],
        &["parallel"],
    )
}

/// A call's form as a `parallel` item: the same keys, and `during`.
fn with_during(call: &Schema, during: &Schema) -> Schema {
    let mut item = call.clone().to_value();
    if let Some(properties) = item
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    {
        properties.insert("during".to_owned(), during.clone().to_value());
    }
    Schema::try_from(item).unwrap_or_else(|_| call.clone())
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

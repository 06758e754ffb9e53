//! The design rules of mcp.md read from `tools/list`: pure functions over the
//! listed tools, each filling the trail of its finding. What a description
//! "says" is read generously (several phrasings pass) because the rule is that
//! a model and a person can learn it from the text, not that it uses our words.

use serde_json::Value;

use super::contract::RetrievalSpec;
use crate::probes::Trail;

/// The listed tools, read once.
#[derive(Debug, Clone)]
pub struct Tools {
    /// Every tool as listed.
    pub all: Vec<Value>,
    /// Names of the paid (not read-only, not retrieval) tools.
    pub paid: Vec<String>,
}

fn name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or("")
}

fn description(tool: &Value) -> String {
    tool.get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn annotation(tool: &Value, hint: &str) -> Option<bool> {
    tool.get("annotations")
        .and_then(|a| a.get(hint))
        .and_then(Value::as_bool)
}

/// Input property names of a tool.
fn properties(tool: &Value) -> Vec<String> {
    tool.get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

impl Tools {
    /// Reads a `tools/list` result. A tool is paid unless it is a retrieval
    /// tool or annotated `readOnlyHint: true` (MCP's default is not read-only).
    pub fn read(result: &Value, spec: &RetrievalSpec) -> Option<Tools> {
        let all = result.get("tools")?.as_array()?.clone();
        let paid = all
            .iter()
            .filter(|t| {
                let n = name(t);
                n != spec.get && n != spec.list && annotation(t, "readOnlyHint") != Some(true)
            })
            .map(|t| name(t).to_owned())
            .collect();
        Some(Tools { all, paid })
    }

    /// The listed tool of that name.
    pub fn find(&self, tool: &str) -> Option<&Value> {
        self.all.iter().find(|t| name(t) == tool)
    }

    fn paid_tools(&self) -> impl Iterator<Item = &Value> {
        self.all
            .iter()
            .filter(|t| self.paid.iter().any(|p| p == name(t)))
    }
}

/// Whether `text` states a duration: a number, perhaps a range, then a unit
/// ("budget 1-3 s", "180–300 seconds", "about 2 min", "7 days").
pub fn states_duration(text: &str, with_days: bool) -> bool {
    let lower = text.to_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || "-–. to".contains(chars[j])) {
                j += 1;
            }
            let unit: String = chars[j..]
                .iter()
                .take_while(|c| c.is_alphabetic())
                .collect();
            let short = [
                "s", "sec", "secs", "second", "seconds", "ms", "min", "mins", "minute", "minutes",
                "h", "hr", "hrs", "hour", "hours",
            ];
            let long = ["d", "day", "days", "week", "weeks"];
            if short.contains(&unit.as_str()) || (with_days && long.contains(&unit.as_str())) {
                return true;
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    false
}

/// Whether an argument name asks for a credential.
pub fn is_credential_argument(arg: &str) -> bool {
    let flat: String = arg
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    [
        "apikey",
        "token",
        "secret",
        "password",
        "credential",
        "authorization",
        "bearer",
    ]
    .iter()
    .any(|w| flat.contains(w))
        || flat == "key"
        || flat == "auth"
}

/// The credential argument the retrieval tools require, if any.
pub fn credential_argument(tools: &Tools, spec: &RetrievalSpec) -> Option<String> {
    [&spec.get, &spec.list]
        .iter()
        .filter_map(|n| tools.find(n))
        .flat_map(properties)
        .find(|p| *p != spec.id_argument && is_credential_argument(p))
}

/// `id_in_every_result`, from what is listed: the output schema has the id
/// field, or the description names it. (A real call, when allowed, decides
/// for the tool it called.)
pub fn id_by_listing(tools: &Tools, spec: &RetrievalSpec, except: Option<&str>, t: &mut Trail) {
    let field = spec.id_at.rsplit('/').next().unwrap_or("operation_id");
    let spaced = field.replace('_', " ");
    for tool in tools.paid_tools().filter(|tl| Some(name(tl)) != except) {
        let in_schema = tool
            .get("outputSchema")
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(field))
            .is_some();
        let text = description(tool).to_lowercase();
        if in_schema || text.contains(field) || text.contains(&spaced) {
            t.held(format!(
                "{}: the {} says results carry `{field}`",
                name(tool),
                if in_schema {
                    "output schema"
                } else {
                    "description"
                }
            ));
        } else {
            t.fail(format!(
                "{}: neither its output schema nor its description promises `{field}` in its results",
                name(tool)
            ));
            t.note(format!("{} description: {}", name(tool), description(tool)));
        }
    }
}

/// `duration_stated`.
pub fn duration_stated(tools: &Tools, t: &mut Trail) {
    if tools.paid.is_empty() {
        t.skip("no paid tool is listed");
        return;
    }
    for tool in tools.paid_tools() {
        if states_duration(&description(tool), false) {
            t.held(format!("{}: states its expected duration", name(tool)));
        } else {
            t.fail(format!(
                "{}: the description states no expected duration (say e.g. \"budget 180-300 s\")",
                name(tool)
            ));
            t.note(format!("{} description: {}", name(tool), description(tool)));
        }
    }
}

/// `timeout_is_client_setting`.
pub fn timeout_is_client_setting(tools: &Tools, t: &mut Trail) {
    for tool in &tools.all {
        for p in properties(tool) {
            if p.to_ascii_lowercase().contains("timeout") {
                t.fail(format!(
                    "{}: takes a `{p}` parameter, but the client, not the call, owns the time limit",
                    name(tool)
                ));
                t.note(format!(
                    "{} inputSchema: {}",
                    name(tool),
                    tool.get("inputSchema").unwrap_or(&Value::Null)
                ));
            }
        }
    }
    for tool in tools.paid_tools() {
        let text = description(tool).to_lowercase();
        let says = text.contains("timeout")
            && (text.contains("client") || text.contains("not a parameter"));
        if says {
            t.held(format!(
                "{}: says the timeout is a client setting",
                name(tool)
            ));
        } else {
            t.fail(format!(
                "{}: the description does not say the timeout is a setting of the client",
                name(tool)
            ));
            t.note(format!("{} description: {}", name(tool), description(tool)));
        }
    }
}

/// `retrieval_read_only`.
pub fn retrieval_read_only(tools: &Tools, spec: &RetrievalSpec, t: &mut Trail) {
    for wanted in [&spec.get, &spec.list] {
        match tools.find(wanted) {
            None => t.fail(format!("no retrieval tool `{wanted}` is listed")),
            Some(tool) => {
                let ro = annotation(tool, "readOnlyHint");
                let idem = annotation(tool, "idempotentHint");
                if ro == Some(true) && idem == Some(true) {
                    t.held(format!("{wanted}: readOnlyHint and idempotentHint"));
                } else {
                    t.fail(format!(
                        "{wanted}: annotations say readOnlyHint {} and idempotentHint {} (both must be true, or an agent may not call it freely)",
                        ro.map_or("unset".to_owned(), |b| b.to_string()),
                        idem.map_or("unset".to_owned(), |b| b.to_string()),
                    ));
                }
                t.note(format!(
                    "{wanted} annotations: {}",
                    tool.get("annotations").unwrap_or(&Value::Null)
                ));
            }
        }
    }
}

/// `not_yours_rule_written`.
pub fn not_yours_rule_written(tools: &Tools, spec: &RetrievalSpec, t: &mut Trail) {
    let Some(tool) = tools.find(&spec.get) else {
        t.skip(format!(
            "no retrieval tool `{}` is listed, so no description to read (see retrieval_read_only)",
            spec.get
        ));
        return;
    };
    let text = description(tool).to_lowercase();
    let names_other = [
        "not yours",
        "another credential",
        "other credential",
        "another tenant",
        "belongs to",
        "someone else",
    ]
    .iter()
    .any(|w| text.contains(w));
    let says_alike = [
        "exactly like",
        "identical",
        "the same as",
        "same answer",
        "indistinguishable",
        "like one that does not exist",
        "like an unknown",
    ]
    .iter()
    .any(|w| text.contains(w));
    t.note(format!("{}: {}", spec.get, description(tool)));
    if names_other && says_alike {
        t.held(format!(
            "{}: the description says not-yours answers like unknown",
            spec.get
        ));
    } else {
        t.fail(format!(
            "{}: the description does not say that an id that is not yours answers exactly like one that does not exist",
            spec.get
        ));
    }
}

/// The description half of `retention_declared`.
pub fn retention_in_descriptions(tools: &Tools, spec: &RetrievalSpec, t: &mut Trail) -> bool {
    let listed: Vec<&Value> = [&spec.get, &spec.list]
        .iter()
        .filter_map(|n| tools.find(n))
        .collect();
    if listed.is_empty() {
        t.skip("no retrieval tool is listed, so no retention to declare (see retrieval_read_only)");
        return false;
    }
    let stated = listed
        .into_iter()
        .find(|tool| states_duration(&description(tool), true));
    match stated {
        Some(tool) => {
            t.held(format!(
                "{}: the description states the retention",
                name(tool)
            ));
            true
        }
        None => {
            t.fail("no retrieval tool's description states how long ids retrieve");
            false
        }
    }
}

/// `credentials_host_side`.
pub fn credentials_host_side(tools: &Tools, spec: &RetrievalSpec, t: &mut Trail) {
    let mut seen = false;
    for wanted in [&spec.get, &spec.list] {
        let Some(tool) = tools.find(wanted) else {
            continue;
        };
        seen = true;
        let asks: Vec<String> = properties(tool)
            .into_iter()
            .filter(|p| *p != spec.id_argument && is_credential_argument(p))
            .collect();
        if asks.is_empty() {
            t.held(format!("{wanted}: takes no credential argument"));
        } else {
            t.fail(format!(
                "{wanted}: takes `{}`: the credential would pass through the model's context; retrieval must act for the transport's credential",
                asks.join("`, `")
            ));
            t.note(format!(
                "{wanted} inputSchema: {}",
                tool.get("inputSchema").unwrap_or(&Value::Null)
            ));
        }
    }
    if !seen {
        t.skip("no retrieval tool is listed (see retrieval_read_only)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_in_several_phrasings() {
        assert!(states_duration("Expected duration: budget 1-3 s.", false));
        assert!(states_duration("takes 180–300 seconds", false));
        assert!(states_duration("about 2 min", false));
        assert!(!states_duration("Ids retrieve for 7 days.", false));
        assert!(states_duration("Ids retrieve for 7 days.", true));
        assert!(!states_duration("create_v2 makes 1 ticket", false));
        assert!(!states_duration("", false));
    }

    #[test]
    fn credential_arguments_are_recognised_and_keys_are_not() {
        for arg in [
            "api_key",
            "apiKey",
            "token",
            "access_token",
            "Authorization",
            "key",
        ] {
            assert!(is_credential_argument(arg), "{arg}");
        }
        for arg in ["id", "idempotency_key", "title", "operation_id"] {
            assert!(!is_credential_argument(arg), "{arg}");
        }
    }
}

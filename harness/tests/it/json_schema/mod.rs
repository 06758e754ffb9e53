//! A small JSON Schema checker for the schema tests: the keywords the
//! scenario and profile schemas use (`pattern` is approximated: a duration
//! must start with a digit).

use serde_json::Value;

/// Checks `value` against `schema` (a part of `root`, which holds the `$defs`).
pub fn check(root: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let fail = |why: String| Err(format!("{at}: {why}"));
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/").unwrap();
        check(root, &root["$defs"][name], value, at)?;
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().map(|t| t.as_str().unwrap()).collect(),
            other => panic!("type {other}"),
        };
        let fits = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            other => panic!("type {other}"),
        });
        if !fits {
            return fail(format!("{value} is not {types:?}"));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            return fail(format!("{value} not in {allowed:?}"));
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            return fail(format!("{value} is not {constant}"));
        }
    }
    if let Some(n) = value.as_f64() {
        if schema
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|min| n < min)
        {
            return fail(format!("{n} below minimum"));
        }
        if schema
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|max| n > max)
        {
            return fail(format!("{n} above maximum"));
        }
    }
    if schema.get("pattern").is_some() {
        let text = value.as_str().unwrap_or("");
        if !text.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
            return fail(format!("{value} does not match the pattern"));
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !object.contains_key(required.as_str().unwrap()) {
                return fail(format!("missing {required}"));
            }
        }
        if let Some(names) = schema.get("propertyNames") {
            for key in object.keys() {
                check(
                    root,
                    names,
                    &Value::String(key.clone()),
                    &format!("{at}.{key}"),
                )?;
            }
        }
        for (key, item) in object {
            let here = format!("{at}.{key}");
            match properties.and_then(|p| p.get(key)) {
                Some(property) => check(root, property, item, &here)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return fail(format!("unknown key {key}")),
                    Some(extra @ Value::Object(_)) => check(root, extra, item, &here)?,
                    _ => {}
                },
            }
        }
    }
    if let Some(items) = value.as_array() {
        let count = items.len() as u64;
        if schema
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|min| count < min)
        {
            return fail("too few items".into());
        }
        if schema
            .get("maxItems")
            .and_then(Value::as_u64)
            .is_some_and(|max| count > max)
        {
            return fail("too many items".into());
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(root, item_schema, item, &format!("{at}[{i}]"))?;
            }
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        if !any.iter().any(|s| check(root, s, value, at).is_ok()) {
            return fail(format!("{value} fits none of anyOf"));
        }
    }
    if let Some(one) = schema.get("oneOf").and_then(Value::as_array) {
        let fitting = one
            .iter()
            .filter(|s| check(root, s, value, at).is_ok())
            .count();
        if fitting != 1 {
            return fail(format!("{value} fits {fitting} of oneOf"));
        }
    }
    Ok(())
}

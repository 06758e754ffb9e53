//! A YAML value that remembers where each of its parts was written: the
//! templates and constants of a profile, checked (JSON-compatible, bounded,
//! placeholders known) at the exact line and column of the offending leaf,
//! then turned into the JSON the simulator fills.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::common::{Found, MAX_TEMPLATE_DEPTH, MAX_TEMPLATE_NODES};
use crate::scenario::span::{Pos, Sp};

/// One YAML node, its children with their positions.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Number(Number),
    /// A float JSON cannot hold (`.nan`, `.inf`): reported where it stands.
    NotJson(f64),
    Text(String),
    List(Vec<Sp<Node>>),
    Mapping(Vec<(Sp<String>, Sp<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-compatible value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Number::from_f64(v).map_or(Node::NotJson(v), Node::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Text(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Sp<Node>>()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Sp<String>>()? {
            entries.push((key, map.next_value::<Sp<Node>>()?));
        }
        Ok(Node::Mapping(entries))
    }
}

/// Which placeholders a template's string leaves may hold (`None`: a
/// constant, copied as written, where braces mean nothing).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placeholders {
    /// What the template is, for messages (`errors.envelope`).
    pub what: &'static str,
    /// The names it knows.
    pub known: Option<&'static [&'static str]>,
}

/// The JSON of `node`, every problem recorded at its place: a float JSON
/// cannot hold, nesting deeper than [`MAX_TEMPLATE_DEPTH`], more than
/// [`MAX_TEMPLATE_NODES`] values, an unknown placeholder.
pub(crate) fn to_json(
    found: &mut Found,
    node: &Node,
    pos: Pos,
    placeholders: Placeholders,
) -> Value {
    let mut walk = Walk {
        found,
        placeholders,
        nodes: 0,
        too_many_at: None,
    };
    let value = walk.value(node, pos, 1);
    if let Some(pos) = walk.too_many_at {
        walk.found.error(
            pos,
            format!(
                "{} holds more than {MAX_TEMPLATE_NODES} values; a provider's shape is smaller",
                placeholders.what
            ),
        );
    }
    value
}

struct Walk<'f, 'a> {
    found: &'f mut Found<'a>,
    placeholders: Placeholders,
    nodes: usize,
    too_many_at: Option<Pos>,
}

impl Walk<'_, '_> {
    fn value(&mut self, node: &Node, pos: Pos, depth: usize) -> Value {
        self.nodes += 1;
        if self.nodes > MAX_TEMPLATE_NODES {
            self.too_many_at.get_or_insert(pos);
            return Value::Null;
        }
        match node {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::NotJson(f) => {
                self.found.error(
                    pos,
                    format!("`{f}` is not a JSON number: templates and constants are JSON values"),
                );
                Value::Null
            }
            Node::Text(text) => {
                self.check_placeholders(pos, text);
                Value::String(text.clone())
            }
            Node::List(_) if self.deep(pos, depth) => Value::Array(Vec::new()),
            Node::List(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.value(&item.value, item.pos, depth + 1))
                    .collect(),
            ),
            Node::Mapping(_) if self.deep(pos, depth) => Value::Object(Map::new()),
            Node::Mapping(entries) => {
                let mut map = Map::new();
                for (key, item) in entries {
                    self.check_placeholders(key.pos, &key.value);
                    let value = self.value(&item.value, item.pos, depth + 1);
                    map.insert(key.value.clone(), value);
                }
                Value::Object(map)
            }
        }
    }

    /// Records a container nested too deep; true when it is.
    fn deep(&mut self, pos: Pos, depth: usize) -> bool {
        if depth <= MAX_TEMPLATE_DEPTH {
            return false;
        }
        self.found.error(
            pos,
            format!(
                "{} nests deeper than {MAX_TEMPLATE_DEPTH} levels",
                self.placeholders.what
            ),
        );
        true
    }

    fn check_placeholders(&mut self, pos: Pos, text: &str) {
        let Some(known) = self.placeholders.known else {
            return;
        };
        for name in placeholders_in(text) {
            if !known.contains(&name) {
                let list: Vec<String> = known.iter().map(|k| format!("{{{k}}}")).collect();
                self.found.error(
                    pos,
                    format!(
                        "unknown placeholder `{{{name}}}` in {}: it knows {}",
                        self.placeholders.what,
                        list.join(", ")
                    ),
                );
            }
        }
    }
}

/// The names of the `{name}` placeholders in `text` (a name: a letter or
/// `_`, then letters, digits and `_`); other braces are text.
pub(crate) fn placeholders_in(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || loop {
        let open = rest.find('{')?;
        let after = &rest[open + 1..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..end];
        rest = &after[end..];
        let starts_well = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if starts_well && rest.starts_with('}') {
            rest = &rest[1..];
            return Some(name);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_names_in_braces() {
        let found: Vec<&str> = placeholders_in("{type}: {message} {} {1} {a b} {{code}}").collect();
        assert_eq!(found, vec!["type", "message", "code"]);
    }
}

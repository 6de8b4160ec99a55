//! Destinations: the arguments that say where data goes (DESIGN.md sections 3 and 4).
//!
//! An argument is a destination by its name (`to`, `recipient_email`, `callbackUrl`,
//! `destinatário`) or by its schema `format` (`uri`, `email`, ... at any depth). The same
//! definition feeds inference (a destination makes a tool `sends_out`) and the call-time check
//! (a destination in a call to a `read` or `write` tool is refused), so the two never disagree.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use crate::words::split_identifier;

/// Words that make an argument a destination on their own or as the last word of its name.
const DESTINATION_WORDS: &[&str] = &[
    "to",
    "cc",
    "bcc",
    "recipient",
    "recipients",
    "email",
    "emails",
    "url",
    "urls",
    "uri",
    "uris",
    "webhook",
    "webhooks",
    "phone",
    "phones",
    "href",
    "para",
    "destinatario",
    "destinatarios",
    "endereco",
    "enderecos",
    "telefone",
    "telefones",
    "celular",
    "celulares",
    "whatsapp",
];
/// Words that are only destinations alone, never as the last word ("`go_to`", "`send_to`" are).
const ONLY_ALONE: &[&str] = &["to", "para"];
/// Last words that make a destination when an earlier word is one: `email_address`,
/// `phone_number`, `to_list`.
const DESTINATION_TAILS: &[&str] = &[
    "address",
    "addresses",
    "number",
    "numbers",
    "numero",
    "list",
];
/// First words that say the argument is a source, not a destination: `from_email`.
const SOURCE_HEADS: &[&str] = &["from", "sender", "de", "remetente", "reply"];

/// Schema formats that hold an address.
pub const DESTINATION_FORMATS: &[&str] = &[
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "email",
    "idn-email",
    "url",
];

/// Why an argument is a destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Because {
    /// Its name, through this word.
    Name(String),
    /// Its schema format.
    Format(String),
    /// Its own description says it is an address: "Helm repository URL".
    Described(String),
}

impl Because {
    pub fn describe(&self) -> String {
        match self {
            Self::Name(word) => format!("its name says '{word}'"),
            Self::Format(format) => format!("its schema format is {format}"),
            Self::Described(phrase) => format!("its description calls it '{phrase}'"),
        }
    }
}

/// Whether an argument name marks a destination; the deciding word if so.
pub fn destination_name(key: &str) -> Option<String> {
    let is = |list: &[&str], w: &str| list.contains(&w);
    let words = split_identifier(key);
    let first = words.first()?.as_ref();
    let last = words.last()?.as_ref();
    if words.len() == 1 {
        return is(DESTINATION_WORDS, last).then(|| last.to_owned());
    }
    if is(SOURCE_HEADS, first) {
        return None;
    }
    if is(DESTINATION_WORDS, last) && !is(ONLY_ALONE, last) {
        return Some(last.to_owned());
    }
    if is(DESTINATION_TAILS, last) {
        return words[..words.len() - 1]
            .iter()
            .find(|w| is(DESTINATION_WORDS, w))
            .map(|w| w.clone().into_owned());
    }
    None
}

/// Nouns that, heading an argument's description, make it an address.
const ADDRESS_NOUNS: &[&str] = &[
    "url",
    "urls",
    "uri",
    "uris",
    "email address",
    "email addresses",
    "e-mail address",
    "webhook",
];

/// Whether an argument's own description says it is an address: "Helm repository URL",
/// "The URL where events are sent", "URL do arquivo". Only the description's opening noun
/// phrase is read, and one that offers a choice ("ID or URL") or a source ("Sender email
/// address") is not a destination.
pub fn described_destination(description: &str) -> Option<String> {
    // The opening phrase is short; reading past it would only cost time.
    let head = description.trim_start();
    let head = &head[..head.char_indices().nth(80).map_or(head.len(), |(i, _)| i)];
    let lower = head.to_lowercase();
    if !["url", "uri", "mail", "webhook"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return None;
    }
    let mut end = lower
        .find(['.', ',', ';', ':', '(', '\n'])
        .unwrap_or(lower.len());
    for word in [
        " to ", " of ", " where ", " that ", " for ", " which ", " do ", " da ", " de ", " que ",
        " para ",
    ] {
        if let Some(at) = lower[..end].find(word) {
            end = at;
        }
    }
    let phrase = lower[..end].trim();
    let phrase = ["the ", "a ", "an ", "o ", "um ", "uma "]
        .iter()
        .find_map(|a| phrase.strip_prefix(a))
        .unwrap_or(phrase);
    if phrase.contains(" or ")
        || phrase.contains(" ou ")
        || phrase.starts_with("sender")
        || phrase.starts_with("from")
    {
        return None;
    }
    let starts_with = |lead: &str| {
        phrase == lead
            || phrase
                .strip_prefix(lead)
                .is_some_and(|r| r.starts_with(' '))
    };
    let ends_with =
        |tail: &str| phrase == tail || phrase.strip_suffix(tail).is_some_and(|r| r.ends_with(' '));
    let starts = [
        "url",
        "uri",
        "webhook url",
        "email address",
        "e-mail address",
        "endereço de e-mail",
        "endereco de email",
    ]
    .iter()
    .any(|lead| starts_with(lead));
    let ends = ADDRESS_NOUNS.iter().any(|tail| ends_with(tail));
    (starts || ends).then(|| phrase.to_owned())
}

/// A destination declared in a tool's input schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaDestination {
    /// `message.to`, `recipients[]`, `attachments[].url`.
    pub path: String,
    pub because: Because,
}

/// What a tool's schema says about destinations, ready for checking calls.
#[derive(Clone, Debug, Default)]
pub struct DestinationMap {
    declared: FxHashSet<String>,
    destinations: FxHashMap<String, Because>,
}

const MAX_DEPTH: usize = 24;

impl DestinationMap {
    /// Reads every property of a schema, at any depth, following local `$ref`s.
    pub fn from_schema(schema: Option<&Value>) -> Self {
        let mut map = Self::default();
        if let Some(schema) = schema {
            let mut walk = Walk {
                root: schema,
                map: &mut map,
                refs: Vec::new(),
            };
            walk.schema(schema, "", 0);
        }
        map
    }

    /// The declared destinations, in a stable order.
    pub fn declared_destinations(&self) -> Vec<SchemaDestination> {
        let mut list: Vec<SchemaDestination> = self
            .destinations
            .iter()
            .map(|(path, because)| SchemaDestination {
                path: path.clone(),
                because: because.clone(),
            })
            .collect();
        list.sort_by(|a, b| a.path.cmp(&b.path));
        list
    }

    /// The destinations present in a call's arguments, with non-empty values.
    pub fn find_in_call(&self, arguments: &Value) -> Vec<Found> {
        let mut found = Vec::new();
        if let Value::Object(map) = arguments {
            for (key, value) in map {
                self.visit(key, key, value, &mut found, 0);
            }
        }
        found
    }

    fn visit(
        &self,
        generic: &str,
        concrete: &str,
        value: &Value,
        found: &mut Vec<Found>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH || is_empty(value) {
            return;
        }
        let key = generic.rsplit(['.', '[']).next().unwrap_or(generic);
        let because = match self.destinations.get(generic) {
            Some(because) => Some(because.clone()),
            None if self.declared.contains(generic) => None,
            None => destination_name(key.trim_end_matches(']')).map(Because::Name),
        };
        if let Some(because) = because {
            match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate().filter(|(_, v)| !is_empty(v)) {
                        found.push(Found {
                            argument: format!("{concrete}[{i}]"),
                            value: text_of(item),
                            because: because.clone(),
                        });
                    }
                }
                _ => found.push(Found {
                    argument: concrete.to_owned(),
                    value: text_of(value),
                    because,
                }),
            }
            return;
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    self.visit(
                        &format!("{generic}.{k}"),
                        &format!("{concrete}.{k}"),
                        v,
                        found,
                        depth + 1,
                    );
                }
            }
            Value::Array(items) => {
                let generic = format!("{generic}[]");
                for (i, v) in items.iter().enumerate() {
                    self.visit(&generic, &format!("{concrete}[{i}]"), v, found, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// A destination in a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub argument: String,
    pub value: String,
    pub because: Because,
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

struct Walk<'a> {
    root: &'a Value,
    map: &'a mut DestinationMap,
    refs: Vec<&'a str>,
}

impl<'a> Walk<'a> {
    fn schema(&mut self, schema: &'a Value, path: &str, depth: usize) {
        let Value::Object(obj) = schema else { return };
        if depth > MAX_DEPTH {
            return;
        }
        // One pass over the keys: a schema node has few of them, and most are not ours.
        let mut items_path: Option<String> = None;
        let mut items = |path: &str| {
            items_path
                .get_or_insert_with(|| format!("{path}[]"))
                .clone()
        };
        for (key, sub) in obj {
            match (key.as_str(), sub) {
                ("$ref", Value::String(reference)) => self.follow(reference, path, depth),
                ("format", Value::String(format))
                    if !path.is_empty() && DESTINATION_FORMATS.contains(&format.as_str()) =>
                {
                    self.map
                        .destinations
                        .insert(path.to_owned(), Because::Format(format.clone()));
                }
                ("properties", Value::Object(properties)) => {
                    self.properties(properties, path, depth);
                }
                ("items" | "additionalItems" | "contains", _) => {
                    self.schema(sub, &items(path), depth + 1);
                }
                ("prefixItems", Value::Array(subs)) => {
                    let items = items(path);
                    for sub in subs {
                        self.schema(sub, &items, depth + 1);
                    }
                }
                ("anyOf" | "oneOf" | "allOf", Value::Array(subs)) => {
                    for sub in subs {
                        self.schema(sub, path, depth + 1);
                    }
                }
                ("if" | "then" | "else", _) => self.schema(sub, path, depth + 1),
                ("additionalProperties", Value::Object(_)) => {
                    self.schema(sub, &format!("{path}.*"), depth + 1);
                }
                ("patternProperties", Value::Object(patterns)) => {
                    let any = format!("{path}.*");
                    for sub in patterns.values() {
                        self.schema(sub, &any, depth + 1);
                    }
                }
                _ => {}
            }
        }
    }

    fn properties(
        &mut self,
        properties: &'a serde_json::Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        for (name, property) in properties {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            if let Some(word) = destination_name(name) {
                self.map
                    .destinations
                    .entry(child.clone())
                    .or_insert(Because::Name(word));
            } else if let Some(Value::String(text)) = property.get("description")
                && let Some(phrase) = described_destination(text)
            {
                self.map
                    .destinations
                    .entry(child.clone())
                    .or_insert(Because::Described(phrase));
            }
            self.schema(property, &child, depth + 1);
            self.map.declared.insert(child);
        }
    }

    fn follow(&mut self, reference: &'a str, path: &str, depth: usize) {
        let Some(pointer) = reference.strip_prefix('#') else {
            return;
        };
        if self.refs.contains(&reference) {
            return;
        }
        if let Some(target) = self.root.pointer(pointer) {
            self.refs.push(reference);
            self.schema(target, path, depth + 1);
            self.refs.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn destination_names_in_english_and_portuguese() {
        for key in [
            "to",
            "cc",
            "bcc",
            "recipients",
            "recipient_email",
            "toEmail",
            "email_address",
            "callbackUrl",
            "webhook_url",
            "phone_number",
            "url",
            "destinatário",
            "endereco",
            "telefone",
            "to_address",
            "image_url",
            "send_to_url",
        ] {
            assert!(
                destination_name(key).is_some(),
                "{key} should be a destination"
            );
        }
        for key in [
            "from_email",
            "sender_email",
            "to_date",
            "email_id",
            "email_subject",
            "subject",
            "owner",
            "repo",
            "path",
            "go_to",
            "address",
            "emailId",
            "channel_id",
            "url_path",
        ] {
            assert_eq!(
                destination_name(key),
                None,
                "{key} should not be a destination"
            );
        }
    }

    #[test]
    fn argument_descriptions_that_name_an_address() {
        for text in [
            "Helm repository URL (optional if using local chart path)",
            "The URL where webhook events will be sent",
            "URL do arquivo CSV",
            "Recipient email address to match",
        ] {
            assert!(described_destination(text).is_some(), "{text}");
        }
        for text in [
            "Sentry issue ID or URL to analyze",
            "Author username or email address to filter commits by",
            "Sender email address to match",
            "Returns actual log content instead of URLs",
            "Search query to filter messages. Example: full URL of a message",
            "",
        ] {
            assert_eq!(described_destination(text), None, "{text}");
        }
    }

    #[test]
    fn formats_are_found_at_any_depth_and_through_refs() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "message": {"type": "object", "properties": {
                    "to": {"type": "array", "items": {"type": "string"}},
                    "body": {"type": "string"}
                }},
                "attachments": {"type": "array", "items": {"$ref": "#/$defs/attachment"}},
                "site": {"anyOf": [{"type": "string", "format": "iri"}, {"type": "null"}]}
            },
            "$defs": {"attachment": {"type": "object", "properties": {
                "source": {"type": "string", "format": "uri"}
            }}}
        });
        let map = DestinationMap::from_schema(Some(&schema));
        let paths: Vec<(String, Because)> = map
            .declared_destinations()
            .into_iter()
            .map(|d| (d.path, d.because))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("attachments[].source".into(), Because::Format("uri".into())),
                ("message.to".into(), Because::Name("to".into())),
                ("site".into(), Because::Format("iri".into())),
            ]
        );
    }

    #[test]
    fn a_recursive_ref_does_not_loop() {
        let schema = json!({"$defs": {"node": {"type": "object", "properties": {
            "next": {"$ref": "#/$defs/node"}, "link": {"type": "string", "format": "uri"}
        }}}, "$ref": "#/$defs/node"});
        let map = DestinationMap::from_schema(Some(&schema));
        assert!(map.declared_destinations().iter().any(|d| d.path == "link"));
    }

    #[test]
    fn calls_are_searched_by_name_format_and_undeclared_keys() {
        // Arguments are read in key order.
        let schema = json!({"type": "object", "properties": {
            "site": {"type": "string", "format": "uri"},
            "note": {"type": "string"}
        }});
        let map = DestinationMap::from_schema(Some(&schema));
        let found = map.find_in_call(&json!({
            "site": "https://example.com",
            "note": "hello",
            "extra": {"cc": ["a@example.com", ""]},
            "to": "",
        }));
        assert_eq!(
            found,
            vec![
                Found {
                    argument: "extra.cc[0]".into(),
                    value: "a@example.com".into(),
                    because: Because::Name("cc".into())
                },
                Found {
                    argument: "site".into(),
                    value: "https://example.com".into(),
                    because: Because::Format("uri".into())
                },
            ]
        );
    }
}

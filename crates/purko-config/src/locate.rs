//! Finding where a node of a manifest is written, for the checks done after deserialising
//! (a missing endpoint, a duplicate name).
//!
//! `yaml_serde` has no spanned values, but it does put the line and column of the node being read
//! into any error a `Deserialize` impl raises there. So a probe walks the same document along a
//! path (`spec.tools[2].endpoint`) and fails at the node it reaches; the error's location is the
//! node's. The walk uses `yaml_serde`'s own parser, so flow style, block style, quoting, anchors
//! and multi-document streams all resolve exactly as they did when the manifest was read. When a
//! step is missing, the probe fails at the deepest node it did reach.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::Location;

/// One step of a path into a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Key(Cow<'static, str>),
    Index(usize),
}

/// A path into a document, shown as `spec.tools[2].endpoint`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NodePath(pub Vec<Step>);

impl NodePath {
    pub fn key(&self, key: &'static str) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Key(Cow::Borrowed(key)));
        Self(steps)
    }

    /// A key known only at run time, such as a tool's or a variable's name.
    pub fn name(&self, key: &str) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Key(Cow::Owned(key.to_owned())));
        Self(steps)
    }

    pub fn index(&self, index: usize) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Index(index));
        Self(steps)
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(key) if i == 0 => f.write_str(key)?,
                Step::Key(key) => write!(f, ".{key}")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// The line and column of the node at `path` in document `document` (from 0) of `text`.
pub(crate) fn locate(text: &str, document: usize, path: &NodePath) -> Option<Location> {
    let doc = yaml_serde::Deserializer::from_str(text).nth(document)?;
    let error = Probe(&path.0).deserialize(doc).err()?;
    let location = error.location()?;
    Some(Location {
        line: location.line(),
        column: location.column(),
    })
}

/// Walks `steps` and fails at the node it ends on. It never succeeds.
struct Probe<'p>(&'p [Step]);

const HERE: &str = "here";

impl<'de> DeserializeSeed<'de> for Probe<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any node")
    }

    // Scalars end the walk: the default `visit_*` methods fail with a type error, which carries
    // this node's location just as well.

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Step::Key(wanted), rest)) = self.0.split_first() else {
            return Err(A::Error::custom(HERE));
        };
        while let Some(key) = map.next_key::<yaml_serde::Value>()? {
            if key.as_str() == Some(wanted.as_ref()) {
                return map.next_value_seed(Probe(rest));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Err(A::Error::custom(HERE))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Step::Index(wanted), rest)) = self.0.split_first() else {
            return Err(A::Error::custom(HERE));
        };
        for _ in 0..*wanted {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Err(A::Error::custom(HERE));
            }
        }
        seq.next_element_seed(Probe(rest))?;
        Err(A::Error::custom(HERE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn at(text: &str, document: usize, path: &NodePath) -> Option<(usize, usize)> {
        locate(text, document, path).map(|l| (l.line, l.column))
    }

    #[test]
    fn nodes_are_found_in_block_and_flow_style_and_in_later_documents() {
        let text = "a: 1\n---\nspec:\n  tools:\n    - name: x\n    - {name: y, type: api}\n";
        let tools = NodePath::default().key("spec").key("tools");
        assert_eq!(at(text, 1, &tools.index(0).key("name")), Some((5, 13)));
        assert_eq!(at(text, 1, &tools.index(1).key("type")), Some((6, 23)));
        assert_eq!(at(text, 1, &tools.index(1)), Some((6, 7)));
        assert_eq!(at(text, 0, &NodePath::default().key("a")), Some((1, 4)));
    }

    #[test]
    fn a_missing_step_stops_at_the_deepest_node_reached() {
        let text = "spec:\n  tools:\n    - name: x\n";
        let tools = NodePath::default().key("spec").key("tools");
        assert_eq!(at(text, 0, &tools.index(5)), Some((3, 5)));
        assert_eq!(at(text, 0, &tools.index(0).key("endpoint")), Some((3, 7)));
    }

    #[test]
    fn paths_read_like_the_manifest() {
        let path = NodePath::default()
            .key("spec")
            .key("tools")
            .index(2)
            .key("endpoint");
        assert_eq!(path.to_string(), "spec.tools[2].endpoint");
    }
}

//! Line and column of a node of a YAML document, for errors found after parsing (a
//! duplicate name, a cycle in `after:`, an unknown argument).
//!
//! serde_yaml 0.9 keeps no positions in what it returns, but it does attach the position
//! of the current node to an error raised while deserializing it. So to find a node we
//! deserialize the text once more with a seed that walks down the path to the node and
//! fails there: the error carries the node's line and column. Everything off the path is
//! skipped with `IgnoredAny`.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One step from a node to one of its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The value of a mapping's key.
    Key(String),
    /// An element of a sequence.
    Index(usize),
}

/// A path from the document's root.
pub(crate) type Path = Vec<Step>;

/// Appends `step` to a copy of `path`.
pub(crate) fn child(path: &[Step], step: Step) -> Path {
    let mut p = path.to_vec();
    p.push(step);
    p
}

/// Marker message of the error raised at the target node.
const FOUND: &str = "horus-launch-locate";

/// 1-based line and column of the node at `path` in `text`; `None` when the path does not
/// lead to a node (the caller then reports the position of a parent).
pub(crate) fn locate(text: &str, path: &[Step]) -> Option<(usize, usize)> {
    let de = serde_yaml::Deserializer::from_str(text);
    match (Seek { path }).deserialize(de) {
        Err(e) if e.to_string().contains(FOUND) => e.location().map(|l| (l.line(), l.column())),
        _ => None,
    }
}

/// Line and column of the node at `path`, else of its nearest ancestor that exists, else
/// the start of the file.
pub(crate) fn locate_nearest(text: &str, path: &[Step]) -> (usize, usize) {
    (0..=path.len())
        .rev()
        .find_map(|n| locate(text, &path[..n]))
        .unwrap_or((1, 1))
}

/// Walks down `path`; fails at its end.
struct Seek<'a> {
    path: &'a [Step],
}

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    // Any scalar: the target if the path ends here, else the path leads nowhere.
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.leaf()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.leaf()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(FOUND));
        };
        let Step::Index(target) = first else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        };
        let mut i = 0;
        loop {
            if i == *target {
                return seq.next_element_seed(Seek { path: rest }).map(|_| ());
            }
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(FOUND));
        };
        while let Some(key) = map.next_key::<serde_yaml::Value>()? {
            match (first, key.as_str()) {
                (Step::Key(want), Some(k)) if want == k => {
                    return map.next_value_seed(Seek { path: rest });
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl Seek<'_> {
    fn leaf<E: de::Error>(self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(FOUND))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
args:
  a: 1
processes:
  - name: one
    command: x
  - name: two
    after: [one, three]
";

    #[test]
    fn finds_keys_and_elements() {
        let p = |s: &[Step]| locate(DOC, s);
        let key = |k: &str| Step::Key(k.into());
        assert_eq!(p(&[key("args"), key("a")]), Some((2, 6)));
        assert_eq!(p(&[key("processes"), Step::Index(1)]), Some((6, 5)));
        assert_eq!(
            p(&[
                key("processes"),
                Step::Index(1),
                key("after"),
                Step::Index(1)
            ]),
            Some((7, 18))
        );
        assert_eq!(p(&[key("processes"), Step::Index(5)]), None);
        assert_eq!(
            locate_nearest(DOC, &[key("processes"), Step::Index(0), key("cwd")]),
            (4, 5)
        );
    }
}

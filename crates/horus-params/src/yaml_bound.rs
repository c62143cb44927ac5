//! Bounds for YAML read from files (parameter files here, launch files in `horus launch`):
//! the text's size, and the number of nodes the document expands to with its aliases
//! replayed.
//!
//! serde_yaml 0.9 limits nesting (128 levels) and alias jumps (100 per event of the
//! document), but not what a jump replays: `&big [...]` with 100 000 items referenced by
//! 100 000 aliases is 10^10 nodes from a 1 MiB file ("billion laughs"), all of which a
//! deserializer visits and may store. [`check_nodes`] walks the document once with a budget
//! and stops at the first node past it, so it costs at most [`MAX_YAML_NODES`] visits;
//! the real deserialization that follows visits the same nodes.

use std::cell::Cell;
use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// Largest YAML file read: 1 MiB (parameter and launch files are a few KiB).
pub const MAX_YAML_BYTES: u64 = 1 << 20;

/// Most nodes (scalars, sequences, mappings) a YAML document may expand to, aliases
/// replayed: 1 Mi, about 100 ms of walking.
pub const MAX_YAML_NODES: usize = 1 << 20;

/// Why YAML text is refused before being read.
#[derive(Debug, thiserror::Error)]
pub enum YamlBoundError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_YAML_BYTES`].
    #[error("{path}: larger than the {MAX_YAML_BYTES}-byte limit for YAML files")]
    TooLarge {
        /// The file.
        path: String,
    },
    /// The document expands to more than [`MAX_YAML_NODES`] nodes (an alias bomb).
    #[error(
        "line {line}, column {column}: the document expands to more than {MAX_YAML_NODES} \
         nodes (aliases replayed): refused"
    )]
    TooManyNodes {
        /// 1-based line where the budget ran out.
        line: usize,
        /// 1-based column.
        column: usize,
    },
}

/// Reads a YAML file of at most [`MAX_YAML_BYTES`] (reading stops there: a huge file, or a
/// device that never ends, is not read to its end).
pub fn read_file(path: &Path) -> Result<String, YamlBoundError> {
    let io = |source| YamlBoundError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    file.take(MAX_YAML_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_YAML_BYTES {
        return Err(YamlBoundError::TooLarge {
            path: path.display().to_string(),
        });
    }
    Ok(text)
}

/// Checks that `text` expands to at most [`MAX_YAML_NODES`] nodes. Malformed YAML passes
/// (the real deserialization reports it, with its position).
pub fn check_nodes(text: &str) -> Result<(), YamlBoundError> {
    let budget = Budget {
        left: Cell::new(MAX_YAML_NODES),
        exceeded: Cell::new(false),
    };
    match (&budget).deserialize(serde_yaml::Deserializer::from_str(text)) {
        Err(e) if budget.exceeded.get() => {
            let (line, column) = e
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((0, 0));
            Err(YamlBoundError::TooManyNodes { line, column })
        }
        _ => Ok(()),
    }
}

/// Nodes left to visit.
struct Budget {
    left: Cell<usize>,
    exceeded: Cell<bool>,
}

impl Budget {
    fn take<E: de::Error>(&self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(n) => {
                self.left.set(n);
                Ok(())
            }
            None => {
                self.exceeded.set(true);
                Err(E::custom("too many YAML nodes"))
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for &Budget {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &Budget {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.take()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.take()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.take()
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.take()
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.take()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.take()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.take()
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        self.take()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.take()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.take()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.take()?;
        self.deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.take()?;
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.take()?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.take()?;
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        // A tagged node (`!tag value`): the tag, then its value.
        self.take()?;
        let ((), variant) = data.variant_seed(self)?;
        variant.newtype_variant_seed(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `l0` anchors `width` scalars; each next level is `width` aliases of the previous.
    fn laughs(levels: usize, width: usize) -> String {
        let mut y = format!("l0: &l0 [{}]\n", vec!["x"; width].join(", "));
        for i in 1..levels {
            let refs = vec![format!("*l{}", i - 1); width].join(", ");
            y.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
        }
        y
    }

    #[test]
    fn yaml_alias_bomb_is_refused() {
        // 10^8 nodes from 80 KB: serde_yaml's own limit (100 alias jumps per event of the
        // document) lets a deserializer walk them all, since it counts the 10^4 aliases, not
        // the 10^4 nodes each one replays.
        let bomb = laughs(2, 10_000);
        assert!(bomb.len() < 100_000);
        let e = check_nodes(&bomb).unwrap_err();
        assert!(matches!(e, YamlBoundError::TooManyNodes { .. }), "{e}");
        // The classic deep one (10^9 nodes from 500 bytes) is refused too, by whichever
        // limit comes first.
        let deep = laughs(9, 10);
        assert!(
            check_nodes(&deep).is_err()
                || serde_yaml::from_str::<serde_yaml::Value>(&deep).is_err()
        );
        // A few aliases are fine.
        check_nodes(&laughs(3, 10)).unwrap();
        check_nodes("a: [1, 2, {b: c}]\nd: !tag 3\n").unwrap();
    }

    #[test]
    fn malformed_yaml_is_left_to_the_parser() {
        check_nodes("a: [1, 2\n").unwrap();
    }

    #[test]
    fn files_past_the_size_limit_are_not_read() {
        let p = std::env::temp_dir().join(format!("horus-yaml-bound-{}.yaml", std::process::id()));
        std::fs::write(&p, vec![b'#'; MAX_YAML_BYTES as usize + 1]).unwrap();
        assert!(matches!(
            read_file(&p),
            Err(YamlBoundError::TooLarge { .. })
        ));
        std::fs::write(&p, b"a: 1\n").unwrap();
        assert_eq!(read_file(&p).unwrap(), "a: 1\n");
        std::fs::remove_file(&p).unwrap();
    }
}

//! RIHS01 type hashes: SHA-256 over the type description's JSON without default
//! values, written as Python's `json.dumps(…, separators=(', ', ': '))` writes it
//! (keys in description order, non-ASCII escaped).

use std::fmt::{self, Write as _};

use sha2::{Digest, Sha256};

use crate::description::{IndividualTypeDescription, TypeDescription};

/// A RIHS01 type hash (ROS Interface Hashing Standard, version 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeHash(pub [u8; 32]);

impl TypeHash {
    /// The text form ROS 2 uses: `RIHS01_` and 64 lower-case hex digits.
    pub fn to_rihs_string(&self) -> String {
        self.to_string()
    }

    /// Reads the text form `RIHS01_<64 hex digits>`.
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.strip_prefix("RIHS01_")?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Self(out))
    }
}

impl fmt::Display for TypeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RIHS01_")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// The RIHS01 hash of a full type description.
pub fn type_hash(description: &TypeDescription) -> TypeHash {
    TypeHash(Sha256::digest(hashable_json(description).as_bytes()).into())
}

/// The exact text RIHS01 hashes: the description without `default_value`, as Python's
/// `json.dumps(d, ensure_ascii=True, indent=None, separators=(', ', ': '), sort_keys=False)`.
pub fn hashable_json(description: &TypeDescription) -> String {
    let mut out = String::with_capacity(1024);
    out.push_str("{\"type_description\": ");
    write_individual(&mut out, &description.type_description);
    out.push_str(", \"referenced_type_descriptions\": [");
    for (i, r) in description.referenced_type_descriptions.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_individual(&mut out, r);
    }
    out.push_str("]}");
    out
}

fn write_individual(out: &mut String, d: &IndividualTypeDescription) {
    out.push_str("{\"type_name\": ");
    write_json_string(out, &d.type_name);
    out.push_str(", \"fields\": [");
    for (i, f) in d.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"name\": ");
        write_json_string(out, &f.name);
        let t = &f.field_type;
        let _ = write!(
            out,
            ", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": {}, \"nested_type_name\": ",
            t.type_id, t.capacity, t.string_capacity
        );
        write_json_string(out, &t.nested_type_name);
        out.push_str("}}");
    }
    out.push_str("]}");
}

/// A JSON string as Python writes it with `ensure_ascii=True`.
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_as_python_does() {
        let mut s = String::new();
        write_json_string(&mut s, "a\"b\\c\nd\u{1}é😀\u{7f}");
        assert_eq!(s, r#""a\"b\\c\nd\u0001\u00e9\ud83d\ude00\u007f""#);
    }

    #[test]
    fn rihs_text_round_trips() {
        let h = TypeHash([0xab; 32]);
        assert_eq!(TypeHash::parse(&h.to_string()), Some(h));
        assert_eq!(TypeHash::parse("RIHS01_ab"), None);
        assert_eq!(TypeHash::parse(&format!("RIHS02_{}", "a".repeat(64))), None);
    }
}

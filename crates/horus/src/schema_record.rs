//! The schema of a topic as stored in its segment header.
//!
//! 128 bytes: `b"HSCH"`, version, size, align, layout hash, name length, name.
//! Decoding is done for error messages only; matching is byte equality.

use horus_msgs::SchemaId;
use horus_shm::SCHEMA_BYTES;

const TAG: &[u8; 4] = b"HSCH";
const NAME_OFFSET: usize = 28;
const NAME_MAX: usize = SCHEMA_BYTES - NAME_OFFSET;

/// Encodes a schema id into the header's schema field.
pub(crate) fn encode(id: &SchemaId) -> [u8; SCHEMA_BYTES] {
    let mut b = [0u8; SCHEMA_BYTES];
    b[..4].copy_from_slice(TAG);
    b[4..8].copy_from_slice(&id.version().to_le_bytes());
    b[8..12].copy_from_slice(&id.size().to_le_bytes());
    b[12..16].copy_from_slice(&id.align().to_le_bytes());
    b[16..24].copy_from_slice(&id.layout_hash().to_le_bytes());
    let name = id.name().as_bytes();
    let n = name.len().min(NAME_MAX);
    b[24..28].copy_from_slice(&(n as u32).to_le_bytes());
    b[NAME_OFFSET..NAME_OFFSET + n].copy_from_slice(&name[..n]);
    b
}

/// Encodes a schema known only at run time (e.g. read from a recording); `None` when the
/// name does not fit the header.
pub(crate) fn encode_record(r: &crate::description::SchemaRecord) -> Option<[u8; SCHEMA_BYTES]> {
    let name = r.name.as_bytes();
    if name.len() > NAME_MAX {
        return None;
    }
    let mut b = [0u8; SCHEMA_BYTES];
    b[..4].copy_from_slice(TAG);
    b[4..8].copy_from_slice(&r.version.to_le_bytes());
    b[8..12].copy_from_slice(&r.size.to_le_bytes());
    b[12..16].copy_from_slice(&r.align.to_le_bytes());
    b[16..24].copy_from_slice(&r.layout_hash.to_le_bytes());
    b[24..28].copy_from_slice(&(name.len() as u32).to_le_bytes());
    b[NAME_OFFSET..NAME_OFFSET + name.len()].copy_from_slice(name);
    Some(b)
}

/// Decodes a stored schema; `None` for bytes that are not a schema record.
pub(crate) fn decode(b: &[u8; SCHEMA_BYTES]) -> Option<crate::description::SchemaRecord> {
    if &b[..4] != TAG {
        return None;
    }
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let n = u32_at(24) as usize;
    if n > NAME_MAX {
        return None;
    }
    let name = std::str::from_utf8(&b[NAME_OFFSET..NAME_OFFSET + n]).ok()?;
    Some(crate::description::SchemaRecord {
        name: name.to_owned(),
        version: u32_at(4),
        size: u32_at(8),
        align: u32_at(12),
        layout_hash: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
    })
}

/// Describes a stored schema for humans, tolerating garbage.
pub(crate) fn describe(b: &[u8; SCHEMA_BYTES]) -> String {
    if &b[..4] != TAG {
        return "<not a horus schema>".to_owned();
    }
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let hash = u64::from_le_bytes(b[16..24].try_into().expect("8 bytes"));
    let n = (u32_at(24) as usize).min(NAME_MAX);
    let name = String::from_utf8_lossy(&b[NAME_OFFSET..NAME_OFFSET + n]);
    format!(
        "{name} v{} ({} B, layout {hash:#018x})",
        u32_at(4),
        u32_at(8)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_msgs::{CmdVel, Message};

    #[test]
    fn describe_matches_display() {
        let b = encode(&CmdVel::SCHEMA);
        assert_eq!(describe(&b), CmdVel::SCHEMA.to_string());
    }

    #[test]
    fn decode_round_trips_and_refuses_garbage() {
        let r = decode(&encode(&CmdVel::SCHEMA)).unwrap();
        assert!(r.is(&CmdVel::SCHEMA));
        assert_eq!(r.to_string(), CmdVel::SCHEMA.to_string());
        assert!(decode(&[0xff; SCHEMA_BYTES]).is_none());
        assert_eq!(encode_record(&r), Some(encode(&CmdVel::SCHEMA)));
        let mut b = encode(&CmdVel::SCHEMA);
        b[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&b).is_none());
    }

    #[test]
    fn garbage_is_described_not_trusted() {
        assert_eq!(describe(&[0xff; SCHEMA_BYTES]), "<not a horus schema>");
    }
}

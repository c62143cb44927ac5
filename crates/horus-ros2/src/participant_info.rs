//! `rmw_dds_common/msg/ParticipantEntitiesInfo`, the message through which ROS 2 learns
//! which node each DDS reader and writer belongs to, in its wire form (encapsulation header
//! + little-endian CDR):
//!
//! ```text
//! ParticipantEntitiesInfo: Gid gid; NodeEntitiesInfo[] node_entities_info_seq
//! NodeEntitiesInfo:        string<=256 node_namespace; string<=256 node_name;
//!                          Gid[] reader_gid_seq; Gid[] writer_gid_seq
//! Gid:                     char[16] data      (24 bytes before Iron; 16 in kilted)
//! ```
//!
//! A GID is the entity's DDS GUID: 12 bytes of participant prefix then 4 of entity id, as
//! rmw_fastrtps and RustDDS both lay it out.

use crate::node_name::RosNodeName;

/// A ROS 2 GID (the DDS GUID's 16 bytes).
pub(crate) type Gid = [u8; 16];

/// Appends a CDR string (length with its NUL, bytes, NUL), aligned to 4 from the body's
/// start (`out` holds the 4-byte encapsulation header first).
fn put_string(out: &mut Vec<u8>, s: &str) {
    align4(out);
    let len = u32::try_from(s.len() + 1).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Appends a sequence of GIDs (count, then 16 bytes each: `char` aligns to 1).
fn put_gids(out: &mut Vec<u8>, gids: &[Gid]) {
    align4(out);
    let n = u32::try_from(gids.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&n.to_le_bytes());
    for g in gids {
        out.extend_from_slice(g);
    }
}

/// Pads with zeros to a multiple of 4 from the body's start (the header is 4 bytes, so
/// from the buffer's start too).
fn align4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// The wire bytes of a `ParticipantEntitiesInfo` for participant `participant` with one
/// node, `node`, owning `readers` and `writers`.
pub(crate) fn participant_entities_info(
    participant: Gid,
    node: &RosNodeName,
    readers: &[Gid],
    writers: &[Gid],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + 16 * (readers.len() + writers.len()));
    out.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]); // little-endian plain CDR
    out.extend_from_slice(&participant);
    out.extend_from_slice(&1u32.to_le_bytes()); // one node
    put_string(&mut out, node.namespace());
    put_string(&mut out, node.name());
    put_gids(&mut out, readers);
    put_gids(&mut out, writers);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rclpy's `serialize_message` of the same message (kilted, rmw_dds_common 4.0.0), with
    /// its padding bytes (Fast CDR leaves them unset) zeroed:
    /// `ParticipantEntitiesInfo(gid=0..16, [NodeEntitiesInfo('/', 'horus_bridge',
    /// readers=[aa*16], writers=[bb*16, cc*16])])`.
    const RCLPY: &str = "00010000000102030405060708090a0b0c0d0e0f01000000020000002f000000\
                         0d000000686f7275735f6272696467650000000001000000aaaaaaaaaaaaaaaa\
                         aaaaaaaaaaaaaaaa02000000bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbcccccccc\
                         cccccccccccccccccccccccc";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn encodes_as_rclpy_serializes_it() {
        let mut gid = [0u8; 16];
        for (i, b) in gid.iter_mut().enumerate() {
            *b = i as u8;
        }
        let got = participant_entities_info(
            gid,
            &RosNodeName::default(),
            &[[0xaa; 16]],
            &[[0xbb; 16], [0xcc; 16]],
        );
        assert_eq!(got, unhex(RCLPY));
    }

    #[test]
    fn a_node_without_endpoints_has_empty_sequences() {
        let got = participant_entities_info([7; 16], &RosNodeName::default(), &[], &[]);
        // header, gid, 1 node, "/" (4 + 2, padded), "horus_bridge" (4 + 13, padded), 0, 0
        assert_eq!(got.len(), 4 + 16 + 4 + 8 + 20 + 4 + 4);
        assert_eq!(&got[got.len() - 8..], &[0; 8]);
    }
}

//! ROS-typed horus service records ↔ ROS 2 wire bytes. A ROS-typed record is horus's
//! `Ros<M>` frame: 4 reserved bytes, then the wire bytes (encapsulation header + CDR body)
//! from which the frame's 8 bytes (reserved + header) and the body in its tail follow.

/// The record carrying `wire`.
pub(crate) fn record(wire: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(wire.len() + 4);
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(wire);
    v
}

/// The wire bytes of `record`; `None` when it is shorter than its 8-byte frame or its
/// header is not little-endian CDR (`00 01`).
pub(crate) fn wire_of(record: &[u8]) -> Option<&[u8]> {
    record
        .get(4..)
        .filter(|w| w.len() >= 4 && w[..2] == [0x00, 0x01])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_wrap_and_unwrap_wire_bytes() {
        let wire = [0, 1, 0, 0, 1, 0, 0, 0];
        let r = record(&wire);
        assert_eq!(r.len(), 12);
        assert_eq!(wire_of(&r), Some(&wire[..]));
        assert_eq!(wire_of(&[0, 0, 0, 0, 0, 1]), None);
        assert_eq!(wire_of(&[0, 0, 0, 0, 0, 0, 0, 0]), None);
    }
}

//! What travels: a standard `Header` (Python has the same class) carrying
//! the publisher's identity, its sequence number and its send stamp, with a
//! checksum so a torn or foreign message is recognised.
//!
//! | field             | meaning                                              |
//! |-------------------|------------------------------------------------------|
//! | `stamp_ns`        | CLOCK_MONOTONIC just before the (successful) attempt |
//! | `seq`             | per-publisher sequence number, 0, 1, 2, …            |
//! | `frame_id[0..8]`  | checksum of (publisher, seq, stamp), little-endian   |
//! | `frame_id[8..16]` | publisher id (unique in the run), little-endian      |
//!
//! `python/tests/chaos_child.py` encodes and checks the same layout.

use horus_msgs::Header;

/// Topic names; the QoS of each is fixed by [`crate::child`].
pub(crate) const TOPIC_BLOCK: &str = "chaos/block";
/// The `DropOldest` topic.
pub(crate) const TOPIC_DROP: &str = "chaos/drop";
/// History depth of both topics.
pub(crate) const DEPTH: u32 = 16;
/// Places, generous so that killed processes not yet reclaimed never make a
/// replacement fail to join.
pub(crate) const MAX_PUBLISHERS: u32 = 16;
/// Subscriber places.
pub(crate) const MAX_SUBSCRIBERS: u32 = 32;

const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// "chaos" in ASCII.
const TAG: u64 = 0x63_6861_6f73;

/// The checksum both languages compute.
pub(crate) fn checksum(publisher: u64, seq: u32, stamp: u64) -> u64 {
    (stamp ^ (publisher << 32) ^ u64::from(seq)).wrapping_mul(MIX) ^ TAG
}

/// The message publisher `publisher` sends as number `seq`, stamped `stamp`.
pub(crate) fn encode(publisher: u64, seq: u32, stamp: u64) -> Header {
    let mut frame_id = [0u8; 32];
    frame_id[..8].copy_from_slice(&checksum(publisher, seq, stamp).to_le_bytes());
    frame_id[8..16].copy_from_slice(&publisher.to_le_bytes());
    Header {
        stamp_ns: stamp,
        seq,
        _pad: 0,
        frame_id,
    }
}

/// What a received message says, if its checksum holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub(crate) publisher: u64,
    pub(crate) seq: u32,
    pub(crate) stamp: u64,
}

/// Decodes and checks a received message; `None` if it is corrupt.
pub(crate) fn decode(h: &Header) -> Option<Decoded> {
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&h.frame_id[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let (sum, publisher) = (word(0), word(8));
    (sum == checksum(publisher, h.seq, h.stamp_ns)).then_some(Decoded {
        publisher,
        seq: h.seq,
        stamp: h.stamp_ns,
    })
}

/// CLOCK_MONOTONIC in nanoseconds: the clock every process (and Python's
/// `time.monotonic_ns`) shares, so stamps compare across processes.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC exists on
    // every Linux kernel, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_then_decode_gives_back_the_fields() {
        let h = encode(42, 7, 123_456_789);
        assert_eq!(
            decode(&h),
            Some(Decoded {
                publisher: 42,
                seq: 7,
                stamp: 123_456_789
            })
        );
    }

    #[test]
    fn a_changed_field_fails_the_checksum() {
        let mut h = encode(42, 7, 1000);
        h.seq = 8;
        assert_eq!(decode(&h), None);
        let mut h = encode(42, 7, 1000);
        h.frame_id[8] ^= 1;
        assert_eq!(decode(&h), None);
    }

    #[test]
    fn known_vector_shared_with_python() {
        // python/tests/chaos_child.py checks the same value at start-up.
        assert_eq!(checksum(3, 5, 1_000_000), 0x9213_8b0f_a02a_b4da);
    }
}

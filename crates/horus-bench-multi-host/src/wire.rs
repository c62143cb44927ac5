//! What every multi-host message carries: its sequence number and the
//! `CLOCK_MONOTONIC` instant it was sent, then a body in which every byte is
//! written. Both namespaces read the same kernel clock, so the receiver's
//! `now − stamp` is a one-way latency with no clock offset.
//!
//! Layout (little-endian): `[0..8)` sequence number, `[8..16)` stamp in ns, then
//! `size − 16` bytes all equal to a byte derived from the sequence number. The
//! receiver checks the header and every body byte (a `memcmp` of the body against
//! itself shifted by one, and its first byte).

use anyhow::ensure;

use horus_bench_core::sysclock::monotonic_ns;

/// Smallest message: the header.
pub const HEADER: usize = 16;
/// Sequence number of the end marker of a topic, flood or ping-pong.
pub const END: u64 = u64::MAX;
/// Sequence number of the ping-pong hello (sent until the first echo comes back).
pub const HELLO: u64 = u64::MAX - 1;

fn fill(seq: u64) -> u8 {
    (seq as u8) ^ 0xa5
}

/// A `size`-byte message `seq`: every byte written, stamped last, just before
/// it is handed to the transport.
pub fn message(size: usize, seq: u64) -> Vec<u8> {
    let mut buf = vec![0; size.max(HEADER)];
    write(&mut buf, seq);
    buf
}

/// Writes message `seq` into `buf` (the whole buffer: `buf.len()` is its size,
/// at least [`HEADER`]), stamped last. For transports that loan the memory.
pub fn write(buf: &mut [u8], seq: u64) {
    let body = HEADER.min(buf.len());
    buf[body..].fill(fill(seq));
    buf[0..8].copy_from_slice(&seq.to_le_bytes());
    buf[8..16].copy_from_slice(&monotonic_ns().to_le_bytes());
}

/// Reads a message of `size` bytes: `(seq, stamp_ns)`, after checking every byte.
pub fn read(buf: &[u8], size: usize) -> anyhow::Result<(u64, u64)> {
    ensure!(
        buf.len() == size.max(HEADER),
        "message of {} B, expected {size}",
        buf.len()
    );
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let (seq, stamp) = (word(0), word(8));
    let body = &buf[HEADER..];
    if let Some(&first) = body.first() {
        ensure!(
            first == fill(seq) && body[1..] == body[..body.len() - 1],
            "message {seq}: body corrupted"
        );
    }
    Ok((seq, stamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        for size in [16, 17, 4096] {
            let mut m = message(size, 7);
            assert_eq!(read(&m, size).unwrap().0, 7);
            if size > 16 {
                let last = m.len() - 1;
                m[last] ^= 1;
                assert!(read(&m, size).is_err());
            }
        }
        assert!(read(&message(32, 1), 64).is_err());
    }
}

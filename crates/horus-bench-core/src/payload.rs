//! How a benchmark message is written and read, identically for every system.
//!
//! A message of `n >= 16` bytes carries its sequence number in the first 8 bytes
//! (little endian) and the bitwise complement of it in the last 8 bytes, so a reader
//! can tell a torn or stale message from the one it expects.
//!
//! * [`Touch::Full`] — the writer writes every byte (a fill byte derived from the
//!   sequence number, so the stores cannot be hoisted out of the loop) and the reader
//!   reads every byte (a wrapping checksum fed to [`std::hint::black_box`]). This is
//!   what an application that produces and consumes the whole message costs.
//! * [`Touch::Ends`] — only the first and last 8 bytes are written and read. This
//!   isolates the transport cost from the payload cost for zero-copy transports.

use serde::{Deserialize, Serialize};
use std::hint::black_box;

/// Smallest supported message: the sequence number plus its complement.
pub const MIN_SIZE: usize = 16;

/// How much of the payload the application writes and reads each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Touch {
    /// Every byte is written by the sender and read by the receiver.
    Full,
    /// Only the first and last 8 bytes are written and read (labelled "touch").
    #[serde(rename = "touch")]
    Ends,
}

impl Touch {
    /// Label used in tables and child-process arguments.
    pub fn label(self) -> &'static str {
        match self {
            Touch::Full => "full",
            Touch::Ends => "touch",
        }
    }

    /// Inverse of [`Touch::label`].
    pub fn parse(label: &str) -> anyhow::Result<Self> {
        match label {
            "full" => Ok(Touch::Full),
            "touch" => Ok(Touch::Ends),
            other => anyhow::bail!("unknown payload touch mode {other:?} (full|touch)"),
        }
    }
}

/// Writes message `seq` into `buf` in place.
#[inline]
pub fn write(buf: &mut [u8], seq: u64, touch: Touch) {
    assert!(
        buf.len() >= MIN_SIZE,
        "message of {} bytes < {MIN_SIZE}",
        buf.len()
    );
    if touch == Touch::Full {
        buf.fill(seq as u8 ^ 0x5a);
    }
    let n = buf.len();
    buf[..8].copy_from_slice(&seq.to_le_bytes());
    buf[n - 8..].copy_from_slice(&(!seq).to_le_bytes());
}

/// Reads the message in `buf` and returns its sequence number.
///
/// Fails if the head and tail disagree (a torn or corrupt message).
#[inline]
pub fn read(buf: &[u8], touch: Touch) -> anyhow::Result<u64> {
    anyhow::ensure!(
        buf.len() >= MIN_SIZE,
        "message of {} bytes < {MIN_SIZE}",
        buf.len()
    );
    if touch == Touch::Full {
        black_box(checksum(buf));
    }
    let n = buf.len();
    let head = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
    let tail = u64::from_le_bytes(buf[n - 8..].try_into().expect("8 bytes"));
    anyhow::ensure!(
        tail == !head,
        "torn message: head {head:#x}, tail {tail:#x}"
    );
    Ok(head)
}

/// Reads the message in `buf` and fails unless it is message `expected`.
#[inline]
pub fn check(buf: &[u8], expected: u64, touch: Touch) -> anyhow::Result<()> {
    let seq = read(buf, touch)?;
    anyhow::ensure!(seq == expected, "expected message {expected}, got {seq}");
    Ok(())
}

/// Copies the first and last 8 bytes of `src` into `dst` (the [`Touch::Ends`] echo).
#[inline]
pub fn copy_ends(dst: &mut [u8], src: &[u8]) {
    assert!(dst.len() == src.len() && src.len() >= MIN_SIZE);
    let n = src.len();
    dst[..8].copy_from_slice(&src[..8]);
    dst[n - 8..].copy_from_slice(&src[n - 8..]);
}

/// Wrapping sum of the buffer as little-endian words; reads every byte.
fn checksum(buf: &[u8]) -> u64 {
    let words = buf.chunks_exact(8);
    let rest = words
        .remainder()
        .iter()
        .fold(0u64, |acc, &b| acc.wrapping_add(u64::from(b)));
    words
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .fold(rest, u64::wrapping_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_message_reads_back_in_both_modes() {
        for touch in [Touch::Full, Touch::Ends] {
            for n in [16, 17, 304, 4096] {
                let mut buf = vec![0u8; n];
                write(&mut buf, 1234, touch);
                check(&buf, 1234, touch).unwrap();
            }
        }
    }

    #[test]
    fn torn_message_is_rejected() {
        let mut buf = vec![0u8; 64];
        write(&mut buf, 7, Touch::Full);
        buf[63] ^= 1;
        assert!(read(&buf, Touch::Ends).is_err());
    }

    #[test]
    fn stale_message_is_rejected() {
        let mut buf = vec![0u8; 64];
        write(&mut buf, 7, Touch::Ends);
        assert!(check(&buf, 8, Touch::Ends).is_err());
    }

    #[test]
    fn copy_ends_carries_the_sequence_number() {
        let mut src = vec![0u8; 100];
        let mut dst = vec![0u8; 100];
        write(&mut src, 99, Touch::Full);
        copy_ends(&mut dst, &src);
        check(&dst, 99, Touch::Ends).unwrap();
    }

    #[test]
    fn labels_round_trip() {
        for t in [Touch::Full, Touch::Ends] {
            assert_eq!(Touch::parse(t.label()).unwrap(), t);
        }
    }
}

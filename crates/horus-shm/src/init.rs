//! Opening a segment that its creator may still be initialising, and
//! publishing one's own: the first step every shared-memory structure of
//! horus takes (the channel does it in `channel.rs`; the tensor pool through
//! this module).
//!
//! The convention: the first 8 bytes of a segment are its *magic word*, 0
//! until the creator has written everything else, then set once with a
//! Release store ([`publish`]). An opener maps the segment, waits (bounded)
//! while the file is still shorter than a header (a creator between
//! `shm_open` and `ftruncate`) or the magic word is 0, and returns the
//! mapping with the magic it Acquire-loaded ([`open_initialised`]); the
//! caller then validates the header (magic value, layout version, sizes).

use std::time::{Duration, Instant};

use crate::sync::{AtomicU64, Ordering};
use crate::{Segment, SegmentError};

/// How long an opener waits for a creator to publish its header by default.
pub const INIT_WAIT: Duration = Duration::from_secs(2);

/// Why [`open_initialised`] returned no segment.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The segment could not be opened or mapped (not found, another
    /// user's, an OS error, or still shorter than a header at the deadline).
    #[error(transparent)]
    Segment(#[from] SegmentError),
    /// The creator did not publish the header within the wait (it died
    /// while creating it, or the file is not a horus segment).
    #[error("segment {0} was never initialised by its creator")]
    NotInitialised(String),
}

/// The magic word of a mapped segment (its first 8 bytes).
pub fn magic_word(seg: &Segment) -> &AtomicU64 {
    debug_assert!(seg.len() >= 8);
    // SAFETY: every mapping `Segment` makes is page aligned and non-empty
    // (open refuses files shorter than the caller's header; create maps the
    // size asked for, which callers make at least a header), so its first
    // 8 bytes are an aligned AtomicU64 living as long as `seg`.
    unsafe { &*seg.base().cast::<AtomicU64>() }
}

/// Publishes a freshly created segment: stores `magic` (non-zero) into its
/// magic word after the creator's plain header writes.
pub fn publish(seg: &Segment, magic: u64) {
    debug_assert_ne!(magic, 0);
    // Release: every write the creator made to the segment before this store
    // is visible to an opener whose Acquire load sees the magic.
    magic_word(seg).store(magic, Ordering::Release);
}

/// Opens segment `name` (at least `min_len` bytes, `min_len >= 8`) and
/// waits until `deadline` for its creator to publish the magic word.
/// Returns the mapping and the (non-zero) magic; the header behind it is
/// initialised but still untrusted: validate every field.
pub fn open_initialised(
    name: &str,
    min_len: usize,
    deadline: Instant,
) -> Result<(Segment, u64), InitError> {
    let min_len = min_len.max(8);
    loop {
        let seg = match Segment::open(name, min_len) {
            // A creator between shm_open and ftruncate: wait for it.
            Err(SegmentError::Truncated { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            other => other?,
        };
        // Acquire: pairs with `publish`, so the header is initialised.
        let magic = magic_word(&seg).load(Ordering::Acquire);
        if magic != 0 {
            return Ok((seg, magic));
        }
        if Instant::now() >= deadline {
            return Err(InitError::NotInitialised(name.to_owned()));
        }
        drop(seg);
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(tag: &str) -> String {
        format!("/horus.init-test-{}.{tag}", std::process::id())
    }

    #[test]
    fn an_unpublished_segment_is_not_initialised_after_the_wait() {
        let n = name("unpublished");
        let _seg = Segment::create(&n, 4096).unwrap();
        let r = open_initialised(&n, 64, Instant::now());
        Segment::unlink(&n);
        assert!(matches!(r, Err(InitError::NotInitialised(_))));
    }

    #[test]
    fn a_published_segment_opens_with_its_magic() {
        let n = name("published");
        let seg = Segment::create(&n, 4096).unwrap();
        publish(&seg, 42);
        let r = open_initialised(&n, 64, Instant::now());
        Segment::unlink(&n);
        assert_eq!(r.unwrap().1, 42);
    }

    #[test]
    fn a_segment_shorter_than_a_header_is_truncated_after_the_wait() {
        let n = name("short");
        let _seg = Segment::create(&n, 16).unwrap();
        let r = open_initialised(&n, 64, Instant::now());
        Segment::unlink(&n);
        assert!(matches!(
            r,
            Err(InitError::Segment(SegmentError::Truncated { .. }))
        ));
    }
}

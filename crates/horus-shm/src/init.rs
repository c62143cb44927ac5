//! Opening a segment that its creator may still be initialising, and
//! publishing one's own: the first step every shared-memory structure of
//! horus takes: channels, service tables, tensor pools and the tf buffer
//! all open through this module.
//!
//! The convention: the first 8 bytes of a segment are its *magic word*, 0
//! until the creator has written everything else, then set once with a
//! Release store ([`publish`]). An opener maps the segment, waits (bounded)
//! while the file is still shorter than a header (a creator between
//! `shm_open` and `ftruncate`) or the magic word is 0, and returns the
//! mapping with the magic it Acquire-loaded ([`open_initialised`];
//! [`create_or_open`] for a structure any participant may create); the
//! caller then copies the header out once and validates it: magic value and
//! layout version first ([`check_version`]), then its own sizes.

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

/// What [`create_or_open`] got: a segment of its own to initialise, or
/// someone else's, initialised.
#[derive(Debug)]
pub enum Created {
    /// Created by this call (`O_EXCL`, zero-filled): write the header, then
    /// [`publish`] the magic.
    New(Segment),
    /// Created by another process, whose magic (returned, non-zero) was
    /// published: the header is initialised but untrusted, validate it.
    Existing(Segment, u64),
}

/// Creates segment `name` with `len` bytes, or, if it exists, opens it as
/// [`open_initialised`] does (at least `min_len` bytes, waiting until
/// `deadline` for its creator). A segment unlinked between our create and
/// our open is created again, until `deadline`.
pub fn create_or_open(
    name: &str,
    len: usize,
    min_len: usize,
    deadline: Instant,
) -> Result<Created, InitError> {
    loop {
        match Segment::create(name, len) {
            Ok(seg) => return Ok(Created::New(seg)),
            Err(SegmentError::Exists(_)) => {}
            Err(e) => return Err(e.into()),
        }
        match open_initialised(name, min_len, deadline) {
            Ok((seg, magic)) => return Ok(Created::Existing(seg, magic)),
            // Unlinked between our create and open (its last user left):
            // create it again.
            Err(InitError::Segment(SegmentError::NotFound(_))) if Instant::now() < deadline => {}
            Err(e) => return Err(e),
        }
    }
}

/// Why a header's magic or layout version is not the one this build reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not this kind of segment (another structure's, or garbage).
    #[error("magic {found:#018x}")]
    BadMagic {
        /// The magic found.
        found: u64,
    },
    /// This kind of segment, written by a build with another layout.
    #[error("layout version {found}, this build reads {expected}")]
    Version {
        /// The version found.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
}

/// The versioned header's first check, common to every segment of horus:
/// its magic word (from a header copied out once) must be `magic`, then
/// its layout version `version`. Every other field is the caller's to
/// validate, only after this passed.
pub fn check_version(
    found_magic: u64,
    found_version: u32,
    magic: u64,
    version: u32,
) -> Result<(), VersionError> {
    if found_magic != magic {
        return Err(VersionError::BadMagic { found: found_magic });
    }
    if found_version != version {
        return Err(VersionError::Version {
            found: found_version,
            expected: version,
        });
    }
    Ok(())
}

/// The versioned header's last check, after [`check_version`] and the
/// structure's own capacity checks: every offset and size the header
/// `claims` (`(what, claimed, derived)`) must be the one its capacities
/// give, and the file (`file_size` bytes) must hold the `total` bytes they
/// need. The error says what differs, for the caller's corrupt-header error.
pub fn check_extent(claims: &[(&str, u64, u64)], total: u64, file_size: u64) -> Result<(), String> {
    if claims
        .iter()
        .any(|&(_, claimed, derived)| claimed != derived)
    {
        let names: Vec<String> = claims
            .iter()
            .map(|(what, claimed, _)| format!("{what} {claimed}"))
            .collect();
        let derived: Vec<String> = claims.iter().map(|(_, _, d)| d.to_string()).collect();
        return Err(format!(
            "header claims {}, capacities give {}",
            names.join(" / "),
            derived.join(" / ")
        ));
    }
    if file_size < total {
        return Err(format!(
            "file holds {file_size} bytes, layout needs {total}"
        ));
    }
    Ok(())
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

    #[test]
    fn create_or_open_creates_then_opens_the_published_segment() {
        let n = name("create-or-open");
        let Created::New(seg) = create_or_open(&n, 4096, 64, Instant::now()).unwrap() else {
            panic!("first call creates");
        };
        publish(&seg, 7);
        let again = create_or_open(&n, 4096, 64, Instant::now());
        Segment::unlink(&n);
        assert!(matches!(again, Ok(Created::Existing(_, 7))));
    }

    #[test]
    fn versions_are_checked_magic_first() {
        assert_eq!(check_version(1, 2, 1, 2), Ok(()));
        assert_eq!(
            check_version(9, 3, 1, 2),
            Err(VersionError::BadMagic { found: 9 })
        );
        assert_eq!(
            check_version(1, 3, 1, 2),
            Err(VersionError::Version {
                found: 3,
                expected: 2
            })
        );
    }

    #[test]
    fn extents_say_what_differs() {
        let claims = [("size", 100, 100), ("rings", 8, 16)];
        assert_eq!(
            check_extent(&claims, 100, 100),
            Err("header claims size 100 / rings 8, capacities give 100 / 16".into())
        );
        let claims = [("size", 100, 100)];
        assert_eq!(
            check_extent(&claims, 100, 99),
            Err("file holds 99 bytes, layout needs 100".into())
        );
        assert_eq!(check_extent(&claims, 100, 100), Ok(()));
    }
}

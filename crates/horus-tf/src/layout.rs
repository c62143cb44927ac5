//! The byte layout of the tf segment, and its validation on open.
//!
//! ```text
//! 0      header (capacities, offsets)           written once before `magic`
//! 256    writer lease word                      own cache line
//! 320    frame count (records published)        own cache line
//! 384    change counter (u32 futex word), waiters (u32)
//! 448    closing flag (last participant tearing down)
//! 512    transforms accepted, refused (counters of all writers)
//! 1024   participant tokens [128 × u64]
//! 4096   frame records [max_frames × 256 B]
//!          0 name length | VALID, 8 head (samples written), 16 tail (oldest
//!          live position), 24 last writer's token, 32 kind (0 none, 1
//!          dynamic, 2 static), 64..192 name bytes
//! page   sample slots [max_frames × history × 80 B]
//!          sequence, stamp (i64 ns), parent index, translation xyz, rotation xyzw
//! ```
//! The size is fixed by the capacities: with the defaults (256 frames, 1024
//! samples each) 20.3 MiB of address space, of which only the pages of frames
//! in use are ever touched (a new segment is sparse). The opener re-derives
//! every offset from the capacities and compares them with what the header
//! claims and with the file size: nothing read from shared memory is used as
//! an offset before that check.

use std::time::Duration;

use horus_shm::init::VersionError;

use crate::error::OpenError;
use crate::seqlock::SLOT_WORDS;

/// First 8 bytes of a tf segment.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"HORUSTF1");
/// Layout version this build reads and writes.
pub(crate) const LAYOUT_VERSION: u32 = 1;
/// Longest frame id stored, in bytes.
pub const MAX_FRAME_ID: usize = 128;
/// Participant places (processes with the buffer open at once).
pub const MAX_PARTICIPANTS: usize = 128;
/// Most frames a buffer can be created with.
pub const MAX_FRAMES_LIMIT: u32 = 4096;
/// Most samples per frame a buffer can be created with.
pub const MAX_HISTORY_LIMIT: u32 = 16384;

pub(crate) const HEADER_SIZE: usize = 4096;
pub(crate) const LEASE_OFF: usize = 256;
pub(crate) const FRAME_COUNT_OFF: usize = 320;
pub(crate) const CHANGE_OFF: usize = 384;
pub(crate) const WAITERS_OFF: usize = 388;
pub(crate) const CLOSING_OFF: usize = 448;
pub(crate) const ACCEPTED_OFF: usize = 512;
pub(crate) const REFUSED_OFF: usize = 520;
pub(crate) const PARTICIPANTS_OFF: usize = 1024;

pub(crate) const FRAME_RECORD: usize = 256;
pub(crate) const F_NAME_LEN: usize = 0;
pub(crate) const F_HEAD: usize = 8;
pub(crate) const F_TAIL: usize = 16;
pub(crate) const F_WRITER: usize = 24;
pub(crate) const F_KIND: usize = 32;
pub(crate) const F_NAME: usize = 64;
/// Set in a published record's name-length word.
pub(crate) const NAME_VALID: u64 = 1 << 63;
pub(crate) const SAMPLE_SIZE: usize = SLOT_WORDS * 8;

/// Frame kinds (the `kind` word).
pub(crate) const KIND_NONE: u64 = 0;
pub(crate) const KIND_DYNAMIC: u64 = 1;
pub(crate) const KIND_STATIC: u64 = 2;

/// What a tf buffer is created with. An existing buffer keeps its creator's
/// capacities; [`crate::TfBuffer::capacities`] says which are in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacities {
    /// Frames the table holds, 1..=4096 (default 256). A frame id that would
    /// be one more is refused ([`crate::SetError::TooManyFrames`]).
    pub max_frames: u32,
    /// Samples kept per dynamic frame, a power of two in 2..=16384 (default
    /// 1024: the 10 s window at 100 Hz). The history of a frame is the
    /// shorter of this many samples and the window.
    pub history: u32,
    /// How long dynamic transforms are kept, measured back from each frame's
    /// newest stamp (tf2's cache time; default 10 s; 1 ms..=1 h).
    pub window: Duration,
}

impl Default for Capacities {
    fn default() -> Self {
        Capacities {
            max_frames: 256,
            history: 1024,
            window: Duration::from_secs(10),
        }
    }
}

impl std::fmt::Display for Capacities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} frames × {} samples, window {:?}",
            self.max_frames, self.history, self.window
        )
    }
}

/// Offsets derived from [`Capacities`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) caps: Capacities,
    pub(crate) window_ns: i64,
    pub(crate) frames: usize,
    pub(crate) samples: usize,
    pub(crate) total: usize,
}

const fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

impl Layout {
    /// Validates capacities and derives the layout.
    pub(crate) fn new(caps: Capacities) -> Result<Layout, String> {
        if caps.max_frames == 0 || caps.max_frames > MAX_FRAMES_LIMIT {
            return Err(format!(
                "max_frames {} must be 1..={MAX_FRAMES_LIMIT}",
                caps.max_frames
            ));
        }
        if !caps.history.is_power_of_two() || !(2..=MAX_HISTORY_LIMIT).contains(&caps.history) {
            return Err(format!(
                "history {} must be a power of two in 2..={MAX_HISTORY_LIMIT}",
                caps.history
            ));
        }
        if caps.window < Duration::from_millis(1) || caps.window > Duration::from_secs(3600) {
            return Err(format!("window {:?} must be 1 ms..=1 h", caps.window));
        }
        let frames = HEADER_SIZE;
        let samples = round_up(frames + FRAME_RECORD * caps.max_frames as usize, 4096);
        // ≤ 4096 × 16384 × 80 B = 5 GiB: no overflow on 64-bit.
        let total = round_up(
            samples + caps.max_frames as usize * caps.history as usize * SAMPLE_SIZE,
            4096,
        );
        Ok(Layout {
            caps,
            window_ns: caps.window.as_nanos() as i64,
            frames,
            samples,
            total,
        })
    }

    /// Offset of frame record `f` (`f < max_frames`, checked by the caller).
    #[inline]
    pub(crate) fn frame(&self, f: u32) -> usize {
        debug_assert!(f < self.caps.max_frames);
        self.frames + f as usize * FRAME_RECORD
    }

    /// Offset of slot `i` of frame `f`'s ring (both checked by the caller).
    #[inline]
    pub(crate) fn slot(&self, f: u32, i: usize) -> usize {
        debug_assert!(f < self.caps.max_frames && i < self.caps.history as usize);
        self.samples + (f as usize * self.caps.history as usize + i) * SAMPLE_SIZE
    }
}

/// The fixed header at offset 0. Plain fields are written once by the
/// creator before `magic` is published with Release; openers read them only
/// after an Acquire load of `magic`, copy them out, and re-validate them.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct RawHeader {
    pub(crate) magic: u64,
    pub(crate) layout_version: u32,
    pub(crate) header_size: u32,
    pub(crate) segment_size: u64,
    pub(crate) max_frames: u32,
    pub(crate) history: u32,
    pub(crate) window_ns: u64,
    pub(crate) frames_offset: u64,
    pub(crate) samples_offset: u64,
    pub(crate) frame_record: u32,
    pub(crate) sample_size: u32,
    pub(crate) max_frame_id: u32,
    pub(crate) participants: u32,
    pub(crate) _reserved: [u8; 56],
}

const _: () = assert!(std::mem::size_of::<RawHeader>() == 128);

impl RawHeader {
    /// The header for `layout` (without the magic).
    pub(crate) fn for_layout(l: &Layout) -> RawHeader {
        RawHeader {
            magic: 0,
            layout_version: LAYOUT_VERSION,
            header_size: HEADER_SIZE as u32,
            segment_size: l.total as u64,
            max_frames: l.caps.max_frames,
            history: l.caps.history,
            window_ns: l.window_ns as u64,
            frames_offset: l.frames as u64,
            samples_offset: l.samples as u64,
            frame_record: FRAME_RECORD as u32,
            sample_size: SAMPLE_SIZE as u32,
            max_frame_id: MAX_FRAME_ID as u32,
            participants: MAX_PARTICIPANTS as u32,
            _reserved: [0; 56],
        }
    }

    /// Validates a header copied out of a segment of `file_size` bytes.
    pub(crate) fn validate(&self, name: &str, file_size: u64) -> Result<Layout, OpenError> {
        horus_shm::init::check_version(self.magic, self.layout_version, MAGIC, LAYOUT_VERSION)
            .map_err(|e| match e {
                VersionError::BadMagic { found } => OpenError::BadMagic {
                    name: name.to_owned(),
                    found,
                },
                VersionError::Version { found, expected } => OpenError::Version {
                    name: name.to_owned(),
                    found,
                    expected,
                },
            })?;
        let corrupt = |reason: String| OpenError::Corrupt {
            name: name.to_owned(),
            reason,
        };
        if self.header_size as usize != HEADER_SIZE
            || self.frame_record as usize != FRAME_RECORD
            || self.sample_size as usize != SAMPLE_SIZE
            || self.max_frame_id as usize != MAX_FRAME_ID
            || self.participants as usize != MAX_PARTICIPANTS
        {
            return Err(corrupt(format!(
                "record sizes {}/{}/{}/{}/{} differ from this build's",
                self.header_size,
                self.frame_record,
                self.sample_size,
                self.max_frame_id,
                self.participants
            )));
        }
        if self.window_ns > 3_600_000_000_000 {
            return Err(corrupt(format!("window of {} ns", self.window_ns)));
        }
        let caps = Capacities {
            max_frames: self.max_frames,
            history: self.history,
            window: Duration::from_nanos(self.window_ns),
        };
        let layout = Layout::new(caps).map_err(corrupt)?;
        horus_shm::init::check_extent(
            &[
                ("size", self.segment_size, layout.total as u64),
                ("frames", self.frames_offset, layout.frames as u64),
                ("samples", self.samples_offset, layout.samples as u64),
            ],
            layout.total as u64,
            file_size,
        )
        .map_err(corrupt)?;
        Ok(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_capacities_give_the_documented_size() {
        let l = Layout::new(Capacities::default()).unwrap();
        assert_eq!(l.samples, 4096 + 256 * 256);
        assert_eq!(l.total, l.samples + 256 * 1024 * 80);
        assert!(l.slot(255, 1023) + SAMPLE_SIZE <= l.total);
        assert!(l.frame(255) + FRAME_RECORD <= l.samples);
    }

    #[test]
    fn bad_capacities_are_refused() {
        for caps in [
            Capacities {
                max_frames: 0,
                ..Default::default()
            },
            Capacities {
                history: 3,
                ..Default::default()
            },
            Capacities {
                history: 1,
                ..Default::default()
            },
            Capacities {
                window: Duration::ZERO,
                ..Default::default()
            },
        ] {
            assert!(Layout::new(caps).is_err(), "{caps:?}");
        }
    }

    #[test]
    fn header_round_trips_and_rejects_tampering() {
        let l = Layout::new(Capacities::default()).unwrap();
        let mut h = RawHeader::for_layout(&l);
        h.magic = MAGIC;
        assert_eq!(h.validate("t", l.total as u64).unwrap(), l);
        assert!(matches!(
            h.validate("t", l.total as u64 - 1),
            Err(OpenError::Corrupt { .. })
        ));
        let mut bad = h;
        bad.samples_offset += 64;
        assert!(matches!(
            bad.validate("t", l.total as u64),
            Err(OpenError::Corrupt { .. })
        ));
        let mut bad = h;
        bad.max_frames = u32::MAX;
        assert!(matches!(
            bad.validate("t", u64::MAX),
            Err(OpenError::Corrupt { .. })
        ));
        let mut bad = h;
        bad.layout_version = 9;
        assert!(matches!(
            bad.validate("t", l.total as u64),
            Err(OpenError::Version { found: 9, .. })
        ));
        h.magic = 42;
        assert!(matches!(
            h.validate("t", l.total as u64),
            Err(OpenError::BadMagic { .. })
        ));
    }
}

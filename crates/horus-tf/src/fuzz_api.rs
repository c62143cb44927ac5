//! Building tf segment files for the `cargo fuzz` target `tf_segment_read`
//! (`fuzz/`): a valid header for given capacities, and where
//! the regions a peer writes lie, so the fuzzer's bytes land in them.

use std::time::Duration;

use crate::layout::{
    Capacities, Layout, RawHeader, CLOSING_OFF, FRAME_RECORD, HEADER_SIZE, LEASE_OFF, MAGIC,
    SAMPLE_SIZE,
};

/// A segment file with a valid header and zeroed contents.
#[derive(Debug)]
pub struct Composed {
    /// The whole file.
    pub file: Vec<u8>,
    /// Offset of the control words after the header (lease, frame count, …).
    pub control: usize,
    /// Offset of the lease word.
    pub lease: usize,
    /// Offset of the closing flag.
    pub closing: usize,
    /// Offset of frame record 0, and the bytes of all records.
    pub frames: (usize, usize),
    /// Offset of sample slot 0, and the bytes of all slots.
    pub samples: (usize, usize),
}

/// The file of a tf segment created with these capacities (None if invalid).
pub fn compose(max_frames: u32, history: u32, window_ms: u64) -> Option<Composed> {
    let caps = Capacities {
        max_frames,
        history,
        window: Duration::from_millis(window_ms),
    };
    let layout = Layout::new(caps).ok()?;
    let mut file = vec![0u8; layout.total];
    file[..128].copy_from_slice(&header_bytes(&layout));
    Some(Composed {
        file,
        control: 256,
        lease: LEASE_OFF,
        closing: CLOSING_OFF,
        frames: (layout.frames, FRAME_RECORD * max_frames as usize),
        samples: (
            layout.samples,
            SAMPLE_SIZE * max_frames as usize * history as usize,
        ),
    })
}

/// The 128 header bytes (with the magic) of `layout`, field by field.
fn header_bytes(layout: &Layout) -> [u8; 128] {
    let h = RawHeader::for_layout(layout);
    let mut out = [0u8; 128];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&MAGIC.to_ne_bytes());
    put(&h.layout_version.to_ne_bytes());
    put(&h.header_size.to_ne_bytes());
    put(&h.segment_size.to_ne_bytes());
    put(&h.max_frames.to_ne_bytes());
    put(&h.history.to_ne_bytes());
    put(&h.window_ns.to_ne_bytes());
    put(&h.frames_offset.to_ne_bytes());
    put(&h.samples_offset.to_ne_bytes());
    put(&h.frame_record.to_ne_bytes());
    put(&h.sample_size.to_ne_bytes());
    put(&h.max_frame_id.to_ne_bytes());
    put(&h.participants.to_ne_bytes());
    debug_assert_eq!(at, 72);
    debug_assert!(HEADER_SIZE >= 128);
    out
}

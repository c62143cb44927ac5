//! What the `log_ring_read` fuzz target (`fuzz/`) needs to build log segment
//! files with the real layout: compiled only with `--cfg fuzzing`. It writes what a peer
//! could write (any header field, cells, stamps, call-site entries); it bypasses no check
//! of the reader, which the target runs through the public [`LogSegment`](crate::LogSegment).

use crate::layout::{self, Geometry, Header, CELL, SITE_SIZE};

/// Where the regions of a composed segment start, and how large they are.
#[derive(Clone, Copy, Debug)]
pub struct Regions {
    /// Offset of the ring, bytes.
    pub ring: usize,
    /// Ring cells.
    pub cells: usize,
    /// Offset of the stamps (one u64 per cell).
    pub stamps: usize,
    /// Offset of the call-site table.
    pub sites: usize,
    /// Call-site entries.
    pub site_capacity: usize,
    /// Bytes per call-site entry.
    pub site_size: usize,
    /// Bytes per cell.
    pub cell: usize,
    /// Whole file, bytes.
    pub total: usize,
}

/// A valid, empty segment of `cells` cells (a power of two) and `sites` call sites, as
/// its creator writes it (magic published), with `pid`, `head` and `tail` as given.
pub fn compose(cells: u64, sites: u32, pid: u32, head: u64, tail: u64) -> (Vec<u8>, Regions) {
    let g = Geometry::new(cells, sites);
    // Words, so the header is built in place, aligned.
    let mut words = vec![0u64; g.total as usize / 8];
    // SAFETY: the buffer is 8-aligned, zeroed and at least a header page long (Geometry
    // puts the ring after it); Header is repr(C) integers and atomics, valid when zeroed.
    let h = unsafe { &mut *words.as_mut_ptr().cast::<Header>() };
    layout::init_header(h, &g, pid, 0, "fuzz", (layout::CLOCK_MONO, 0, 0, 1.0));
    *h.magic.get_mut() = layout::MAGIC;
    *h.head.get_mut() = head;
    *h.tail.get_mut() = tail;
    let file: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let r = Regions {
        ring: g.ring as usize,
        cells: g.cells as usize,
        stamps: g.stamps as usize,
        sites: g.sites as usize,
        site_capacity: g.site_capacity as usize,
        site_size: SITE_SIZE,
        cell: CELL,
        total: g.total as usize,
    };
    (file, r)
}

//! Reading a log segment's ring: the part shared by the in-process drain thread and
//! observers in other processes. Every length and index comes from shared memory and is
//! checked before use; every loop is bounded by the ring's capacity.

use std::sync::atomic::AtomicU64;

use crate::layout::{Geometry, Header, CELL};
use crate::ring;

/// Bytes of a record's header: `site u32, len u32, time u64, tid u32, nvalues u16,
/// flags u16`.
pub(crate) const RECORD_HEAD: usize = 24;

/// Raw pointers into one mapped, validated segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View {
    pub(crate) header: *const Header,
    pub(crate) ring: *const u8,
    pub(crate) stamps: *const AtomicU64,
    pub(crate) sites: *const u8,
    pub(crate) cap: u64,
    pub(crate) site_capacity: u32,
}

// SAFETY: the pointers name process-wide shared memory kept mapped by the owner of the
// View (the logger or a LogSegment); access goes through atomics or validated copies.
unsafe impl Send for View {}
// SAFETY: as above.
unsafe impl Sync for View {}

/// What is at a position of the ring.
#[derive(Debug)]
pub(crate) enum Step {
    /// No committed record starts here (being written, a record's middle, or nothing).
    Uncommitted,
    /// A record of `cells` cells, copied out intact.
    Record { bytes: Vec<u8>, cells: u64 },
    /// A record of (claimed) `cells` cells started here but was overwritten while (or
    /// before) we copied it.
    Overwritten { cells: u64 },
    /// A stamp says a record starts here but its length is impossible.
    Malformed,
}

impl View {
    /// The view of a mapping at `base` with geometry `g` (validated against its length).
    ///
    /// # Safety
    /// `base` is a live mapping of at least `g.total` bytes that outlives the View.
    pub(crate) unsafe fn new(base: *mut u8, g: &Geometry) -> View {
        // SAFETY: the offsets are inside the mapping (g.total ≤ its length, per contract)
        // and page aligned (Geometry::new), so every cast below is aligned.
        unsafe {
            View {
                header: base.cast::<Header>(),
                ring: base.add(g.ring as usize),
                stamps: base.add(g.stamps as usize).cast::<AtomicU64>(),
                sites: base.add(g.sites as usize),
                cap: g.cells,
                site_capacity: g.site_capacity,
            }
        }
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the header page is inside the live mapping (View::new's contract).
        unsafe { &*self.header }
    }

    pub(crate) fn stamp(&self, pos: u64) -> &AtomicU64 {
        let i = (pos & (self.cap - 1)) as usize;
        debug_assert!((i as u64) < self.cap);
        // SAFETY: i < cap and the stamp table holds cap words inside the mapping.
        unsafe { &*self.stamps.add(i) }
    }

    /// Copies `out.len()` bytes of the ring starting at byte offset `off` (wrapping).
    fn copy_out(&self, off: u64, out: &mut [u8]) {
        let size = self.cap as usize * CELL;
        let start = (off as usize) & (size - 1);
        let first = out.len().min(size - start);
        // SAFETY: the ring is `size` bytes inside the mapping; start + first ≤ size and the
        // remainder (out.len() ≤ size, checked by callers) restarts at 0. The bytes may be
        // changing under us (another writer): the caller validates with ring::intact, and
        // any bit pattern is a valid u8.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ring.add(start), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(
                self.ring,
                out.as_mut_ptr().add(first),
                out.len() - first,
            );
        }
    }

    /// Reads what is at `pos`.
    pub(crate) fn step(&self, pos: u64) -> Step {
        if !ring::committed(self.stamp(pos), pos) {
            return Step::Uncommitted;
        }
        let mut head = [0u8; 8];
        // Wrapping: positions come from shared memory; only `off % ring bytes` is used.
        self.copy_out(pos.wrapping_mul(CELL as u64), &mut head);
        let len = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]) as u64;
        let ring_bytes = self.cap * CELL as u64;
        if len < RECORD_HEAD as u64 || len > ring_bytes {
            // A torn read of the length looks the same: tell them apart.
            return if ring::intact(&self.header().head, self.cap, pos, 1) {
                Step::Malformed
            } else {
                Step::Overwritten { cells: 1 }
            };
        }
        let cells = len.div_ceil(CELL as u64);
        let mut bytes = vec![0u8; len as usize];
        self.copy_out(pos.wrapping_mul(CELL as u64), &mut bytes);
        if ring::intact(&self.header().head, self.cap, pos, cells) {
            Step::Record { bytes, cells }
        } else {
            Step::Overwritten { cells }
        }
    }
}

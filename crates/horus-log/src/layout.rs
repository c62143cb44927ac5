//! The log segment's layout: `/dev/shm/horus.<ns>.log.<pid>`.
//!
//! ```text
//! [0, 4096)              Header (below): identity, geometry, clock, counters
//! [ring, ring+cap*32)    the record ring: cap cells of CELL bytes (see ring.rs)
//! [stamps, +cap*8)       one commit stamp per cell
//! [sites, +n*SITE_SIZE)  the call-site table: one entry per call site, written once
//! ```
//!
//! Everything is native-endian (the segment never leaves the machine). Readers treat the
//! whole segment as untrusted: [`Geometry::validate`] checks every size and offset against
//! the file's length before anything else is read.

use std::sync::atomic::{AtomicU32, AtomicU64};

/// `b"HORUSLOG"`; published last (Release) once the header is written.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"HORUSLOG");
/// Layout version; a reader refuses any other.
pub(crate) const VERSION: u32 = 1;
/// Bytes per ring cell.
pub(crate) const CELL: usize = 32;
/// Bytes of the header page.
pub(crate) const HEADER_LEN: usize = 4096;
/// Bytes per call-site entry.
pub(crate) const SITE_SIZE: usize = 512;
/// Longest process name kept.
pub(crate) const NAME_LEN: usize = 32;
/// Largest ring a reader accepts (cells): 1 GiB of records.
pub(crate) const MAX_CELLS: u64 = 1 << 25;
/// Most call sites a reader accepts.
pub(crate) const MAX_SITES: u32 = 1 << 16;

/// How record times are stamped.
pub(crate) const CLOCK_TSC: u32 = 1;
/// Record times are CLOCK_MONOTONIC nanoseconds.
pub(crate) const CLOCK_MONO: u32 = 2;

/// The header page. Fields above `head` are written once by the creator before `magic`.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Header {
    pub(crate) magic: AtomicU64,
    pub(crate) version: u32,
    pub(crate) header_len: u32,
    pub(crate) pid: u32,
    pub(crate) clock_kind: u32,
    /// Process start time (clock ticks since boot), for liveness with the pid.
    pub(crate) start_time: u64,
    pub(crate) cells: u64,
    pub(crate) ring: u64,
    pub(crate) stamps: u64,
    pub(crate) sites: u64,
    pub(crate) site_capacity: u32,
    pub(crate) site_size: u32,
    /// Clock reading at creation and the wall-clock time (Unix ns) taken with it.
    pub(crate) clock_base: u64,
    pub(crate) unix_base_ns: u64,
    /// f64 bits: nanoseconds per clock unit (refined by the drain thread).
    pub(crate) ns_per_tick: AtomicU64,
    pub(crate) name: [u8; NAME_LEN],
    _pad0: [u8; 64],
    /// Next free position (cells). Own cache line: writers CAS it.
    pub(crate) head: AtomicU64,
    _pad1: [u8; 56],
    /// First position not consumed by the drain thread. Own cache line.
    pub(crate) tail: AtomicU64,
    _pad2: [u8; 56],
    /// Records dropped because the ring was full (or the record was larger than it).
    pub(crate) dropped: AtomicU64,
    /// Display/Debug values cut to fit their stack buffer.
    pub(crate) truncated: AtomicU64,
    /// Call-site entries handed out (may exceed the capacity: the excess is refused).
    pub(crate) sites_next: AtomicU32,
    /// 1 once the process shut the logger down in order.
    pub(crate) exited: AtomicU32,
    /// Cells the drain skipped because the reservation they belong to was never
    /// committed (its writer died or stalled between reserving and committing; see
    /// `sink.rs`). Zero in segments of builds without it (the page is zeroed).
    pub(crate) abandoned: AtomicU64,
    /// Records the drain could not decode (skipped), or whose format string it could not
    /// apply in full (printed with the bad placeholder's value unformatted).
    pub(crate) unreadable: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Header>() <= HEADER_LEN);
const _: () = assert!(std::mem::offset_of!(Header, head) % 64 == 0);
const _: () = assert!(std::mem::offset_of!(Header, tail) % 64 == 0);

/// Sizes of a segment, computed by the creator and re-derived (validated) by readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) cells: u64,
    pub(crate) ring: u64,
    pub(crate) stamps: u64,
    pub(crate) sites: u64,
    pub(crate) site_capacity: u32,
    pub(crate) total: u64,
}

const fn page_up(x: u64) -> u64 {
    (x + 4095) & !4095
}

impl Geometry {
    /// The layout for a ring of `cells` cells (a power of two) and `sites` call sites.
    pub(crate) fn new(cells: u64, site_capacity: u32) -> Geometry {
        let ring = HEADER_LEN as u64;
        let stamps = page_up(ring + cells * CELL as u64);
        let sites = page_up(stamps + cells * 8);
        let total = page_up(sites + u64::from(site_capacity) * SITE_SIZE as u64);
        Geometry {
            cells,
            ring,
            stamps,
            sites,
            site_capacity,
            total,
        }
    }

    /// Checks a header copied out of a segment of `file_len` bytes; the reason on failure.
    pub(crate) fn validate(h: &HeaderCopy, file_len: u64) -> Result<Geometry, String> {
        if h.magic != MAGIC {
            return Err("bad magic (not a log segment, or not initialised)".into());
        }
        if h.version != VERSION {
            return Err(format!(
                "layout version {} (this build reads {VERSION})",
                h.version
            ));
        }
        if h.header_len as usize != HEADER_LEN || h.site_size as usize != SITE_SIZE {
            return Err("header or call-site size of another build".into());
        }
        if !h.cells.is_power_of_two() || h.cells > MAX_CELLS || h.site_capacity > MAX_SITES {
            return Err(format!(
                "implausible geometry: {} cells, {} call sites",
                h.cells, h.site_capacity
            ));
        }
        let g = Geometry::new(h.cells, h.site_capacity);
        if (g.ring, g.stamps, g.sites) != (h.ring, h.stamps, h.sites) {
            return Err("region offsets do not match the geometry".into());
        }
        if g.total > file_len {
            return Err(format!(
                "file is {file_len} B, its header needs {}",
                g.total
            ));
        }
        if h.clock_kind != CLOCK_TSC && h.clock_kind != CLOCK_MONO {
            return Err(format!("unknown clock kind {}", h.clock_kind));
        }
        Ok(g)
    }
}

/// The write-once part of a header, copied out of shared memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeaderCopy {
    pub(crate) magic: u64,
    pub(crate) version: u32,
    pub(crate) header_len: u32,
    pub(crate) pid: u32,
    pub(crate) clock_kind: u32,
    pub(crate) start_time: u64,
    pub(crate) cells: u64,
    pub(crate) ring: u64,
    pub(crate) stamps: u64,
    pub(crate) sites: u64,
    pub(crate) site_capacity: u32,
    pub(crate) site_size: u32,
    pub(crate) clock_base: u64,
    pub(crate) unix_base_ns: u64,
    pub(crate) name: [u8; NAME_LEN],
}

impl HeaderCopy {
    /// Copies the header fields (Acquire on magic first: the rest was written before it).
    /// Volatile reads: another process may be writing the page (it is untrusted).
    pub(crate) fn read(h: &Header) -> HeaderCopy {
        use std::ptr::read_volatile as rv;
        use std::sync::atomic::Ordering;
        let magic = h.magic.load(Ordering::Acquire);
        // SAFETY: every pointer is a field of a live `Header` (inside the mapping), aligned
        // by `repr(C)`; volatile reads of plain integers are valid for any bit pattern.
        unsafe {
            HeaderCopy {
                magic,
                version: rv(&h.version),
                header_len: rv(&h.header_len),
                pid: rv(&h.pid),
                clock_kind: rv(&h.clock_kind),
                start_time: rv(&h.start_time),
                cells: rv(&h.cells),
                ring: rv(&h.ring),
                stamps: rv(&h.stamps),
                sites: rv(&h.sites),
                site_capacity: rv(&h.site_capacity),
                site_size: rv(&h.site_size),
                clock_base: rv(&h.clock_base),
                unix_base_ns: rv(&h.unix_base_ns),
                name: rv(&h.name),
            }
        }
    }
}

/// Fills a fresh header (the segment is zeroed and not yet visible: magic is 0).
pub(crate) fn init_header(
    h: &mut Header,
    g: &Geometry,
    pid: u32,
    start_time: u64,
    name: &str,
    clock: (u32, u64, u64, f64),
) {
    h.version = VERSION;
    h.header_len = HEADER_LEN as u32;
    h.pid = pid;
    h.start_time = start_time;
    h.cells = g.cells;
    h.ring = g.ring;
    h.stamps = g.stamps;
    h.sites = g.sites;
    h.site_capacity = g.site_capacity;
    h.site_size = SITE_SIZE as u32;
    (h.clock_kind, h.clock_base, h.unix_base_ns) = (clock.0, clock.1, clock.2);
    *h.ns_per_tick.get_mut() = clock.3.to_bits();
    let n = name.len().min(NAME_LEN);
    h.name[..n].copy_from_slice(&name.as_bytes()[..n]);
}

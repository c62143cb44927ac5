//! Reading another process's log segment (or our own): `horus log` and tests.
//!
//! A reader never consumes: it copies records and checks they were not overwritten while
//! it copied. Everything it reads is validated; a malformed record is skipped and
//! counted, never trusted; every loop is bounded by the ring's capacity.

use std::sync::atomic::Ordering;

use horus_shm::{ProcessId, Segment};

use crate::layout::{Geometry, Header, HeaderCopy, HEADER_LEN};
use crate::record::{self, ClockParams, LogRecord, Sites};
use crate::view::{Step, View};
use crate::LogError;

/// An opened, validated log segment.
#[derive(Debug)]
pub struct LogSegment {
    seg: Segment,
    view: View,
    header: HeaderCopy,
    process: String,
    sites: Sites,
}

/// Counters of one segment, read now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Records the writer dropped (ring full).
    pub dropped: u64,
    /// Values cut to fit their capture buffer.
    pub truncated: u64,
    /// Positions reserved so far (cells).
    pub head: u64,
    /// Cells the writing process's drain skipped: reservations never committed (a
    /// writer that died or stalled between reserving and committing).
    pub abandoned: u64,
    /// Records the writing process's drain could not decode or format in full.
    pub unreadable: u64,
}

/// What one [`LogSegment::read_from`] call found.
#[derive(Debug, Default)]
pub struct Batch {
    /// Records, in order.
    pub records: Vec<LogRecord>,
    /// Where to continue next time.
    pub next: u64,
    /// Records skipped as malformed (bad length, unknown call site, bad values).
    pub malformed: u64,
    /// Records lost to this reader: overwritten before it read them (cells).
    pub missed_cells: u64,
    /// Placeholders of the records read whose format spec was refused (a precision above
    /// [`MAX_PRECISION`](crate::MAX_PRECISION)): the value was printed without it.
    pub refused_specs: u64,
}

impl LogSegment {
    /// Opens `name` (`/horus.<ns>.log.<pid>`) and validates its header against the file.
    pub fn open(name: &str) -> Result<LogSegment, LogError> {
        let seg = Segment::open(name, HEADER_LEN)?;
        // SAFETY: the mapping is at least HEADER_LEN bytes (checked by open), page
        // aligned; Header is plain integers and atomics, valid for any bit pattern.
        let header = HeaderCopy::read(unsafe { &*seg.base().cast::<Header>() });
        let g = Geometry::validate(&header, seg.len() as u64).map_err(|why| LogError::Invalid {
            name: name.to_owned(),
            why,
        })?;
        // SAFETY: validated: the mapping holds g.total bytes; it lives as long as `seg`,
        // which the LogSegment owns together with the view.
        let view = unsafe { View::new(seg.base(), &g) };
        let n = header
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(header.name.len());
        let process = String::from_utf8_lossy(&header.name[..n]).into_owned();
        Ok(LogSegment {
            seg,
            view,
            header,
            process,
            sites: Sites::default(),
        })
    }

    /// The writing process's pid.
    pub fn pid(&self) -> u32 {
        self.header.pid
    }

    /// The writing process's name.
    pub fn process(&self) -> &str {
        &self.process
    }

    /// Whether the writing process is still running (pid and start time).
    pub fn is_alive(&self) -> bool {
        ProcessId {
            pid: self.header.pid,
            start_time: self.header.start_time,
        }
        .is_alive()
    }

    /// Whether the process shut its logger down in order.
    pub fn exited_cleanly(&self) -> bool {
        // Acquire: pairs with the Release in `shutdown`.
        self.view.header().exited.load(Ordering::Acquire) != 0
    }

    /// The writer's counters now.
    pub fn counters(&self) -> Counters {
        let h = self.view.header();
        // Relaxed: statistics; `head` only bounds where to read (re-checked per record).
        Counters {
            dropped: h.dropped.load(Ordering::Relaxed),
            truncated: h.truncated.load(Ordering::Relaxed),
            head: h.head.load(Ordering::Acquire),
            abandoned: h.abandoned.load(Ordering::Relaxed),
            unreadable: h.unreadable.load(Ordering::Relaxed),
        }
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        self.seg.name()
    }

    /// Reads the records from position `from` (0: the oldest still in the ring) up to
    /// what is committed now. With `wait_at_gap`, stops at a record still being written
    /// (continue later from `next`) unless the writing process's drain has already
    /// skipped it as abandoned, or the process is dead; otherwise steps over it.
    ///
    /// Positions come from shared memory: every step is overflow-safe and the loop ends
    /// within one ring's worth of cells whatever `head` says.
    pub fn read_from(&mut self, from: u64, wait_at_gap: bool) -> Batch {
        let cap = self.view.cap;
        let head = self.counters().head;
        let oldest = head.saturating_sub(cap);
        let mut batch = Batch::default();
        let mut pos = from;
        if pos < oldest {
            batch.missed_cells = if from == 0 { 0 } else { oldest - pos };
            pos = oldest;
        }
        // At `from` (a previous `next`) we are at a record boundary; after a jump we are
        // not, and step cell by cell to the next record start.
        let mut synced = from >= oldest && from > 0;
        let clock = self.clock();
        let who = (self.header.pid, self.process.clone());
        // Bounded: each turn advances `pos` by at least one cell (saturating: a `pos` at
        // u64::MAX ends the loop, as `end` ≤ u64::MAX), and pos < end ≤ pos + cap; a
        // hostile `head` far ahead costs at most `cap` turns.
        let end = head.min(pos.saturating_add(cap));
        let mut alive = None;
        while pos < end {
            match self.view.step(pos) {
                Step::Record { bytes, cells } => {
                    match record::decode(
                        &self.view,
                        &mut self.sites,
                        clock,
                        &bytes,
                        pos,
                        (who.0, &who.1),
                        &mut batch.refused_specs,
                    ) {
                        Ok(r) => batch.records.push(r),
                        Err(_) => batch.malformed += 1,
                    }
                    pos = pos.saturating_add(cells);
                    synced = true;
                }
                Step::Uncommitted
                    if synced
                        && wait_at_gap
                        && pos >= self.drained()
                        && *alive.get_or_insert_with(|| self.is_alive()) =>
                {
                    break
                }
                Step::Uncommitted => pos += 1,
                Step::Overwritten { cells } => {
                    // Lapped while reading: restart at the oldest position now, and at
                    // least past the lost record (each copy advances by what it copied, so
                    // a writer lapping us on purpose cannot make the loop quadratic).
                    let oldest_now = self.counters().head.saturating_sub(cap);
                    let next = oldest_now.max(pos.saturating_add(cells.max(1)));
                    batch.missed_cells += next - pos;
                    pos = next;
                    synced = false;
                }
                Step::Malformed => {
                    batch.malformed += 1;
                    pos += 1;
                    synced = false;
                }
            }
        }
        batch.next = pos;
        batch
    }

    /// Where the writing process's drain has consumed up to: before it, a record start
    /// that is not committed was skipped as abandoned and will never be.
    fn drained(&self) -> u64 {
        // Relaxed: a hint to stop waiting; the stamps decide what is read.
        self.view.header().tail.load(Ordering::Relaxed)
    }

    fn clock(&self) -> ClockParams {
        ClockParams {
            base: self.header.clock_base,
            unix_base: self.header.unix_base_ns,
            // Relaxed: a parameter; any value the writer stored is usable.
            period: f64::from_bits(self.view.header().ns_per_tick.load(Ordering::Relaxed)),
        }
    }

    /// Removes the segment's name (its mapping here stays valid).
    pub fn unlink(&self) -> bool {
        self.seg.unlink_if_same()
    }
}

/// One log segment file of a namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentEntry {
    /// Shared-memory name, `/horus.<ns>.log.<pid>`.
    pub name: String,
    /// The pid in the file name.
    pub pid: u32,
}

/// The log segments of `namespace`, by pid.
pub fn segments(namespace: &str) -> Result<Vec<SegmentEntry>, LogError> {
    let prefix = horus_shm::segment_prefix(namespace, "log")?;
    let dir = std::fs::read_dir("/dev/shm").map_err(LogError::List)?;
    let mut out: Vec<SegmentEntry> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| {
            let pid = f.strip_prefix(&prefix)?.parse::<u32>().ok()?;
            Some(SegmentEntry {
                name: format!("/{f}"),
                pid,
            })
        })
        .collect();
    out.sort_by_key(|e| e.pid);
    Ok(out)
}

/// Removes the log segments of `namespace` whose process is dead (their last records
/// go with them), and unreadable ones. Returns the names removed.
pub fn remove_dead(namespace: &str) -> Result<Vec<String>, LogError> {
    let mut removed = Vec::new();
    for e in segments(namespace)? {
        let dead = match LogSegment::open(&e.name) {
            Ok(s) => !s.is_alive(),
            Err(LogError::Segment(horus_shm::SegmentError::NotFound(_))) => continue,
            // Unreadable: removed only if no process of that pid is running.
            Err(_) => !ProcessId {
                pid: e.pid,
                start_time: 0,
            }
            .is_alive(),
        };
        if dead {
            Segment::unlink(&e.name);
            removed.push(e.name);
        }
    }
    Ok(removed)
}

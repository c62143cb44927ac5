//! The reservation protocol of the log ring: many writers (threads of one process), one
//! consumer (the process's drain thread) and any number of observers (`horus log`, other
//! processes, possibly after this one died).
//!
//! The ring is `cap` cells (a power of two) of [`crate::layout::CELL`] bytes, addressed by
//! *positions*: a position is a cell count since the ring was created, never wrapping
//! (2^64 cells), and lives in cell `position % cap`. Three words steer it:
//!
//! * `head` — the next free position. A writer reserves `n` cells for a record with a CAS
//!   `head → head + n` (lock-free: a failed CAS means another writer made progress). The
//!   design is the bounded multi-producer byte ring of e.g. the Linux `perf` ring or
//!   LMAX's disruptor claim, with commit stamps in a side table instead of a commit cursor,
//!   so a writer never waits for a slower one.
//! * `tail` — the first position the drain has not consumed. A reservation that would
//!   reach `tail + cap` would overwrite unconsumed records: it is refused and the record
//!   is dropped (and counted by the caller). Writers never block.
//! * `stamp[cell]` — one word per cell: `position + 1` of the last record that *started*
//!   in that cell, stored with Release once the record is written (its commit). A cell in
//!   the middle of a record keeps an older stamp, from an earlier lap, which never equals
//!   `position + 1` for the position being read: so a reader finds record starts without
//!   trusting any length it has not validated.
//!
//! Observers do not consume; they copy a record and then check that no writer has since
//! reserved a position on the record's cells ([`intact`]): a seqlock whose sequence is the
//! reservation counter.

use crate::sync::{fence, AtomicU64, Ordering};

/// Reserves `cells` cells; `None` when the ring has no room (the caller counts a drop).
/// `cells` must be in `1..=cap`.
///
/// `seen_tail` is a process-local lower bound of `tail` (on its own cache line, outside
/// the segment): `tail` only grows, so a record that fits before `seen_tail + cap` fits
/// before `tail + cap`. Reading it instead of `tail` keeps the writers off the cache line
/// the drain stores into after every batch: `tail` itself is read only when the bound
/// says the ring might be full, about once per lap. A record is refused only after a
/// fresh read of `tail` says so, as before: no false loss.
#[inline]
pub(crate) fn reserve(
    head: &AtomicU64,
    tail: &AtomicU64,
    seen_tail: &AtomicU64,
    cap: u64,
    cells: u64,
) -> Option<u64> {
    debug_assert!((1..=cap).contains(&cells));
    // Relaxed: the value only seeds the CAS, which re-checks it.
    let mut pos = head.load(Ordering::Relaxed);
    // Acquire: pairs with the Release store below by the writer that stored this value,
    // which read it from `tail` with Acquire: the drain's reads of the cells it gave back
    // happen-before that store, hence before our writes into them.
    let mut free_from = seen_tail.load(Ordering::Acquire);
    let mut fresh = false;
    loop {
        // A head at the end of the position space (only a peer scribbling on the segment
        // puts it there) refuses every record instead of wrapping.
        let end = pos.checked_add(cells)?;
        if end.wrapping_sub(free_from) > cap {
            if fresh {
                return None;
            }
            // The bound says full: read `tail` itself. Acquire pairs with the drain's
            // Release store of `tail` in `consume`: the drain's reads of the cells it
            // gives back happen-before our writes into them.
            free_from = tail.load(Ordering::Acquire);
            // Release: passes that happens-before on to writers that load this bound
            // (above). Another writer may store an older bound after ours: still a lower
            // bound of `tail`, so it only costs a later refresh.
            seen_tail.store(free_from, Ordering::Release);
            fresh = true;
            continue;
        }
        // Relaxed on success: ordering of our later data writes against observers comes
        // from the Release fence below; against the drain, from the stamp's Release store.
        match head.compare_exchange_weak(pos, end, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break,
            Err(now) => pos = now,
        }
    }
    // Release fence before the data writes: an observer that reads any byte we write next
    // and then issues its Acquire fence (in `intact`) is guaranteed to see our new `head`,
    // and so rejects its copy as overwritten.
    fence(Ordering::Release);
    Some(pos)
}

/// Publishes the record written at `pos`: its data happens-before any Acquire load that
/// sees the stamp.
#[inline]
pub(crate) fn commit(stamp: &AtomicU64, pos: u64) {
    stamp.store(pos + 1, Ordering::Release);
}

/// Whether a committed record starts at `pos` (Acquire: its bytes are then visible).
#[inline]
pub(crate) fn committed(stamp: &AtomicU64, pos: u64) -> bool {
    stamp.load(Ordering::Acquire) == pos.wrapping_add(1)
}

/// After copying the record at `pos..pos + cells`: whether no writer reserved any of its
/// cells in a later lap while we copied (then the copy is not torn).
#[inline]
pub(crate) fn intact(head: &AtomicU64, cap: u64, pos: u64, cells: u64) -> bool {
    // Acquire fence after the data reads, paired with the writer's Release fence in
    // `reserve`: if we read a byte of a newer record, its reservation is visible below.
    fence(Ordering::Acquire);
    let reserved = head.load(Ordering::Relaxed);
    reserved <= pos.wrapping_add(cap) && cells <= cap
}

/// The first position in `(pos, limit)` where a committed record starts, looking at no
/// more than `cap` cells: where the drain resumes after a reservation at `pos` that was
/// never committed (its writer died or stalled between reserving and committing; the
/// drain decides when to give up on it, see `abandon.rs`). Reservations are contiguous,
/// so the cells in between belong to reservations made before the one found; the drain
/// skips them with [`consume`] like cells it read, and counts them.
pub(crate) fn next_committed<'a>(
    stamp: impl Fn(u64) -> &'a AtomicU64,
    pos: u64,
    limit: u64,
    cap: u64,
) -> Option<u64> {
    let end = limit.min(pos.saturating_add(cap));
    (pos.saturating_add(1)..end).find(|&q| committed(stamp(q), q))
}

/// The drain gives back the cells before `pos` (it has read everything before it).
#[inline]
pub(crate) fn consume(tail: &AtomicU64, pos: u64) {
    // Release: pairs with the Acquire load in `reserve` (see there).
    tail.store(pos, Ordering::Release);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn stale_tail_bound_never_refuses_a_record_that_fits() {
        let (head, tail, seen) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        assert_eq!(reserve(&head, &tail, &seen, 8, 8), Some(0));
        // Full: refused, after a fresh read of `tail`.
        assert_eq!(reserve(&head, &tail, &seen, 8, 1), None);
        // The drain gives back 5 cells; the writers' bound still says 0.
        consume(&tail, 5);
        assert_eq!(seen.load(Ordering::Relaxed), 0);
        assert_eq!(reserve(&head, &tail, &seen, 8, 5), Some(8));
        assert_eq!(seen.load(Ordering::Relaxed), 5);
        // Full again, by the fresh `tail` too.
        assert_eq!(reserve(&head, &tail, &seen, 8, 1), None);
        // A bound older than `tail` (another writer stored it late) only costs a refresh.
        consume(&tail, 13);
        seen.store(2, Ordering::Relaxed);
        assert_eq!(reserve(&head, &tail, &seen, 8, 8), Some(13));
        assert_eq!(head.load(Ordering::Relaxed), 21);
    }

    #[test]
    fn scribbled_head_at_the_end_refuses_instead_of_wrapping() {
        let (head, tail, seen) = (
            AtomicU64::new(u64::MAX - 1),
            AtomicU64::new(u64::MAX - 1),
            AtomicU64::new(0),
        );
        assert_eq!(reserve(&head, &tail, &seen, 8, 2), None);
        assert_eq!(head.load(Ordering::Relaxed), u64::MAX - 1);
    }
}

/// The heap-backed ring the loom model drives (`tests/loom_log.rs`): the same protocol
/// functions over atomics instead of shared memory, one data word per cell.
#[cfg(loom)]
pub(crate) mod model {
    use super::*;
    use loom::sync::atomic::AtomicU64 as Word;

    /// A ring of `cap` one-word cells; a record is `cells` copies of one value.
    #[derive(Debug)]
    pub struct ModelRing {
        head: AtomicU64,
        tail: AtomicU64,
        seen_tail: AtomicU64,
        cap: u64,
        stamps: Vec<AtomicU64>,
        data: Vec<Word>,
    }

    impl ModelRing {
        /// An empty ring of `cap` cells.
        pub fn new(cap: u64) -> Self {
            ModelRing {
                head: AtomicU64::new(0),
                tail: AtomicU64::new(0),
                seen_tail: AtomicU64::new(0),
                cap,
                stamps: (0..cap).map(|_| AtomicU64::new(0)).collect(),
                data: (0..cap).map(|_| Word::new(0)).collect(),
            }
        }

        /// Writes a record of `cells` cells holding `value`; false if dropped (full).
        pub fn write(&self, cells: u64, value: u64) -> bool {
            let Some(pos) = reserve(&self.head, &self.tail, &self.seen_tail, self.cap, cells)
            else {
                return false;
            };
            for i in 0..cells {
                let cell = ((pos + i) % self.cap) as usize;
                // Relaxed: data words are ordered by the fence in `reserve` and the stamp.
                self.data[cell].store(value, Ordering::Relaxed);
            }
            commit(&self.stamps[(pos % self.cap) as usize], pos);
            true
        }

        /// Observer: reads the record at `pos` (of `cells` cells) if committed and intact.
        pub fn observe(&self, pos: u64, cells: u64) -> Option<Vec<u64>> {
            if !committed(&self.stamps[(pos % self.cap) as usize], pos) {
                return None;
            }
            let v: Vec<u64> = (0..cells)
                .map(|i| self.data[((pos + i) % self.cap) as usize].load(Ordering::Relaxed))
                .collect();
            intact(&self.head, self.cap, pos, cells).then_some(v)
        }

        /// A writer that reserves `cells` cells and dies before writing or committing
        /// them; returns the position reserved.
        pub fn abandon(&self, cells: u64) -> Option<u64> {
            reserve(&self.head, &self.tail, &self.seen_tail, self.cap, cells)
        }

        /// Drain, stuck at `pos` (not committed), gives up on it once it decided the
        /// writer is gone: skips to the next committed record before `limit`, if any.
        pub fn skip_abandoned(&self, pos: u64, limit: u64) -> Option<u64> {
            let q = next_committed(
                |q| &self.stamps[(q % self.cap) as usize],
                pos,
                limit,
                self.cap,
            )?;
            consume(&self.tail, q);
            Some(q)
        }

        /// The reservation counter now.
        pub fn head(&self) -> u64 {
            self.head.load(Ordering::Acquire)
        }

        /// Drain: consumes the record at `pos` if committed; returns its data.
        pub fn drain(&self, pos: u64, cells: u64) -> Option<Vec<u64>> {
            if !committed(&self.stamps[(pos % self.cap) as usize], pos) {
                return None;
            }
            let v: Vec<u64> = (0..cells)
                .map(|i| self.data[((pos + i) % self.cap) as usize].load(Ordering::Relaxed))
                .collect();
            consume(&self.tail, pos + cells);
            Some(v)
        }
    }
}

//! The statistics file: a fixed-layout, versioned record table under
//! `/dev/shm` that the scheduler rewrites periodically and any process can
//! read with [`read_stats`](crate::read_stats).
//!
//! ```text
//! offset 0    ShmHeader (256 bytes)
//!               magic "HORUSSTA", version, header/record sizes, capacity,
//!               node count, writer pid + owner word (horus-shm's: the
//!               writer's pid + start time token), scheduler name,
//!               seqlock + scheduler-wide figures (uptime, main-loop rounds…),
//!               membership word (horus-shm's: the writer's bit, CLOSING)
//! offset 256  ShmRecord × capacity (384 bytes each)
//!               seqlock + one node's figures, see `encode_node`
//! ```
//!
//! Every word is an atomic `u64`/`u32`: the file is shared with processes we
//! do not trust, and atomics make concurrent access defined behaviour.
//! Records are guarded by a seqlock (the Linux `seqcount` pattern; the
//! fence-based form follows H.-J. Boehm, "Can seqlocks get along with
//! programming language memory models?", MSPC 2012): the single writer makes
//! the sequence odd, writes, makes it even; a reader retries until it read the
//! same even sequence before and after copying — so it never returns a torn
//! record. A writer that dies mid-write leaves the sequence odd forever; the
//! reader gives up after a bounded number of retries with a typed error.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use crate::config::ExecClass;
use crate::rt::RtMode;
use crate::stats::{NodeState, NodeStats, Percentiles};

/// `b"HORUSSTA"` little-endian.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"HORUSSTA");
/// Layout version; bump on any change of the structs or word meanings.
/// (2: the writer's process start time became a horus-shm owner word;
/// 3: the last header data word became a horus-shm membership word.)
pub(crate) const VERSION: u32 = 3;
/// Words of scheduler-wide figures in the header.
pub(crate) const HEADER_WORDS: usize = 17;
/// Words of figures per record.
pub(crate) const RECORD_WORDS: usize = 47;
/// Most records a reader accepts (bounds hostile capacities).
pub(crate) const MAX_RECORDS: u32 = 65_536;

/// The file header. Static fields are written once before `magic`.
#[repr(C)]
pub(crate) struct ShmHeader {
    pub(crate) magic: AtomicU64,
    pub(crate) version: AtomicU32,
    pub(crate) header_size: AtomicU32,
    pub(crate) record_size: AtomicU32,
    pub(crate) capacity: AtomicU32,
    pub(crate) pid: AtomicU32,
    pub(crate) count: AtomicU32,
    /// The writer's owner word (`horus_shm::place`: its `ProcessId` token),
    /// judged with `place::classify` like every horus-shm place.
    pub(crate) owner: AtomicU64,
    pub(crate) name: [AtomicU64; 8],
    pub(crate) seq: AtomicU64,
    pub(crate) data: [AtomicU64; HEADER_WORDS],
    /// The membership word (`horus_shm::place`): the writer's place bit
    /// ([`WRITER`]) while it writes, and `CLOSING` once whoever removes the
    /// file has won the right to unlink it.
    pub(crate) membership: AtomicU64,
}

/// The writer's place bit in [`ShmHeader::membership`] (the file's only place).
pub(crate) const WRITER: u64 = 1;

/// One node's record.
#[repr(C)]
pub(crate) struct ShmRecord {
    pub(crate) seq: AtomicU64,
    pub(crate) data: [AtomicU64; RECORD_WORDS],
}

const _: () = assert!(std::mem::size_of::<ShmHeader>() == 256);
const _: () = assert!(std::mem::size_of::<ShmRecord>() == 384);

/// Header data words.
pub(crate) mod h {
    pub(crate) const PUBLISHES: usize = 0;
    pub(crate) const TAKEN_AT_UNIX_NS: usize = 1;
    pub(crate) const UPTIME_NS: usize = 2;
    pub(crate) const FLAGS: usize = 3; // bit 0: simulated clock
    pub(crate) const MEMORY_LOCK: usize = 4;
    pub(crate) const ROUNDS: usize = 5; // 7 words: Percentiles
}

/// Record data words (after the 8 name words).
mod r {
    pub(super) const CLASS: usize = 8;
    pub(super) const STATE: usize = 9;
    pub(super) const RT_MODE: usize = 10;
    pub(super) const CORE: usize = 11; // CPU + 1, 0 = not pinned
    pub(super) const TARGET_HZ: usize = 12; // f64 bits, 0 = none
    pub(super) const TICKS: usize = 13;
    pub(super) const ACHIEVED_HZ: usize = 14; // f64 bits
    pub(super) const WINDOW_TICKS: usize = 15;
    pub(super) const WINDOW_MISSES: usize = 16;
    pub(super) const EXEC: usize = 17; // 7 words
    pub(super) const JITTER: usize = 24; // 7 words
    pub(super) const DEADLINE_MISSES: usize = 31;
    pub(super) const BUDGET_OVERRUNS: usize = 32;
    pub(super) const FAILURES: usize = 33;
    pub(super) const RESTARTS: usize = 34;
    pub(super) const SKIPPED: usize = 35;
    pub(super) const WATCHDOG_EXPIRIES: usize = 36;
}

/// Writes `data` under `seq` (single writer).
pub(crate) fn seqlock_write(seq: &AtomicU64, slots: &[AtomicU64], data: &[u64]) {
    debug_assert_eq!(slots.len(), data.len());
    let s = seq.load(Ordering::Relaxed);
    seq.store(s.wrapping_add(1), Ordering::Relaxed);
    // Release fence: the odd sequence is ordered before every data store, so
    // a reader that observes any new data word also observes the sequence
    // as changed when it re-reads it after its Acquire fence.
    fence(Ordering::Release);
    for (slot, v) in slots.iter().zip(data) {
        slot.store(*v, Ordering::Relaxed);
    }
    // Release store: publishes the data with the new even sequence.
    seq.store(s.wrapping_add(2), Ordering::Release);
}

/// Attempts of [`seqlock_read`]: the first spin, the rest yield. A writer
/// updates a record in well under a microsecond, so a live one is read within
/// a few attempts; a record left odd by a writer that crashed mid-write (or
/// by a corrupt file) fails fast instead of stalling the reader for seconds
/// (10 000 yielding attempts took up to 5 s under load: fuzz finding F4).
const READ_ATTEMPTS: u32 = 256;
const SPIN_ATTEMPTS: u32 = 64;

/// Reads `slots` under `seq` into `out`; `false` if every attempt
/// overlapped a write (writer crashed mid-write, or is stuck).
pub(crate) fn seqlock_read(seq: &AtomicU64, slots: &[AtomicU64], out: &mut [u64]) -> bool {
    debug_assert_eq!(slots.len(), out.len());
    for attempt in 0..READ_ATTEMPTS {
        // Acquire: if we see an even sequence published by the writer's final
        // Release store, we see the data written before it.
        let s1 = seq.load(Ordering::Acquire);
        if s1 & 1 == 0 {
            for (o, slot) in out.iter_mut().zip(slots) {
                *o = slot.load(Ordering::Relaxed);
            }
            // Acquire fence: orders the data loads before the re-check, so a
            // data word from a later write implies a changed sequence.
            fence(Ordering::Acquire);
            if seq.load(Ordering::Relaxed) == s1 {
                return true;
            }
        }
        if attempt > SPIN_ATTEMPTS {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    false
}

/// Packs up to 63 bytes of `name` into 8 words (NUL-padded).
pub(crate) fn encode_name(name: &str, out: &mut [u64]) {
    let mut bytes = [0_u8; 64];
    let n = name.len().min(63);
    bytes[..n].copy_from_slice(&name.as_bytes()[..n]);
    for (i, w) in out.iter_mut().take(8).enumerate() {
        *w = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    }
}

/// Unpacks a name; bytes up to the first NUL (at most 63), lossy UTF-8.
pub(crate) fn decode_name(words: &[u64]) -> String {
    let mut bytes = Vec::with_capacity(64);
    for w in words.iter().take(8) {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(63).min(63);
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

pub(crate) fn encode_percentiles(p: &Percentiles, out: &mut [u64]) {
    let ns = |d: std::time::Duration| d.as_nanos().min(u128::from(u64::MAX)) as u64;
    out[..7].copy_from_slice(&[
        p.samples,
        ns(p.min),
        ns(p.p50),
        ns(p.p99),
        ns(p.p999),
        ns(p.max),
        ns(p.total),
    ]);
}

pub(crate) fn decode_percentiles(w: &[u64]) -> Percentiles {
    let d = std::time::Duration::from_nanos;
    Percentiles {
        samples: w[0],
        min: d(w[1]),
        p50: d(w[2]),
        p99: d(w[3]),
        p999: d(w[4]),
        max: d(w[5]),
        total: d(w[6]),
    }
}

fn encode_class(c: ExecClass) -> u64 {
    match c {
        ExecClass::Main => 0,
        ExecClass::RealTime { priority } => 1 | (u64::from(priority) << 8),
        ExecClass::Compute => 2,
        ExecClass::Event => 3,
    }
}

fn decode_class(v: u64) -> Option<ExecClass> {
    Some(match v & 0xff {
        0 => ExecClass::Main,
        1 => ExecClass::RealTime {
            priority: ((v >> 8) & 0xff) as u8,
        },
        2 => ExecClass::Compute,
        3 => ExecClass::Event,
        _ => return None,
    })
}

/// One node's figures as record words.
pub(crate) fn encode_node(s: &NodeStats) -> [u64; RECORD_WORDS] {
    let mut w = [0_u64; RECORD_WORDS];
    encode_name(&s.name, &mut w[..8]);
    w[r::CLASS] = encode_class(s.class);
    w[r::STATE] = s.state as u64;
    w[r::RT_MODE] = s.rt_mode.encode();
    w[r::CORE] = s.core.map_or(0, |c| c as u64 + 1);
    w[r::TARGET_HZ] = s.target_hz.map_or(0, f64::to_bits);
    w[r::TICKS] = s.ticks;
    w[r::ACHIEVED_HZ] = s.achieved_hz.to_bits();
    w[r::WINDOW_TICKS] = s.window_ticks;
    w[r::WINDOW_MISSES] = s.window_deadline_misses;
    encode_percentiles(&s.exec, &mut w[r::EXEC..]);
    encode_percentiles(&s.jitter, &mut w[r::JITTER..]);
    w[r::DEADLINE_MISSES] = s.deadline_misses;
    w[r::BUDGET_OVERRUNS] = s.budget_overruns;
    w[r::FAILURES] = s.failures;
    w[r::RESTARTS] = s.restarts;
    w[r::SKIPPED] = s.skipped;
    w[r::WATCHDOG_EXPIRIES] = s.watchdog_expiries;
    w
}

/// Record words back to figures; `Err(field)` names the first invalid word.
pub(crate) fn decode_node(w: &[u64; RECORD_WORDS]) -> Result<NodeStats, &'static str> {
    let target = f64::from_bits(w[r::TARGET_HZ]);
    Ok(NodeStats {
        name: decode_name(&w[..8]),
        class: decode_class(w[r::CLASS]).ok_or("class")?,
        state: NodeState::decode(w[r::STATE]).ok_or("state")?,
        rt_mode: RtMode::decode(w[r::RT_MODE]).ok_or("rt_mode")?,
        core: w[r::CORE].checked_sub(1).map(|c| c as usize),
        target_hz: (w[r::TARGET_HZ] != 0 && target.is_finite()).then_some(target),
        ticks: w[r::TICKS],
        achieved_hz: f64::from_bits(w[r::ACHIEVED_HZ]),
        window_ticks: w[r::WINDOW_TICKS],
        window_deadline_misses: w[r::WINDOW_MISSES],
        exec: decode_percentiles(&w[r::EXEC..r::EXEC + 7]),
        jitter: decode_percentiles(&w[r::JITTER..r::JITTER + 7]),
        deadline_misses: w[r::DEADLINE_MISSES],
        budget_overruns: w[r::BUDGET_OVERRUNS],
        failures: w[r::FAILURES],
        restarts: w[r::RESTARTS],
        skipped: w[r::SKIPPED],
        watchdog_expiries: w[r::WATCHDOG_EXPIRIES],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_truncate() {
        let mut w = [0; 8];
        encode_name("motor_1", &mut w);
        assert_eq!(decode_name(&w), "motor_1");
        encode_name(&"x".repeat(100), &mut w);
        assert_eq!(decode_name(&w).len(), 63);
    }

    #[test]
    fn seqlock_round_trip() {
        let seq = AtomicU64::new(0);
        let slots: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        seqlock_write(&seq, &slots, &[1, 2, 3, 4]);
        let mut out = [0; 4];
        assert!(seqlock_read(&seq, &slots, &mut out));
        assert_eq!(out, [1, 2, 3, 4]);
        // A writer that died mid-write leaves the sequence odd.
        seq.store(3, Ordering::Relaxed);
        assert!(!seqlock_read(&seq, &slots, &mut out));
    }
}

//! The per-slot sequence protocol of a single-producer broadcast ring.
//!
//! Each publisher owns one ring of `depth` slots; message number `seq`
//! (starting at 1) lives in slot `seq % depth`. Every slot begins with a
//! *stamp*, a per-slot sequence number in the style of a seqlock (Lamport;
//! Boehm, "Can seqlocks get along with programming language memory models?",
//! 2012):
//!
//! * `0` — never written;
//! * `2·seq + 1` — message `seq` is being written;
//! * `2·seq` — message `seq` is complete.
//!
//! Readers never take a lock and never write to the slot, so any number of
//! subscribers, each with its own cursor, read the same ring without
//! disturbing each other or the writer. A reader that wants message `seq`
//! spins on the stamp of its slot — the payload lives in the same cache
//! line(s), so for small messages one cache-line transfer carries both the
//! "it is ready" signal and the data.
//!
//! Because the writer may lap a slow reader (overflow policy `DropOldest`), a
//! reader copies the payload out and then re-checks the stamp: if it changed,
//! the copy may be torn and is discarded and counted. A writer that dies
//! mid-write leaves an odd stamp, which no reader ever accepts, so a torn
//! message is never delivered.
//!
//! Payload bytes are accessed as relaxed `AtomicU64` words: that is what makes
//! the racy read of a seqlock defined behaviour in Rust, and on x86-64 and
//! AArch64 a relaxed load or store is an ordinary `mov`/`ldr`/`str`.

use crate::sync::{fence, AtomicU64, Ordering};

/// The memory of one slot: stamp, meta word (length and kind), payload words.
pub(crate) trait SlotMem {
    /// The seqlock stamp.
    fn stamp(&self) -> &AtomicU64;
    /// `len` in the low 32 bits, `kind` in the high 32 bits.
    fn meta(&self) -> &AtomicU64;
    /// Payload word `i`.
    ///
    /// # Safety
    /// `i < self.capacity_words()`.
    unsafe fn word(&self, i: usize) -> &AtomicU64;
    /// Payload capacity in 8-byte words.
    fn capacity_words(&self) -> usize;
}

/// What a reader found in the slot for the message it wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// The message was copied out intact: `len` bytes of kind `kind`.
    Ready {
        /// Payload length in bytes.
        len: usize,
        /// Payload kind (inline bytes or chunk descriptor).
        kind: u32,
    },
    /// Not written yet (or being written); `stamp` is what the slot holds.
    NotReady {
        /// The slot's stamp (0, or an older message, or `2·seq + 1`).
        stamp: u64,
    },
    /// The writer has moved past it: the slot holds message `found` > wanted.
    Lapped {
        /// The sequence number now in the slot.
        found: u64,
    },
    /// The slot was overwritten while it was being copied.
    Torn,
    /// The slot claims a length larger than it can hold: a corrupt writer.
    Malformed,
}

/// Writes message `seq` into `slot`. Only the ring's single producer calls
/// this, and only for `seq` greater than anything the slot held before.
pub(crate) fn write<S: SlotMem>(slot: &S, seq: u64, kind: u32, payload: &[u8]) {
    let words = payload.len().div_ceil(8);
    assert!(
        words <= slot.capacity_words(),
        "payload exceeds slot capacity"
    );
    // Mark the slot "being written". Relaxed store + Release fence is the
    // seqlock writer's entry: the fence orders this store before every
    // payload store below, so a reader that sees any new payload word and then
    // re-reads the stamp (after its Acquire fence) sees at least this odd
    // value and rejects the copy.
    //
    // The odd store itself is Release too: a reader that Acquire-loads it
    // (and so finds itself lapped) must also see the `head` of the previous
    // message, stored before this slot was started, because it tells a
    // lapped reader from a corrupt stamp by `found <= head + 1`.
    slot.stamp()
        .store(seq.wrapping_mul(2).wrapping_add(1), Ordering::Release);
    fence(Ordering::Release);
    slot.meta().store(
        payload.len() as u64 | (u64::from(kind) << 32),
        Ordering::Relaxed,
    );
    let mut chunks = payload.chunks_exact(8);
    for (i, c) in chunks.by_ref().enumerate() {
        let w = u64::from_ne_bytes(c.try_into().expect("chunks_exact(8)"));
        // SAFETY: i < words <= capacity_words (asserted above).
        unsafe { slot.word(i) }.store(w, Ordering::Relaxed);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        // SAFETY: words - 1 < words <= capacity_words (asserted above).
        unsafe { slot.word(words - 1) }.store(u64::from_ne_bytes(last), Ordering::Relaxed);
    }
    // Publish. Release: a reader that Acquire-loads this even stamp sees
    // every payload store above.
    slot.stamp().store(seq.wrapping_mul(2), Ordering::Release);
}

/// Copies message `seq` out of `slot` into `out` (which must hold the whole
/// slot capacity or at least the message), validating it was not torn.
pub(crate) fn read<S: SlotMem>(slot: &S, seq: u64, out: &mut [u64]) -> ReadOutcome {
    // Acquire pairs with the writer's publishing Release store.
    let s1 = slot.stamp().load(Ordering::Acquire);
    // Wrapping arithmetic: `seq` may derive from a corrupt `head` written by
    // a hostile peer; that must not panic (it just never matches).
    let want = seq.wrapping_mul(2);
    if s1 != want {
        return if s1 >= want.wrapping_add(2) {
            ReadOutcome::Lapped { found: s1 / 2 }
        } else {
            ReadOutcome::NotReady { stamp: s1 }
        };
    }
    let meta = slot.meta().load(Ordering::Relaxed);
    let len = (meta & 0xffff_ffff) as usize;
    let kind = (meta >> 32) as u32;
    let words = len.div_ceil(8);
    if words > slot.capacity_words() || words > out.len() {
        // Either a hostile writer or a torn meta word; re-check the stamp to
        // tell which.
        fence(Ordering::Acquire);
        return if slot.stamp().load(Ordering::Relaxed) == s1 {
            ReadOutcome::Malformed
        } else {
            ReadOutcome::Torn
        };
    }
    for (i, o) in out[..words].iter_mut().enumerate() {
        // SAFETY: i < words <= capacity_words (checked above).
        *o = unsafe { slot.word(i) }.load(Ordering::Relaxed);
    }
    // The seqlock reader's exit: the Acquire fence orders the payload loads
    // above before the stamp re-load below. If the writer started overwriting
    // (stored an odd stamp, then payload), and we saw any of its payload
    // stores, we also see its stamp change here.
    fence(Ordering::Acquire);
    if slot.stamp().load(Ordering::Relaxed) != s1 {
        return ReadOutcome::Torn;
    }
    ReadOutcome::Ready { len, kind }
}

/// The sequence number a committed slot holds, if it is committed (even
/// stamp, non-zero). Used by a publisher taking over a ring.
pub(crate) fn committed_seq<S: SlotMem>(slot: &S) -> Option<u64> {
    let s = slot.stamp().load(Ordering::Acquire);
    (s != 0 && s.is_multiple_of(2)).then_some(s / 2)
}

/// Reads the meta and first two payload words of a committed slot, as the
/// publisher does before overwriting a chunk descriptor. Only the ring's
/// writer calls this, so nothing races with it but readers.
pub(crate) fn peek_descriptor<S: SlotMem>(slot: &S) -> Option<(u32, u64, u64)> {
    committed_seq(slot)?;
    let meta = slot.meta().load(Ordering::Relaxed);
    let kind = (meta >> 32) as u32;
    if slot.capacity_words() < 2 {
        return None;
    }
    // SAFETY: capacity_words >= 2 (checked above).
    let (w0, w1) = unsafe { (slot.word(0), slot.word(1)) };
    Some((kind, w0.load(Ordering::Relaxed), w1.load(Ordering::Relaxed)))
}

#[cfg(test)]
mod tests {
    use super::heap::HeapSlotForTests as HeapSlot;
    use super::*;

    #[test]
    fn round_trip_odd_length() {
        let slot = HeapSlot::new(4);
        let msg = *b"hello, robot!";
        write(&slot, 1, 0, &msg);
        let mut out = [0u64; 4];
        assert_eq!(
            read(&slot, 1, &mut out),
            ReadOutcome::Ready { len: 13, kind: 0 }
        );
        let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(&bytes[..13], &msg);
    }

    #[test]
    fn states_are_distinguished() {
        let slot = HeapSlot::new(2);
        let mut out = [0u64; 2];
        assert_eq!(read(&slot, 1, &mut out), ReadOutcome::NotReady { stamp: 0 });
        write(&slot, 5, 0, &[1; 16]);
        assert_eq!(read(&slot, 1, &mut out), ReadOutcome::Lapped { found: 5 });
        assert!(matches!(
            read(&slot, 9, &mut out),
            ReadOutcome::NotReady { .. }
        ));
        // A writer that died mid-write: odd stamp is never accepted.
        slot.stamp().store(2 * 9 + 1, Ordering::Relaxed);
        assert!(matches!(
            read(&slot, 9, &mut out),
            ReadOutcome::NotReady { .. }
        ));
    }

    #[test]
    fn hostile_length_is_malformed() {
        let slot = HeapSlot::new(2);
        write(&slot, 1, 0, &[1; 8]);
        slot.meta().store(1 << 20, Ordering::Relaxed);
        let mut out = [0u64; 2];
        assert_eq!(read(&slot, 1, &mut out), ReadOutcome::Malformed);
    }
}

#[cfg(any(test, loom))]
#[cfg_attr(not(loom), allow(unreachable_pub, dead_code))]
pub(crate) mod heap {
    use super::*;

    /// A slot on the heap, for model checking the protocol under loom.
    pub struct HeapSlotForTests {
        stamp: AtomicU64,
        meta: AtomicU64,
        words: Vec<AtomicU64>,
    }

    impl HeapSlotForTests {
        /// A zeroed slot of `words` payload words.
        pub fn new(words: usize) -> Self {
            HeapSlotForTests {
                stamp: AtomicU64::new(0),
                meta: AtomicU64::new(0),
                words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            }
        }

        /// Writes message `seq` (see [`write`]).
        pub fn write(&self, seq: u64, payload: &[u8]) {
            write(self, seq, 0, payload)
        }

        /// Reads message `seq`; `Ok(len)` when intact, `Err(())` otherwise
        /// with the outcome's name.
        pub fn read(&self, seq: u64, out: &mut [u64]) -> Result<usize, &'static str> {
            match read(self, seq, out) {
                ReadOutcome::Ready { len, .. } => Ok(len),
                ReadOutcome::NotReady { .. } => Err("not-ready"),
                ReadOutcome::Lapped { .. } => Err("lapped"),
                ReadOutcome::Torn => Err("torn"),
                ReadOutcome::Malformed => Err("malformed"),
            }
        }
    }

    impl SlotMem for HeapSlotForTests {
        fn stamp(&self) -> &AtomicU64 {
            &self.stamp
        }
        fn meta(&self) -> &AtomicU64 {
            &self.meta
        }
        unsafe fn word(&self, i: usize) -> &AtomicU64 {
            &self.words[i]
        }
        fn capacity_words(&self) -> usize {
            self.words.len()
        }
    }
}

//! Crate internals for the `cargo fuzz` targets in `fuzz/`.
//!
//! Compiled only with `--cfg fuzzing` (which `cargo fuzz` passes), so none
//! of this is part of the crate's API. The targets play a hostile peer: they
//! write arbitrary words where another process would (ring slots, heads,
//! cursors, chunk states) and then drive the real reading code. Nothing here
//! bypasses a check of the code under test; it only gives the fuzzer the
//! pen a corrupt writer would hold.

use crate::channel::Channel;
use crate::error::OpenError;
use crate::layout::{Layout, RawHeader};
use crate::ring::{self, ReadOutcome, SlotMem};
use crate::sync::{AtomicU64, Ordering};

/// Bytes of the segment header that [`validate_header`] reads.
pub const HEADER_BYTES: usize = std::mem::size_of::<RawHeader>();
/// Slot kind: payload bytes in the slot.
pub const KIND_INLINE: u32 = crate::channel::KIND_INLINE;
/// Slot kind: the slot holds a chunk descriptor (chunk word, length word).
pub const KIND_CHUNK: u32 = crate::channel::KIND_CHUNK;

/// Validates `bytes` (zero-padded or cut to [`HEADER_BYTES`]) as the header
/// of a segment file of `file_size` bytes, exactly as an opener does after
/// copying the header out of the mapping.
pub fn validate_header(bytes: &[u8], file_size: u64) -> Result<Layout, OpenError> {
    let mut raw = [0u8; HEADER_BYTES];
    let n = bytes.len().min(HEADER_BYTES);
    raw[..n].copy_from_slice(&bytes[..n]);
    // SAFETY: RawHeader is `repr(C)` plain integers and byte arrays, exactly
    // HEADER_BYTES long and valid for any bit pattern; `read_unaligned`
    // copies it out of a byte array of that length.
    let header: RawHeader = unsafe { std::ptr::read_unaligned(raw.as_ptr().cast()) };
    header.validate("fuzz", file_size)
}

/// What [`read_slot`] found (mirrors the crate's private outcome type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotRead {
    /// Copied out intact: `len` bytes of kind `kind`.
    Ready {
        /// Payload bytes.
        len: usize,
        /// Payload kind.
        kind: u32,
    },
    /// Not written yet, or being written.
    NotReady,
    /// The slot holds a later message.
    Lapped {
        /// Sequence number found in the slot.
        found: u64,
    },
    /// Overwritten while being copied.
    Torn,
    /// The slot claims more bytes than it (or the reader's buffer) holds.
    Malformed,
}

/// A ring slot on the heap with arbitrary contents.
#[derive(Debug)]
pub struct HeapSlot {
    stamp: AtomicU64,
    meta: AtomicU64,
    words: Vec<AtomicU64>,
}

impl HeapSlot {
    /// A slot holding `stamp`, `meta` and the payload words `words`.
    pub fn new(stamp: u64, meta: u64, words: &[u64]) -> HeapSlot {
        HeapSlot {
            stamp: AtomicU64::new(stamp),
            meta: AtomicU64::new(meta),
            words: words.iter().map(|&w| AtomicU64::new(w)).collect(),
        }
    }
}

impl SlotMem for HeapSlot {
    fn stamp(&self) -> &AtomicU64 {
        &self.stamp
    }
    fn meta(&self) -> &AtomicU64 {
        &self.meta
    }
    unsafe fn word(&self, i: usize) -> &AtomicU64 {
        // Indexing keeps a caller that breaks the contract from reading
        // out of bounds: the fuzzer then reports a panic, not UB.
        &self.words[i]
    }
    fn capacity_words(&self) -> usize {
        self.words.len()
    }
}

/// The ring reader (`ring::read`) on `slot` for message `seq` into `out`.
pub fn read_slot(slot: &HeapSlot, seq: u64, out: &mut [u64]) -> SlotRead {
    match ring::read(slot, seq, out) {
        ReadOutcome::Ready { len, kind } => SlotRead::Ready { len, kind },
        ReadOutcome::NotReady { .. } => SlotRead::NotReady,
        ReadOutcome::Lapped { found } => SlotRead::Lapped { found },
        ReadOutcome::Torn => SlotRead::Torn,
        ReadOutcome::Malformed => SlotRead::Malformed,
    }
}

/// `ring::committed_seq` on `slot`.
pub fn committed_seq(slot: &HeapSlot) -> Option<u64> {
    ring::committed_seq(slot)
}

/// `ring::peek_descriptor` on `slot`: kind and the first two payload words.
pub fn peek_descriptor(slot: &HeapSlot) -> Option<(u32, u64, u64)> {
    ring::peek_descriptor(slot)
}

/// Payload words per ring slot of `chan`.
pub fn slot_capacity_words(chan: &Channel) -> usize {
    chan.layout().slot_size / 8 - 2
}

/// Writes the slot that holds message `seq` of publisher `k`'s ring, as a
/// peer process could: `stamp`, `meta`, and the first payload words from
/// `words` (the rest of the slot is left as it is).
pub fn poke_slot(chan: &Channel, k: usize, seq: u64, stamp: u64, meta: u64, words: &[u64]) {
    let slot = chan.slot(k, seq);
    slot.meta().store(meta, Ordering::Relaxed);
    for (i, &w) in words.iter().take(slot.capacity_words()).enumerate() {
        // SAFETY: i < capacity_words (take above).
        unsafe { slot.word(i) }.store(w, Ordering::Relaxed);
    }
    // Release, like a writer publishing the slot: the words above are
    // visible to a reader that Acquire-loads this stamp.
    slot.stamp().store(stamp, Ordering::Release);
}

/// Sets publisher `k`'s published head (its last sequence number).
pub fn set_head(chan: &Channel, k: usize, head: u64) {
    chan.pub_record(k).head.store(head, Ordering::Release);
}

/// Sets the shared cursor word of subscriber place `j` on ring `k` (the
/// word a publisher starts and a subscriber mirrors its cursor into).
pub fn set_cursor(chan: &Channel, j: usize, k: usize, cursor: u64) {
    chan.cursor(j, k).store(cursor, Ordering::Release);
}

/// Sets the state word of chunk `c` of pool `k`; false if out of range.
pub fn set_chunk_state(chan: &Channel, k: usize, c: usize, state: u64) -> bool {
    match chan.chunk_state(k, c) {
        Some(s) => {
            s.store(state, Ordering::Release);
            true
        }
        None => false,
    }
}

/// The state word of chunk `c` of pool `k`, if in range.
pub fn chunk_state(chan: &Channel, k: usize, c: usize) -> Option<u64> {
    chan.chunk_state(k, c).map(|s| s.load(Ordering::Acquire))
}

/// Chunks per publisher pool.
pub fn chunks(chan: &Channel) -> usize {
    chan.chunks()
}

/// Zeroes every ring slot and chunk state word and every publisher head,
/// so that each fuzz input starts from the same channel state.
pub fn reset_rings_and_pools(chan: &Channel) {
    let cfg = chan.layout().config;
    for k in 0..cfg.max_publishers as usize {
        set_head(chan, k, 0);
        for i in 0..u64::from(cfg.depth) {
            let words = vec![0; slot_capacity_words(chan)];
            poke_slot(chan, k, i, 0, 0, &words);
        }
        for c in 0..chan.chunks() {
            set_chunk_state(chan, k, c, 0);
        }
    }
}

/// The first chunk descriptor word: generation high, chunk index low.
pub fn descriptor_word(chunk: u32, gen: u32) -> u64 {
    crate::channel::descriptor_word(chunk, gen)
}

/// Generation stored in a chunk state word.
pub fn generation(state: u64) -> u32 {
    crate::pool::generation(state)
}

/// The bit a chunk state word sets while the publisher holds the chunk.
pub const CHUNK_RING_BIT: u64 = crate::pool::RING;

/// The membership word (subscriber bits 0..32, publisher bits 32..48).
pub fn membership(chan: &Channel) -> u64 {
    chan.membership().load(Ordering::Acquire)
}

/// Publisher `k`'s published head.
pub fn head(chan: &Channel, k: usize) -> u64 {
    chan.pub_record(k).head.load(Ordering::Acquire)
}

/// Publisher `k`'s count of messages sent, as its record holds it.
pub fn sent(chan: &Channel, k: usize) -> u64 {
    chan.pub_record(k).sent.load(Ordering::Relaxed)
}

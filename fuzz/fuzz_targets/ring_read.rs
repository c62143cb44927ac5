//! Ring reads over arbitrary slot bytes.
//!
//! 1. The bare seqlock reader (`ring::read`) on a heap slot with an arbitrary
//!    stamp, meta word, capacity, payload and reader buffer: a message is
//!    accepted only if its stamp is exactly the committed stamp of the
//!    sequence number asked for and its length fits both the slot and the
//!    buffer, and then the copy is exact.
//! 2. A real subscriber on a real channel whose publisher head, subscriber
//!    cursor and slots hold arbitrary words: every receive returns within
//!    bounds (`-timeout` catches a loop a hostile ring could steer), and
//!    whatever it delivers fits the slot or the pool.
#![no_main]

use horus_fuzz::fixture::fixture;
use horus_fuzz::ring_input::{RingInput, CHUNKS, DEPTH, SLOT_WORDS};
use horus_shm::fuzz_api::{self, HeapSlot, SlotRead};
use horus_shm::{Received, SubscriberPort};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = RingInput::read(data);
    bare_read(&input);
    channel_read(&input);
});

fn bare_read(input: &RingInput) {
    let slot = HeapSlot::new(input.stamp, input.meta, &input.words);
    let mut out = vec![0u64; input.out_words as usize];
    let want = input.seq.wrapping_mul(2);
    match fuzz_api::read_slot(&slot, input.seq, &mut out) {
        SlotRead::Ready { len, kind } => {
            assert_eq!(input.stamp, want, "accepted a message with another stamp");
            assert_eq!(len as u64, input.meta & 0xffff_ffff);
            assert_eq!(u64::from(kind), input.meta >> 32);
            let words = len.div_ceil(8);
            assert!(words <= input.words.len() && words <= out.len());
            assert_eq!(out[..words], input.words[..words], "copy differs from slot");
        }
        SlotRead::NotReady => assert_ne!(input.stamp, want),
        SlotRead::Lapped { found } => {
            assert!(input.stamp >= want.wrapping_add(2));
            assert_eq!(found, input.stamp / 2);
        }
        // Single-threaded: nothing can overwrite the slot during the copy.
        SlotRead::Torn => panic!("torn read without a writer"),
        SlotRead::Malformed => {
            assert_eq!(input.stamp, want);
            let words = ((input.meta & 0xffff_ffff) as usize).div_ceil(8);
            assert!(words > input.words.len() || words > out.len());
        }
    }
    if let Some(seq) = fuzz_api::committed_seq(&slot) {
        assert_eq!(seq.wrapping_mul(2), input.stamp);
        let peek = fuzz_api::peek_descriptor(&slot);
        assert_eq!(peek.is_some(), input.words.len() >= 2);
    }
}

fn channel_read(input: &RingInput) {
    let fx = fixture();
    let chan = &fx.chan;
    fuzz_api::set_head(chan, 0, input.head);
    for (i, s) in input.slots.iter().enumerate() {
        let seq = input.cursor.wrapping_add(i as u64);
        fuzz_api::poke_slot(chan, 0, seq, s.stamp.word(seq), s.meta, &s.words);
    }
    let Ok(mut sub) = SubscriberPort::join(chan, false, false) else {
        panic!("the fixture's subscriber place is free");
    };
    // The place is the first free one: 0 (the previous input's left).
    fuzz_api::set_cursor(chan, 0, 0, input.cursor);
    let mut out = [0u64; SLOT_WORDS];
    for _ in 0..2 * DEPTH + 2 {
        match sub.try_receive(&mut out) {
            None => {}
            Some(Received::Inline { len }) => assert!(len <= 8 * SLOT_WORDS),
            Some(Received::Chunk { pool, chunk, len }) => {
                assert!(pool < 2 && chunk < CHUNKS && len <= chan.chunk_size());
                let p = sub.chunk_ptr(pool, chunk);
                for i in [0, len.saturating_sub(1)] {
                    // SAFETY: the chunk is pinned and lies in the mapping
                    // (chunk_ptr asserts it); len <= chunk_size (asserted).
                    let _ = unsafe { std::ptr::read_volatile(p.add(i)) };
                }
                sub.place().release_chunk(pool, chunk);
            }
        }
        let _ = sub.has_pending();
    }
}

//! Chunk descriptors against a real channel.
//!
//! A committed slot of kind "chunk" at the subscriber's cursor carries two
//! arbitrary descriptor words (chunk index + generation, length) and the
//! pool's state words are arbitrary too. The subscriber must either pin a
//! chunk that exists (held, or free but not reused), at the generation the
//! state word holds, with a length
//! that fits it, or count the message as malformed or overrun — never index
//! out of the pool. Then a publisher taking over a second place adopts a ring
//! of arbitrary descriptors (`Channel::adopt_ring`), loans and sends.
#![no_main]

use horus_fuzz::fixture::fixture;
use horus_fuzz::ring_input::{ChunkInput, State, CHUNKS, KIND_CHUNK};
use horus_shm::fuzz_api;
use horus_shm::{PublisherPort, Received, SubscriberPort};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = ChunkInput::read(data);
    let fx = fixture();
    let chan = &fx.chan;
    let gen = (input.desc >> 32) as u32;
    for (c, s) in input.states.iter().enumerate() {
        let word = match *s {
            State::Raw(w) => w,
            State::Matching(subs) => {
                (u64::from(gen) << 33) | fuzz_api::CHUNK_RING_BIT | u64::from(subs)
            }
        };
        fuzz_api::set_chunk_state(chan, 0, c, word);
    }
    let well_formed = input.meta.is_none();
    let meta = input.meta.unwrap_or(16 | (KIND_CHUNK << 32));
    let seq = input.cursor;
    fuzz_api::set_head(chan, 0, input.head);
    fuzz_api::poke_slot(
        chan,
        0,
        seq,
        seq.wrapping_mul(2),
        meta,
        &[input.desc, input.len],
    );
    let states: Vec<u64> = (0..CHUNKS)
        .map(|c| fuzz_api::chunk_state(chan, 0, c).expect("in range"))
        .collect();

    let mut sub = SubscriberPort::join(chan, false, false).expect("a free subscriber place");
    fuzz_api::set_cursor(chan, 0, 0, input.cursor);
    let mut out = [0u64; horus_fuzz::ring_input::SLOT_WORDS];
    let before = sub.received() + sub.malformed() + sub.overrun();
    let got = sub.try_receive(&mut out);
    let counted = sub.received() + sub.malformed() + sub.overrun() - before;
    match got {
        Some(Received::Chunk { pool, chunk, len }) => {
            assert_eq!(pool, 0);
            assert!(
                chunk < CHUNKS,
                "pinned chunk {chunk} of a {CHUNKS}-chunk pool"
            );
            assert!(len <= chan.chunk_size(), "length {len} beyond the chunk");
            if well_formed {
                assert_eq!(input.desc & 0xffff_ffff, chunk as u64);
                assert_eq!(input.len, len as u64);
                let state = states[chunk];
                assert_eq!(
                    fuzz_api::generation(state),
                    gen,
                    "pinned another generation"
                );
                // A free chunk of the descriptor's generation may be pinned: it still holds
                // the message (freed by its last reader, not claimed again; see
                // `pool::acquire`). The generation check above is what keeps a reader off
                // a reused chunk.
            }
            let p = sub.chunk_ptr(pool, chunk);
            for i in [0, len.saturating_sub(1)] {
                // SAFETY: pinned, inside the mapping, i < chunk_size.
                let _ = unsafe { std::ptr::read_volatile(p.add(i)) };
            }
            sub.place().release_chunk(pool, chunk);
        }
        Some(Received::Inline { len }) => {
            // Well-formed: only after the chunk message was counted (a later
            // slot may then hold anything, e.g. seq·2 wrapping to stamp 0).
            assert!(
                !well_formed || counted >= 2,
                "a chunk slot delivered inline"
            );
            assert!(len <= 8 * horus_fuzz::ring_input::SLOT_WORDS);
        }
        None => {}
    }
    // A well-formed slot at a started cursor is either delivered or counted
    // (the top two cursor values mark a cursor its publisher has not started).
    if well_formed && input.cursor < u64::MAX - 1 {
        assert!(counted >= 1, "message neither delivered nor counted");
    }
    drop(sub);

    // A publisher taking over place 1 adopts its ring and pool as a dead
    // predecessor left them.
    fuzz_api::set_head(chan, 1, input.adopt_head);
    for (i, &(stamp, desc, len)) in input.adopt_slots.iter().enumerate() {
        let seq = input.adopt_head.wrapping_sub(i as u64);
        let meta = 16 | (KIND_CHUNK << 32);
        fuzz_api::poke_slot(chan, 1, seq, stamp.word(seq), meta, &[desc, len]);
    }
    for (c, &w) in input.adopt_states.iter().enumerate() {
        fuzz_api::set_chunk_state(chan, 1, c, w);
    }
    let mut publisher = PublisherPort::join(chan).expect("a free publisher place");
    assert_eq!(publisher.place(), 1);
    if let Some(loan) = publisher.loan_chunk() {
        publisher.chunk_bytes(&loan)[..8].copy_from_slice(&[7; 8]);
        publisher
            .send_chunk(loan, 8)
            .expect("8 bytes fit a 64-byte chunk");
    }
    publisher
        .send_inline(&[1; 16])
        .expect("16 bytes fit the slot");
});

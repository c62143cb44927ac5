//! The inputs of the `ring_read` and `chunk_descriptor` targets, decoded
//! from fuzz bytes (see [`crate::input::Input`]).

use crate::input::{Input, Output};

/// Slot kind of an inline payload (as in `horus-shm`).
pub const KIND_INLINE: u64 = 0;
/// Slot kind of a chunk descriptor (as in `horus-shm`).
pub const KIND_CHUNK: u64 = 1;
/// Ring depth of the fixture channel.
pub const DEPTH: u64 = 4;
/// Chunks per pool of the fixture channel.
pub const CHUNKS: usize = 4;
/// Largest payload-word count a slot of the fixture holds (128-byte slots).
pub const SLOT_WORDS: usize = 14;
/// Largest heap slot the pure ring read is tried on.
pub const MAX_HEAP_WORDS: u8 = 32;

/// How a slot's stamp is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// The raw word from the input.
    Raw(u64),
    /// Exactly the committed stamp of the sequence number the slot is
    /// poked for (`2·seq`), so that the fuzzer spends its time on the rest.
    Committed,
}

impl Stamp {
    fn read(input: &mut Input<'_>) -> Stamp {
        match input.u8() % 2 {
            0 => Stamp::Raw(input.u64()),
            _ => Stamp::Committed,
        }
    }

    fn write(self, out: &mut Output) {
        match self {
            Stamp::Raw(w) => out.u8(0).u64(w),
            Stamp::Committed => out.u8(1),
        };
    }

    /// The stamp word for a slot poked for message `seq`.
    pub fn word(self, seq: u64) -> u64 {
        match self {
            Stamp::Raw(w) => w,
            Stamp::Committed => seq.wrapping_mul(2),
        }
    }
}

/// One slot as a peer wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotInput {
    /// Stamp word.
    pub stamp: Stamp,
    /// Meta word: length low 32 bits, kind high 32 bits.
    pub meta: u64,
    /// Payload words (at most [`SLOT_WORDS`]).
    pub words: Vec<u64>,
}

impl SlotInput {
    fn read(input: &mut Input<'_>) -> SlotInput {
        let stamp = Stamp::read(input);
        let meta = input.u64();
        let n = input.u8() as usize % (SLOT_WORDS + 1);
        SlotInput {
            stamp,
            meta,
            words: (0..n).map(|_| input.u64()).collect(),
        }
    }

    fn write(&self, out: &mut Output) {
        self.stamp.write(out);
        out.u64(self.meta).u8(self.words.len() as u8);
        for &w in &self.words {
            out.u64(w);
        }
    }
}

/// Input of `ring_read`: one slot for the bare reader, then a ring of the
/// fixture channel with a head, a subscriber cursor and up to `DEPTH`
/// slots from the cursor on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingInput {
    /// Bare reader: stamp, meta, sequence number wanted.
    pub stamp: u64,
    /// Bare reader: meta word.
    pub meta: u64,
    /// Bare reader: the sequence number asked for.
    pub seq: u64,
    /// Bare reader: words of the reader's buffer.
    pub out_words: u8,
    /// Bare reader: the slot's payload words.
    pub words: Vec<u64>,
    /// Channel: the publisher's head.
    pub head: u64,
    /// Channel: the subscriber's cursor (next sequence number to read).
    pub cursor: u64,
    /// Channel: slots for messages `cursor`, `cursor + 1`, ….
    pub slots: Vec<SlotInput>,
}

impl RingInput {
    /// Decodes fuzz bytes.
    pub fn read(data: &[u8]) -> RingInput {
        let mut input = Input::new(data);
        let stamp = input.u64();
        let meta = input.u64();
        let seq = input.u64();
        let out_words = input.u8() % (MAX_HEAP_WORDS + 1);
        let n = input.u8() % (MAX_HEAP_WORDS + 1);
        let words = (0..n).map(|_| input.u64()).collect();
        let head = input.u64();
        let cursor = input.u64();
        let n = input.u8() as u64 % (DEPTH + 1);
        let slots = (0..n).map(|_| SlotInput::read(&mut input)).collect();
        RingInput {
            stamp,
            meta,
            seq,
            out_words,
            words,
            head,
            cursor,
            slots,
        }
    }

    /// Encodes (for seeds).
    pub fn write(&self) -> Vec<u8> {
        let mut out = Output::default();
        out.u64(self.stamp).u64(self.meta).u64(self.seq);
        out.u8(self.out_words).u8(self.words.len() as u8);
        for &w in &self.words {
            out.u64(w);
        }
        out.u64(self.head)
            .u64(self.cursor)
            .u8(self.slots.len() as u8);
        for s in &self.slots {
            s.write(&mut out);
        }
        out.bytes
    }
}

/// How a chunk's state word is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// The raw word from the input.
    Raw(u64),
    /// Held by the ring at the generation the descriptor names, plus the
    /// given subscriber bits: what an honest publisher leaves.
    Matching(u32),
}

/// Input of `chunk_descriptor`: a committed chunk slot at the subscriber's
/// cursor with arbitrary descriptor words, the pool's chunk states, and a
/// second ring of such slots that a publisher joining adopts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkInput {
    /// The subscriber's cursor.
    pub cursor: u64,
    /// The publisher's head.
    pub head: u64,
    /// `None`: a well-formed chunk slot (16 bytes of kind chunk); `Some`:
    /// this raw meta word.
    pub meta: Option<u64>,
    /// First descriptor word: generation high, chunk index low.
    pub desc: u64,
    /// Second descriptor word: payload length.
    pub len: u64,
    /// State words of the pool's chunks.
    pub states: [State; CHUNKS],
    /// Ring 1: head and (stamp, descriptor, length) of each slot, for the
    /// adoption by a publisher taking over that place.
    pub adopt_head: u64,
    /// Ring 1 slots.
    pub adopt_slots: Vec<(Stamp, u64, u64)>,
    /// Pool 1 chunk states.
    pub adopt_states: [u64; CHUNKS],
}

impl ChunkInput {
    /// Decodes fuzz bytes.
    pub fn read(data: &[u8]) -> ChunkInput {
        let mut input = Input::new(data);
        let cursor = input.u64();
        let head = input.u64();
        let meta = match input.u8() % 2 {
            0 => None,
            _ => Some(input.u64()),
        };
        let desc = input.u64();
        let len = input.u64();
        let states = [(); CHUNKS].map(|_| match input.u8() % 2 {
            0 => State::Raw(input.u64()),
            _ => State::Matching(input.u64() as u32),
        });
        let adopt_head = input.u64();
        let n = input.u8() as u64 % (DEPTH + 1);
        let adopt_slots = (0..n)
            .map(|_| (Stamp::read(&mut input), input.u64(), input.u64()))
            .collect();
        let adopt_states = [(); CHUNKS].map(|_| input.u64());
        ChunkInput {
            cursor,
            head,
            meta,
            desc,
            len,
            states,
            adopt_head,
            adopt_slots,
            adopt_states,
        }
    }

    /// Encodes (for seeds).
    pub fn write(&self) -> Vec<u8> {
        let mut out = Output::default();
        out.u64(self.cursor).u64(self.head);
        match self.meta {
            None => out.u8(0),
            Some(m) => out.u8(1).u64(m),
        };
        out.u64(self.desc).u64(self.len);
        for s in self.states {
            match s {
                State::Raw(w) => out.u8(0).u64(w),
                State::Matching(subs) => out.u8(1).u64(u64::from(subs)),
            };
        }
        out.u64(self.adopt_head).u8(self.adopt_slots.len() as u8);
        for &(stamp, desc, len) in &self.adopt_slots {
            stamp.write(&mut out);
            out.u64(desc).u64(len);
        }
        for w in self.adopt_states {
            out.u64(w);
        }
        out.bytes
    }
}

//! Loom models of the composed publish/subscribe protocol: a ring of real
//! slots, a pool of chunk state words, the membership word, the subscribers'
//! cursor words and the wake words, driven by the crate's own protocol steps
//! (`src/protocol.rs`, `ring::write`/`read`, the `pool` functions,
//! `records::join`/`leave`/`touch`) in the order the ports (`pub_port.rs`,
//! `sub_port.rs`) run them. The `Publisher` and `receive` below are only the
//! glue between those steps (the ports' private bookkeeping). Every access
//! to a shared word happens inside the crate's functions, except a few
//! one-line loads and stores of the ports, copied here with the same
//! orderings: the membership word and observer set loaded before a scan or
//! a loan, and the `head` store after a slot write.
//!
//! 1. chunk lifecycle: claim → write → descriptor through a slot → pin →
//!    cursor → read → release / release-last-reader → ring holds released
//!    → reuse for a second message; nothing leaks; and a `DropOldest`
//!    publisher overwriting chunk descriptors under a reader;
//! 2. membership: a subscriber joining while the publisher sends (on a
//!    fresh place, and on a place recycled from a subscriber that just
//!    left), a sole reader's release racing a join, a leave racing a send;
//! 3. the futex wait/wake handshake (no lost wake-up);
//! 4. the latched history of a transient-local channel handed over to a
//!    subscriber that starts itself at it while the publisher advances
//!    (every message from its start delivered intact or counted lost, and
//!    lost only once really overwritten);
//!
//! 5. a `Block` publisher waiting for room on a full ring and the
//!    subscriber whose read frees it (`src/room.rs`; no lost wake-up);
//!
//! plus three broken copies loom must catch: the two wait registrations
//! without their fence, and the join before `CURSOR_NOT_MEMBER`.
//!
//! Each model reports which outcomes its executions reached, and the test
//! checks the interesting ones were (so none passes vacuously). Models with
//! three threads are bounded with `preemption_bound`; the whole file runs in
//! about 20 s in release mode.
//!
//! Run: `make test-loom` (or `RUSTFLAGS="--cfg loom" cargo test -p horus-shm
//! --release --test loom_protocol`).
#![cfg(loom)]

use std::sync::Arc;

use horus_shm::model::{
    acquire, bump_notify, claim, descriptor_word, has_room, join, latched_start, leave, must_wake,
    open_cursors, port_wait_bit, prepare_join, publish_cursor, read_slot, register_wait,
    release_bound, release_consumed, release_pinned, release_pinned_latched, release_slot_hold,
    room_bump, room_must_wake, room_register, room_register_blocking, room_token, room_unregister,
    room_waiting, room_word, scan_cursors, split_descriptor, start_cursor_at, sub_member, subs_of,
    subscriber_start, touch, unregister_wait, wait_token, write_slot, HeapSlotForTests, WakeWords,
    CURSOR_JOINING, KIND_CHUNK,
};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use loom::sync::{Condvar, Mutex};

/// Pool state bits that mean "held" (ring bit and subscriber bits).
const HELD: u64 = (1 << 33) - 1;

/// One publisher's ring and pool, one cursor per subscriber place on it,
/// and the channel-wide membership and wake words.
struct Topic {
    slots: Vec<HeapSlotForTests>,
    head: AtomicU64,
    states: Vec<AtomicU64>,
    /// Chunk payloads: plain memory, as in the segment. Loom's `UnsafeCell`
    /// fails the model if a write and a read of a chunk are not ordered by
    /// the protocol (a chunk reclaimed while pinned).
    data: Vec<UnsafeCell<u64>>,
    cursors: Vec<AtomicU64>,
    membership: AtomicU64,
    wake: WakeWords,
    futex: Futex,
}

// SAFETY: `data` is only accessed under the protocol being checked; loom's
// UnsafeCell reports any unordered access as a failure of that protocol.
unsafe impl Sync for Topic {}

impl Topic {
    fn new(depth: usize, chunks: usize, subs: usize) -> Topic {
        Topic {
            // Two payload words: a chunk descriptor, or an inline payload.
            slots: (0..depth).map(|_| HeapSlotForTests::new(2)).collect(),
            head: AtomicU64::new(0),
            states: (0..chunks).map(|_| AtomicU64::new(0)).collect(),
            data: (0..chunks).map(|_| UnsafeCell::new(0)).collect(),
            cursors: (0..subs).map(|_| AtomicU64::new(0)).collect(),
            membership: AtomicU64::new(0),
            wake: WakeWords::new(0),
            futex: Futex::default(),
        }
    }

    fn depth(&self) -> u64 {
        self.slots.len() as u64
    }

    fn slot(&self, seq: u64) -> &HeapSlotForTests {
        &self.slots[(seq % self.depth()) as usize]
    }

    fn chunk_state(&self, c: usize) -> Option<&AtomicU64> {
        self.states.get(c)
    }

    /// Subscriber place `j` is active, its cursor not started yet (the
    /// state `SubscriberPort::join` leaves it in).
    fn joined(self, j: usize) -> Topic {
        join_place(&self, j);
        self
    }
}

/// `SubscriberPort::join` for place `j` (claimed already): not-member
/// cursor and observer bit, membership bit, joining cursor, touch.
fn join_place(t: &Topic, j: usize) {
    prepare_join([&t.cursors[j]], &t.wake, j, false);
    assert!(join(&t.membership, sub_member(j)));
    open_cursors([&t.cursors[j]]);
    touch(&t.membership);
}

/// The join before `CURSOR_NOT_MEMBER` (commit 091bbc6 fixed it): the
/// cursor read `CURSOR_JOINING` before the membership bit was set.
fn join_place_without_not_member(t: &Topic, j: usize) {
    prepare_join([&t.cursors[j]], &t.wake, j, false);
    open_cursors([&t.cursors[j]]);
    assert!(join(&t.membership, sub_member(j)));
}

/// The kernel side of a futex, as loom primitives: `wait` sleeps only if
/// the word still holds `expected`, checked under the same lock `wake_all`
/// takes (the futex hash-bucket lock), so a change made before a wake is
/// either seen by the check or followed by the wake-up.
#[derive(Default)]
struct Futex {
    lock: Mutex<()>,
    cv: Condvar,
}

impl Futex {
    /// Returns whether it slept.
    fn wait(&self, word: &AtomicU32, expected: u32) -> bool {
        let guard = self.lock.lock().unwrap();
        if word.load(Ordering::Relaxed) != expected {
            return false;
        }
        drop(self.cv.wait(guard).unwrap());
        true
    }

    fn wake_all(&self) {
        let _guard = self.lock.lock().unwrap();
        self.cv.notify_all();
    }
}

/// The publisher port's bookkeeping (`PublisherPort`), calling the same
/// protocol steps in the same order as its methods of the same names.
struct Publisher<'t> {
    t: &'t Topic,
    next_seq: u64,
    cached_members: u64,
    min_cursor: u64,
    released_upto: u64,
    /// The channel's retained history (transient-local): 0 = volatile.
    latched: u64,
}

impl<'t> Publisher<'t> {
    fn new(t: &'t Topic) -> Self {
        Publisher {
            t,
            next_seq: 1,
            cached_members: u64::MAX,
            min_cursor: 0,
            released_upto: 1,
            latched: 0,
        }
    }

    fn refresh_min_cursor(&mut self, m: u64) {
        let t = self.t;
        let observers = t.wake.observers().load(Ordering::Relaxed);
        let (_reliable, min) =
            scan_cursors(subs_of(m), observers, self.next_seq, |j| &t.cursors[j]);
        self.cached_members = m;
        self.min_cursor = min;
    }

    /// `PublisherPort::has_space` (the `Reject`/`Block` room check).
    fn has_space(&mut self) -> bool {
        let m = self.t.membership.load(Ordering::Acquire);
        if m == self.cached_members && has_room(self.next_seq, self.min_cursor, self.t.depth()) {
            return true;
        }
        self.refresh_min_cursor(m);
        has_room(self.next_seq, self.min_cursor, self.t.depth())
    }

    fn release_consumed(&mut self) {
        let m = self.t.membership.load(Ordering::Acquire);
        self.refresh_min_cursor(m);
        let t = self.t;
        let bound = release_bound(self.min_cursor, self.next_seq, self.latched);
        self.released_upto = release_consumed(
            self.released_upto,
            bound,
            t.depth(),
            |seq| t.slot(seq),
            |c| t.chunk_state(c),
        );
    }

    fn claim_free_chunk(&self) -> Option<(u32, u32)> {
        (0..self.t.states.len()).find_map(|c| claim(&self.t.states[c]).map(|g| (c as u32, g)))
    }

    /// `PublisherPort::loan_chunk` (without the dead-place reclaim).
    fn loan_chunk(&mut self) -> Option<(u32, u32)> {
        let m = self.t.membership.load(Ordering::Relaxed);
        let observers = self.t.wake.observers().load(Ordering::Relaxed);
        if self.latched > 0 || (subs_of(m) & !observers).count_ones() > 1 {
            self.release_consumed();
        }
        if let Some(loan) = self.claim_free_chunk() {
            return Some(loan);
        }
        self.release_consumed();
        self.claim_free_chunk()
    }

    /// `PublisherPort::commit`; returns whether it ran the wake-up.
    fn commit(&mut self, kind: u32, payload: &[u8]) -> bool {
        let t = self.t;
        let members = t.membership.load(Ordering::Acquire);
        if members != self.cached_members {
            self.refresh_min_cursor(members);
        }
        let seq = self.next_seq;
        let slot = t.slot(seq);
        if !t.states.is_empty() {
            release_slot_hold(slot, |c| t.chunk_state(c));
        }
        write_slot(slot, seq, kind, payload);
        self.next_seq = seq + 1;
        t.head.store(seq, Ordering::Release);
        let wake = must_wake(&t.wake);
        if wake {
            bump_notify(&t.wake);
            t.futex.wake_all();
        }
        wake
    }

    /// Sends message `seq` inline: its payload is `seq`, twice.
    fn send_inline(&mut self) {
        self.send_inline_woke();
    }

    /// [`Publisher::send_inline`]; returns whether it ran the wake-up.
    fn send_inline_woke(&mut self) -> bool {
        let seq = self.next_seq;
        let mut p = [0u8; 16];
        p[..8].copy_from_slice(&seq.to_ne_bytes());
        p[8..].copy_from_slice(&seq.to_ne_bytes());
        self.commit(0, &p)
    }

    /// Loans a chunk, writes the message number into it and sends its
    /// descriptor; false if no chunk was free (a loan failure).
    fn send_chunk(&mut self) -> bool {
        let Some((c, gen)) = self.loan_chunk() else {
            return false;
        };
        let seq = self.next_seq;
        // SAFETY: we claimed the chunk free: the protocol under test forbids
        // any reader now; loom reports it if one races.
        self.t.data[c as usize].with_mut(|d| unsafe { *d = seq });
        let mut desc = [0u8; 16];
        desc[..8].copy_from_slice(&descriptor_word(c, gen).to_ne_bytes());
        desc[8..].copy_from_slice(&8u64.to_ne_bytes());
        self.commit(KIND_CHUNK, &desc);
        true
    }
}

/// What one receive attempt of subscriber place `j` found.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    /// Message `seq`, inline; its payload was the message number.
    Inline(u64),
    /// Message `seq`'s chunk `c`, pinned; its content was checked.
    Chunk { seq: u64, c: usize },
    /// Nothing to read (yet), or no start on this ring yet.
    Nothing,
    /// Message `seq` was overwritten before we got it (only returned by
    /// [`receive_lossy`]); the cursor moved on.
    Lost(u64),
}

/// `SubscriberPort::receive_from` for one ring, with the port's private
/// cursor `cursor`: every outcome but a delivered message or "nothing yet"
/// is a loss, which in these models (room-checking publishers) is always a
/// protocol failure.
fn receive(t: &Topic, j: usize, cursor: &mut u64) -> Got {
    receive_with(t, j, cursor, false)
}

/// [`receive`] for a `DropOldest` publisher, which may overwrite what we
/// have not read: a lost message is [`Got::Lost`]. A lapped reader moves
/// on to the publisher's head, as the port does in a one-slot ring.
fn receive_lossy(t: &Topic, j: usize, cursor: &mut u64) -> Got {
    receive_with(t, j, cursor, true)
}

fn receive_with(t: &Topic, j: usize, cursor: &mut u64, lossy: bool) -> Got {
    if *cursor == CURSOR_JOINING {
        match subscriber_start(&t.cursors[j]) {
            Some(start) => *cursor = start,
            None => return Got::Nothing,
        }
    }
    let seq = *cursor;
    let mut out = [0u64; 2];
    match read_slot(t.slot(seq), seq, &mut out) {
        Ok((16, KIND_CHUNK)) => {
            let (c, gen) = split_descriptor(out[0]);
            let state = t.chunk_state(c).expect("descriptor in range");
            // Pin before moving the cursor past the message, as the port
            // does: a publisher treats chunks below every cursor as
            // consumed.
            let pinned = acquire(state, gen, j);
            *cursor = seq + 1;
            publish_cursor(&t.cursors[j], seq + 1);
            if !pinned && lossy {
                return Got::Lost(seq);
            }
            assert!(pinned, "chunk of message {seq} lost before it was pinned");
            // SAFETY: pinned: the protocol under test forbids any write
            // until we release it; loom reports it if one races.
            let v = t.data[c].with(|d| unsafe { *d });
            assert_eq!(v, seq, "chunk holds another message than its descriptor's");
            Got::Chunk { seq, c }
        }
        Ok((16, _)) => {
            *cursor = seq + 1;
            publish_cursor(&t.cursors[j], seq + 1);
            assert_eq!(out, [seq, seq], "inline payload of another message");
            Got::Inline(seq)
        }
        Err("not-ready") => Got::Nothing,
        Err("lapped") if lossy => {
            // Acquire: as the port's, pairs with the Release of `head`.
            let head = t.head.load(Ordering::Acquire);
            let next = (seq + 1).max(head.saturating_add(1).saturating_sub(t.depth()));
            *cursor = next;
            publish_cursor(&t.cursors[j], next);
            Got::Lost(seq)
        }
        Err("torn") if lossy => {
            *cursor = seq + 1;
            publish_cursor(&t.cursors[j], seq + 1);
            Got::Lost(seq)
        }
        other => panic!("message {seq}: {other:?} (a false overrun)"),
    }
}

/// The start subscriber `j` got, given its cursor after a first receive
/// that returned `got` (the publisher has noticed it by now).
fn start_of(t: &Topic, j: usize, cursor: u64, got: &Got) -> u64 {
    match got {
        Got::Inline(seq) | Got::Chunk { seq, .. } | Got::Lost(seq) => *seq,
        Got::Nothing if cursor != CURSOR_JOINING => cursor,
        Got::Nothing => subscriber_start(&t.cursors[j]).expect("started once noticed"),
    }
}

/// Runs `model` under loom with at most `preemptions` preemptions per
/// execution (`None`: every interleaving), and returns the union of the
/// outcome bits the executions reported, so a test can check its model
/// reached the cases it is about (a model that never gets there would pass
/// vacuously). Prints how many executions were explored.
fn check(preemptions: Option<usize>, model: impl Fn() -> u32 + Send + Sync + 'static) -> u32 {
    use std::sync::atomic::{AtomicU32 as StdU32, AtomicUsize, Ordering as StdOrdering};
    let runs = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(StdU32::new(0));
    let (r, s) = (Arc::clone(&runs), Arc::clone(&seen));
    let mut b = loom::model::Builder::new();
    b.preemption_bound = preemptions;
    b.check(move || {
        r.fetch_add(1, StdOrdering::Relaxed);
        s.fetch_or(model(), StdOrdering::Relaxed);
    });
    eprintln!("{} executions", runs.load(StdOrdering::Relaxed));
    seen.load(StdOrdering::Relaxed)
}

// ------------------------------------------------------------ 1. chunks

/// Outcomes of the chunk models.
const SENT_SECOND: u32 = 1;
const LOAN_FAILED: u32 = 2;
const READ_FIRST_IN_THREAD: u32 = 4;
const READ_SECOND_IN_THREAD: u32 = 8;

/// One chunk, two slots, subscriber 0 reading: message 1 must come
/// through intact; message 2 needs the same chunk, so it is sent only
/// once the subscriber released it (and the publisher's
/// `release_consumed` or the subscriber's `release_last_reader` dropped
/// the ring's hold), otherwise its loan fails. `second_reader`:
/// subscriber 1 reads too, so `release_pinned` takes plain `release`.
/// Each reader takes two looks (no spinning, which would multiply the
/// interleavings); the main thread drains what they missed.
fn chunk_lifecycle(preemptions: Option<usize>, second_reader: bool, looks: usize) {
    let seen = check(preemptions, move || {
        let mut topic = Topic::new(2, 1, 2).joined(0);
        if second_reader {
            topic = topic.joined(1);
        }
        let t = Arc::new(topic);

        let readers: Vec<_> = (0..if second_reader { 2 } else { 1 })
            .map(|j| {
                let t = Arc::clone(&t);
                loom::thread::spawn(move || {
                    let mut cursor = CURSOR_JOINING;
                    let mut seen = 0;
                    for _ in 0..looks {
                        if let Got::Chunk { seq, c } = receive(&t, j, &mut cursor) {
                            seen |= if seq == 1 {
                                READ_FIRST_IN_THREAD
                            } else {
                                READ_SECOND_IN_THREAD
                            };
                            release_pinned(&t.states[c], j, &t.membership, &t.wake);
                        }
                    }
                    (cursor, seen)
                })
            })
            .collect();

        let mut p = Publisher::new(&t);
        assert!(p.send_chunk(), "the pool starts free");
        let sent_second = p.send_chunk();
        let mut seen = if sent_second {
            SENT_SECOND
        } else {
            LOAN_FAILED
        };
        let ends: Vec<(u64, u32)> = readers.into_iter().map(|r| r.join().unwrap()).collect();

        // Drain: whatever the readers had not looked at yet comes through.
        for (j, (mut cursor, got)) in ends.into_iter().enumerate() {
            seen |= got;
            while let Got::Chunk { c, .. } = receive(&t, j, &mut cursor) {
                release_pinned(&t.states[c], j, &t.membership, &t.wake);
            }
            assert_eq!(cursor, p.next_seq, "reader {j} missed a message");
        }
        // Everyone consumed everything: once the publisher drops the ring
        // holds of consumed messages, no chunk is held by anyone.
        p.release_consumed();
        for s in &t.states {
            let v = s.load(Ordering::Relaxed);
            assert_eq!(v & HELD, 0, "chunk leaked: state {v:#x}");
        }
        seen
    });
    // Reached: the chunk reused for message 2, its loan failing, and the
    // reader pinning message 1 concurrently with the publisher. (Not
    // required: a reader's second look finding message 2 in the reused
    // chunk while the publisher runs; loom's exploration does not reach it
    // in these models, the drain below covers reading it.)
    let all = SENT_SECOND | LOAN_FAILED | READ_FIRST_IN_THREAD;
    assert_eq!(seen & all, all, "outcomes reached: {seen:#b}");
}

/// Sole reader: `release_pinned` takes `release_last_reader`. Small enough
/// to explore every interleaving.
#[test]
fn chunk_lifecycle_sole_reader() {
    chunk_lifecycle(None, false, 2);
}

/// Two readers: `release_pinned` takes plain `release`; the ring hold is
/// dropped by the publisher's `release_consumed`. Three threads: bounded.
#[test]
fn chunk_lifecycle_two_readers() {
    chunk_lifecycle(Some(5), true, 1);
}

/// Outcomes of the overwrite model.
const PIN_LOST: u32 = 1;
const DELIVERED_FIRST: u32 = 2;
const REUSED_FIRST_CHUNK: u32 = 4;

/// A `DropOldest` publisher (no room check) sends three chunk messages
/// through a one-slot ring with two chunks, so each send overwrites the
/// slot of the one before and drops the ring's hold on its chunk
/// (`release_slot_hold` in `commit`), and the third reuses a chunk if one
/// is free, while subscriber 0 reads. The subscriber may lose messages
/// (that is the policy), but what it delivers is always the descriptor's
/// message, it never reads a chunk being rewritten, and nothing leaks.
#[test]
fn chunk_overwritten_while_read() {
    let seen = check(Some(5), || {
        let t = Arc::new(Topic::new(1, 2, 1).joined(0));
        let r = Arc::clone(&t);
        let reader = loom::thread::spawn(move || {
            let mut cursor = CURSOR_JOINING;
            let mut seen = 0;
            match receive_lossy(&r, 0, &mut cursor) {
                Got::Chunk { seq, c } => {
                    if seq == 1 {
                        seen |= DELIVERED_FIRST;
                    }
                    release_pinned(&r.states[c], 0, &r.membership, &r.wake);
                }
                Got::Lost(_) => seen |= PIN_LOST,
                _ => {}
            }
            (cursor, seen)
        });

        let mut p = Publisher::new(&t);
        let mut chunks = Vec::new();
        for _ in 0..3 {
            if let Some((c, gen)) = p.loan_chunk() {
                let seq = p.next_seq;
                // SAFETY: claimed free: the protocol under test forbids any
                // reader now; loom reports it if one races.
                t.data[c as usize].with_mut(|d| unsafe { *d = seq });
                let mut desc = [0u8; 16];
                desc[..8].copy_from_slice(&descriptor_word(c, gen).to_ne_bytes());
                desc[8..].copy_from_slice(&8u64.to_ne_bytes());
                p.commit(KIND_CHUNK, &desc);
                chunks.push(c);
            }
        }
        let (mut cursor, mut seen) = reader.join().unwrap();
        if chunks.len() == 3 && chunks[2] == chunks[0] {
            seen |= REUSED_FIRST_CHUNK;
        }
        for _ in 0..3 {
            match receive_lossy(&t, 0, &mut cursor) {
                Got::Chunk { c, .. } => release_pinned(&t.states[c], 0, &t.membership, &t.wake),
                Got::Nothing => break,
                Got::Lost(_) => {}
                got => panic!("{got:?}"),
            }
        }
        assert_eq!(cursor, p.next_seq, "the drain did not reach the head");
        p.release_consumed();
        for s in &t.states {
            let v = s.load(Ordering::Relaxed);
            assert_eq!(v & HELD, 0, "chunk leaked: state {v:#x}");
        }
        seen
    });
    let all = PIN_LOST | DELIVERED_FIRST | REUSED_FIRST_CHUNK;
    assert_eq!(seen & all, all, "outcomes reached: {seen:#b}");
}

// ------------------------------------------------------- 2. membership

/// A `Reject` publisher sends two inline messages into a one-slot ring
/// while subscriber 0 joins. The place's cursor word still holds its
/// previous owner's cursor (1), which must never be taken for a start.
/// The subscriber's start is the publisher's next message when it first
/// saw the joined cursor; it is never lapped (no false overrun) and, once the
/// publisher is done, it has every message from its start on.
#[test]
fn join_racing_a_send() {
    let seen = check(None, || {
        let t = Arc::new(Topic::new(1, 0, 1));
        t.cursors[0].store(1, Ordering::Relaxed);

        let s = Arc::clone(&t);
        let sub = loom::thread::spawn(move || {
            join_place(&s, 0);
            let mut cursor = CURSOR_JOINING;
            let got = receive(&s, 0, &mut cursor);
            (cursor, got)
        });

        let mut p = Publisher::new(&t);
        let mut sent = 0;
        for _ in 0..2 {
            if p.has_space() {
                p.send_inline();
                sent += 1;
            }
        }
        let (mut cursor, got) = sub.join().unwrap();

        // The publisher may not have seen the bit yet: it does now.
        p.has_space();
        let start = start_of(&t, 0, cursor, &got);
        assert!(start <= sent + 1, "start {start} after the head");
        let mut received = Vec::new();
        if let Got::Inline(seq) = got {
            received.push(seq);
        }
        while let Got::Inline(seq) = receive(&t, 0, &mut cursor) {
            received.push(seq);
        }
        let expected: Vec<u64> = (start..=sent).collect();
        assert_eq!(received, expected, "start {start}, sent {sent}");
        // The only reason to reject message 2 is message 1 unconsumed by a
        // subscriber that starts at it.
        assert!(sent == 2 || start == 1, "rejected without reason");
        (1 << start) | if sent == 2 { 0 } else { 1 }
    });
    // Started before, between and after the two sends; and one reject.
    assert_eq!(seen, 0b1111, "outcomes reached: {seen:#b}");
}

/// Place 0 is recycled while a `Reject` publisher sends three inline
/// messages into a one-slot ring: its old owner (started at 1, reads
/// nothing) leaves, and a new subscriber takes the place and joins (`join`
/// is the joining protocol under test). The publisher may scan the place's
/// cursor with a membership word from before the leave. The new
/// subscriber's start must be one the publisher chose knowing it was a
/// member, so it is never lapped, and it receives everything from it on.
fn recycled_place(preemptions: Option<usize>, join: fn(&Topic, usize)) -> u32 {
    check(preemptions, move || {
        let t = Arc::new(Topic::new(1, 0, 1).joined(0));
        let mut p = Publisher::new(&t);
        // The publisher noticed the old owner: started at 1.
        assert!(p.has_space());

        let s = Arc::clone(&t);
        let sub = loom::thread::spawn(move || {
            leave(&s.membership, sub_member(0));
            join(&s, 0);
            let mut cursor = CURSOR_JOINING;
            let got = receive(&s, 0, &mut cursor);
            (cursor, got)
        });
        let mut sent = 0;
        for _ in 0..3 {
            if p.has_space() {
                p.send_inline();
                sent += 1;
            }
        }
        let (mut cursor, got) = sub.join().unwrap();
        p.has_space();
        let start = start_of(&t, 0, cursor, &got);
        assert!(start <= sent + 1, "start {start} after the head");
        let mut received = Vec::new();
        if let Got::Inline(seq) = got {
            received.push(seq);
        }
        while let Got::Inline(seq) = receive(&t, 0, &mut cursor) {
            received.push(seq);
        }
        let expected: Vec<u64> = (start..=sent).collect();
        assert_eq!(received, expected, "start {start}, sent {sent}");
        1 << start
    })
}

#[test]
fn recycled_place_racing_a_send() {
    let seen = recycled_place(None, join_place);
    assert_eq!(seen & 0b1100, 0b1100, "outcomes reached: {seen:#b}");
}

/// The joining protocol before `CURSOR_NOT_MEMBER`: a scan with the old
/// owner's membership bit starts the new owner's cursor before it is a
/// member, the publisher then runs ahead of it, and it finds its start
/// overwritten. Loom must find that.
#[test]
#[should_panic(expected = "false overrun")]
fn recycled_place_without_not_member_marker() {
    recycled_place(None, join_place_without_not_member);
}

/// Subscriber 1 reads the chunk of message 1, the only reader so far,
/// while subscriber 0 joins and the publisher sends message 1. Whoever the
/// publisher has noticed when it sends must be able to read it: if it
/// noticed subscriber 0 first, subscriber 1 must not take
/// `release_last_reader` (which would free the chunk under subscriber 0,
/// and its pin would fail). Place 0's previous owner was an observer, so
/// subscriber 1 must also not read a stale observer bit for it.
#[test]
fn join_racing_a_sole_readers_release() {
    let seen = check(Some(5), || {
        let t = Topic::new(2, 1, 2).joined(1);
        t.wake
            .observers()
            .store(sub_member(0) as u32, Ordering::Relaxed);
        let t = Arc::new(t);

        let s = Arc::clone(&t);
        let joiner = loom::thread::spawn(move || join_place(&s, 0));
        let r = Arc::clone(&t);
        let reader = loom::thread::spawn(move || {
            let mut cursor = CURSOR_JOINING;
            let got = receive(&r, 1, &mut cursor);
            if let Got::Chunk { c, .. } = got {
                release_pinned(&r.states[c], 1, &r.membership, &r.wake);
            }
            (cursor, got != Got::Nothing)
        });

        let mut p = Publisher::new(&t);
        assert!(p.send_chunk());
        joiner.join().unwrap();
        let (mut cursor, read_in_thread) = reader.join().unwrap();
        if let Got::Chunk { c, .. } = receive(&t, 1, &mut cursor) {
            release_pinned(&t.states[c], 1, &t.membership, &t.wake);
        }
        assert_eq!(cursor, 2, "subscriber 1 missed message 1");

        // Subscriber 0 reads from its start: message 1 if the publisher
        // had noticed it before sending (its pin must then succeed).
        let mut cursor = CURSOR_JOINING;
        let noticed = match receive(&t, 0, &mut cursor) {
            Got::Chunk { seq: 1, c } => {
                release_pinned(&t.states[c], 0, &t.membership, &t.wake);
                true
            }
            Got::Nothing => false,
            got => panic!("{got:?}"),
        };
        u32::from(noticed) | u32::from(!noticed) << 1 | u32::from(read_in_thread && noticed) << 2
    });
    assert_eq!(seen, 0b111, "outcomes reached: {seen:#b}");
}

/// Subscriber 0, started at 1, reads at most one message and leaves while
/// a `Reject` publisher sends two into a one-slot ring: it is never lapped
/// while it reads, and once it is gone it no longer holds the publisher
/// back.
#[test]
fn leave_racing_a_send() {
    let seen = check(None, || {
        let t = Arc::new(Topic::new(1, 0, 1).joined(0));
        let mut p = Publisher::new(&t);
        // The publisher noticed the join before anything was sent.
        assert!(p.has_space());
        assert_eq!(subscriber_start(&t.cursors[0]), Some(1));

        let s = Arc::clone(&t);
        let sub = loom::thread::spawn(move || {
            let mut cursor = CURSOR_JOINING;
            let got = receive(&s, 0, &mut cursor);
            leave(&s.membership, sub_member(0));
            got
        });
        let mut sent = 0;
        for _ in 0..2 {
            if p.has_space() {
                p.send_inline();
                sent += 1;
            }
        }
        let got = sub.join().unwrap();
        assert!(matches!(got, Got::Inline(1) | Got::Nothing), "{got:?}");
        assert!(sent >= 1);
        assert!(p.has_space(), "a departed subscriber still holds the ring");
        u32::from(got == Got::Inline(1)) | if sent == 2 { 2 } else { 4 }
    });
    assert_eq!(seen, 0b111, "outcomes reached: {seen:#b}");
}

// ------------------------------------------------------------ 3. futex

/// The subscriber's wait registration, as a parameter so the broken copy
/// below can be checked too.
type Register = fn(&WakeWords, u64);

/// `SubscriberPort::receive_blocking` against one publisher sending one
/// message: the subscriber must not sleep through it (loom reports a
/// deadlock if any execution leaves it asleep for ever). Returns the
/// outcomes reached: the subscriber slept (and was woken), the publisher
/// skipped the wake-up.
fn wait_wake(register: Register) -> u32 {
    check(None, move || {
        let mut topic = Topic::new(1, 0, 1);
        // Registered for wake-ups before either thread runs: the model's
        // stand-in for the registration's global barrier.
        topic.wake = WakeWords::new(sub_member(0) as u32);
        let t = Arc::new(topic.joined(0));
        let mut p = Publisher::new(&t);
        assert!(p.has_space());

        let s = Arc::clone(&t);
        let sub = loom::thread::spawn(move || {
            let bit = port_wait_bit(0);
            let mut cursor = CURSOR_JOINING;
            let mut slept = false;
            loop {
                let seen = wait_token(&s.wake);
                if let Got::Inline(seq) = receive(&s, 0, &mut cursor) {
                    return (seq, slept);
                }
                register(&s.wake, bit);
                if let Got::Inline(seq) = receive(&s, 0, &mut cursor) {
                    unregister_wait(&s.wake, bit);
                    return (seq, slept);
                }
                slept |= s.futex.wait(s.wake.notify(), seen);
                unregister_wait(&s.wake, bit);
            }
        });
        let woke = p.send_inline_woke();
        let (seq, slept) = sub.join().unwrap();
        assert_eq!(seq, 1);
        u32::from(slept) | u32::from(!woke) << 1
    })
}

#[test]
fn no_lost_wake_up() {
    let seen = wait_wake(register_wait);
    assert_eq!(seen, 0b11, "outcomes reached: {seen:#b}");
}

/// `register_wait` without its SeqCst fence: the publisher's load of
/// `waiting` and the subscriber's re-check of the stamp may both read the
/// old values, and the subscriber sleeps through the only message.
fn register_wait_without_fence(wake: &WakeWords, bit: u64) {
    wake.waiting().fetch_or(bit, Ordering::Relaxed);
}

#[test]
#[should_panic(expected = "deadlock")]
fn lost_wake_up_without_the_fence() {
    wait_wake(register_wait_without_fence);
}

// ------------------------------------------------------- 4. latched history

/// Outcomes of the latched-history model.
const GOT_HISTORY: u32 = 1;
const LOST_HISTORY: u32 = 2;
const GOT_LIVE: u32 = 4;

/// A transient-local channel keeping 1 message, chunk messages, a 2-slot
/// ring and 3 chunks. Message 1 is published before anyone joins (no
/// subscriber: the ring's hold is all that keeps its chunk). Then a
/// subscriber joins, starting itself at the history
/// (`SubscriberPort::join_at`: `latched_start` from `head`,
/// `start_cursor_at`), while the publisher sends messages 2 and 3: sending
/// 3 releases message 1's hold (`release_bound`) and overwrites its slot.
/// Whatever the interleaving, every message from the joiner's start is
/// either delivered intact (loom's `UnsafeCell` fails the model if the
/// publisher writes a chunk while it is pinned) or counted lost — and lost
/// only once the publisher has moved past it (no false loss), never
/// skipped and never delivered twice.
#[test]
fn latched_history_handover_while_the_publisher_advances() {
    let seen = check(Some(2), || {
        let t = Arc::new(Topic::new(2, 3, 1));
        {
            let mut p = Publisher::new(&t);
            p.latched = 1;
            assert!(p.send_chunk(), "the pool starts free");
        }

        let s = Arc::clone(&t);
        let sub = loom::thread::spawn(move || {
            // `SubscriberPort::join_at` with a latched start.
            prepare_join([&s.cursors[0]], &s.wake, 0, false);
            assert!(join(&s.membership, sub_member(0)));
            let head = s.head.load(Ordering::Acquire);
            let start = latched_start(head, 0, 1, s.depth());
            start_cursor_at(&s.cursors[0], start);
            touch(&s.membership);
            let mut cursor = start;
            let mut got = Vec::new();
            for _ in 0..2 {
                match receive_lossy(&s, 0, &mut cursor) {
                    Got::Chunk { seq, c } => {
                        release_pinned_latched(&s.states[c], 0, &s.membership, &s.wake);
                        got.push(Ok(seq));
                    }
                    Got::Lost(seq) => got.push(Err(seq)),
                    Got::Nothing => {}
                    Got::Inline(seq) => panic!("inline message {seq} on a chunk topic"),
                }
            }
            (start, head, cursor, got)
        });

        // The publisher goes on with its own bookkeeping (it took over the
        // place: head 1, message 1's hold still the ring's).
        let mut p = Publisher::new(&t);
        p.latched = 1;
        p.next_seq = 2;
        p.released_upto = 1;
        let sent2 = p.send_chunk();
        let sent3 = p.send_chunk();
        assert!(sent2 && sent3, "the retained history exhausted the pool");
        let (start, head_at_join, mut cursor, mut got) = sub.join().unwrap();

        assert_eq!(
            start,
            head_at_join.max(1),
            "history of 1 starts at the head"
        );
        // Drain what the joiner had not looked at yet.
        loop {
            match receive_lossy(&t, 0, &mut cursor) {
                Got::Chunk { seq, c } => {
                    release_pinned_latched(&t.states[c], 0, &t.membership, &t.wake);
                    got.push(Ok(seq));
                }
                Got::Lost(seq) => got.push(Err(seq)),
                Got::Nothing => break,
                Got::Inline(seq) => panic!("inline message {seq}"),
            }
        }
        // Every message from the start to the last sent, once each, in
        // order; a lost one only where the publisher had sent message
        // `seq + 2` (the one that releases and overwrites it).
        let mut expect = start;
        let mut seen = 0;
        for r in &got {
            let seq = match *r {
                Ok(seq) => {
                    seen |= if seq <= head_at_join {
                        GOT_HISTORY
                    } else {
                        GOT_LIVE
                    };
                    seq
                }
                Err(seq) => {
                    assert!(
                        seq + 2 <= 3,
                        "message {seq} counted lost but never overwritten"
                    );
                    seen |= LOST_HISTORY;
                    seq
                }
            };
            // A lapped reader may count several at once in a bigger ring;
            // here every step is one message.
            assert_eq!(seq, expect, "gap or duplicate: {got:?} from {start}");
            expect += 1;
        }
        assert_eq!(
            expect, 4,
            "not everything up to message 3: {got:?} from {start}"
        );
        // The history (message 3) still holds its chunk for the next joiner.
        let held = t
            .states
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) & HELD != 0)
            .count();
        assert!(held >= 1, "the latched message's chunk was released");
        seen
    });
    // Reached: a history message delivered, one lost to the racing
    // publisher (counted), and a live one.
    let all = GOT_HISTORY | LOST_HISTORY | GOT_LIVE;
    assert_eq!(seen & all, all, "outcomes reached: {seen:#b}");
}

// ------------------------------------------------------- 5. room wake-up

/// The publisher's room-wait registration, as a parameter so the broken
/// copy below can be checked too.
type RegisterRoom = fn(&WakeWords, u32);

/// `PublisherPort::wait_for_room` (its futex phase, `wait::Futex` with the
/// room waitable) on a full one-slot ring, against the subscriber whose
/// receive frees the slot and then runs `SubscriberPort::wake_room_waiters`.
/// The publisher must not sleep through the room (loom reports a deadlock
/// if any execution leaves it asleep for ever). Returns the outcomes
/// reached: the publisher slept (and was woken), the subscriber skipped
/// the wake-up.
fn room_wait_wake(register: RegisterRoom) -> u32 {
    check(None, move || {
        let mut topic = Topic::new(1, 0, 1);
        // Publisher place 0 registered for room wake-ups before either
        // thread runs: the model's stand-in for its global barrier.
        room_register_blocking(&topic.wake, 1);
        topic = topic.joined(0);
        let t = Arc::new(topic);
        let mut p = Publisher::new(&t);
        p.send_inline();
        assert!(!p.has_space(), "one unread message fills a one-slot ring");

        let s = Arc::clone(&t);
        let sub = loom::thread::spawn(move || {
            let mut cursor = CURSOR_JOINING;
            assert_eq!(receive(&s, 0, &mut cursor), Got::Inline(1));
            let woke = room_must_wake(&s.wake);
            if woke {
                room_bump(&s.wake);
                s.futex.wake_all();
            }
            woke
        });
        let bit = 1u32;
        let mut slept = false;
        loop {
            let token = room_token(&t.wake);
            if p.has_space() {
                break;
            }
            register(&t.wake, bit);
            if p.has_space() {
                room_unregister(&t.wake, bit);
                break;
            }
            slept |= t.futex.wait(room_word(&t.wake), token);
            room_unregister(&t.wake, bit);
        }
        let woke = sub.join().unwrap();
        u32::from(slept) | u32::from(!woke) << 1
    })
}

#[test]
fn block_publisher_no_lost_room_wake_up() {
    let seen = room_wait_wake(room_register);
    assert_eq!(seen, 0b11, "outcomes reached: {seen:#b}");
}

/// `room::register` without its SeqCst fence: the subscriber's load of
/// `room_waiting` and the publisher's re-check of the cursor may both read
/// the old values, and the publisher sleeps through the room.
fn room_register_without_fence(wake: &WakeWords, bit: u32) {
    room_waiting(wake).fetch_or(bit, Ordering::Relaxed);
}

#[test]
#[should_panic(expected = "deadlock")]
fn lost_room_wake_up_without_the_fence() {
    room_wait_wake(room_register_without_fence);
}

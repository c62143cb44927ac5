//! Loom models of the service call protocol: the claim word of a call slot
//! (`src/call.rs`) and the places of clients and servers (`src/place.rs`),
//! driven by the crate's own steps — `call::try_claim` / `try_withdraw` /
//! `state`, `place::try_claim_as` / `reclaim_if_dead_with` / `try_take_with`
//! / `join` / `leave` — in the order the service table
//! (`crates/horus/src/service/table.rs`) runs them. The glue below copies
//! the table's cleanups (a server place: generation bump, leave; a client
//! place: read the token, leave, remove the response channel's name, clear
//! the token) and the client's liveness decision (`liveness.rs`:
//! `check_liveness`), with the same orderings.
//!
//! 1. claim and reply: two servers and the client race on one call's word;
//!    exactly one wins, a withdrawn call is answered by nobody, and the
//!    reply of the server that won is read whole (loom's `UnsafeCell`);
//! 2. a dead server's place is reclaimed while a new server takes it and
//!    the client checks its call: the call always fails as "server died",
//!    never as taken by the new server (the generation moves on before the
//!    place is free);
//! 3. a dead client's place is reclaimed by a reclaimer that dies at each
//!    step of its cleanup: the next reclaimer or the client that takes the
//!    place finishes it (the dead client's response channel name is
//!    removed, the place ends up owned by the new client) and nobody uses
//!    the place while a live reclaimer holds it.
//!
//! Liveness is a flag per process token (a process "dies" by clearing its
//! flag). Each model reports which outcomes its executions reached, and the
//! test checks the interesting ones were (so none passes vacuously).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p horus-shm --release --test loom_service`.
#![cfg(loom)]

use std::sync::Arc;

use horus_shm::call::{self, State};
use horus_shm::place::{self, Take};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::sync::Mutex;

/// The id of the call every model makes (slot 1 of a depth-4 client).
const ID: u64 = 5;

/// Outcomes seen across executions of one model.
#[derive(Default)]
struct Seen(std::sync::Mutex<std::collections::BTreeSet<&'static str>>);

impl Seen {
    fn add(&self, what: &'static str) {
        self.0.lock().unwrap().insert(what);
    }
    fn assert_reached(&self, all: &[&'static str]) {
        let seen = self.0.lock().unwrap();
        for what in all {
            assert!(
                seen.contains(what),
                "no execution reached {what:?}: {seen:?}"
            );
        }
    }
}

/// Process liveness: one flag per token (tokens are small indices here).
struct Procs(Vec<AtomicBool>);

impl Procs {
    fn new(alive: &[bool]) -> Procs {
        Procs(alive.iter().map(|&a| AtomicBool::new(a)).collect())
    }
    fn alive(&self, token: u64) -> bool {
        self.0
            .get(token as usize)
            .is_some_and(|a| a.load(Ordering::SeqCst))
    }
    fn die(&self, token: u64) {
        self.0[token as usize].store(false, Ordering::SeqCst);
    }
}

// ---------------------------------------------------------------- 1. claim and reply

struct Call {
    claim: AtomicU64,
    /// The response (stands for the response channel, itself modelled in
    /// loom_ring): written by the server that won, read by the client.
    reply: UnsafeCell<u64>,
    replied: AtomicBool,
}

// SAFETY: `reply` is only accessed under the protocol being checked; loom's
// UnsafeCell reports any unordered access as a failure of that protocol.
unsafe impl Sync for Call {}

#[test]
fn one_party_wins_a_call_and_its_reply_is_read_whole() {
    let seen = Arc::new(Seen::default());
    let s = Arc::clone(&seen);
    loom::model(move || {
        // The slot's word is left from the call one lap earlier.
        let c = Arc::new(Call {
            claim: AtomicU64::new(call::cancelled(ID - 4)),
            reply: UnsafeCell::new(0),
            replied: AtomicBool::new(false),
        });
        let servers: Vec<_> = (0..2usize)
            .map(|server| {
                let c = Arc::clone(&c);
                loom::thread::spawn(move || {
                    if !call::try_claim(&c.claim, ID, server, 7) {
                        return false;
                    }
                    // SAFETY: we won the call's word; the protocol says
                    // nobody else writes its reply.
                    c.reply.with_mut(|r| unsafe { *r = 40 + server as u64 });
                    c.replied.store(true, Ordering::Release);
                    true
                })
            })
            .collect();
        let withdrew = call::try_withdraw(&c.claim, ID);
        if !withdrew {
            // Taken: wait for the reply (the client's receive).
            while !c.replied.load(Ordering::Acquire) {
                loom::thread::yield_now();
            }
        }
        let won: Vec<bool> = servers.into_iter().map(|t| t.join().unwrap()).collect();
        let word = c.claim.load(Ordering::Relaxed);
        match (withdrew, won.as_slice()) {
            (true, [false, false]) => {
                assert_eq!(call::state(word, ID), State::Cancelled);
                s.add("withdrawn");
            }
            (false, [true, false]) | (false, [false, true]) => {
                let server = usize::from(won[1]);
                assert_eq!(call::state(word, ID), State::Claimed { server, gen: 7 });
                // SAFETY: Acquire of `replied` ordered the server's write.
                let r = c.reply.with(|r| unsafe { *r });
                assert_eq!(r, 40 + server as u64, "the reply of the server that won");
                s.add(if server == 0 { "server 0" } else { "server 1" });
            }
            other => panic!("not exactly one winner: {other:?}"),
        }
    });
    seen.assert_reached(&["withdrawn", "server 0", "server 1"]);
}

// ---------------------------------------------------------------- 2. a dead server

/// Server place 0 of a table: its owner word, generation and the
/// membership word (server 0 is bit 16, as in the table).
struct ServerPlace {
    owner: AtomicU64,
    gen: AtomicU64,
    members: AtomicU64,
    procs: Procs,
}

const SERVER_BIT: u64 = 1 << 16;

#[test]
fn a_dead_servers_call_fails_as_server_died_while_its_place_is_reclaimed_and_retaken() {
    let seen = Arc::new(Seen::default());
    let s = Arc::clone(&seen);
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(move || {
        // Tokens: 1 the dead server, 2 the reclaimer, 3 a new server.
        let p = Arc::new(ServerPlace {
            owner: AtomicU64::new(1),
            gen: AtomicU64::new(1),
            members: AtomicU64::new(SERVER_BIT),
            procs: Procs::new(&[false, false, true, true]),
        });
        // The dead server had taken the client's call.
        let claim = call::claimed(ID, 0, 1);

        let r = Arc::clone(&p);
        let reclaimer = loom::thread::spawn(move || {
            place::reclaim_if_dead_with(
                &r.owner,
                2,
                |t| r.procs.alive(t),
                || {
                    // The table's clean_server_record.
                    r.gen.fetch_add(1, Ordering::AcqRel);
                    place::leave(&r.members, SERVER_BIT);
                },
            )
        });
        let n = Arc::clone(&p);
        let new_server = loom::thread::spawn(move || {
            // The table's enter_server, on its only place.
            if !place::try_claim_as(&n.owner, 3) {
                return false;
            }
            n.gen.fetch_add(1, Ordering::AcqRel);
            assert!(place::join(&n.members, SERVER_BIT));
            true
        });

        // The client's liveness check of its call (liveness.rs): the place's
        // owner and generation (Table::server_owner), the claim's generation.
        let State::Claimed { server: 0, gen } = call::state(claim, ID) else {
            unreachable!()
        };
        let owner = p.owner.load(Ordering::Acquire);
        let g = p.gen.load(Ordering::Acquire);
        let holder_alive = owner != 0
            && owner & place::RECLAIMING == 0
            && call::gen_matches(g, gen)
            && p.procs.alive(owner);
        assert!(
            !holder_alive,
            "the call looked held by a live server (owner {owner}, gen {g})"
        );

        let reclaimed = reclaimer.join().unwrap();
        let took = new_server.join().unwrap();
        // The dead server's place was reclaimed by exactly one party first.
        assert!(
            reclaimed,
            "the reclaimer is the only one to see the dead owner"
        );
        if took {
            assert_eq!(p.owner.load(Ordering::Relaxed), 3);
            assert_eq!(p.gen.load(Ordering::Relaxed), 3);
            assert_eq!(
                p.members.load(Ordering::Relaxed) & place::PLACES,
                SERVER_BIT
            );
            s.add(if owner == 3 {
                "new server seen"
            } else {
                "new server"
            });
        } else {
            assert_eq!(p.owner.load(Ordering::Relaxed), 0);
            assert_eq!(p.members.load(Ordering::Relaxed) & place::PLACES, 0);
            s.add("place free");
        }
    });
    seen.assert_reached(&["new server seen", "new server", "place free"]);
}

// ---------------------------------------------------------------- 3. a dead client, its reclaimer dies

/// Client place 0: its pid word (owner), its token (names its response
/// channel), the membership word (client 0 is bit 0) and the names of
/// response channels removed so far (stands for `Segment::unlink`).
struct ClientPlace {
    pid: AtomicU64,
    token: AtomicU64,
    members: AtomicU64,
    unlinked: Mutex<Vec<u64>>,
    procs: Procs,
}

const CLIENT_BIT: u64 = 1;
/// The dead client's token (its response channel's name).
const DEAD_TOKEN: u64 = 77;

impl ClientPlace {
    /// The table's clean_client_record, run by a reclaimer; `steps` of its
    /// four steps run (a reclaimer killed after them runs no more).
    fn clean(&self, steps: usize) {
        let token = self.token.load(Ordering::Acquire);
        if steps >= 1 {
            place::leave(&self.members, CLIENT_BIT);
        }
        if steps >= 2 && token != 0 {
            self.unlinked.lock().unwrap().push(token);
        }
        if steps >= 3 {
            self.token.store(0, Ordering::Release);
        }
    }
}

/// Reclaimer 2 takes the dead client's place and dies after `steps` steps
/// of its cleanup, while reclaimer 3 looks for dead places and client 4
/// (which holds the place's request-channel place) takes the place.
fn reclaimer_dies_after(steps: usize, seen: &'static [&'static str]) {
    let reached = Arc::new(Seen::default());
    let s = Arc::clone(&reached);
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(move || {
        // Tokens: 1 the dead client, 2 the reclaimer that dies, 3 another
        // reclaimer, 4 the new client.
        let p = Arc::new(ClientPlace {
            pid: AtomicU64::new(1),
            token: AtomicU64::new(DEAD_TOKEN),
            members: AtomicU64::new(CLIENT_BIT),
            unlinked: Mutex::new(Vec::new()),
            procs: Procs::new(&[false, false, true, true, true]),
        });
        let first = Arc::clone(&p);
        let dying = loom::thread::spawn(move || {
            let p = &first;
            if place::try_begin_reclaim_as(&p.pid, 1, 2) {
                p.clean(steps);
            }
            p.procs.die(2);
        });
        let second = Arc::clone(&p);
        let other = loom::thread::spawn(move || {
            let p = &second;
            place::reclaim_if_dead_with(&p.pid, 3, |t| p.procs.alive(t), || p.clean(3))
        });
        // The new client (Table::own_client_record): never goes on without
        // the word; a live reclaimer is waited for (here until it dies).
        let mut waited = false;
        loop {
            match place::try_take_with(&p.pid, 4, |t| p.procs.alive(t), || p.clean(3)) {
                Take::Taken => break,
                Take::Again => {}
                Take::Busy(holder) => {
                    assert!(holder == 2 || holder == 3, "busy with {holder}");
                    waited = true;
                    loom::thread::yield_now();
                }
            }
        }
        dying.join().unwrap();
        let _ = other.join().unwrap();
        assert_eq!(
            p.pid.load(Ordering::Relaxed),
            4,
            "the new client owns its place"
        );
        assert_eq!(
            p.members.load(Ordering::Relaxed) & place::PLACES,
            0,
            "the dead client's bit is gone (the new one joins after)"
        );
        let unlinked = p.unlinked.lock().unwrap().clone();
        assert!(
            unlinked.contains(&DEAD_TOKEN),
            "the dead client's response channel was not removed"
        );
        assert!(unlinked.iter().all(|&t| t == DEAD_TOKEN));
        s.add(if waited {
            "waited for a live reclaimer"
        } else {
            "no wait"
        });
    });
    reached.assert_reached(seen);
}

#[test]
fn a_dead_clients_place_is_reclaimed_when_its_reclaimer_dies_right_after_its_cas() {
    reclaimer_dies_after(0, &["waited for a live reclaimer", "no wait"]);
}

#[test]
fn a_dead_clients_place_is_reclaimed_when_its_reclaimer_dies_after_leaving() {
    reclaimer_dies_after(1, &["waited for a live reclaimer", "no wait"]);
}

#[test]
fn a_dead_clients_place_is_reclaimed_when_its_reclaimer_dies_after_the_unlink() {
    reclaimer_dies_after(2, &["waited for a live reclaimer", "no wait"]);
}

#[test]
fn a_dead_clients_place_is_reclaimed_when_its_reclaimer_dies_before_freeing_it() {
    reclaimer_dies_after(3, &["waited for a live reclaimer", "no wait"]);
}

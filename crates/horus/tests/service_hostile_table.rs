//! Hostile input on a service's shared memory: a claim word naming a server place that
//! does not exist, and a flood of records no server may take. Each ends in a typed
//! outcome, never a panic or a wait past the caller's deadline.

mod common;

use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::unique_ns;
use horus::prelude::*;

horus::message! {
    /// Two numbers to add.
    pub struct Add: "horus-test/Add", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}

horus::message! {
    /// Their sum.
    pub struct Sum: "horus-test/Sum", version 1 {
        /// a + b.
        pub sum: i64,
        /// Unused.
        pub server: u64,
    }
}

const DEPTH: u64 = 16;
const CLIENTS: u32 = 4;

fn service(ns: &str) -> Service<Add, Sum> {
    Service::<Add, Sum>::builder("math/add")
        .namespace(ns)
        .depth(DEPTH as u32)
        .max_servers(2)
        .max_clients(CLIENTS)
        .open()
        .unwrap()
}

#[test]
fn hostile_claim_tag_is_a_typed_error_not_a_panic() {
    let ns = unique_ns("svc-claimtag");
    let svc = service(&ns);
    // A server that never takes a call, so the client watches the claim word.
    let _server = svc.server().unwrap();
    let mut client = svc.client().unwrap();
    // The table's layout (service/table.rs): 48 header words, then client records of
    // (24 + depth) words rounded up to 8, whose claim words start at word 24. The first
    // client (place 0) of a fresh table numbers its first call depth + 1.
    let id = DEPTH + 1;
    let client_words = (24 + DEPTH).next_multiple_of(8);
    let word = 48 + 24 + (id & (DEPTH - 1));
    assert!(word < 48 + client_words);
    // Claimed by "server place 31" (tag 32), of a service with 2 server places.
    let hostile = (id << 20) | 32;
    let name = horus_shm::name::segment_name(&ns, "sv", "math/add").unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm{name}"))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let scribbler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            // Keeps the word there while the call waits (bounded: the call ends).
            while !stop.load(Ordering::Relaxed) {
                file.write_at(&hostile.to_ne_bytes(), word * 8).unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let r = client.call(&Add { a: 1, b: 2 }, Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    scribbler.join().unwrap();
    match r {
        Err(CallError::ServerDied { pid: 0 }) => {}
        other => panic!("expected ServerDied {{ pid: 0 }}, got {other:?}"),
    }
    assert_eq!(client.stats().server_died, 1);
}

#[test]
fn recv_timeout_honours_deadline_under_a_flood() {
    let ns = unique_ns("svc-flood");
    let svc = service(&ns);
    let mut server = svc.server().unwrap();
    // Hostile clients flood the request channel with records no server may take, faster
    // than one server drains them (three publishers; a full ring refuses and they retry).
    let name = horus_shm::name::segment_name(&ns, "sq", "math/add").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flooders: Vec<_> = (0..3)
        .map(|_| {
            let chan = horus_shm::Channel::open_existing(&name, None).unwrap();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut raw = horus_shm::PublisherPort::join(&chan).unwrap();
                // Bounded: ends when the receive returned, or after this many tries.
                let mut tries = 0u64;
                while !stop.load(Ordering::Relaxed) && tries < 20_000_000 {
                    let _ = raw.send_inline(&[0; 8]);
                    tries += 1;
                }
            })
        })
        .collect();
    // The flood has reached the server before it starts waiting.
    while server.try_recv().is_none() && server.stats().malformed == 0 {
        std::thread::yield_now();
    }
    // A deadline already passed: one bounded pass over the ring (at most depth × clients
    // + 2 records, the bound of `try_recv`), then back — not until the flood pauses.
    let bound = DEPTH * u64::from(CLIENTS) + 2;
    let before = server.stats().malformed;
    assert!(server.recv_timeout(Duration::ZERO).is_none());
    let looked_at = server.stats().malformed - before;
    assert!(
        looked_at <= bound,
        "{looked_at} records handled past the deadline (bound {bound})"
    );
    let got = server.recv_timeout(Duration::from_millis(20));
    // The receive returned while the flood was still going (it was not what ended it).
    let flood_running = flooders.iter().all(|f| !f.is_finished());
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }
    assert!(got.is_none(), "a flood record was taken as a request");
    assert!(
        flood_running,
        "recv_timeout returned only once the flood ended (it ignored its deadline)"
    );
    assert!(server.stats().malformed > 0);
}

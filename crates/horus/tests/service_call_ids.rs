//! Call ids near the end of their space (`MAX_CALL_ID`, 2^44): a client place whose previous
//! owner left claim words there (a long-running client about to wrap, or a hostile one) keeps
//! working through the wrap. Before the fix, the first id was `max(claim ids) + depth + 1`,
//! which could pass `MAX_CALL_ID`, and after the wrap to 1 the old words read as later calls:
//! every call at that place failed with `NoServer` from then on.

mod common;

use std::os::unix::fs::FileExt;
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
/// `MAX_CALL_ID` (service/wire.rs): ids are below it, and wrap to 1.
const MAX_CALL_ID: u64 = 1 << 44;
/// Claim word of a call the client withdrew (service/wire.rs: `id << 20 | 63`).
fn withdrawn(id: u64) -> u64 {
    (id << 20) | 63
}

/// Writes `word(slot)` into every claim word of client place 0 of the service's table, as
/// its previous owner would have left them. The layout (service/table.rs): 48 header words,
/// then client records whose claim words start at word 24.
fn leave_claim_words(ns: &str, word: impl Fn(u64) -> u64) {
    let name = horus_shm::name::segment_name(ns, "sv", "math/add").unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm{name}"))
        .unwrap();
    for slot in 0..DEPTH {
        file.write_at(&word(slot).to_ne_bytes(), (48 + 24 + slot) * 8)
            .unwrap();
    }
}

/// Makes `calls` calls through a new client at place 0, answered by a server thread, and
/// checks that each one succeeds with a valid id.
fn calls_all_succeed(ns: &str, svc: &Service<Add, Sum>, calls: u64) {
    let mut server = svc.server().unwrap();
    let mut client = svc.client().unwrap();
    let worker = std::thread::spawn(move || {
        for _ in 0..calls {
            let req = server.recv();
            let sum = req.a + req.b;
            req.reply(&Sum { sum, server: 1 }).unwrap();
        }
        server
    });
    let mut ids = Vec::new();
    for n in 0..calls as i64 {
        let pending = client.call_async(&Add { a: n, b: 1 }).unwrap();
        let id = pending.id();
        assert!(
            id != 0 && id < MAX_CALL_ID,
            "call {n} has id {id:#x} in {ns}"
        );
        ids.push(id);
        match pending.wait(Duration::from_secs(30)) {
            Ok(s) => assert_eq!(s.sum, n + 1),
            Err(e) => panic!("call {n} (id {id:#x}) failed: {e:?}; ids so far {ids:x?}"),
        }
    }
    let server = worker.join().unwrap();
    assert_eq!(client.stats().responses, calls);
    assert_eq!(client.stats().no_server, 0);
    assert_eq!(server.stats().malformed, 0);
}

fn service(ns: &str) -> Service<Add, Sum> {
    Service::<Add, Sum>::builder("math/add")
        .namespace(ns)
        .depth(DEPTH as u32)
        .max_servers(2)
        .max_clients(2)
        .open()
        .unwrap()
}

#[test]
fn call_ids_near_the_maximum_wrap_without_failing_every_call() {
    let ns = unique_ns("svc-idwrap");
    let svc = service(&ns);
    // Keeps the table while nothing else has joined.
    let _keep = svc.server().unwrap();
    // A long-running client's last calls, a few laps before the maximum: the next owner of
    // the place starts just below it and wraps after about 2 × depth calls.
    let base = MAX_CALL_ID - 4 * DEPTH;
    leave_claim_words(&ns, |slot| withdrawn(base + slot));
    calls_all_succeed(&ns, &svc, 8 * DEPTH);
}

#[test]
fn claim_ids_at_the_maximum_never_give_an_id_past_it() {
    let ns = unique_ns("svc-idmax");
    let svc = service(&ns);
    let _keep = svc.server().unwrap();
    // Claim ids at the very end of the space (a hostile or wrapped previous owner).
    leave_claim_words(&ns, |slot| withdrawn(MAX_CALL_ID - 1 - slot));
    calls_all_succeed(&ns, &svc, 4 * DEPTH);
}

#[test]
fn claim_ids_spread_over_the_id_space_fail_no_call() {
    let ns = unique_ns("svc-idspread");
    let svc = service(&ns);
    let _keep = svc.server().unwrap();
    // Words no honest client leaves: ids all around the space, so that whatever id the next
    // owner starts at, some word is "after" it (half the space ahead or less) and would fail
    // the calls of its slot as stale. Joining rewrites the place's words, so none does.
    leave_claim_words(&ns, |slot| withdrawn(slot * (MAX_CALL_ID / DEPTH) + 5));
    calls_all_succeed(&ns, &svc, 4 * DEPTH);
}

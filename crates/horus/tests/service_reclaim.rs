//! A service's places are never used without being owned, and a dead
//! endpoint's place is reclaimed even when its reclaimer dies half-way
//! (issue 22). Peers are this test binary re-run (see `common::Peer`),
//! killed with SIGKILL; the hostile or stuck holder writes the table's
//! words through its file.

mod common;

use std::os::unix::fs::FileExt;
use std::time::Duration;

use common::{command, enter_peer, peer_ns, report, unique_ns, Peer};
use horus::prelude::*;
use horus::ServiceError;

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

const DEPTH: u64 = 4;

fn open(ns: &str) -> Service<Add, Sum> {
    Service::<Add, Sum>::builder("math/add")
        .namespace(ns)
        .depth(DEPTH as u32)
        .max_clients(1)
        .max_servers(1)
        .open()
        .unwrap()
}

// The table's layout (service/table.rs): 48 header words, then one record per
// client place of (24 + depth) words rounded up to 8 (its pid word is word 1),
// then 16 words per server place (its owner word is word 0).
const CLIENT_PID_WORD: u64 = 48 + 1;
const SERVER_OWNER_WORD: u64 = 48 + (24 + DEPTH).next_multiple_of(8);

fn table_file(ns: &str) -> std::fs::File {
    let name = horus_shm::name::segment_name(ns, "sv", "math/add").unwrap();
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/shm{name}"))
        .unwrap()
}

fn read_word(ns: &str, word: u64) -> u64 {
    let mut b = [0; 8];
    table_file(ns).read_exact_at(&mut b, word * 8).unwrap();
    u64::from_ne_bytes(b)
}

fn write_word(ns: &str, word: u64, value: u64) {
    table_file(ns)
        .write_all_at(&value.to_ne_bytes(), word * 8)
        .unwrap();
}

fn shm_files(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&format!(".{ns}.")))
        .collect()
}

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    let ns = peer_ns();
    match (role.as_str(), args.as_slice()) {
        ("server", []) => {
            let svc = open(&ns);
            let _server = svc.server().unwrap();
            report("ready");
            command();
        }
        ("client", []) => {
            let svc = open(&ns);
            let _client = svc.client().unwrap();
            report("ready");
            command();
        }
        // What a reclaimer killed right after its CAS leaves in an owner word.
        ("dies_reclaiming", [word]) => {
            let me = horus_shm::ProcessId::current().token();
            write_word(&ns, word.parse().unwrap(), horus_shm::place::reclaiming(me));
            report("marked");
            command();
        }
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Regression (issue 22): `enter_client` gave up waiting for a reclaimer
/// after 100 k yields and carried on without owning its place's pid word.
/// A reclaimer that died there is taken over: the client owns the word.
#[test]
fn enter_client_never_proceeds_without_owning_the_pid_word() {
    let ns = unique_ns("svc-own-pid");
    let svc = open(&ns);
    // What an older reclaimer killed after its CAS left (and reads, now, as
    // a reclaimer that died).
    write_word(&ns, CLIENT_PID_WORD, u64::MAX);
    let client = svc.client().unwrap();
    assert_eq!(
        read_word(&ns, CLIENT_PID_WORD),
        horus_shm::ProcessId::current().token(),
        "the client joined without owning its place"
    );
    drop(client);
    drop(svc);
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}

/// Regression (issue 22), the stuck holder: a live process that marked the
/// client place as its reclaim and never finishes. The client does not
/// join (a typed error naming the holder) and takes nothing.
#[test]
fn enter_client_with_a_stuck_live_reclaimer_is_a_typed_error() {
    let ns = unique_ns("svc-stuck");
    let svc = open(&ns);
    let mut holder = Peer::spawn(&ns, "dies_reclaiming", &[&CLIENT_PID_WORD.to_string()]);
    holder.expect("marked");
    match svc.client() {
        Err(ServiceError::PlaceStuck { place, pid, .. }) => {
            assert_eq!((place, pid), (0, holder.pid()));
        }
        other => panic!("expected PlaceStuck, got {:?}", other.map(|_| ())),
    }
    // Nothing taken: the holder's word is untouched, and once it is gone the
    // place is reclaimed and a client joins.
    assert_ne!(read_word(&ns, CLIENT_PID_WORD), 0);
    holder.kill9();
    let client = svc.client().unwrap();
    drop(client);
    drop(svc);
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}

/// Regression (issue 22): a reclaimer killed right after its CAS to the
/// reclaiming marker left that place unreclaimable for good. Here a dead
/// server's and a dead client's places are each taken by a reclaimer that
/// is then killed; the next reclaimer finishes both: a new server and a new
/// client join (one place each), and nothing stays in /dev/shm (the dead
/// client's response channel included).
#[test]
fn a_place_whose_reclaimer_was_killed_mid_reclaim_is_reclaimed() {
    let ns = unique_ns("svc-reclaimer");
    let svc = open(&ns);
    let mut server = Peer::spawn(&ns, "server", &[]);
    server.expect("ready");
    let mut client = Peer::spawn(&ns, "client", &[]);
    client.expect("ready");
    server.kill9();
    client.kill9();
    for word in [SERVER_OWNER_WORD, CLIENT_PID_WORD] {
        let mut reclaimer = Peer::spawn(&ns, "dies_reclaiming", &[&word.to_string()]);
        reclaimer.expect("marked");
        reclaimer.kill9();
    }
    let mut s = svc.server().expect("the dead server's place is reclaimed");
    let mut c = svc.client().expect("the dead client's place is reclaimed");
    let answering = std::thread::spawn(move || {
        let req = s.recv_timeout(Duration::from_secs(60)).expect("a request");
        let sum = req.a + req.b;
        req.reply(&Sum { sum, server: 0 }).unwrap();
        s
    });
    let r = c
        .call(&Add { a: 2, b: 3 }, Duration::from_secs(60))
        .unwrap();
    assert_eq!(r.sum, 5);
    let s = answering.join().unwrap();
    drop((s, c, svc));
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}

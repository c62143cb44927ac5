//! Service failure semantics across processes: every case with the client
//! and the server in different processes (this test binary re-run as a
//! peer, see `common::Peer`), killed with SIGKILL where the case is a
//! death.

mod common;

use std::time::{Duration, Instant};

use common::{command, enter_peer, peer_ns, report, unique_ns, within, Peer};
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
    /// Their sum, and the pid of the server that computed it.
    pub struct Sum: "horus-test/Sum", version 1 {
        /// a + b.
        pub sum: i64,
        /// Server pid.
        pub server: u64,
    }
}

const LONG: Duration = Duration::from_secs(30);

fn open(ns: &str, depth: u32) -> Service<Add, Sum> {
    Service::<Add, Sum>::builder("math/add")
        .namespace(ns)
        .depth(depth)
        .open()
        .unwrap()
}

fn answer(req: Request<Add, Sum>) -> Result<(), ReplyError> {
    let sum = req.a + req.b;
    req.reply(&Sum {
        sum,
        server: u64::from(std::process::id()),
    })
}

fn shm_files(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&format!(".{ns}.")))
        .collect()
}

fn assert_clean(ns: &str) {
    let left = shm_files(ns);
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}

// ---------------------------------------------------------------- peers

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    let depth: u32 = args.first().map_or(16, |d| d.parse().unwrap());
    let service = open(&peer_ns(), depth);
    match role.as_str() {
        "serve" => serve(service),
        "hold" => hold(service),
        "hold_then_serve" => hold_then_serve(service),
        "idle_server" => idle_server(service),
        "caller" => caller(service),
        "idle_client" => idle_client(service),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Answers every request until told to stop (stdin closed).
fn serve(service: Service<Add, Sum>) {
    let mut server = service.server().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let worker = std::thread::spawn(move || {
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            if let Some(req) = server.recv_timeout(Duration::from_millis(20)) {
                answer(req).unwrap();
            }
        }
    });
    report("ready");
    while command() != "eof" {}
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    worker.join().unwrap();
}

/// Takes one request and holds it until killed.
fn hold(service: Service<Add, Sum>) {
    let mut server = service.server().unwrap();
    report("ready");
    let req = server.recv_timeout(LONG).expect("a request");
    report(format!("held {}", req.a));
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Takes one request, answers it when told to, then serves.
fn hold_then_serve(service: Service<Add, Sum>) {
    let mut server = service.server().unwrap();
    report("ready");
    let req = server.recv_timeout(LONG).expect("a request");
    report("held");
    assert_eq!(command(), "reply");
    answer(req).unwrap();
    report("replied");
    loop {
        match command().as_str() {
            "serve" => {
                answer(server.recv_timeout(LONG).expect("a request")).unwrap();
                report("served");
            }
            "stats" => {
                let s = server.service_stats().clients_total();
                report(format!("late {} timed_out {}", s.late, s.timed_out));
            }
            _ => break,
        }
    }
}

/// A server that never takes a request; reports what it sees of clients.
fn idle_server(service: Service<Add, Sum>) {
    let server = service.server().unwrap();
    report("ready");
    while command() == "stats" {
        let s = server.service_stats().clients_total();
        report(format!("busy {} calls {}", s.busy, s.calls));
    }
}

/// Sends one call and waits to be killed.
fn caller(service: Service<Add, Sum>) {
    let mut client = service.client().unwrap();
    let _pending = client.call_async(&Add { a: 20, b: 22 }).unwrap();
    report("sent");
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Makes a client, calls nothing, waits to be killed.
fn idle_client(service: Service<Add, Sum>) {
    let _client = service.client().unwrap();
    report("ready");
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

// ---------------------------------------------------------------- tests

#[test]
fn no_server_is_immediate_whether_none_started_one_left_or_one_was_killed() {
    let ns = unique_ns("svcmp-noserver");
    {
        let service = open(&ns, 16);
        let mut client = service.client().unwrap();
        // Never a server.
        let e = client.call(&Add { a: 1, b: 1 }, LONG).unwrap_err();
        assert!(matches!(e, CallError::NoServer(_)), "{e}");

        // A server in another process answers…
        let mut peer = Peer::spawn(&ns, "serve", &[]);
        peer.expect("ready");
        let r = client.call(&Add { a: 1, b: 2 }, LONG).unwrap();
        assert_eq!((r.sum, r.server), (3, u64::from(peer.pid())));
        // …and leaves cleanly: NoServer at once.
        peer.finish();
        let e = client.call(&Add { a: 1, b: 1 }, LONG).unwrap_err();
        assert!(matches!(e, CallError::NoServer(_)), "{e}");

        // A server killed before the call: found dead while waiting, still
        // NoServer, not a timeout.
        let mut peer = Peer::spawn(&ns, "serve", &[]);
        peer.expect("ready");
        peer.kill9();
        let (e, client) = within(20, move || {
            let start = Instant::now();
            let e = client.call(&Add { a: 1, b: 1 }, LONG).unwrap_err();
            println!("NoServer after a killed server: {:?}", start.elapsed());
            (e, client)
        });
        assert!(matches!(e, CallError::NoServer(_)), "{e}");
        assert_eq!(client.stats().no_server, 3);
        assert_eq!(client.stats().timed_out, 0);
    }
    assert_clean(&ns);
}

#[test]
fn server_death_while_holding_a_request_is_server_died_and_a_retry_reaches_another() {
    let ns = unique_ns("svcmp-died");
    {
        let service = open(&ns, 16);
        let mut client = service.client().unwrap();
        let mut a = Peer::spawn(&ns, "hold", &[]);
        a.expect("ready");
        let pending = client.call_async(&Add { a: 5, b: 6 }).unwrap();
        assert_eq!(a.expect("held"), "5");
        // A second server, started after the request was taken.
        let mut b = Peer::spawn(&ns, "serve", &[]);
        b.expect("ready");
        // Killed and left unreaped (a zombie): must count as dead.
        let killed_at = Instant::now();
        let mut zombie = a.kill9_unreaped();
        let (result, detected) = within(20, move || {
            let r = pending.wait(LONG);
            (r, killed_at.elapsed())
        });
        zombie.wait().unwrap();
        match result {
            Err(CallError::ServerDied { pid }) => assert_eq!(pid, zombie.id()),
            other => panic!("expected ServerDied, got {:?}", other.map(|s| s.sum)),
        }
        println!(
            "ServerDied detected {:.1} ms after SIGKILL of the server holding the request",
            detected.as_secs_f64() * 1e3
        );
        // Retry: the surviving server answers.
        let r = client.call(&Add { a: 5, b: 6 }, LONG).unwrap();
        assert_eq!((r.sum, r.server), (11, u64::from(b.pid())));
        let s = client.stats();
        assert_eq!((s.server_died, s.responses, s.timed_out), (1, 1, 0));
        b.finish();
    }
    assert_clean(&ns);
}

#[test]
fn client_death_drops_the_response_and_counts_it_on_the_server() {
    let ns = unique_ns("svcmp-clientdied");
    {
        let service = open(&ns, 16);
        let mut server = service.server().unwrap();
        let mut peer = Peer::spawn(&ns, "caller", &[]);
        peer.expect("sent");
        let req = server.recv_timeout(LONG).expect("the peer's request");
        assert_eq!(req.a + req.b, 42);
        assert_eq!(req.client_pid(), peer.pid());
        peer.kill9();
        assert_eq!(answer(req), Err(ReplyError::ClientGone));
        let s = server.stats();
        assert_eq!((s.received, s.replied, s.client_gone), (1, 0, 1));
        assert_eq!(server.service_stats().servers_total().client_gone, 1);
        // The dead client's place and response channel are gone.
        assert!(server.service_stats().clients.is_empty());
    }
    assert_clean(&ns);
}

#[test]
fn a_full_request_queue_is_busy_and_visible_from_the_server_process() {
    let ns = unique_ns("svcmp-busy");
    {
        let service = open(&ns, 2);
        let mut client = service.client().unwrap();
        let mut peer = Peer::spawn(&ns, "idle_server", &["2"]);
        peer.expect("ready");
        let p1 = client.call_async(&Add { a: 1, b: 0 }).unwrap();
        let p2 = client.call_async(&Add { a: 2, b: 0 }).unwrap();
        let e = client.call_async(&Add { a: 3, b: 0 }).err().unwrap();
        assert_eq!(e, CallError::Busy { in_flight: 2 });
        peer.tell("stats");
        assert_eq!(peer.expect("busy"), "1 calls 2");
        drop((p1, p2));
        assert_eq!(client.stats().cancelled, 2);
        peer.finish();
    }
    assert_clean(&ns);
}

#[test]
fn a_late_response_to_a_timed_out_call_is_discarded_and_counted_on_both_ends() {
    let ns = unique_ns("svcmp-late");
    {
        let service = open(&ns, 16);
        let mut client = service.client().unwrap();
        let mut peer = Peer::spawn(&ns, "hold_then_serve", &[]);
        peer.expect("ready");
        let pending = client.call_async(&Add { a: 1, b: 1 }).unwrap();
        peer.expect("held");
        let e = pending.wait(Duration::from_millis(30)).unwrap_err();
        assert_eq!(e, CallError::Timeout(Duration::from_millis(30)));
        peer.tell("reply");
        peer.expect("replied");
        peer.tell("serve");
        let r = client.call(&Add { a: 2, b: 2 }, LONG).unwrap();
        assert_eq!(r.sum, 4, "the late answer (2) was taken for this call");
        peer.expect("served");
        let s = client.stats();
        assert_eq!((s.timed_out, s.late, s.responses), (1, 1, 1));
        peer.tell("stats");
        assert_eq!(peer.expect("late"), "1 timed_out 1");
        peer.finish();
    }
    assert_clean(&ns);
}

#[test]
fn servers_in_two_processes_share_the_load_each_request_served_once() {
    let ns = unique_ns("svcmp-share");
    {
        let service = open(&ns, 16);
        let mut a = Peer::spawn(&ns, "serve", &[]);
        let mut b = Peer::spawn(&ns, "serve", &[]);
        a.expect("ready");
        b.expect("ready");
        let pids = [u64::from(a.pid()), u64::from(b.pid())];
        const CALLS: i64 = 300;
        let mut client = service.client().unwrap();
        let mut by = [0u64; 2];
        // Calls in flight, so that both servers have work at once.
        let mut i = 0;
        while i < CALLS {
            let batch: Vec<_> = (i..(i + 8).min(CALLS))
                .map(|k| (k, client.call_async(&Add { a: k, b: 1 }).unwrap()))
                .collect();
            for (k, p) in batch {
                let r = p.wait(LONG).unwrap();
                assert_eq!(r.sum, k + 1);
                let at = pids
                    .iter()
                    .position(|&p| p == r.server)
                    .expect("a known server");
                by[at] += 1;
            }
            i += 8;
        }
        let stats = client.service_stats();
        let served: Vec<u64> = stats.servers.iter().map(|s| s.stats.received).collect();
        println!("requests served per server process: {by:?}");
        // Each request taken by exactly one server, as both ends count.
        assert_eq!(by.iter().sum::<u64>(), CALLS as u64);
        assert_eq!(served.iter().sum::<u64>(), CALLS as u64);
        assert_eq!(stats.servers_total().replied, CALLS as u64);
        assert_eq!(client.stats().responses, CALLS as u64);
        a.finish();
        b.finish();
    }
    assert_clean(&ns);
}

#[test]
fn a_request_no_surviving_server_saw_fails_fast_though_a_newer_server_runs() {
    let ns = unique_ns("svcmp-witness");
    {
        let service = open(&ns, 16);
        let mut client = service.client().unwrap();
        // A server that sees requests but never takes one.
        let mut a = Peer::spawn(&ns, "idle_server", &[]);
        a.expect("ready");
        let a_pid = a.pid();
        let pending = client.call_async(&Add { a: 7, b: 8 }).unwrap();
        // A server started after the request was sent never sees it.
        let mut b = Peer::spawn(&ns, "serve", &[]);
        b.expect("ready");
        let killed_at = Instant::now();
        a.kill9();
        let (result, detected) = within(20, move || {
            let r = pending.wait(LONG);
            (r, killed_at.elapsed())
        });
        match result {
            Err(CallError::ServerDied { pid }) => assert_eq!(pid, a_pid),
            other => panic!("expected ServerDied, got {:?}", other.map(|s| s.sum)),
        }
        println!(
            "untaken request of a dead server: failed {:.1} ms after SIGKILL",
            detected.as_secs_f64() * 1e3
        );
        let r = client.call(&Add { a: 7, b: 8 }, LONG).unwrap();
        assert_eq!((r.sum, r.server), (15, u64::from(b.pid())));
        assert_eq!(client.stats().timed_out, 0);
        b.finish();
    }
    assert_clean(&ns);
}

#[test]
fn a_killed_client_leaves_nothing_behind() {
    let ns = unique_ns("svcmp-deadclient");
    {
        let service = open(&ns, 16);
        let server = service.server().unwrap();
        let mut peer = Peer::spawn(&ns, "idle_client", &[]);
        peer.expect("ready");
        assert_eq!(server.service_stats().clients.len(), 1);
        assert!(shm_files(&ns).iter().any(|f| f.contains(".sr.")));
        peer.kill9();
        // Its place and its response channel are reclaimed by whoever
        // looks next (here: the last handle going away).
    }
    assert_clean(&ns);
}

//! Services in one process: calls, several calls in flight, load sharing,
//! loans, and every typed failure and bad input that does not need a second
//! process (those are in `service_multiprocess.rs`).

mod common;

use std::time::Duration;

use common::{unique_ns, within};
use horus::prelude::*;
use horus::{ServiceStats, DEFAULT_CALL_TIMEOUT};

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
    /// Their sum, and who computed it.
    pub struct Sum: "horus-test/Sum", version 1 {
        /// a + b.
        pub sum: i64,
        /// Test-chosen server id.
        pub server: u64,
    }
}

horus::message! {
    /// Another response type, for mismatches.
    pub struct Other: "horus-test/Other", version 1 {
        /// Anything.
        pub x: u64,
    }
}

horus::message! {
    /// 256 bytes: inline, and its samples share the receive buffer.
    pub struct Block256: "horus-test/Block256", version 1 {
        /// Filled with the call's number.
        pub words: [u64; 32],
    }
}

const LONG: Duration = Duration::from_secs(30);

/// Asserts that nothing of namespace `ns` is left in /dev/shm.
fn assert_nothing_left(ns: &str) {
    let left = shm_files(ns);
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn add_service(ns: &str) -> Service<Add, Sum> {
    Service::<Add, Sum>::builder("math/add")
        .namespace(ns)
        .open()
        .unwrap()
}

/// Answers `n` requests with their sum, tagged `id`.
fn serve(mut server: Server<Add, Sum>, n: usize, id: u64) -> Server<Add, Sum> {
    for _ in 0..n {
        let req = server.recv();
        let sum = req.a + req.b;
        req.reply(&Sum { sum, server: id }).unwrap();
    }
    server
}

fn shm_files(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&format!(".{ns}.")))
        .collect()
}

#[test]
fn a_call_is_answered_and_counted_on_both_ends() {
    let ns = unique_ns("svc-basic");
    {
        let service = add_service(&ns);
        let server = service.server().unwrap();
        let mut client = service.client().unwrap();
        assert_eq!(client.timeout(), DEFAULT_CALL_TIMEOUT);
        let worker = std::thread::spawn(move || serve(server, 2, 7));
        let r = client.call(&Add { a: 2, b: 3 }, LONG).unwrap();
        assert_eq!((r.sum, r.server), (5, 7));
        let r = client.call_default(&Add { a: -1, b: 1 }).unwrap();
        assert_eq!(r.sum, 0);
        let server = worker.join().unwrap();

        let c = client.stats();
        assert_eq!((c.calls, c.responses), (2, 2));
        let s = server.stats();
        assert_eq!((s.received, s.replied), (2, 2));
        // Each end sees the other's counters.
        let from_client = client.service_stats();
        let from_server = server.service_stats();
        assert_eq!(from_client, from_server);
        assert_eq!(from_client, service.stats());
        assert_eq!(from_client.clients.len(), 1);
        assert_eq!(from_client.servers.len(), 1);
        assert_eq!(from_client.clients_total().responses, 2);
        assert_eq!(from_client.servers_total().replied, 2);
    }
    assert_nothing_left(&ns);
}

#[test]
fn held_results_and_requests_keep_their_bodies_while_later_ones_arrive() {
    let ns = unique_ns("svc-held");
    let service = Service::<Block256, Block256>::builder("held")
        .namespace(&ns)
        .depth(4)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let block = |i: u64| Block256 { words: [i; 32] };
    let mut pending: Vec<_> = (1..=4)
        .map(|i| client.call_async(&block(i)).unwrap())
        .collect();
    // Every request held while the next ones are received.
    let requests: Vec<_> = (0..4).map(|_| server.try_recv().unwrap()).collect();
    for (i, r) in (1..).zip(&requests) {
        assert_eq!(r.words, [i; 32]);
    }
    for r in requests.into_iter().rev() {
        let answer = block(r.words[0] + 100);
        r.reply(&answer).unwrap();
    }
    // Every result held (and the earlier ones filed while later arrive).
    let results: Vec<_> = pending.drain(..).map(|p| p.wait(LONG).unwrap()).collect();
    for (i, r) in (101..).zip(&results) {
        assert_eq!(r.words, [i; 32]);
    }
    let next = client.call_async(&block(5)).unwrap();
    let r = server.recv();
    r.reply(&block(105)).unwrap();
    assert_eq!(next.wait(LONG).unwrap().words, [105; 32]);
    assert_eq!(results[0].words, [101; 32]);
}

#[test]
fn wrong_request_or_response_type_is_a_typed_error_naming_both() {
    let ns = unique_ns("svc-schema");
    let _service = add_service(&ns);
    let wrong_resp = Service::<Add, Other>::builder("math/add")
        .namespace(&ns)
        .open();
    match wrong_resp {
        Err(ServiceError::SchemaMismatch {
            expected_request,
            expected_response,
            found_request,
            found_response,
            ..
        }) => {
            assert!(expected_request.contains("horus-test/Add"));
            assert!(expected_response.contains("horus-test/Other"));
            assert!(found_request.contains("horus-test/Add"));
            assert!(found_response.contains("horus-test/Sum"));
        }
        other => panic!("expected SchemaMismatch, got {:?}", other.err()),
    }
    let wrong_req = Service::<Other, Sum>::builder("math/add")
        .namespace(&ns)
        .open();
    assert!(matches!(
        wrong_req,
        Err(ServiceError::SchemaMismatch { .. })
    ));
    let wrong_depth = Service::<Add, Sum>::builder("math/add")
        .namespace(&ns)
        .depth(64)
        .open();
    assert!(matches!(
        wrong_depth,
        Err(ServiceError::ConfigMismatch { .. })
    ));
}

#[test]
fn no_server_is_reported_at_once_not_as_a_timeout() {
    let ns = unique_ns("svc-noserver");
    let service = add_service(&ns);
    let mut client = service.client().unwrap();
    let err = within(10, move || {
        let e = client.call(&Add { a: 1, b: 1 }, LONG).unwrap_err();
        assert_eq!(client.stats().no_server, 1);
        e
    });
    assert!(matches!(err, CallError::NoServer(_)), "{err}");
}

#[test]
fn several_calls_in_flight_then_busy_when_the_queue_is_full() {
    let ns = unique_ns("svc-async");
    let service = Service::<Add, Sum>::builder("math/add")
        .namespace(&ns)
        .depth(4)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let mut pending: Vec<_> = (0..4)
        .map(|i| client.call_async(&Add { a: i, b: 100 }).unwrap())
        .collect();
    assert_eq!(client.in_flight(), 4);
    let busy = client.call_async(&Add { a: 0, b: 0 }).err().unwrap();
    assert_eq!(busy, CallError::Busy { in_flight: 4 });
    assert!(pending[0].try_result().is_none());
    // Answer out of order.
    let mut requests: Vec<_> = (0..4).map(|_| server.try_recv().unwrap()).collect();
    assert!(server.try_recv().is_none());
    while let Some(req) = requests.pop() {
        let sum = req.a + req.b;
        req.reply(&Sum { sum, server: 0 }).unwrap();
    }
    for (i, p) in pending.drain(..).enumerate() {
        let r = p.wait(LONG).unwrap();
        assert_eq!(r.sum, i as i64 + 100);
    }
    let s = client.stats();
    assert_eq!((s.calls, s.responses, s.busy), (4, 4, 1));
    assert_eq!(client.in_flight(), 0);
}

#[test]
fn a_result_another_handle_received_is_found_by_the_next_look() {
    let ns = unique_ns("svc-routed");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let mut first = client.call_async(&Add { a: 1, b: 1 }).unwrap();
    let mut second = client.call_async(&Add { a: 2, b: 2 }).unwrap();
    // Empty looks first.
    for _ in 0..3 {
        assert!(first.try_result().is_none());
    }
    for _ in 0..2 {
        let req = server.try_recv().unwrap();
        let sum = req.a + req.b;
        req.reply(&Sum { sum, server: 0 }).unwrap();
    }
    // The second handle's look receives both responses (the first's is
    // ahead of its own in the ring), leaving the ring empty...
    assert_eq!(second.try_result().unwrap().unwrap().sum, 4);
    // ...and the first handle's very next look still finds its result.
    assert_eq!(first.try_result().unwrap().unwrap().sum, 2);
}

#[test]
fn several_servers_share_the_load_and_serve_each_request_once() {
    let ns = unique_ns("svc-share");
    let service = add_service(&ns);
    const CLIENTS: i64 = 3;
    const CALLS: i64 = 200;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let servers: Vec<_> = (0..2u64)
        .map(|id| {
            let mut server = service.server().unwrap();
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Some(req) = server.recv_timeout(Duration::from_millis(10)) {
                        let sum = req.a + req.b;
                        req.reply(&Sum { sum, server: id }).unwrap();
                    }
                }
                server.stats()
            })
        })
        .collect();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let mut client = service.client().unwrap();
            std::thread::spawn(move || {
                for i in 0..CALLS {
                    let r = client.call(&Add { a: c * 1000, b: i }, LONG).unwrap();
                    assert_eq!(r.sum, c * 1000 + i);
                }
                client.stats()
            })
        })
        .collect();
    for c in clients {
        let s = c.join().unwrap();
        assert_eq!(
            (s.calls, s.responses, s.late),
            (CALLS as u64, CALLS as u64, 0)
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let served: Vec<_> = servers.into_iter().map(|s| s.join().unwrap()).collect();
    let received: u64 = served.iter().map(|s| s.received).sum();
    let replied: u64 = served.iter().map(|s| s.replied).sum();
    // Exactly once: as many taken as sent, no request served twice.
    assert_eq!(received, (CLIENTS * CALLS) as u64);
    assert_eq!(replied, received);
    println!(
        "requests per server: {:?}",
        served.iter().map(|s| s.received).collect::<Vec<_>>()
    );
}

#[test]
fn one_mib_requests_and_responses_travel_by_loan() {
    let ns = unique_ns("svc-loan");
    const MIB: usize = 1 << 20;
    let service = Service::<PointCloud, Image>::builder("map/process")
        .namespace(&ns)
        .depth(2)
        .max_servers(1)
        .max_clients(1)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let mut pending = client
        .call_async_with(MIB, |cloud, tail| {
            *cloud = PointCloud::new((MIB / 12) as u32, false);
            for (i, b) in tail.iter_mut().enumerate() {
                *b = (i % 251) as u8;
            }
        })
        .unwrap();
    let req = server.recv_timeout(LONG).expect("request");
    assert!(req.is_zero_copy(), "the request was copied");
    assert_eq!(req.tail().len(), MIB);
    assert!(req
        .tail()
        .iter()
        .enumerate()
        .all(|(i, b)| *b == (i % 251) as u8));
    req.reply_with(MIB, |image, tail| {
        *image = Image::new(1024, 1024, Image::MONO8);
        tail.fill(0xab);
    })
    .unwrap();
    let resp = loop {
        if let Some(r) = pending.try_result() {
            break r.unwrap();
        }
        std::thread::yield_now();
    };
    assert!(resp.is_zero_copy(), "the response was copied");
    assert_eq!(resp.width, 1024);
    assert_eq!(resp.tail().len(), MIB);
    assert!(resp.tail().iter().all(|b| *b == 0xab));
}

#[test]
fn a_response_larger_than_allowed_is_refused_and_the_client_told() {
    let ns = unique_ns("svc-toolarge");
    let service = Service::<Add, PointCloud>::builder("big")
        .namespace(&ns)
        .max_response_tail(1024)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let pending = client.call_async(&Add { a: 1, b: 2 }).unwrap();
    let req = server.try_recv().unwrap();
    let err = req.reply_with(1025, |_, _| {}).unwrap_err();
    assert_eq!(
        err,
        ReplyError::TooLarge {
            requested: 1025,
            max: 1024
        }
    );
    assert_eq!(pending.wait(LONG).unwrap_err(), CallError::ReplyFailed);
    assert_eq!(server.stats().reply_failed, 1);
    assert_eq!(client.stats().failed, 1);
    // A request tail on a type without one is refused before sending.
    let too_big = client.call_with(8, |_, _| {}, LONG).unwrap_err();
    assert_eq!(
        too_big,
        CallError::TooLarge {
            requested: 8,
            max: 0
        }
    );
}

#[test]
fn a_request_dropped_unanswered_is_counted_and_the_client_told() {
    let ns = unique_ns("svc-unanswered");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let pending = client.call_async(&Add { a: 1, b: 2 }).unwrap();
    drop(server.try_recv().unwrap());
    assert_eq!(pending.wait(LONG).unwrap_err(), CallError::Unanswered);
    assert_eq!(server.stats().unanswered, 1);
    assert_eq!(client.stats().unanswered, 1);
}

#[test]
fn a_response_to_a_timed_out_or_cancelled_call_is_discarded_and_counted() {
    let ns = unique_ns("svc-late");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();

    // Timed out while the server held the request.
    let pending = client.call_async(&Add { a: 1, b: 1 }).unwrap();
    let held = server.try_recv().unwrap();
    assert_eq!(
        pending.wait(Duration::from_millis(20)).unwrap_err(),
        CallError::Timeout(Duration::from_millis(20))
    );
    held.reply(&Sum { sum: 2, server: 0 }).unwrap();

    // Cancelled (handle dropped) while the server held the request.
    let pending = client.call_async(&Add { a: 2, b: 2 }).unwrap();
    let held = server.try_recv().unwrap();
    drop(pending);
    held.reply(&Sum { sum: 4, server: 0 }).unwrap();

    // Withdrawn before any server took it: no server ever serves it.
    let pending = client.call_async(&Add { a: 3, b: 3 }).unwrap();
    drop(pending);
    assert!(server.try_recv().is_none(), "a withdrawn call was served");

    // The next call gets its own answer, not a stale one.
    let worker = std::thread::spawn(move || serve(server, 1, 9));
    let r = client.call(&Add { a: 5, b: 5 }, LONG).unwrap();
    assert_eq!(r.sum, 10);
    worker.join().unwrap();
    let s = client.stats();
    assert_eq!(
        (s.timed_out, s.cancelled, s.late, s.responses),
        (1, 2, 2, 1)
    );
}

#[test]
fn malformed_request_records_are_counted_and_skipped() {
    let ns = unique_ns("svc-malformed");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    // A hostile client writes raw records on the request channel.
    let name = horus_shm::name::segment_name(&ns, "sq", "math/add").unwrap();
    let chan = horus_shm::Channel::open_existing(&name, None).unwrap();
    let mut raw = horus_shm::PublisherPort::join(&chan).unwrap();
    let payload = chan.layout().config.slot_payload as usize;
    let len = 32 + std::mem::size_of::<Add>();
    raw.send_inline(&vec![0xff; len]).unwrap(); // bad magic
    raw.send_inline(&[0; 8]).unwrap(); // short
    let mut forged = vec![0u8; len];
    forged[..8].copy_from_slice(&((0x4853_5251u64 << 32) | 999).to_ne_bytes()); // client 999
    forged[8..16].copy_from_slice(&1u64.to_ne_bytes());
    forged[16..24].copy_from_slice(&1u64.to_ne_bytes());
    raw.send_inline(&forged).unwrap();
    raw.send_inline(&vec![0x5a; payload]).unwrap(); // wrong length
    assert!(server.try_recv().is_none());
    assert_eq!(server.stats().malformed, 4);
    assert_eq!(server.stats().received, 0);
    drop(raw);
    // Still serving honest clients.
    let worker = std::thread::spawn(move || serve(server, 1, 1));
    assert_eq!(client.call(&Add { a: 4, b: 4 }, LONG).unwrap().sum, 8);
    worker.join().unwrap();
}

#[test]
fn stats_of_an_idle_service_are_empty() {
    let ns = unique_ns("svc-idle");
    let service = add_service(&ns);
    assert_eq!(service.stats(), ServiceStats::default());
    assert_eq!(service.depth(), 16);
    assert_eq!(service.name(), "math/add");
}

#[test]
fn a_corrupt_service_table_is_a_typed_error() {
    let ns = unique_ns("svc-corrupt");
    let name = horus_shm::name::segment_name(&ns, "sv", "math/add").unwrap();
    let path = format!("/dev/shm{name}");
    std::fs::write(&path, vec![0xa5u8; 4096]).unwrap();
    let opened = Service::<Add, Sum>::builder("math/add")
        .namespace(&ns)
        .open();
    std::fs::remove_file(&path).unwrap();
    match opened {
        Err(ServiceError::Segment {
            source: horus_shm::OpenError::Corrupt { .. },
            ..
        }) => {}
        other => panic!("expected a corrupt-segment error, got {:?}", other.err()),
    }
}

#[test]
fn malformed_response_records_are_counted_and_skipped() {
    let ns = unique_ns("svc-badresp");
    let service = add_service(&ns);
    let server = service.server().unwrap();
    let mut client = service.client().unwrap();
    // A hostile process publishes garbage on the client's response channel.
    let file = shm_files(&ns)
        .into_iter()
        .find(|n| n.contains(".sr."))
        .expect("the client's response channel");
    let chan = horus_shm::Channel::open_existing(&format!("/{file}"), None).unwrap();
    let mut raw = horus_shm::PublisherPort::join(&chan).unwrap();
    let payload = chan.layout().config.slot_payload as usize;
    raw.send_inline(&vec![0xee; payload]).unwrap();
    raw.send_inline(&[1; 16]).unwrap();
    let worker = std::thread::spawn(move || serve(server, 1, 3));
    let r = client.call(&Add { a: 1, b: 2 }, LONG).unwrap();
    assert_eq!((r.sum, r.server), (3, 3));
    worker.join().unwrap();
    assert_eq!(client.stats().malformed, 2);
    assert_eq!(client.stats().responses, 1);
}

#[test]
fn a_handle_outliving_the_segments_reopens_them() {
    let ns = unique_ns("svc-reopen");
    let keeper = add_service(&ns);
    {
        let first = add_service(&ns);
        let server = first.server().unwrap();
        let mut client = first.client().unwrap();
        let worker = std::thread::spawn(move || serve(server, 1, 1));
        assert_eq!(client.call(&Add { a: 1, b: 1 }, LONG).unwrap().sum, 2);
        worker.join().unwrap();
        // `keeper` has no endpoints: the last endpoint and `first` going
        // away unlink the segments under it.
    }
    keeper.stats();
    let server = keeper.server().unwrap();
    let mut client = keeper.client().unwrap();
    let worker = std::thread::spawn(move || serve(server, 1, 2));
    let r = client.call(&Add { a: 2, b: 2 }, LONG).unwrap();
    assert_eq!((r.sum, r.server), (4, 2));
    worker.join().unwrap();
    drop(client);
    drop(keeper);
    assert_nothing_left(&ns);
}

#[test]
fn a_server_is_a_readiness_source_for_the_scheduler() {
    use horus::sched::Readiness;
    let ns = unique_ns("svc-ready");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let ready = server.readiness();
    assert!(!ready.ready() && !server.has_pending());
    assert!(!ready.wait(Duration::from_millis(5)));
    let pending = client.call_async(&Add { a: 1, b: 2 }).unwrap();
    assert!(ready.wait(LONG));
    assert!(ready.ready() && server.has_pending());
    let req = server.try_recv().unwrap();
    assert!(!ready.ready(), "ready after the request was taken");
    let sum = req.a + req.b;
    req.reply(&Sum { sum, server: 0 }).unwrap();
    assert_eq!(pending.wait(LONG).unwrap().sum, 3);
}

#[test]
fn random_request_records_never_crash_or_reach_the_server() {
    let ns = unique_ns("svc-random");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let name = horus_shm::name::segment_name(&ns, "sq", "math/add").unwrap();
    let chan = horus_shm::Channel::open_existing(&name, None).unwrap();
    let mut raw = horus_shm::PublisherPort::join(&chan).unwrap();
    let payload = chan.layout().config.slot_payload as usize;
    // xorshift: reproducible garbage, some of it with a valid magic.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut sent = 0;
    for round in 0..200 {
        let len = (next() as usize % payload) + 1;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if round % 2 == 0 && len >= 8 {
            let w0 = (0x4853_5251u64 << 32) | (next() % 20);
            bytes[..8].copy_from_slice(&w0.to_ne_bytes());
        }
        raw.send_inline(&bytes).unwrap();
        sent += 1;
        // Drain often enough that nothing is overwritten unread.
        if sent % 8 == 0 {
            assert!(server.try_recv().is_none());
        }
    }
    assert!(server.try_recv().is_none());
    let s = server.stats();
    assert_eq!(s.received, 0);
    assert_eq!(s.malformed + s.client_gone, sent);
    drop(raw);
    let worker = std::thread::spawn(move || serve(server, 1, 1));
    assert_eq!(client.call(&Add { a: 1, b: 1 }, LONG).unwrap().sum, 2);
    worker.join().unwrap();
}

/// A response in a chunk that arrives after its call was withdrawn is
/// discarded and its chunk released: the server answers many more such
/// calls than its response pool holds and every answer still goes out.
/// (Guards the response routing, which checks the header and the call
/// before it turns a chunk into a `Sample`, and must release the chunk
/// itself on every other path.)
#[test]
fn late_chunk_responses_release_their_chunks() {
    let ns = unique_ns("svc-late-chunks");
    let service = Service::<Add, PointCloud>::builder("late")
        .namespace(&ns)
        .depth(2)
        .max_response_tail(64)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    // The response pool holds 2 × depth + 4 = 8 chunks.
    const ROUNDS: usize = 40;
    for round in 0..ROUNDS {
        let late = client.call_async(&Add { a: 1, b: 2 }).unwrap();
        let req = server.recv_timeout(LONG).expect("first request");
        drop(late); // withdrawn: its response will be late
        req.reply_with(64, |pc, tail| {
            *pc = PointCloud::new(4, false);
            tail.fill(1);
        })
        .unwrap_or_else(|e| panic!("round {round}: late reply refused: {e}"));
        let pending = client.call_async(&Add { a: 3, b: 4 }).unwrap();
        let req = server.recv_timeout(LONG).expect("second request");
        req.reply_with(64, |pc, tail| {
            *pc = PointCloud::new(5, false);
            tail.fill(2);
        })
        .unwrap_or_else(|e| panic!("round {round}: reply refused: {e}"));
        let resp = pending.wait(LONG).expect("response");
        assert!(resp.is_zero_copy());
        assert_eq!(resp.tail(), &[2u8; 64][..]);
    }
    let stats = client.stats();
    assert_eq!(stats.late, ROUNDS as u64, "{stats:?}");
    drop((client, server, service));
    assert_nothing_left(&ns);
}

/// The server's counters are counted without read-modify-writes (each has one
/// writer): answers given from several threads at once, under the server's
/// answering lock, must each be counted, as must the requests received.
#[test]
fn answers_sent_from_many_threads_at_once_are_each_counted() {
    let ns = unique_ns("svc-threads");
    {
        let service = Service::<Add, Sum>::builder("math/add")
            .namespace(&ns)
            .depth(16)
            .open()
            .unwrap();
        let mut server = service.server().unwrap();
        let mut client = service.client().unwrap();
        let calls: Vec<_> = (0..16)
            .map(|i| client.call_async(&Add { a: i, b: 1 }).unwrap())
            .collect();
        let requests: Vec<_> = (0..16).map(|_| server.recv()).collect();
        let start = std::sync::Arc::new(std::sync::Barrier::new(16));
        let answering: Vec<_> = requests
            .into_iter()
            .map(|req| {
                let start = std::sync::Arc::clone(&start);
                std::thread::spawn(move || {
                    start.wait();
                    let sum = req.a + req.b;
                    req.reply(&Sum { sum, server: 1 }).unwrap();
                })
            })
            .collect();
        for t in answering {
            t.join().unwrap();
        }
        for (i, call) in calls.into_iter().enumerate() {
            assert_eq!(call.wait(LONG).unwrap().sum, i as i64 + 1);
        }
        let s = server.stats();
        assert_eq!((s.received, s.replied), (16, 16));
        let c = client.stats();
        assert_eq!((c.calls, c.responses), (16, 16));
    }
    assert_nothing_left(&ns);
}

/// A request guard outlives its server: its answer still reaches the client,
/// and is not counted in the place's counters, which the server that took the
/// place since owns (it was credited to that successor as its own reply).
#[test]
fn a_late_answer_reaches_the_client_and_is_not_counted_as_the_successors_reply() {
    let ns = unique_ns("svc-late-answer");
    {
        let service = add_service(&ns);
        let mut server = service.server().unwrap();
        let mut client = service.client().unwrap();
        let call = client.call_async(&Add { a: 40, b: 2 }).unwrap();
        let req = server.recv();
        drop(server);
        let successor = service.server().unwrap();
        let sum = req.a + req.b;
        req.reply(&Sum { sum, server: 3 }).unwrap();
        let r = call.wait(LONG).unwrap();
        assert_eq!((r.sum, r.server), (42, 3));
        assert_eq!(client.stats().responses, 1);
        assert_eq!(successor.stats().received, 0);
        assert_eq!(successor.stats().replied, 0);
    }
    assert_nothing_left(&ns);
}

/// A busy-polled call reads the coarse clock while clearly before its
/// deadline: with timeouts around and below the coarse clock's tick, the
/// deadline must still be found (`Timeout`, the call withdrawn and counted).
#[test]
fn a_busy_polled_call_times_out_whatever_its_timeout() {
    let ns = unique_ns("svc-poll-timeout");
    {
        let service = add_service(&ns);
        let _server = service.server().unwrap(); // never receives
        let mut client = service.client().unwrap();
        for (n, ms) in [1u64, 5, 9, 30].into_iter().enumerate() {
            client.set_timeout(Duration::from_millis(ms));
            let mut call = client.call_async(&Add { a: 1, b: 2 }).unwrap();
            let give_up = std::time::Instant::now() + LONG;
            let result = loop {
                if let Some(r) = call.try_result() {
                    break r;
                }
                assert!(
                    std::time::Instant::now() < give_up,
                    "{ms} ms: never settled"
                );
            };
            assert!(
                matches!(result, Err(CallError::Timeout(t)) if t == Duration::from_millis(ms)),
                "{ms} ms: {result:?}"
            );
            assert_eq!(client.stats().timed_out, n as u64 + 1);
        }
    }
    assert_nothing_left(&ns);
}

/// A binding's `close()` from another thread ends a wait in progress: the stop condition is
/// asked between the wait's slices; the call is withdrawn (counted `cancelled`, never
/// served) and a response that still comes would be discarded.
#[test]
fn a_wait_whose_stop_condition_holds_ends_with_stopped_and_withdraws_the_call() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let ns = unique_ns("svc-stop");
    let service = add_service(&ns);
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let stop = AtomicBool::new(false);
    let pending = client.call_async(&Add { a: 1, b: 2 }).unwrap();
    let r = std::thread::scope(|s| {
        let waiter = s.spawn(|| pending.wait_or_stop(LONG, || stop.load(Ordering::Acquire)));
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::Release);
        // Not seen, the wait would end after LONG with `Timeout`.
        waiter.join().unwrap()
    });
    assert_eq!(r.unwrap_err(), CallError::Stopped);
    assert!(server.try_recv().is_none(), "a stopped call was served");
    assert_eq!(client.stats().cancelled, 1);
    // The client goes on: the next call is answered.
    let worker = std::thread::spawn(move || serve(server, 1, 7));
    assert_eq!(client.call(&Add { a: 2, b: 3 }, LONG).unwrap().sum, 5);
    worker.join().unwrap();
}

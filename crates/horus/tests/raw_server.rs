//! A server that learns a service's types at run time (`RawServer`, for bridges serving a
//! service of another host) meets typed clients and raw clients, forwards remote failures,
//! and refuses what does not fit.

use std::time::Duration;

use horus::description::ServiceDescription;
use horus::msgs::CmdVel;
use horus::{
    CallError, Client, RawClient, RawRequest, RawServer, RemoteFailure, ReplyError, Sample,
    Service, ServiceError,
};

horus::message! {
    /// Two numbers to add.
    pub struct AddRequest: "test/RawAddRequest", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}
horus::message! {
    /// Their sum.
    pub struct AddResponse: "test/RawAddResponse", version 1 {
        /// a + b.
        pub sum: i64,
    }
}
horus::message! {
    /// A 4-byte fixed part and a tail (which starts 4 bytes of padding later).
    pub struct Blob: "test/RawBlob", version 1, tail {
        /// A tag.
        pub tag: u32,
    }
}

const LONG: Duration = Duration::from_secs(30);

/// A bridge receives on one thread and answers from others.
const _: () = {
    const fn send<T: Send>() {}
    send::<RawServer>();
    send::<RawRequest>();
};

fn ns(tag: &str) -> String {
    format!("raw-server-{}-{tag}", std::process::id())
}

/// Asserts that nothing of namespace `ns` is left in /dev/shm.
fn assert_nothing_left(ns: &str) {
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&format!(".{ns}.")))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn add_description() -> ServiceDescription {
    ServiceDescription::of::<AddRequest, AddResponse>()
}

/// Waits for the next request (the client is calling concurrently).
fn next(server: &mut RawServer) -> RawRequest {
    server
        .recv_timeout(LONG)
        .expect("a request within the timeout")
}

/// Answers one add request given as bytes.
fn answer_add(server: &mut RawServer) {
    let r = next(server);
    assert_eq!(r.client_pid(), std::process::id());
    let req: AddRequest = bytemuck::pod_read_unaligned(r.bytes());
    let sum = AddResponse { sum: req.a + req.b };
    r.reply(bytemuck::bytes_of(&sum)).unwrap();
}

#[test]
fn a_typed_client_calls_a_raw_server() {
    let ns = ns("typed");
    {
        // The raw server creates the service; the typed handle adopts it.
        let mut server = RawServer::create(&ns, "math/add", &add_description()).unwrap();
        assert_eq!(server.description(), &add_description());
        let service = Service::<AddRequest, AddResponse>::builder("math/add")
            .namespace(&ns)
            .open()
            .unwrap();
        let mut client = service.client().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..2 {
                    answer_add(&mut server);
                }
            });
            for (a, b) in [(2, 3), (-7, 100)] {
                let resp = client.call(&AddRequest { a, b }, LONG).unwrap();
                assert_eq!(resp.sum, a + b);
            }
        });
        assert_eq!(server.stats().replied, 2);
        assert_eq!(client.stats().responses, 2);
    }
    assert_nothing_left(&ns);
}

/// `tag` and a tail laid out as on the wire: the tail at the next multiple of 8.
fn blob_bytes(tag: u32, tail: &[u8]) -> Vec<u8> {
    let mut b = tag.to_ne_bytes().to_vec();
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(tail);
    b
}

/// Calls a Blob service with `tag` and `tail`.
fn call_blob(client: &mut Client<Blob, Blob>, tag: u32, tail: &[u8]) -> Sample<Blob> {
    let fill = |b: &mut Blob, t: &mut [u8]| {
        b.tag = tag;
        t.copy_from_slice(tail);
    };
    client.call_with(tail.len(), fill, LONG).unwrap()
}

#[test]
fn tails_travel_both_ways_laid_out_as_on_the_wire() {
    let ns = ns("tail");
    {
        let service = Service::<Blob, Blob>::builder("blob/echo")
            .namespace(&ns)
            .open()
            .unwrap();
        // The typed service exists first: the raw server opens it.
        let d = ServiceDescription::of::<Blob, Blob>();
        let mut server = RawServer::create(&ns, "blob/echo", &d).unwrap();
        let mut client = service.client().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                let r = next(&mut server);
                assert_eq!(r.bytes(), &blob_bytes(7, b"hello")[..]);
                r.reply(&blob_bytes(9, b"world!")).unwrap();
                // Without a tail: the fixed part alone.
                let r = next(&mut server);
                assert_eq!(r.bytes(), &8u32.to_ne_bytes()[..]);
                // A length ending in the padding fits no Blob.
                assert_eq!(
                    r.reply(&[0u8; 6]),
                    Err(ReplyError::WrongSize { len: 6, size: 4 })
                );
            });
            let resp = call_blob(&mut client, 7, b"hello");
            assert_eq!(resp.tag, 9);
            assert_eq!(resp.tail(), b"world!");
            assert_eq!(
                client.call(&Blob { tag: 8 }, LONG).err(),
                Some(CallError::ReplyFailed)
            );
        });
    }
    assert_nothing_left(&ns);
}

#[test]
fn a_bridge_chain_forwards_requests_and_responses_unchanged() {
    // What the Zenoh bridge does across hosts, here across namespaces: a raw server stands
    // in (namespace `here`) for the typed server of namespace `there`, which a raw client calls.
    let (here, there) = (ns("chain-here"), ns("chain-there"));
    {
        let remote = Service::<Blob, Blob>::builder("blob/echo")
            .namespace(&there)
            .open()
            .unwrap();
        let mut typed_server = remote.server().unwrap();
        let mut forwarder = RawClient::open(&there, "blob/echo").unwrap();
        let mut stand_in = RawServer::create(&here, "blob/echo", forwarder.description()).unwrap();
        let local = Service::<Blob, Blob>::builder("blob/echo")
            .namespace(&here)
            .open()
            .unwrap();
        let mut client = local.client().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                let r = typed_server.recv_timeout(LONG).unwrap();
                let mut tail = r.tail().to_vec();
                tail.reverse();
                let tag = r.tag + 1;
                r.reply_with(tail.len(), |b, t| {
                    b.tag = tag;
                    t.copy_from_slice(&tail);
                })
                .unwrap();
            });
            s.spawn(|| {
                let r = next(&mut stand_in);
                let resp = forwarder.call(r.bytes(), LONG).unwrap();
                r.reply(&resp).unwrap();
            });
            let resp = call_blob(&mut client, 41, b"abc");
            assert_eq!((resp.tag, resp.tail()), (42, &b"cba"[..]));
        });
    }
    assert_nothing_left(&here);
    assert_nothing_left(&there);
}

#[test]
fn a_raw_client_calls_a_raw_server() {
    let ns = ns("rawraw");
    {
        let mut server = RawServer::create(&ns, "math/add", &add_description()).unwrap();
        let mut client = RawClient::open(&ns, "math/add").unwrap();
        assert_eq!(client.description(), &add_description());
        std::thread::scope(|s| {
            s.spawn(|| answer_add(&mut server));
            let req = AddRequest { a: 40, b: 2 };
            let resp = client.call(bytemuck::bytes_of(&req), LONG).unwrap();
            let resp: AddResponse = bytemuck::pod_read_unaligned(&resp);
            assert_eq!(resp.sum, 42);
        });
    }
    assert_nothing_left(&ns);
}

/// A raw client that knows the types creates the service before any server exists (as a
/// typed client does), so that a process serving it from elsewhere learns its types from
/// it: calls find no server until one joins; a raw server of the types then serves it;
/// another type there is refused; a hostile description is refused before anything is
/// created.
#[test]
fn a_raw_client_creates_the_service_with_its_types_before_any_server() {
    let ns = ns("rawcreate");
    {
        let mut client = RawClient::create(&ns, "math/add", &add_description()).unwrap();
        assert_eq!(client.description(), &add_description());
        let req = AddRequest { a: 40, b: 2 };
        assert!(matches!(
            client.call(bytemuck::bytes_of(&req), Duration::from_millis(10)),
            Err(CallError::NoServer(_))
        ));
        // What a bridge reads to learn the types: the service as created by the client.
        assert_eq!(
            RawClient::open(&ns, "math/add").unwrap().description(),
            &add_description()
        );
        let other = ServiceDescription::of::<AddRequest, CmdVel>();
        assert!(matches!(
            RawClient::create(&ns, "math/add", &other),
            Err(ServiceError::SchemaMismatch { .. })
        ));
        let mut d = add_description();
        d.response.types[0].layout_hash ^= 1;
        assert!(matches!(
            RawClient::create(&ns, "math/hostile", &d),
            Err(ServiceError::Invalid { .. })
        ));
        let mut server = RawServer::create(&ns, "math/add", &add_description()).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| answer_add(&mut server));
            let resp = client.call(bytemuck::bytes_of(&req), LONG).unwrap();
            let resp: AddResponse = bytemuck::pod_read_unaligned(&resp);
            assert_eq!(resp.sum, 42);
        });
    }
    assert_nothing_left(&ns);
}

#[test]
fn remote_failures_reach_the_client_as_their_errors() {
    let ns = ns("fail");
    {
        let mut server = RawServer::create(&ns, "math/add", &add_description()).unwrap();
        let service = Service::<AddRequest, AddResponse>::builder("math/add")
            .namespace(&ns)
            .open()
            .unwrap();
        let mut client = service.client().unwrap();
        let req = AddRequest { a: 1, b: 1 };
        std::thread::scope(|s| {
            s.spawn(|| {
                next(&mut server).fail(RemoteFailure::NoServer);
                next(&mut server).fail(RemoteFailure::ServerDied { pid: 4242 });
                drop(next(&mut server));
            });
            assert_eq!(
                client.call(&req, LONG).err(),
                Some(CallError::NoServer("math/add".into()))
            );
            assert_eq!(
                client.call(&req, LONG).err(),
                Some(CallError::ServerDied { pid: 4242 })
            );
            assert_eq!(client.call(&req, LONG).err(), Some(CallError::Unanswered));
        });
        let stats = client.stats();
        assert_eq!(
            (stats.no_server, stats.server_died, stats.unanswered),
            (1, 1, 1)
        );
        assert_eq!(server.stats().unanswered, 1);
    }
    assert_nothing_left(&ns);
}

#[test]
fn a_reply_of_the_wrong_size_is_refused_and_the_client_told() {
    let ns = ns("size");
    {
        let mut server = RawServer::create(&ns, "math/add", &add_description()).unwrap();
        let mut client = RawClient::open(&ns, "math/add").unwrap();
        let req = AddRequest { a: 1, b: 2 };
        std::thread::scope(|s| {
            s.spawn(|| {
                assert_eq!(
                    next(&mut server).reply(&[0u8; 3]),
                    Err(ReplyError::WrongSize { len: 3, size: 8 })
                );
                // No tail in the response type: longer is wrong too.
                assert_eq!(
                    next(&mut server).reply(&[0u8; 9]),
                    Err(ReplyError::WrongSize { len: 9, size: 8 })
                );
            });
            for _ in 0..2 {
                assert_eq!(
                    client.call(bytemuck::bytes_of(&req), LONG).err(),
                    Some(CallError::ReplyFailed)
                );
            }
        });
        assert_eq!(server.stats().reply_failed, 2);
    }
    assert_nothing_left(&ns);
}

#[test]
fn a_service_of_other_types_is_refused() {
    let ns = ns("schema");
    {
        let _service = Service::<AddRequest, AddResponse>::builder("math/add")
            .namespace(&ns)
            .open()
            .unwrap();
        let other = ServiceDescription::of::<AddRequest, CmdVel>();
        assert!(matches!(
            RawServer::create(&ns, "math/add", &other),
            Err(ServiceError::SchemaMismatch { .. })
        ));
        // And the other way round: a raw server's service refuses other typed handles.
        let _raw = RawServer::create(&ns, "blob", &ServiceDescription::of::<Blob, Blob>()).unwrap();
        assert!(matches!(
            Service::<AddRequest, Blob>::builder("blob")
                .namespace(&ns)
                .open(),
            Err(ServiceError::SchemaMismatch { .. })
        ));
    }
    assert_nothing_left(&ns);
}

#[test]
fn hostile_descriptions_are_refused_before_anything_is_created() {
    let ns = ns("hostile");
    let invalid = |d: &ServiceDescription| match RawServer::create(&ns, "math/add", d) {
        Err(ServiceError::Invalid { reason, .. }) => reason,
        Err(e) => panic!("not refused as invalid: {e}"),
        Ok(_) => panic!("a hostile description was accepted"),
    };
    // A layout hash that does not match the fields.
    let mut d = add_description();
    d.response.types[0].layout_hash ^= 1;
    assert!(invalid(&d).contains("hash"));
    // A field outside its type.
    let mut d = add_description();
    d.request.types[0].size = 4;
    assert!(invalid(&d).contains("outside"));
    // No types at all.
    let mut d = add_description();
    d.request.types.clear();
    assert!(invalid(&d).contains("no types"));
    // Consistent descriptions (hashes recomputed, as a hostile peer can) of what the
    // segments cannot hold: a schema name longer than the header's, an alignment above 8.
    let mut d = add_description();
    d.request.types[0].name = "x".repeat(4096);
    d.request.types[0].layout_hash = d.request.types[0].computed_hash();
    assert!(invalid(&d).contains("too long"), "{}", invalid(&d));
    let mut d = add_description();
    d.response.types[0].align = 16;
    d.response.types[0].layout_hash = d.response.types[0].computed_hash();
    assert!(invalid(&d).contains("align"), "{}", invalid(&d));
    // Consistent descriptions of types too large for a segment: refused before anything
    // is created.
    for size in [1usize << 40, 1 << 31, 1 << 28] {
        let mut d = add_description();
        d.request.types[0].size = size;
        d.request.types[0].layout_hash = d.request.types[0].computed_hash();
        assert!(invalid(&d).contains("large"), "{}", invalid(&d));
    }
    // What arrives over the network is JSON of this shape; garbage never parses.
    let json = serde_json::to_vec(&add_description()).unwrap();
    let back: ServiceDescription = serde_json::from_slice(&json).unwrap();
    assert_eq!(back, add_description());
    assert!(serde_json::from_slice::<ServiceDescription>(b"{\"request\":1}").is_err());
    assert_nothing_left(&ns);
}

/// A raw client's call ends when its stop condition holds (a binding's `close()` from another
/// thread), withdrawn: `Stopped`, and no server ever takes it.
#[test]
fn a_raw_call_whose_stop_condition_holds_ends_with_stopped() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let ns = ns("rawstop");
    {
        let mut server = RawServer::create(&ns, "math/add", &add_description()).unwrap();
        let mut client = RawClient::open(&ns, "math/add").unwrap();
        let stop = AtomicBool::new(false);
        let req = AddRequest { a: 40, b: 2 };
        let r = std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                client.call_or_stop(bytemuck::bytes_of(&req), LONG, || {
                    stop.load(Ordering::Acquire)
                })
            });
            std::thread::sleep(Duration::from_millis(50));
            stop.store(true, Ordering::Release);
            // Not seen, the call would end after LONG with `Timeout`.
            waiter.join().unwrap()
        });
        assert_eq!(r.unwrap_err(), CallError::Stopped);
        assert!(server.try_recv().is_none(), "a stopped call was served");
        assert_eq!(client.stats().cancelled, 1);
    }
    assert_nothing_left(&ns);
}

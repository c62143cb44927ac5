//! A raw client hands on exactly its response type's bytes, whatever length
//! a chunked response record claims (review L1 of 939160b: a 513 B–2 KiB body
//! travels in a pool chunk, longer than the body; before, such a body was
//! inline and its length checked exactly).

use std::time::Duration;

use horus::{Message, RawClient, Service};

horus::message! {
    /// Odd size, align 1: in a chunk, its record rounded up.
    pub struct Odd1001: "horus-test/Odd1001", version 1 {
        /// Pattern.
        pub bytes: [u8; 1001],
    }
}

const LONG: Duration = Duration::from_secs(30);

fn pattern<T: Message>(i: u8) -> T {
    let mut m: T = bytemuck::Zeroable::zeroed();
    for (j, b) in bytemuck::bytes_of_mut(&mut m).iter_mut().enumerate() {
        *b = (j % 251) as u8 ^ i;
    }
    m
}

/// A hostile server answers a 1,001 B response type with a chunk record of
/// 1,008 B of body (the padding filled with 0xEE): the raw client returns the
/// type's 1,001 bytes, none of the padding.
#[test]
fn a_raw_client_never_passes_on_a_hostile_servers_padding() {
    let name = "rawpad";
    let ns = format!("svc-rawpad-{}", std::process::id());
    let service = Service::<Odd1001, Odd1001>::builder(name)
        .namespace(&ns)
        .open()
        .unwrap();
    // Makes the service visible to clients; never polled: the test answers.
    let _server = service.server().unwrap();
    let seg = horus_shm::name::segment_name(&ns, "sq", name).unwrap();
    let chan = horus_shm::Channel::open_existing(&seg, None).unwrap();
    let mut sub = horus_shm::SubscriberPort::join(&chan, true, false).unwrap();
    let ns2 = ns.clone();
    let caller = std::thread::spawn(move || {
        let mut client = RawClient::open(&ns2, name).unwrap();
        client.call(bytemuck::bytes_of(&pattern::<Odd1001>(1)), LONG)
    });
    let mut buf = vec![0u64; sub.slot_payload().div_ceil(8).max(4)];
    let (pool, chunk) = loop {
        if let Some(horus_shm::Received::Chunk { pool, chunk, .. }) = sub.try_receive(&mut buf) {
            break (pool, chunk);
        }
        std::thread::yield_now();
    };
    let ptr = sub.chunk_ptr(pool, chunk);
    // SAFETY: a chunk pinned by our receive, holding at least the 32-byte header.
    let w: [u64; 4] = unsafe { std::ptr::read(ptr.cast()) };
    sub.place().release_chunk(pool, chunk);
    let (token, id) = (w[1], w[2]);
    let resp_name =
        horus_shm::name::segment_name(&ns, "sr", &format!("{name}/{token:016x}")).unwrap();
    let rchan = horus_shm::Channel::open_existing(&resp_name, None).unwrap();
    let mut publ = horus_shm::PublisherPort::join(&rchan).unwrap();
    let loan = publ.loan_chunk().unwrap();
    let bytes = publ.chunk_bytes(&loan);
    let chunk_len = bytes.len();
    // An OK response header ("HSRP", the call's id, our pid).
    let header: [u64; 4] = [(0x4853_5250u64 << 32), id, u64::from(std::process::id()), 0];
    bytes[..32].copy_from_slice(bytemuck::cast_slice(&header));
    bytes[32..].fill(0xEE);
    let len = 32 + 1008;
    assert!(len <= chunk_len, "chunk {chunk_len}");
    publ.send_chunk(loan, len).unwrap();
    let got = caller.join().unwrap().expect("the call succeeds");
    assert_eq!(got.len(), 1001, "the type's bytes, not the record's");
    assert!(got.iter().all(|&b| b == 0xEE));
}

//! Which messages travel inside ring slots and which in pool chunks
//! (`horus::INLINE_MAX`, for topics and service bodies), which a service's
//! receiver copies out of their chunks (`horus::COPY_OUT_MAX`), and the
//! default depth either way: fixed-size messages up to 2 KiB keep a history
//! of 16 whether they are inline or chunked.

mod common;

use std::time::Duration;

use common::unique_ns;
use horus::prelude::*;

horus::message! {
    /// Exactly `INLINE_MAX` bytes: inline.
    pub struct Fixed512: "horus-test/Fixed512", version 1 {
        /// Filled with the message's number.
        pub words: [u64; 64],
    }
}

horus::message! {
    /// One byte above `INLINE_MAX`: a chunk.
    pub struct Fixed513: "horus-test/Fixed513", version 1 {
        /// A pattern of the message's number.
        pub bytes: [u8; 513],
    }
}

horus::message! {
    /// Exactly `COPY_OUT_MAX`: a service's receiver copies it out of its chunk.
    pub struct Fixed2048: "horus-test/Fixed2048", version 1 {
        /// A pattern of the message's number.
        pub bytes: [u8; 2048],
    }
}

horus::message! {
    /// One byte above `COPY_OUT_MAX`: read in place.
    pub struct Fixed2049: "horus-test/Fixed2049", version 1 {
        /// A pattern of the message's number.
        pub bytes: [u8; 2049],
    }
}

horus::message! {
    /// An Ethernet frame's payload: above `INLINE_MAX`, in a chunk.
    pub struct Fixed1480: "horus-test/Fixed1480", version 1 {
        /// The first byte is the message's number.
        pub bytes: [u8; 1480],
    }
}

horus::message! {
    /// Above 2 KiB: a chunk, and the shallow default history.
    pub struct Fixed4096: "horus-test/Fixed4096", version 1 {
        /// Filled with the message's number.
        pub words: [u64; 512],
    }
}

const LONG: Duration = Duration::from_secs(30);

fn fill<T: Message>(i: u8) -> T {
    let mut m: T = bytemuck::Zeroable::zeroed();
    bytemuck::bytes_of_mut(&mut m).fill(i);
    m
}

fn first_byte<T: Message>(m: &T) -> u8 {
    bytemuck::bytes_of(m)[0]
}

/// Publishes 20 messages on a topic of default QoS before the subscriber reads
/// any; returns whether they were read in place and the numbers received.
fn history_of<T: Message>(name: &str) -> (bool, Vec<u8>) {
    let t = Topic::<T>::builder(name)
        .namespace(&unique_ns(name))
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    for i in 1..=20u8 {
        assert!(p.send(fill::<T>(i)).is_ok());
    }
    let mut zero_copy = true;
    let mut got = Vec::new();
    while let Some(m) = s.try_recv() {
        zero_copy &= m.is_zero_copy();
        assert!(bytemuck::bytes_of(&*m)
            .iter()
            .all(|b| *b == first_byte(&*m)));
        got.push(first_byte(&*m));
    }
    (zero_copy, got)
}

#[test]
fn inline_max_is_the_largest_message_copied_through_the_slot() {
    assert_eq!(std::mem::size_of::<Fixed512>(), horus::INLINE_MAX);
    assert!(!history_of::<Fixed512>("in512").0);
    assert!(history_of::<Fixed1480>("in1480").0);
    assert!(history_of::<Fixed4096>("in4096").0);
}

#[test]
fn fixed_messages_up_to_2_kib_keep_a_default_history_of_16_inline_or_chunked() {
    let newest = |n: u8| ((21 - n)..=20).collect::<Vec<u8>>();
    assert_eq!(history_of::<Fixed512>("d512").1, newest(16));
    assert_eq!(history_of::<Fixed1480>("d1480").1, newest(16));
    assert_eq!(history_of::<Fixed4096>("d4096").1, newest(4));
}

/// Byte `j` of message `i`: a pattern that a copy from the wrong offset or of
/// the wrong length breaks.
fn pattern<T: Message>(i: u8) -> T {
    let mut m: T = bytemuck::Zeroable::zeroed();
    for (j, b) in bytemuck::bytes_of_mut(&mut m).iter_mut().enumerate() {
        *b = (j % 251) as u8 ^ i;
    }
    m
}

fn is_pattern<T: Message>(m: &T, i: u8) -> bool {
    bytemuck::bytes_of(m) == bytemuck::bytes_of(&pattern::<T>(i))
}

/// Makes one call of `Service<T, T>` and returns whether its request channel
/// has pool chunks, and whether the request and the response were read in
/// place.
fn call_once<T: Message>(name: &str) -> (bool, bool, bool) {
    let ns = unique_ns(name);
    let service = Service::<T, T>::builder(name)
        .namespace(&ns)
        .open()
        .unwrap();
    let seg = horus_shm::name::segment_name(&ns, "sq", name).unwrap();
    let chunked = horus_shm::Channel::open_existing(&seg, None)
        .unwrap()
        .layout()
        .config
        .chunk_size
        > 0;
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let mut pending = client.call_async(&pattern::<T>(7)).unwrap();
    let req = server.recv_timeout(LONG).expect("request");
    let req_zero_copy = req.is_zero_copy();
    assert!(is_pattern(&*req, 7), "{name}: the request arrived changed");
    req.reply(&pattern::<T>(9)).unwrap();
    let resp = loop {
        if let Some(r) = pending.try_result() {
            break r.unwrap();
        }
        std::thread::yield_now();
    };
    assert!(
        is_pattern(&*resp, 9),
        "{name}: the response arrived changed"
    );
    (chunked, req_zero_copy, resp.is_zero_copy())
}

#[test]
fn service_bodies_above_512_b_travel_in_chunks_and_up_to_2_kib_arrive_as_copies() {
    assert_eq!(horus::COPY_OUT_MAX, std::mem::size_of::<Fixed2048>());
    assert_eq!(call_once::<Fixed512>("s512"), (false, false, false));
    // In chunks, copied out by the receiver: a kept one pins nothing of the sender's.
    assert_eq!(call_once::<Fixed513>("s513"), (true, false, false));
    assert_eq!(call_once::<Fixed1480>("s1480"), (true, false, false));
    assert_eq!(call_once::<Fixed2048>("s2048"), (true, false, false));
    assert_eq!(call_once::<Fixed2049>("s2049"), (true, true, true));
    assert_eq!(call_once::<Fixed4096>("s4096"), (true, true, true));
}

#[test]
fn a_client_keeping_every_1480_byte_response_never_makes_a_reply_fail() {
    let name = "keep1480";
    let service = Service::<Fixed1480, Fixed1480>::builder(name)
        .namespace(&unique_ns(name))
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let mut kept = Vec::new();
    // More than a pool of 2 x 16 + 4 chunks: each kept response would pin one if it were
    // read in place.
    for i in 0..60u8 {
        let mut pending = client.call_async(&pattern::<Fixed1480>(i)).unwrap();
        let req = server.recv_timeout(LONG).expect("request");
        req.reply(&pattern::<Fixed1480>(i))
            .expect("the reply is sent");
        let resp = loop {
            if let Some(r) = pending.try_result() {
                break r.expect("the call succeeds");
            }
            std::thread::yield_now();
        };
        kept.push(resp);
    }
    assert!(kept
        .iter()
        .enumerate()
        .all(|(i, r)| is_pattern(&**r, i as u8)));
}

#[test]
fn a_server_keeping_every_1480_byte_request_never_makes_a_call_fail() {
    let name = "keepreq1480";
    let service = Service::<Fixed1480, Fixed1480>::builder(name)
        .namespace(&unique_ns(name))
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let mut kept = Vec::new();
    // More than the client's pool of 2 x 16 + 4 chunks: each kept request would pin one if
    // it were read in place. The client gives each call up (dropping it) once the server
    // took it, so its calls in flight never reach the depth.
    for i in 0..60u8 {
        let pending = client
            .call_async(&pattern::<Fixed1480>(i))
            .expect("the request is sent");
        kept.push(server.recv_timeout(LONG).expect("request"));
        drop(pending);
    }
    assert!(kept
        .iter()
        .enumerate()
        .all(|(i, r)| is_pattern(&**r, i as u8)));
}

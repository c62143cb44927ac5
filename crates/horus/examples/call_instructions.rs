//! The work of one service call beside one topic round trip, for an instruction count:
//! client and server (or the two ends of a ping-pong) in one thread, so nothing spins and
//! every instruction counted is per message. Run it twice under callgrind with two counts
//! and divide the difference (start-up and joins cancel out):
//!
//! ```text
//! cargo build --release -p horus --example call_instructions
//! valgrind --tool=callgrind target/release/examples/call_instructions call64 1000
//! valgrind --tool=callgrind target/release/examples/call_instructions call64 11000
//! ```
//!
//! Modes: `call64`, `call2k`, `call4k` (a `Service<T, T>` of that size, depth 16, one client,
//! one server), `topic16`, `topic64` (two topics, ping and pong, depth 16, loaned sends).
//! The bodies are filled with `fill`, which libc may do with `rep stosb`: callgrind counts
//! its every iteration, so at 4 KiB read the count without `memset`.

use std::time::Duration;

use horus::prelude::*;

horus::message! {
    /// 16 bytes.
    pub struct Body16: "horus-example/Body16", version 1 {
        /// The payload.
        pub data: [u8; 16],
    }
}
horus::message! {
    /// 64 bytes.
    pub struct Body64: "horus-example/Body64", version 1 {
        /// The payload.
        pub data: [u8; 64],
    }
}
horus::message! {
    /// 2 KiB.
    pub struct Body2048: "horus-example/Body2048", version 1 {
        /// The payload.
        pub data: [u8; 2048],
    }
}
horus::message! {
    /// 4 KiB.
    pub struct Body4096: "horus-example/Body4096", version 1 {
        /// The payload.
        pub data: [u8; 4096],
    }
}

/// One call: the client sends, the server takes the request and replies, the client
/// takes the response (each the busy-poll API the `rpc` benchmark uses).
#[inline(never)]
fn one_call<T: Message>(client: &mut Client<T, T>, server: &mut Server<T, T>, seq: u8) {
    let mut call = client
        .call_async_with(0, |r, _| bytemuck::bytes_of_mut(r).fill(seq))
        .expect("call sent");
    let request = server.try_recv().expect("request waiting");
    let v = bytemuck::bytes_of(&*request)[0];
    request
        .reply_with(0, |r, _| bytemuck::bytes_of_mut(r).fill(v))
        .expect("reply sent");
    let response = call.try_result().expect("settled").expect("answered");
    assert_eq!(bytemuck::bytes_of(&*response)[0], seq);
}

fn calls<T: Message>(n: usize) {
    let service = Service::<T, T>::builder("instructions/call")
        .depth(16)
        .max_clients(1)
        .max_servers(1)
        .open()
        .expect("service");
    let mut server = service.server().expect("server");
    let mut client = service.client().expect("client");
    client.set_timeout(Duration::from_secs(5));
    for i in 0..n {
        one_call(&mut client, &mut server, i as u8);
    }
}

/// One round trip: A sends on ping, B receives it and sends on pong, A receives.
#[inline(never)]
fn one_round_trip<T: Message>(
    a: &mut Publisher<T>,
    a_rx: &mut Subscriber<T>,
    b: &mut Publisher<T>,
    b_rx: &mut Subscriber<T>,
    seq: u8,
) {
    let mut s = a.loan().expect("loan");
    bytemuck::bytes_of_mut(&mut *s).fill(seq);
    assert!(s.send().is_ok(), "ping sent");
    let m = b_rx.try_recv().expect("ping waiting");
    let v = bytemuck::bytes_of(&*m)[0];
    drop(m);
    let mut s = b.loan().expect("loan");
    bytemuck::bytes_of_mut(&mut *s).fill(v);
    assert!(s.send().is_ok(), "pong sent");
    let m = a_rx.try_recv().expect("pong waiting");
    assert_eq!(bytemuck::bytes_of(&*m)[0], seq);
}

fn round_trips<T: Message>(n: usize) {
    let open = |name: &str| {
        Topic::<T>::builder(name)
            .depth(16)
            .max_publishers(1)
            .max_subscribers(2)
            .open()
            .expect("topic")
    };
    let (ping, pong) = (open("instructions/ping"), open("instructions/pong"));
    let mut b_rx = ping
        .subscriber_with(WaitMode::BusyPoll)
        .expect("subscriber");
    let mut a_rx = pong
        .subscriber_with(WaitMode::BusyPoll)
        .expect("subscriber");
    let mut a = ping.publisher().expect("publisher");
    let mut b = pong.publisher().expect("publisher");
    for i in 0..n {
        one_round_trip(&mut a, &mut a_rx, &mut b, &mut b_rx, i as u8);
    }
}

fn main() {
    // A namespace of our own: nothing shared with other runs, all of it unlinked at exit.
    std::env::set_var(
        "HORUS_NAMESPACE",
        format!("call-instructions-{}", std::process::id()),
    );
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let n = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    match mode.as_str() {
        "call64" => calls::<Body64>(n),
        "call2k" => calls::<Body2048>(n),
        "call4k" => calls::<Body4096>(n),
        "topic16" => round_trips::<Body16>(n),
        "topic64" => round_trips::<Body64>(n),
        _ => eprintln!("usage: call_instructions call64|call2k|call4k|topic16|topic64 [count]"),
    }
}

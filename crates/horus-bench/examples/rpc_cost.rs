//! What a 64 B service call costs, in instructions, beside a 16 B topic round
//! trip (the structure a call has: one message each way), both with every
//! endpoint in one thread so that nothing waits. Run under callgrind
//! (instruction counts are stable on shared VMs, unlike time) with collection
//! limited to the measured loops:
//!
//! ```text
//! cargo build --release -p horus-bench --example rpc_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_*' \
//!     target/release/examples/rpc_cost call 100000
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Modes: `call` (the busy-poll benchmark's calls, per call: `call_async_with`,
//! `Server::try_recv`, `reply_with`, `PendingCall::try_result`), `topic` (per
//! round trip: ping sends, pong receives and sends back, ping receives), and
//! `sized SIZE TOUCH` (the `rpc` benchmark's fixed-size calls of SIZE = 64, 512,
//! 1024, 2048 or 4096 B, each side writing and reading the payload as the
//! benchmark does: TOUCH `full` every byte, `touch` the first and last 8), e.g.
//!
//! ```text
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_*' \
//!     target/release/examples/rpc_cost sized 100000 4096 full
//! ```
//!
//! `steps` and `topic-steps` time the same loops step by step instead (rdtsc,
//! `horus_bench::clock`, its read overhead subtracted; in-process, so every
//! cache line is local: what each step costs on one core, not the time a
//! message takes between cores), e.g. `rpc_cost steps 1000000`: per call,
//! `call_async_with`, `Server::try_recv`, `reply_with`, `try_result` (the one
//! that finds the response) and, separately, the first `try_result` that
//! finds nothing and a second one (the client's busy-poll loop); per topic round trip, each of the
//! four sends and receives.
//!
//! The namespace is unique per run and its segments are gone when it exits.

use horus::prelude::*;
use horus_bench::clock::Clock;
use horus_bench::horus_wire::{Bytes1024, Bytes16, Bytes2048, Bytes64};
use horus_bench::payload::{self, Touch};
use horus_bench::rpc::horus_rpc::{Body, Bytes4096, Bytes512};

fn namespace() -> String {
    format!("rpc-cost-{}", std::process::id())
}

#[inline(never)]
fn measured_call(
    client: &mut Client<Bytes64, Bytes64>,
    server: &mut Server<Bytes64, Bytes64>,
    n: u64,
) -> u64 {
    let mut sum = 0u64;
    for i in 0..n {
        let mut call = client
            .call_async_with(0, |r, _| r.data[..8].copy_from_slice(&i.to_le_bytes()))
            .expect("call");
        let request = server.try_recv().expect("request waiting");
        let seq = request.data[0];
        request
            .reply_with(0, |r, _| r.data[0] = seq)
            .expect("reply");
        let response = loop {
            if let Some(r) = call.try_result() {
                break r.expect("response");
            }
        };
        sum += u64::from(response.data[0]);
    }
    sum
}

#[inline(never)]
fn measured_sized<T: Body>(
    client: &mut Client<T, T>,
    server: &mut Server<T, T>,
    n: u64,
    touch: Touch,
) -> u64 {
    let size = std::mem::size_of::<T>();
    let mut sum = 0u64;
    for i in 0..n {
        let mut call = client
            .call_async_with(0, |r, t| payload::write(T::bytes_mut(r, t, size), i, touch))
            .expect("call");
        let request = server.try_recv().expect("request waiting");
        let seq = payload::read(T::bytes(&request, request.tail()), touch).expect("request");
        request
            .reply_with(0, |r, t| {
                payload::write(T::bytes_mut(r, t, size), seq, touch)
            })
            .expect("reply");
        let response = loop {
            if let Some(r) = call.try_result() {
                break r.expect("response");
            }
        };
        sum += payload::read(T::bytes(&response, response.tail()), touch).expect("response");
    }
    sum
}

/// The benchmark's service: depth 16, one client and one server place, no tails.
fn service<T: Message>() -> Service<T, T> {
    Service::<T, T>::builder("rpc")
        .namespace(&namespace())
        .depth(16)
        .max_clients(1)
        .max_servers(1)
        .max_request_tail(0)
        .max_response_tail(0)
        .open()
        .expect("opening the service")
}

fn sized<T: Body>(n: u64, touch: Touch) {
    let service = service::<T>();
    let mut server = service.server().expect("server");
    let mut client = service.client().expect("client");
    measured_sized(&mut client, &mut server, 1_000, touch); // warm-up, also collected
    println!("{}", measured_sized(&mut client, &mut server, n, touch));
}

#[inline(never)]
fn measured_topic(
    ping: &mut Publisher<Bytes16>,
    pong_rx: &mut Subscriber<Bytes16>,
    pong: &mut Publisher<Bytes16>,
    ping_rx: &mut Subscriber<Bytes16>,
    n: u64,
) -> u64 {
    let mut sum = 0u64;
    for i in 0..n {
        let mut m = Bytes16 { data: [0; 16] };
        m.data[..8].copy_from_slice(&i.to_le_bytes());
        ping.send(m).expect("ping");
        let got = *pong_rx.try_recv().expect("ping waiting");
        pong.send(got).expect("pong");
        sum += u64::from(ping_rx.try_recv().expect("pong waiting").data[0]);
    }
    sum
}

/// Mean time per step in ns, each step's clock-read overhead subtracted.
fn report(names: &[&str], ticks: &[u64], n: u64) {
    let overhead = Clock::read_overhead_ns();
    for (name, &t) in names.iter().zip(ticks) {
        let ns = Clock::elapsed_ns(0, t) as f64 / n as f64 - overhead;
        println!("{name:<28} {ns:>7.1} ns");
    }
    println!("(clock read overhead subtracted per step: {overhead:.1} ns)");
}

fn call_steps(n: u64) {
    let service = service::<Bytes64>();
    let mut server = service.server().expect("server");
    let mut client = service.client().expect("client");
    measured_call(&mut client, &mut server, 10_000);
    let mut ticks = [0u64; 6];
    let mut sum = 0u64;
    for i in 0..n {
        let t0 = Clock::now();
        let mut call = client
            .call_async_with(0, |r, _| r.data[..8].copy_from_slice(&i.to_le_bytes()))
            .expect("call");
        let t1 = Clock::now();
        assert!(call.try_result().is_none(), "no response before the reply");
        let t2 = Clock::now();
        assert!(call.try_result().is_none(), "no response before the reply");
        let t2b = Clock::now();
        let request = server.try_recv().expect("request waiting");
        let seq = request.data[0];
        let t3 = Clock::now();
        request
            .reply_with(0, |r, _| r.data[0] = seq)
            .expect("reply");
        let t4 = Clock::now();
        let response = call.try_result().expect("settled").expect("response");
        let t5 = Clock::now();
        sum += u64::from(response.data[0]);
        for (total, d) in
            ticks
                .iter_mut()
                .zip([t1 - t0, t2 - t1, t2b - t2, t3 - t2b, t4 - t3, t5 - t4])
        {
            *total += d;
        }
    }
    report(
        &[
            "call_async_with",
            "try_result (nothing yet)",
            "try_result (nothing, again)",
            "Server::try_recv",
            "reply_with",
            "try_result (the response)",
        ],
        &ticks,
        n,
    );
    std::hint::black_box(sum);
}

fn topic_steps(n: u64) {
    let (a, b) = (topic("ping"), topic("pong"));
    let mut pong_rx = a.subscriber_with(WaitMode::BusyPoll).expect("subscriber");
    let mut ping_rx = b.subscriber_with(WaitMode::BusyPoll).expect("subscriber");
    let mut ping = a.publisher().expect("publisher");
    let mut pong = b.publisher().expect("publisher");
    measured_topic(&mut ping, &mut pong_rx, &mut pong, &mut ping_rx, 10_000);
    let mut ticks = [0u64; 4];
    let mut sum = 0u64;
    for i in 0..n {
        let mut m = Bytes16 { data: [0; 16] };
        m.data[..8].copy_from_slice(&i.to_le_bytes());
        let t0 = Clock::now();
        ping.send(m).expect("ping");
        let t1 = Clock::now();
        let got = *pong_rx.try_recv().expect("ping waiting");
        let t2 = Clock::now();
        pong.send(got).expect("pong");
        let t3 = Clock::now();
        let back = ping_rx.try_recv().expect("pong waiting");
        let t4 = Clock::now();
        sum += u64::from(back.data[0]);
        for (total, d) in ticks.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3]) {
            *total += d;
        }
    }
    report(
        &["ping send", "pong try_recv", "pong send", "ping try_recv"],
        &ticks,
        n,
    );
    std::hint::black_box(sum);
}

fn topic(name: &str) -> Topic<Bytes16> {
    Topic::<Bytes16>::builder(name)
        .namespace(&namespace())
        .depth(16)
        .open()
        .expect("opening the topic")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("call");
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    match mode {
        "call" => {
            let service = service::<Bytes64>();
            let mut server = service.server().expect("server");
            let mut client = service.client().expect("client");
            measured_call(&mut client, &mut server, 1_000); // warm-up, also collected: ~1 %
            println!("{}", measured_call(&mut client, &mut server, n));
        }
        "steps" => {
            Clock::calibrate();
            call_steps(n);
        }
        "topic-steps" => {
            Clock::calibrate();
            topic_steps(n);
        }
        "topic" => {
            let (a, b) = (topic("ping"), topic("pong"));
            let mut pong_rx = a.subscriber_with(WaitMode::BusyPoll).expect("subscriber");
            let mut ping_rx = b.subscriber_with(WaitMode::BusyPoll).expect("subscriber");
            let mut ping = a.publisher().expect("publisher");
            let mut pong = b.publisher().expect("publisher");
            measured_topic(&mut ping, &mut pong_rx, &mut pong, &mut ping_rx, 1_000);
            println!(
                "{}",
                measured_topic(&mut ping, &mut pong_rx, &mut pong, &mut ping_rx, n)
            );
        }
        "sized" => {
            let size: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(4096);
            let touch = Touch::parse(args.get(4).map(String::as_str).unwrap_or("full"))
                .expect("full | touch");
            match size {
                64 => sized::<Bytes64>(n, touch),
                512 => sized::<Bytes512>(n, touch),
                1024 => sized::<Bytes1024>(n, touch),
                2048 => sized::<Bytes2048>(n, touch),
                4096 => sized::<Bytes4096>(n, touch),
                other => {
                    eprintln!("size {other}: 64 | 512 | 1024 | 2048 | 4096");
                    std::process::exit(2);
                }
            }
        }
        other => {
            eprintln!("unknown mode {other}: call | topic | sized | steps | topic-steps");
            std::process::exit(2);
        }
    }
}

//! What a loaned message costs through a pool chunk against the ring slot, in
//! instructions: run under callgrind (instruction counts are stable on shared
//! VMs, unlike time) with collection limited to the measured loop, e.g.
//!
//! ```text
//! cargo build --release -p horus-bench --example chunk_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_*' \
//!     target/release/examples/chunk_cost 1480 100000
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Per message, one thread: loan, write the first and last byte, send,
//! `try_recv`, read the first and last byte, drop the sample (the `touch`
//! work, so that what is counted is the transport's fixed cost, not the
//! payload's). Sizes: 256 (inline in the ring slot), 1024, 1480, 2048 (pool
//! chunks). The namespace is unique per run and the topics are gone when it exits.

use horus::prelude::*;
use horus_bench_wire::{Bytes1024, Bytes1480, Bytes2048, Bytes256};

macro_rules! measured {
    ($f:ident, $t:ty) => {
        #[inline(never)]
        fn $f(tx: &mut Publisher<$t>, rx: &mut Subscriber<$t>, n: u64) -> u64 {
            let mut sum = 0u64;
            for i in 0..n {
                let mut s = tx.loan().expect("loan");
                let last = s.data.len() - 1;
                s.data[0] = i as u8;
                s.data[last] = 1;
                s.send().expect("send");
                let r = rx.try_recv().expect("loopback message");
                sum += u64::from(r.data[0]) + u64::from(r.data[last]);
            }
            sum
        }
    };
}

measured!(measured_256, Bytes256);
measured!(measured_1024, Bytes1024);
measured!(measured_1480, Bytes1480);
measured!(measured_2048, Bytes2048);

fn run<T: horus::Message>(n: u64, f: fn(&mut Publisher<T>, &mut Subscriber<T>, u64) -> u64) {
    let topic = Topic::<T>::builder("chunk-cost")
        .namespace(&format!("chunk-cost-{}", std::process::id()))
        .depth(16)
        .overflow(Overflow::Block {
            timeout: std::time::Duration::from_secs(10),
        })
        .open()
        .expect("opening the topic");
    let mut tx = topic.publisher().expect("publisher");
    let mut rx = topic
        .subscriber_with(WaitMode::BusyPoll)
        .expect("subscriber");
    // Warm-up outside the collected function's first calls.
    let warm = f(&mut tx, &mut rx, 1000);
    let sum = f(&mut tx, &mut rx, n);
    println!(
        "{n} messages of {} B, checksum {}",
        std::mem::size_of::<T>(),
        warm + sum
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1480);
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    match size {
        256 => run::<Bytes256>(n, measured_256),
        1024 => run::<Bytes1024>(n, measured_1024),
        1480 => run::<Bytes1480>(n, measured_1480),
        2048 => run::<Bytes2048>(n, measured_2048),
        _ => panic!("size {size}: one of 256, 1024, 1480, 2048"),
    }
}

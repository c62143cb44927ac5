//! What a 16 B `CmdVel` costs between endpoints of one process, in instructions:
//! run under callgrind (instruction counts are stable on shared VMs, unlike time)
//! with collection limited to the measured loops, e.g.
//!
//! ```text
//! cargo build --release -p horus-bench --example in_process_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_*' \
//!     target/release/examples/in_process_cost same 100000
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Modes: `same` (send + `try_recv` in one thread, per message), `same-send`
//! (send-only: bursts of 16 sends, the drain untimed and uncollected),
//! `cross-futex` (ping-pong between two threads that wait in `recv`: each
//! message wakes a parked thread; count its futex calls with `strace -f -c`),
//! `std-queue` (the same loop as `same` through `std::sync::mpsc::sync_channel`:
//! what an in-process queue costs).
//! The namespace is unique per run and the topics are gone when it exits.

use horus::prelude::*;

const BURST: u64 = 16;

fn topic(name: &str, depth: u32) -> Topic<CmdVel> {
    Topic::<CmdVel>::builder(name)
        .namespace(&format!("in-process-cost-{}", std::process::id()))
        .depth(depth)
        .overflow(Overflow::Block {
            timeout: std::time::Duration::from_secs(10),
        })
        .open()
        .expect("opening the topic")
}

#[inline(never)]
fn measured_same_thread(tx: &mut Publisher<CmdVel>, rx: &mut Subscriber<CmdVel>, n: u64) -> f32 {
    let mut sum = 0.0;
    for i in 0..n {
        tx.send(CmdVel::new(i, 1.0, 0.5)).expect("send");
        sum += rx.try_recv().expect("loopback message").linear;
    }
    sum
}

/// The in-process queue a same-process path should cost: `std::sync::mpsc`'s
/// bounded channel (crossbeam's array queue inside), send + `try_recv`.
#[inline(never)]
fn measured_std_queue(
    tx: &std::sync::mpsc::SyncSender<CmdVel>,
    rx: &std::sync::mpsc::Receiver<CmdVel>,
    n: u64,
) -> f32 {
    let mut sum = 0.0;
    for i in 0..n {
        tx.send(CmdVel::new(i, 1.0, 0.5)).expect("send");
        sum += rx.try_recv().expect("queued message").linear;
    }
    sum
}

#[inline(never)]
fn measured_send_burst(tx: &mut Publisher<CmdVel>, first: u64) {
    for i in first..first + BURST {
        tx.send(CmdVel::new(i, 1.0, 0.5)).expect("send");
    }
}

fn drain(rx: &mut Subscriber<CmdVel>) -> f32 {
    (0..BURST)
        .map(|_| rx.try_recv().expect("burst message").linear)
        .sum()
}

#[inline(never)]
fn measured_cross_futex(tx: &mut Publisher<CmdVel>, ack: &mut Subscriber<CmdVel>, n: u64) {
    for i in 0..n {
        tx.send(CmdVel::new(i, 1.0, 0.5)).expect("send");
        let a = ack.recv();
        assert_eq!(a.stamp_ns, i, "ack out of order");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("same");
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    match mode {
        "same" => {
            let t = topic("data", 16);
            let mut rx = t.subscriber_with(WaitMode::BusyPoll).expect("subscriber");
            let mut tx = t.publisher().expect("publisher");
            measured_same_thread(&mut tx, &mut rx, 1_000); // warm-up, also collected: ~1 %
            println!("{}", measured_same_thread(&mut tx, &mut rx, n));
        }
        "same-send" => {
            let t = topic("data", BURST as u32);
            let mut rx = t.subscriber_with(WaitMode::BusyPoll).expect("subscriber");
            let mut tx = t.publisher().expect("publisher");
            let mut sum = 0.0;
            for b in 0..n / BURST {
                measured_send_burst(&mut tx, b * BURST);
                sum += drain(&mut rx);
            }
            println!("{sum}");
        }
        "std-queue" => {
            let (tx, rx) = std::sync::mpsc::sync_channel(16);
            measured_std_queue(&tx, &rx, 1_000);
            println!("{}", measured_std_queue(&tx, &rx, n));
        }
        "cross-futex" => {
            let (data, acks) = (topic("data", 16), topic("ack", 16));
            let mut rx = data.subscriber().expect("subscriber");
            rx.set_spin(0);
            let mut ack_rx = acks.subscriber().expect("subscriber");
            ack_rx.set_spin(0);
            let mut tx = data.publisher().expect("publisher");
            let mut ack_tx = acks.publisher().expect("publisher");
            let echo = std::thread::spawn(move || {
                for _ in 0..n {
                    let m = rx.recv();
                    ack_tx.send(*m).expect("ack");
                }
            });
            measured_cross_futex(&mut tx, &mut ack_rx, n);
            echo.join().expect("echo thread");
        }
        other => {
            eprintln!("unknown mode {other}: same | same-send | std-queue | cross-futex");
            std::process::exit(2);
        }
    }
}

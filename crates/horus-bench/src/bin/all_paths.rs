//! `all_paths`: the round trip of every route a horus message can take — same
//! thread, across threads and across processes, 1:1, N:1, 1:N and N:N — and,
//! beside it, the send-only cost of each (ns per `send`, publisher side only).
//!
//! ```text
//! cargo run --release -p horus-bench --bin all_paths -- --quick --json /tmp/ap.json
//! ```

use std::process::ExitCode;

use horus_bench::payload::Touch;
use horus_bench::pubsub::horus::Wait;
use horus_bench::robotics::Spec;
use horus_bench::rows::PathRow;
use horus_bench::suite::{self, number, Common, Run, COMMON_USAGE};
use horus_bench::tables;
use horus_bench::topology::{self, Placement, Shape};

fn main() -> ExitCode {
    suite::main(run)
}

/// Every route: placement, M, K, wait.
fn routes(n: usize) -> Vec<(Placement, usize, usize, Wait)> {
    let mut v = vec![(Placement::SameThread, 1, 1, Wait::Poll)];
    for placement in [Placement::Threads, Placement::Processes] {
        v.push((placement, 1, 1, Wait::Poll));
        v.push((placement, 1, 1, Wait::Futex));
        v.push((placement, n, 1, Wait::Futex));
        v.push((placement, 1, n, Wait::Futex));
        v.push((placement, n, n, Wait::Futex));
    }
    v
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let (mut bytes, mut n) = (16usize, 4usize);
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--size" => {
                bytes = number(&value()?)?;
                true
            }
            "--n" => {
                n = number(&value()?)?;
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "all_paths — round trip of every horus route\n\n\
             USAGE: all_paths [OPTIONS]\n\n{COMMON_USAGE}  \
             --size N           payload bytes (default 16, a CmdVel)\n  \
             --n N              publishers/subscribers of the N:1, 1:N, N:N routes (default 4)\n"
        );
        return Ok(ExitCode::SUCCESS);
    };
    anyhow::ensure!((2..=16).contains(&n), "--n must be 2..=16");
    let iters = common.iters(10_000, 300);
    let warmup = common.warmup(1_000, 30);
    let bursts = common.iters(2_000, 100);
    let warmup_bursts = common.warmup(100, 10);
    let [a, b] = common.cpus;
    let mut method = vec![
        format!(
            "RTT = a publisher sends a {bytes}-byte message; every subscriber receives it, reads \
             it and acks with 16 bytes on the publisher's ack topic; the sample ends when the \
             publisher holds every ack. Publishers run closed loops concurrently; their samples \
             are pooled ({iters} per route in total, {warmup} warm-up)."
        ),
        "same thread: publisher, subscriber and the ack topic in one thread (send, try_recv, \
         ack, try_recv): a loopback that crosses no thread or process, shown for reference, \
         never an IPC figure"
            .to_owned(),
        format!(
            "1:1 routes: pinned (publisher CPU {a}, subscriber CPU {b}); busy-poll (try_recv \
             spin) or futex (blocking recv, no spinning). N:1, 1:N, N:N (N = {n}): unpinned, \
             futex — more spinning endpoints than this machine has CPUs would measure the \
             scheduler, not horus"
        ),
        format!(
            "send-only (as the reference report labels it; a cost, never a latency): the same \
             route, each publisher times bursts of {} loan + write + send calls and divides by \
             the burst ({bursts} timed bursts per route in total, {warmup_bursts} warm-up); \
             every subscriber receives and checks every message and acknowledges each burst, \
             untimed, before the next. The data ring has room for every publisher's whole \
             burst, so a timed send never waits for room (Overflow::Block never blocks) and \
             nothing is dropped; it still includes waking a futex-waiting subscriber",
            topology::send_only_burst(Spec::Bytes(bytes))
        ),
        "cross-thread: one thread per endpoint in one process; cross-process: one process per \
         endpoint (re-exec of this binary), so N:N is 2N processes"
            .to_owned(),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<PathRow>::start("all_paths", &common, method);
    for (placement, pubs, subs, wait) in routes(n) {
        let pinned = pubs * subs == 1 && placement != Placement::SameThread;
        let shape = Shape {
            pubs,
            subs,
            placement,
            wait,
            cpus: (pubs * subs == 1).then_some(common.cpus),
        };
        let route = format!("{} {}", placement.label(), shape.label());
        let what = format!("{route} {}", wait.label());
        let per_pub = (iters / pubs as u64).max(1);
        let per_pub_bursts = (bursts / pubs as u64).max(1);
        if let Some((rtt, send_only)) = run.measure(&what, || {
            let rtt =
                topology::round_trips(Spec::Bytes(bytes), shape, Touch::Full, warmup, per_pub)?;
            let send_only = topology::send_only(
                Spec::Bytes(bytes),
                shape,
                Touch::Full,
                warmup_bursts,
                per_pub_bursts,
            )?;
            Ok((rtt, send_only))
        }) {
            run.push(PathRow {
                route,
                placement,
                pubs,
                subs,
                wait,
                pinned: pinned || placement == Placement::SameThread,
                size: bytes,
                rtt,
                send_only: Some(send_only),
            });
        }
    }
    let table = tables::paths(run.rows()).to_text();
    run.finish(&table)
}

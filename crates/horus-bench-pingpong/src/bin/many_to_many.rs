//! `many_to_many`: the reference report's N:N table measured honestly — 4 publisher
//! and 4 subscriber processes on one topic, busy-polling, horus beside iceoryx2
//! with the same topology, in interleaved rounds (see `horus_bench::many_to_many`).
//!
//! ```text
//! cargo run --release -p horus-bench-pingpong --bin many_to_many -- --quick --json /tmp/nn.json
//! cargo run --release -p horus-bench-pingpong --bin many_to_many -- --rounds 5 --pin-cpus 0,2,4,6,8,10,12,14
//! ```

use std::process::ExitCode;

use horus_bench::interleaved::MIN_ROUNDS_FOR_VERDICT;
use horus_bench::many_to_many::{self, ManyRow, N};
use horus_bench::payload::Touch;
use horus_bench::pubsub::horus::Wait;
use horus_bench::robotics::{MsgKind, Spec};
use horus_bench::suite::{self, list, number, Common, Run, COMMON_USAGE};
use horus_bench::tables;
use horus_bench::topology::{self, Placement, Shape};
use horus_bench_peer_iceoryx2::many as iceoryx2_many;

/// The reference report's N:N messages (its "Latency by Message Size" table).
const MESSAGES: [MsgKind; 5] = [
    MsgKind::CmdVel,
    MsgKind::BatteryState,
    MsgKind::Imu,
    MsgKind::Odometry,
    MsgKind::LaserScan,
];
/// `--quick` (the smoke test): the smallest and the largest of them.
const QUICK_MESSAGES: [MsgKind; 2] = [MsgKind::CmdVel, MsgKind::LaserScan];
const ROUNDS: usize = 5;
const QUICK_ROUNDS: usize = 2;
const SYSTEMS: [&str; 2] = ["horus", "iceoryx2"];

fn main() -> ExitCode {
    suite::main_with(&[horus_bench_peer_iceoryx2::pubsub::CHILD_ROLES], run)
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let mut only: Option<Vec<MsgKind>> = None;
    let mut pin: Option<Vec<usize>> = None;
    let mut no_pin = false;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--rounds" => {
                rounds = Some(number::<usize>(&value()?)?);
                true
            }
            "--messages" => {
                only = Some(
                    value()?
                        .split(',')
                        .map(MsgKind::parse)
                        .collect::<anyhow::Result<_>>()?,
                );
                true
            }
            "--pin-cpus" => {
                pin = Some(list(&value()?)?);
                true
            }
            "--no-pin" => {
                no_pin = true;
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "many_to_many — {N} publisher and {N} subscriber processes on one topic, busy-poll, \
             horus and iceoryx2 back to back in R rounds; the per-round ratio horus/iceoryx2 \
             of median RTTs, its median and range\n\n\
             USAGE: many_to_many [OPTIONS]\n\n{COMMON_USAGE}  \
             --rounds R         rounds (default {ROUNDS}; --quick: {QUICK_ROUNDS}); verdicts need >= {MIN_ROUNDS_FOR_VERDICT}\n  \
             --messages A,B     message types (default CmdVel,BatteryState,Imu,Odometry,LaserScan; \
             --quick: CmdVel,LaserScan)\n  \
             --pin-cpus C,...   the {} CPUs of the endpoints, publishers first (default: {} \
             usable CPUs, distinct cores first, where there are that many; else unpinned)\n  \
             --no-pin           leave every endpoint to the scheduler\n\
             (--cpus is not used: it names the two sides of a pinned pair)\n",
            2 * N,
            2 * N
        );
        return Ok(ExitCode::SUCCESS);
    };
    let rounds = rounds.unwrap_or(if common.quick { QUICK_ROUNDS } else { ROUNDS });
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let messages = only.unwrap_or_else(|| {
        if common.quick {
            &QUICK_MESSAGES[..]
        } else {
            &MESSAGES[..]
        }
        .to_vec()
    });
    let cpus: Option<Vec<usize>> = match (no_pin, pin) {
        (true, Some(_)) => anyhow::bail!("--pin-cpus and --no-pin exclude each other"),
        (true, None) => None,
        (false, Some(p)) => {
            let mut d = p.clone();
            d.sort_unstable();
            d.dedup();
            anyhow::ensure!(
                p.len() == 2 * N && d.len() == 2 * N,
                "--pin-cpus needs {} distinct CPUs, publishers first",
                2 * N
            );
            let allowed = many_to_many::allowed_cpus();
            if let Some(c) = p.iter().find(|c| !allowed.contains(c)) {
                anyhow::bail!("--pin-cpus: CPU {c} is not one this process may use ({allowed:?})");
            }
            Some(p)
        }
        (false, None) => many_to_many::pick_cpus(2 * N),
    };
    // Unpinned on a small machine a round trip waits for the scheduler's time slices
    // (milliseconds), so the full run takes fewer of them there.
    let iters = common.iters(if cpus.is_some() { 2_000 } else { 200 }, 10);
    let warmup = common.warmup(if cpus.is_some() { 200 } else { 20 }, 2);
    let usable = many_to_many::allowed_cpus().len();
    let placement = match &cpus {
        Some(c) => format!(
            "each endpoint pinned to a CPU of its own (publishers on {:?}, subscribers on {:?})",
            &c[..N],
            &c[N..]
        ),
        None if no_pin => "unpinned (--no-pin)".to_owned(),
        None => format!(
            "UNPINNED: this process may use {usable} CPUs, fewer than the {} endpoints, so all \
             of them are left to the scheduler and {} busy-polling processes share {usable} \
             CPUs — the figures measure the scheduler as much as the middleware",
            2 * N,
            2 * N
        ),
    };
    let mut method = vec![
        format!(
            "topology: {N} publisher processes and {N} subscriber processes on one topic \
             (iceoryx2: one publish-subscribe service), every endpoint busy-polling; {placement}"
        ),
        format!(
            "RTT: each publisher, concurrently with the others and in a closed loop, loans \
             message seq, writes every byte and sends it; every subscriber receives it, reads \
             every byte, checks it is that publisher's next message and acks it (16 B) on the \
             publisher's ack topic; the sample ends when the publisher holds all {N} acks. \
             {warmup} warm-up + {iters} timed round trips per publisher, the {N} publishers' \
             samples pooled"
        ),
        "the reference report's N:N figures are send-only (the publish call alone); a \
         send-only time says nothing about delivery and is not reported here"
            .to_owned(),
        format!(
            "interleaved rounds: {rounds} rounds; in each round, for each message, horus and \
             iceoryx2 are measured back to back (horus first in even rounds, iceoryx2 first in \
             odd rounds); per round, ratio = horus median RTT / iceoryx2 median RTT; reported: \
             median and min–max of the per-round ratios; a verdict only from at least \
             {MIN_ROUNDS_FOR_VERDICT} rounds"
        ),
        format!(
            "horus: topic data with the robotics message type (fixed layout; up to 512 B inline \
             in the ring slot, Odometry and LaserScan in a pool chunk), depth 16, Overflow::Block \
             (lossless), max_publishers {N}, max_subscribers {N}; acks on topics ack/<i> \
             (Bytes16); loan, busy-poll try_recv (WaitMode::BusyPoll); each data send must reach \
             all {N} subscribers"
        ),
        format!(
            "iceoryx2 0.10 (crate): [u8] payloads of the message's size; {}",
            iceoryx2_many::SETTINGS
        ),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<ManyRow>::start("many_to_many", &common, method);
    let shape = Shape {
        pubs: N,
        subs: N,
        placement: Placement::Processes,
        wait: Wait::Poll,
        cpus: None,
    };
    for round in 0..rounds {
        eprintln!("round {}/{rounds}:", round + 1);
        for &kind in &messages {
            let order: Vec<&str> = if round % 2 == 0 {
                SYSTEMS.to_vec()
            } else {
                SYSTEMS.iter().rev().copied().collect()
            };
            for (k, system) in order.into_iter().enumerate() {
                let bytes = kind.wire_bytes();
                let what = format!("round {round} {system} {} {N}:{N}", kind.name());
                let pin = cpus.as_deref();
                let measured = run.measure(&what, || match system {
                    "horus" => topology::round_trips_pinned(
                        Spec::Msg(kind),
                        shape,
                        Touch::Full,
                        warmup,
                        iters,
                        pin,
                    ),
                    _ => iceoryx2_many::round_trips(N, N, bytes, Touch::Full, warmup, iters, pin),
                });
                if let Some(rtt) = measured {
                    run.push(ManyRow {
                        round,
                        order: k,
                        system: system.to_owned(),
                        message: kind.name().to_owned(),
                        size: bytes,
                        pubs: N,
                        subs: N,
                        wait: "busy-poll".to_owned(),
                        pinned: cpus.is_some(),
                        cpus: cpus.clone().unwrap_or_default(),
                        rtt,
                    });
                }
            }
        }
    }
    let comparisons = many_to_many::compare(run.rows());
    let text = format!(
        "per-round ratio horus / iceoryx2 of median {N}:{N} RTT over {rounds} rounds\n{}",
        tables::many_to_many(
            &comparisons,
            &many_to_many::placement(run.rows()),
            cpus.is_some(),
        )
        .to_text()
    );
    run.finish(&text)
}

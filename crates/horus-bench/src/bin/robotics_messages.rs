//! `robotics_messages`: the standard robotics messages across processes — round
//! trips 1:1 and 4:4, lossless throughput, and headroom against typical rates.
//!
//! ```text
//! cargo run --release -p horus-bench --bin robotics_messages -- --quick --json /tmp/rm.json
//! ```

use std::process::ExitCode;

use horus_bench::payload::Touch;
use horus_bench::pubsub::horus::Wait;
use horus_bench::robotics::{MsgKind, Spec};
use horus_bench::rows::RoboticsRow;
use horus_bench::suite::{self, Common, Run, COMMON_USAGE};
use horus_bench::tables;
use horus_bench::topology::{self, Placement, Shape};

const N: usize = 4;

fn main() -> ExitCode {
    suite::main(run)
}

/// Messages per publisher in a throughput burst: up to 20,000, fewer for large
/// messages (about 1 GiB written per burst), at least 500.
fn burst_count(common: &Common, bytes: usize) -> u64 {
    let (cap, budget) = if common.quick {
        (2_000, 64 << 20)
    } else {
        (20_000, 1 << 30)
    };
    (budget / bytes.max(1)).clamp(if common.quick { 100 } else { 500 }, cap) as u64
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut only: Option<Vec<MsgKind>> = None;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--messages" => {
                only = Some(
                    value()?
                        .split(',')
                        .map(MsgKind::parse)
                        .collect::<anyhow::Result<_>>()?,
                );
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "robotics_messages — standard robotics messages between processes\n\n\
             USAGE: robotics_messages [OPTIONS]\n\n{COMMON_USAGE}  \
             --messages A,B     only these types (e.g. CmdVel,Imu,pointcloud10k)\n"
        );
        return Ok(ExitCode::SUCCESS);
    };
    let iters = common.iters(10_000, 300);
    let warmup = common.warmup(1_000, 30);
    let [a, b] = common.cpus;
    let mut method = vec![
        format!(
            "1:1 RTT: cross-process, publisher pinned to CPU {a}, subscriber process to CPU {b}, \
             busy-poll (try_recv spin); the publisher loans the message, writes every byte \
             (PointCloud/Image: header + every point/pixel) and sends; the subscriber reads every \
             byte, checks the sequence number and answers with a 16-byte ack; the sample ends when \
             the ack is back. {warmup} warm-up + {iters} timed round trips."
        ),
        format!(
            "4:4 RTT: {N} publisher processes and {N} subscriber processes on one topic, unpinned, \
             blocking futex recv (8 busy-polling processes on this machine would measure the \
             scheduler); each publisher in a closed loop: the sample ends when all {N} subscribers \
             have read the message and acked it; {} round trips per publisher, pooled.",
            iters / N as u64
        ),
        "throughput: one-way lossless bursts (Overflow::Block; every subscriber checks every \
         sequence number, no gap, no overrun); msg/s = measured messages / (first measured send -> \
         last subscriber's last receive), CLOCK_MONOTONIC across processes; 4:4 counts messages \
         published (each delivered to 4 subscribers). Up to 20,000 messages per publisher, fewer \
         for large messages (~1 GiB per burst)."
            .to_owned(),
        "headroom = 1:1 throughput / the message's typical rate (CmdVel 1 kHz, BatteryState 1 Hz, \
         Imu 100 Hz, Odometry 50 Hz, LaserScan 10 Hz, PointCloud 30 Hz, Image 30 Hz)"
            .to_owned(),
        "messages <= 512 B travel inline in the ring slot (the loan is staged and copied in on \
         send); Odometry, LaserScan, PointCloud and Image travel in a pool chunk, written and \
         read in place (zero copy)"
            .to_owned(),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<RoboticsRow>::start("robotics_messages", &common, method);

    let kinds = only.unwrap_or_else(|| MsgKind::ALL.to_vec());
    for kind in kinds {
        let spec = Spec::Msg(kind);
        let count = burst_count(&common, kind.wire_bytes());
        let one = Shape {
            pubs: 1,
            subs: 1,
            placement: Placement::Processes,
            wait: Wait::Poll,
            cpus: Some(common.cpus),
        };
        let nn = Shape {
            pubs: N,
            subs: N,
            placement: Placement::Processes,
            wait: Wait::Futex,
            cpus: None,
        };
        let name = kind.name();
        eprintln!("{name} ({} B):", kind.wire_bytes());
        let rtt_1to1 = run.measure(&format!("{name} 1:1 rtt"), || {
            topology::round_trips(spec, one, Touch::Full, warmup, iters)
        });
        let rtt_nn = run.measure(&format!("{name} {N}:{N} rtt"), || {
            topology::round_trips(spec, nn, Touch::Full, warmup / N as u64, iters / N as u64)
        });
        let throughput_1to1 = run.measure(&format!("{name} 1:1 throughput"), || {
            topology::burst(spec, one, Touch::Full, warmup, count)
        });
        let throughput_nn = run.measure(&format!("{name} {N}:{N} throughput"), || {
            topology::burst(spec, nn, Touch::Full, warmup / N as u64, count / N as u64)
        });
        run.push(RoboticsRow {
            kind,
            message: name.to_owned(),
            wire_bytes: kind.wire_bytes(),
            typical_hz: kind.typical_hz(),
            rtt_1to1,
            rtt_nn,
            throughput_1to1,
            throughput_nn,
            headroom: throughput_1to1.map(|t| t.msgs_per_sec / kind.typical_hz()),
        });
    }
    let table = tables::robotics(run.rows()).to_text();
    run.finish(&table)
}

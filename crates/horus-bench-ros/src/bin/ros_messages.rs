//! `ros_messages`: ROS 2 messages on horus topics (`Topic<Ros<M>>`) against the same
//! bytes through the fixed-layout chunk path, in interleaved rounds, pinned and
//! unpinned; and a LaserScan built in a loan against a memcpy of its bytes.
//!
//! ```text
//! cargo run --release -p horus-bench-ros --bin ros_messages -- --quick --json /tmp/ros.json
//! cargo run --release -p horus-bench-ros --bin ros_messages -- --rounds 5 --messages Cloud1MiB
//! ```

use std::process::ExitCode;

use horus_bench::harness::{Config, Samples};
use horus_bench::payload::Touch;
use horus_bench::suite::{self, number, Common, Run, COMMON_USAGE};
use horus_bench_ros::ros_build::{self, BuildMethod, BATCH};
use horus_bench_ros::ros_kinds::RosKind;
use horus_bench_ros::ros_peer::{self, Path};
use horus_bench_ros::ros_rows::{self, BuildRow, RosRow, RttRow};
use horus_bench_ros::ros_tables as tables;

const ROUNDS: usize = 5;
const QUICK_ROUNDS: usize = 1;
/// Blocks each path's round trips are split into per round (interleaved ABBA…).
const BLOCKS: usize = 4;

fn main() -> ExitCode {
    suite::main_with(&[ros_peer::CHILD_ROLES], run)
}

/// Timed round trips for a message of `bytes`: fewer for large ones (~1 s per
/// measurement at a few GB/s), at least 300.
fn iterations(common: &Common, bytes: usize) -> u64 {
    if common.quick {
        return common.iters(5_000, 20);
    }
    common
        .iters(5_000, 20)
        .min(((2u64 << 30) / bytes as u64).max(300))
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let mut only: Option<Vec<RosKind>> = None;
    let mut pinned_only = false;
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
                        .map(RosKind::parse)
                        .collect::<anyhow::Result<_>>()?,
                );
                true
            }
            "--pinned-only" => {
                pinned_only = true;
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "ros_messages — ROS 2 messages (Topic<Ros<M>>) against the same bytes through the \
             fixed-layout chunk path, interleaved rounds; LaserScan built in a loan vs memcpy\n\n\
             USAGE: ros_messages [OPTIONS]\n\n{COMMON_USAGE}  \
             --rounds R         rounds (default {ROUNDS}; --quick: {QUICK_ROUNDS})\n  \
             --messages A,B     only these (e.g. Cloud1MiB,Scan1080; names as in the table)\n  \
             --pinned-only      skip the unpinned round trips\n"
        );
        return Ok(ExitCode::SUCCESS);
    };
    let rounds = rounds.unwrap_or(if common.quick { QUICK_ROUNDS } else { ROUNDS });
    let blocks = if common.quick { 1 } else { BLOCKS };
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let kinds = only.unwrap_or_else(|| RosKind::ALL.to_vec());
    let pinnings: &[bool] = if pinned_only || common.quick {
        &[true]
    } else {
        &[true, false]
    };
    let warmup = common.warmup(200, 5);
    let build_cfg = Config {
        warmup: common.warmup(2_000, 20),
        iterations: common.iters(20_000, 50),
        touch: Touch::Full,
        one_way_messages: 0,
        cpus: common.cpus,
    };
    let [a, b] = common.cpus;
    let mut method = vec![
        format!(
            "interleaved rounds: {rounds}; in each round, for each message and pinning, the ROS \
             path and the fixed-layout path of the same bytes are measured in {blocks} blocks \
             each, alternating block by block (ROS, fixed, fixed, ROS, …; fixed first in odd \
             rounds), every block with a fresh echo process; a path's median is over all its \
             blocks' round trips; per round, ratio = ROS median RTT ÷ fixed median RTT; reported: the range of each path's per-round medians and the \
             median and min–max of the ratios; a target is met only if every round's ratio is \
             within it (and at least 5 rounds ran)"
        ),
        format!(
            "round trip: A pinned to CPU {a}, B (a separate process) to CPU {b} (and a second \
             pass with neither pinned); {warmup} warm-up (per block) + up to 5,000 timed round trips \
             per path and round (fewer for large messages: ~2 GiB, at least 300); RTT = A's send to A \
             having read the answer"
        ),
        "ROS path: Topic<Ros<M>> (generated horus_ros_msgs types). A builds message seq in the \
         loan — Image and PointCloud2 with publish_with, fields by the CDR writer and every \
         pixel/point byte produced in place (CdrWriter::write_slice_with); LaserScan, JointState \
         and TFMessage from an owned message with publish (encoded into the loan in one pass); \
         B checks the message with view() and answers with a copy of its CDR body \
         (publish_with); A reads every byte of the answer through view() (data checksum, every \
         string byte, every number) and checks the sequence number in the stamp/data"
            .to_owned(),
        "fixed path: a fixed-layout message (8-byte header) whose tail has as many bytes as the \
         CDR body, through the chunk path as today: A loans it and writes every byte in place, \
         B copies the received bytes into its loaned answer, A reads every byte (checksum)"
            .to_owned(),
        format!("both: {}", ros_peer::SETTINGS),
        format!(
            "loan build: one process pinned to CPU {a}; the same publisher loans a chunk of the \
             body's size for every method, the body is written whole and the loan dropped \
             unsent; {} warm-up + {} timed batches of {BATCH} messages per method, the methods \
             interleaved batch by batch (one batch of each in turn, the order rotating); every \
             source of a large copy (the memcpy's buffer, the scan's two arrays) reallocated \
             until it does not sit just below its destination modulo 4 KiB (4K aliasing: a \
             4,320-byte copy measured 2.5-30x slower there, which decided whole rounds)",
            build_cfg.warmup, build_cfg.iterations
        ),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<RosRow>::start("ros_messages", &common, method);

    for round in 0..rounds {
        eprintln!("round {}/{rounds}:", round + 1);
        for &kind in &kinds {
            let bytes = kind.body_len();
            let cfg = Config {
                warmup,
                iterations: iterations(&common, bytes),
                touch: Touch::Full,
                one_way_messages: 0,
                cpus: common.cpus,
            };
            for &pinned in pinnings {
                // Each path's round trips in `blocks` blocks, the paths alternating block
                // by block (ABBA…; which leads alternates between rounds), each block with
                // its own echo process: a disturbance or a lucky placement of the processes
                // lands on both paths, not on one whole measurement.
                let cpus = pinned.then_some(common.cpus);
                let block_cfg = Config {
                    iterations: cfg.iterations.div_ceil(blocks as u64),
                    ..cfg.clone()
                };
                let mut merged = [Samples::default(), Samples::default()];
                let mut failed = false;
                for block in 0..blocks {
                    let mut order = [Path::Ros, Path::Fixed];
                    if (round + block) % 2 == 1 {
                        order.reverse();
                    }
                    for path in order {
                        let what = format!(
                            "round {round} {} {} {} block {}/{blocks}",
                            kind.name(),
                            path.label(),
                            if pinned { "pinned" } else { "unpinned" },
                            block + 1
                        );
                        match run.measure(&what, || {
                            ros_peer::round_trip_samples(&block_cfg, kind, path, cpus)
                        }) {
                            Some(s) => {
                                let m = &mut merged[(path == Path::Fixed) as usize];
                                m.ns.extend(s.ns);
                                m.wall_ns += s.wall_ns;
                            }
                            None => failed = true,
                        }
                    }
                }
                if failed {
                    continue;
                }
                for (k, (path, samples)) in
                    [Path::Ros, Path::Fixed].into_iter().zip(merged).enumerate()
                {
                    let what = format!("round {round} {} {}", kind.name(), path.label());
                    if let Some(rtt) = run.measure(&what, || samples.summary()) {
                        run.push(RosRow::RoundTrip(RttRow {
                            round,
                            order: (k + round) % 2,
                            kind,
                            message: kind.name().to_owned(),
                            path,
                            body_bytes: bytes,
                            pinned,
                            rtt,
                        }));
                    }
                }
            }
        }
        // The loan-build comparison: LaserScan 1080 (the loan-build target), the methods
        // interleaved batch by batch.
        if kinds.contains(&RosKind::Scan1080) {
            let kind = RosKind::Scan1080;
            let what = format!("round {round} {} loan builds", kind.name());
            if let Some(all) = run.measure(&what, || {
                ros_build::loan_builds(&build_cfg, kind, round, Some(a))
            }) {
                let n = BuildMethod::ALL.len();
                for (k, (m, s)) in BuildMethod::ALL.into_iter().zip(all).enumerate() {
                    run.push(RosRow::LoanBuild(BuildRow {
                        round,
                        order: (k + n - round % n) % n,
                        kind,
                        method: m,
                        body_bytes: kind.body_len(),
                        batch: BATCH,
                        per_batch: s,
                    }));
                }
            }
        }
    }
    let rtt = ros_rows::compare_rtt(run.rows());
    let build = ros_rows::compare_build(run.rows());
    let mut text = format!(
        "ROS 2 messages vs the same bytes, fixed layout ({rounds} rounds)\n{}\n\
         LaserScan built in a loan vs memcpy ({rounds} rounds)\n{}\ntargets:\n",
        tables::ros_round_trips(&rtt).to_text(),
        tables::ros_loan_builds(&build).to_text()
    );
    for t in ros_rows::targets(&rtt, &build) {
        text.push_str(&format!("- {}\n", t.sentence().replace("**", "")));
    }
    run.finish(&text)
}

//! `scalability`: fan-out to 1–16 subscriber processes and 1–256 topics, each at
//! 1 kHz — one-way latency (average, max), CPU use of every process, loss.
//!
//! ```text
//! cargo run --release -p horus-bench --bin scalability -- --quick --json /tmp/sc.json
//! ```

use std::process::ExitCode;

use horus_bench::payload::Touch;
use horus_bench::rate;
use horus_bench::rows::{ScaleRow, ScaleSweep};
use horus_bench::suite::{self, list, number, Common, Run, COMMON_USAGE};
use horus_bench::tables;

const FANOUT: &[usize] = &[1, 2, 4, 8, 16];
const TOPICS: &[usize] = &[1, 4, 8, 64, 256];

fn main() -> ExitCode {
    suite::main(run)
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let (mut bytes, mut hz, mut seconds) = (304usize, 1000.0f64, None::<f64>);
    let (mut fanout, mut topics) = (FANOUT.to_vec(), TOPICS.to_vec());
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--size" => {
                bytes = number(&value()?)?;
                true
            }
            "--hz" => {
                hz = number(&value()?)?;
                true
            }
            "--seconds" => {
                seconds = Some(number(&value()?)?);
                true
            }
            "--fanout" => {
                fanout = list(&value()?)?;
                true
            }
            "--topics" => {
                topics = list(&value()?)?;
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "scalability — fan-out and topic count at a fixed rate, between processes\n\n\
             USAGE: scalability [OPTIONS]\n\n{COMMON_USAGE}  \
             --size N           payload bytes (default 304, an Imu)\n  \
             --hz F             messages per second per topic (default 1000)\n  \
             --seconds F        duration of each point (default 5, quick 0.4)\n  \
             --fanout A,B,...   subscriber counts (default 1,2,4,8,16)\n  \
             --topics A,B,...   topic counts (default 1,4,8,64,256)\n"
        );
        return Ok(ExitCode::SUCCESS);
    };
    let seconds = seconds.unwrap_or(if common.quick { 0.4 } else { 5.0 });
    let mut method = vec![
        format!(
            "one publisher process sends a {bytes}-byte message on each topic every {:.0} µs \
             ({hz} Hz per topic, absolute schedule) for {seconds} s per point; fan-out: 1 topic, \
             K subscriber processes; topics: T topics, 1 subscriber process on all of them",
            1e6 / hz
        ),
        "latency is ONE-WAY and honest: the publisher reads CLOCK_MONOTONIC right before each \
         send and stores it in the message; the subscriber reads the same system-wide clock \
         right after receiving, before reading the payload (it then reads every byte and checks \
         the sequence number). First 100 ms excluded."
            .to_owned(),
        "subscribers sleep (futex recv) on the first topic of each tick, then drain the other \
         topics with busy-poll subscribers, yielding between sweeps, until they have the tick's message from each (at most \
         2 ms); nothing is pinned"
            .to_owned(),
        "QoS: Overflow::DropOldest, depth 16 (the sensor setting): a subscriber that falls \
         behind loses messages; lost = sent x K - received"
            .to_owned(),
        "CPU = user + system time of each process (getrusage, all threads) / wall time of the \
         run, in % of one CPU"
            .to_owned(),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<ScaleRow>::start("scalability", &common, method);
    let points = fanout
        .iter()
        .map(|&k| (ScaleSweep::Fanout, 1, k))
        .chain(topics.iter().map(|&t| (ScaleSweep::Topics, t, 1)));
    for (sweep, t, k) in points {
        let what = format!("{t} topic(s) -> {k} subscriber(s)");
        if let Some(result) =
            run.measure(&what, || rate::run(t, k, hz, seconds, bytes, Touch::Full))
        {
            run.push(ScaleRow { sweep, result });
        }
    }
    let table = format!(
        "fan-out (1 topic)\n{}\ntopics (1 subscriber)\n{}",
        tables::scale(run.rows(), ScaleSweep::Fanout).to_text(),
        tables::scale(run.rows(), ScaleSweep::Topics).to_text()
    );
    run.finish(&table)
}

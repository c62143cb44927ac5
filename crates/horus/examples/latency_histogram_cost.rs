//! What a subscriber's delivery-latency histogram costs: a busy-poll ping-pong of stamped
//! `CmdVel`s between two threads (each message stamped by its publisher in both modes;
//! the difference is only the receiving side's clock read and histogram update), in
//! interleaved rounds with recording on and off (`HORUS_LATENCY=off`, read when a
//! subscriber is created). Prints each round's median and mean round trip and, per pair of
//! rounds, the ratio on/off.
//!
//! ```text
//! cargo run --release -p horus --example latency_histogram_cost -- [rounds] [round_trips]
//! ```

use std::sync::{Arc, Barrier};
use std::time::Instant;

use horus::msgs::Time;
use horus::prelude::*;

fn round(ns: &str, tag: usize, round_trips: usize, record: bool) -> (f64, f64) {
    if record {
        std::env::remove_var("HORUS_LATENCY");
    } else {
        std::env::set_var("HORUS_LATENCY", "off");
    }
    let open = |name: &str| {
        Topic::<CmdVel>::builder(&format!("cost/{name}{tag}"))
            .namespace(ns)
            .depth(8)
            .open()
            .unwrap()
    };
    let (ping, pong) = (open("ping"), open("pong"));
    let mut ping_sub = ping.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut pong_pub = pong.publisher().unwrap();
    let mut pong_sub = pong.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut ping_pub = ping.publisher().unwrap();
    let ready = Arc::new(Barrier::new(2));
    let echo = {
        let ready = Arc::clone(&ready);
        std::thread::spawn(move || {
            ready.wait();
            for _ in 0..round_trips {
                let m = ping_sub.recv();
                pong_pub
                    .send(CmdVel::new(Time::now().nanos, m.linear, 0.0))
                    .unwrap();
            }
            ping_sub.stats().latency.count
        })
    };
    ready.wait();
    let mut rtt = Vec::with_capacity(round_trips);
    for i in 0..round_trips {
        let t0 = Instant::now();
        ping_pub
            .send(CmdVel::new(Time::now().nanos, i as f32, 0.0))
            .unwrap();
        pong_sub.recv();
        rtt.push(t0.elapsed().as_nanos() as u64);
    }
    let measured = echo.join().unwrap() + pong_sub.stats().latency.count;
    assert_eq!(
        measured,
        if record { 2 * round_trips as u64 } else { 0 },
        "recording {}",
        if record { "on" } else { "off" }
    );
    let mean = rtt.iter().sum::<u64>() as f64 / rtt.len() as f64;
    rtt.sort_unstable();
    (rtt[rtt.len() / 2] as f64, mean)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("rounds, round_trips"))
        .collect();
    let rounds = args.first().copied().unwrap_or(10);
    let round_trips = args.get(1).copied().unwrap_or(200_000);
    let ns = format!("latency-cost-{}", std::process::id());
    // Warm-up (page faults, frequency).
    round(&ns, 0, round_trips / 4, true);
    println!("round  recording  median_rtt_ns  mean_rtt_ns");
    let mut ratios = Vec::new();
    for r in 0..rounds {
        // Alternate which mode goes first, so a drift does not favour one.
        let order = if r % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        let mut med = [0.0; 2];
        for (i, record) in order.into_iter().enumerate() {
            let (m, mean) = round(&ns, 1 + 2 * r + i, round_trips, record);
            println!(
                "{r:>5}  {:>9}  {m:>13.0}  {mean:>11.1}",
                if record { "on" } else { "off" }
            );
            med[usize::from(!record)] = m;
        }
        ratios.push(med[0] / med[1]);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median round trip on/off: median ratio {:.3} (min {:.3}, max {:.3}) over {rounds} pairs of {round_trips} round trips; each round trip is two stamped messages received",
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    );
}

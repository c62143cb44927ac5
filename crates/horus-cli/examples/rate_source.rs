//! A publisher at a known rate, for measuring `horus topic hz`/`bw` and the cost of tools.
//!
//! `cargo run --release -p horus-cli --example rate_source -- TYPE RATE_HZ SECONDS [TOPIC]`
//! with TYPE one of `cmdvel` (16 B), `imu`, `cloud` (a PointCloud with a 1 MiB tail).
//! Sends on an absolute schedule (sleep to 200 µs before each deadline, then spin), and
//! prints one JSON line: messages sent and the achieved rate over its own clock.

use std::time::{Duration, Instant};

use horus::msgs::{CmdVel, Imu, PointCloud};
use horus::{Message, Publisher, Topic};

const CLOUD_TAIL: usize = 1 << 20;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(
        args.len() >= 3,
        "usage: rate_source TYPE RATE_HZ SECONDS [TOPIC]"
    );
    let rate: f64 = args[1].parse()?;
    let seconds: f64 = args[2].parse()?;
    let topic = args.get(3).cloned().unwrap_or_else(|| "rate_source".into());
    let (sent, elapsed) = match args[0].as_str() {
        "cmdvel" => run::<CmdVel>(&topic, rate, seconds, None)?,
        "imu" => run::<Imu>(&topic, rate, seconds, None)?,
        "cloud" => run::<PointCloud>(&topic, rate, seconds, Some(CLOUD_TAIL))?,
        other => anyhow::bail!("unknown type {other}"),
    };
    println!(
        "{{\"sent\": {sent}, \"seconds\": {elapsed:.6}, \"rate_hz\": {:.6}}}",
        (sent.saturating_sub(1)) as f64 / elapsed
    );
    Ok(())
}

fn run<T: Message>(
    name: &str,
    rate: f64,
    seconds: f64,
    tail: Option<usize>,
) -> anyhow::Result<(u64, f64)> {
    let mut b = Topic::<T>::builder(name).depth(64);
    if let Some(t) = tail {
        b = b.max_tail_bytes(t);
    }
    let topic = b.open()?;
    let mut p = topic.publisher()?;
    let period = Duration::from_secs_f64(1.0 / rate);
    let total = (rate * seconds).round() as u64;
    let start = Instant::now();
    let mut first = None;
    let mut last = start;
    for i in 0..total {
        let due = start + period.mul_f64(i as f64);
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            if d > Duration::from_micros(200) {
                std::thread::sleep(d - Duration::from_micros(200));
            }
            while Instant::now() < due {
                std::hint::spin_loop();
            }
        }
        send(&mut p, i, tail)?;
        last = Instant::now();
        first.get_or_insert(last);
    }
    let span = first.map_or(0.0, |f| (last - f).as_secs_f64());
    Ok((total, span))
}

fn send<T: Message>(p: &mut Publisher<T>, i: u64, tail: Option<usize>) -> anyhow::Result<()> {
    match tail {
        None => {
            let mut s = p.loan()?;
            *s = bytemuck::Zeroable::zeroed();
            bytemuck::bytes_of_mut(&mut *s)[..8].copy_from_slice(&i.to_le_bytes());
            s.send().map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Some(t) => {
            let mut s = p.loan_slice(t)?;
            *s = bytemuck::Zeroable::zeroed();
            bytemuck::bytes_of_mut(&mut *s)[..8].copy_from_slice(&i.to_le_bytes());
            s.send().map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    Ok(())
}

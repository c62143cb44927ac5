//! What attaching `horus record` costs the robot: the round trip of a 16 B `CmdVel` ping-pong
//! between two processes, with and without a recorder observing both topics, in interleaved
//! rounds of one run.
//!
//! `cargo build --release -p horus-record --example recorder_cost -p horus-cli --bins`
//! `recorder_cost [--rounds 5] [--iters 20000] [--horus PATH]`
//!
//! Method: ping (this process, pinned to CPU 0) sends, pong (a child, pinned to CPU 1)
//! answers on a second topic; both busy-poll; Overflow::Block depth 16; each round measures
//! `iters` round trips after 2000 untimed ones. "with recorder" rounds start `horus record`
//! (unpinned, default zstd) on the run's namespace first and wait until it observes both
//! topics. Median and p99 per round; the ratio is with ÷ without for each pair of rounds.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use horus::msgs::CmdVel;
use horus::{Overflow, Topic, WaitMode};

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it;
    // sched_setaffinity(0, ...) applies to this thread and reads the set we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn topics(ns: &str) -> anyhow::Result<(Topic<CmdVel>, Topic<CmdVel>)> {
    let open = |name: &str| {
        Topic::<CmdVel>::builder(name)
            .namespace(ns)
            .depth(16)
            .overflow(Overflow::Block {
                timeout: Duration::from_secs(5),
            })
            .open()
    };
    Ok((open("cost/ping")?, open("cost/pong")?))
}

fn pong(ns: &str) -> anyhow::Result<()> {
    pin(1);
    let (ping, pong) = topics(ns)?;
    let mut rx = ping.subscriber_with(WaitMode::BusyPoll)?;
    let mut tx = pong.publisher()?;
    loop {
        let m = rx.recv();
        if m.stamp_ns == u64::MAX {
            return Ok(());
        }
        tx.send(*m).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--pong") {
        return pong(&args[2]);
    }
    let get = |flag: &str, default: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| default.to_owned())
    };
    let rounds: usize = get("--rounds", "5").parse()?;
    let iters: usize = get("--iters", "20000").parse()?;
    let horus = get("--horus", "horus");
    let ns = format!("reccost-{}", std::process::id());
    pin(0);
    let (ping, pong) = topics(&ns)?;
    let mut tx = ping.publisher()?;
    let mut rx = pong.subscriber_with(WaitMode::BusyPoll)?;
    let mut child = Command::new(std::env::current_exe()?)
        .args(["--pong", &ns])
        .spawn()?;
    // Start only once pong listens and answers (a message sent before it joined is not its).
    let deadline = Instant::now() + Duration::from_secs(20);
    while tx.subscribers() == 0 || rx.publishers() == 0 {
        anyhow::ensure!(Instant::now() < deadline, "pong never joined");
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = std::env::temp_dir().join(format!("{ns}.mcap"));
    let mut rows = Vec::new();
    for round in 0..rounds * 2 {
        let with = round % 2 == 1;
        let mut recorder: Option<Child> = None;
        if with {
            let c = Command::new(&horus)
                .args(["record", "--overwrite", "--namespace", &ns, "-o"])
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            recorder = Some(c);
            // Wait until it observes both topics (2 observers).
            let deadline = Instant::now() + Duration::from_secs(20);
            while ping
                .stats()
                .snapshot
                .subscribers
                .iter()
                .filter(|s| s.observer)
                .count()
                == 0
                || pong
                    .stats()
                    .snapshot
                    .subscribers
                    .iter()
                    .filter(|s| s.observer)
                    .count()
                    == 0
            {
                anyhow::ensure!(Instant::now() < deadline, "the recorder never attached");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let mut samples = Vec::with_capacity(iters);
        for i in 0..iters + 2000 {
            let t0 = Instant::now();
            tx.send(CmdVel::new(i as u64, 0.5, 0.1))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let _ = rx.recv();
            if i >= 2000 {
                samples.push(t0.elapsed().as_nanos() as u64);
            }
        }
        if let Some(mut c) = recorder {
            // SAFETY: kill takes no pointers; the pid is our child, not yet reaped.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
            c.wait()?;
        }
        samples.sort_unstable();
        rows.push((with, percentile(&samples, 0.5), percentile(&samples, 0.99)));
    }
    tx.send(CmdVel::new(u64::MAX, 0.0, 0.0))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    child.wait()?;
    let _ = std::fs::remove_file(&out);
    println!("method: 16 B CmdVel round trip, ping CPU 0 / pong CPU 1 (child process), busy-poll,");
    println!("Block depth 16, {iters} round trips per round after 2000 untimed; recorder unpinned, zstd.");
    println!(
        "{:>5} {:>16} {:>12} {:>12}",
        "round", "recorder", "median ns", "p99 ns"
    );
    for (i, (with, med, p99)) in rows.iter().enumerate() {
        let label = if *with { "attached" } else { "none" };
        println!("{:>5} {label:>16} {med:>12} {p99:>12}", i / 2 + 1);
    }
    let ratios: Vec<f64> = rows
        .chunks(2)
        .map(|p| p[1].1 as f64 / p[0].1 as f64)
        .collect();
    let mut sorted = ratios.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    println!(
        "median round trip with ÷ without recorder, per round pair: median {:.3} [{:.3}–{:.3}]",
        sorted[sorted.len() / 2],
        sorted[0],
        sorted[sorted.len() - 1]
    );
    Ok(())
}

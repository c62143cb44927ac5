//! What one `horus_log::info!` call costs the calling thread, and why: the tool behind
//! docs/logging.md's "What a call costs". Not a benchmark of record (that is horus-bench's
//! `logging`); an instrument to take the cost apart.
//!
//! ```text
//! cargo run --release -p horus-log --example call_cost -- [--size 32] [--calls 20000]
//!     [--drain other|same|idle] [--ring-kb 16384] [--first-lap-only] [--cpu 0] [--drain-cpu 1]
//! ```
//!
//! The calling thread is pinned to CPU `--cpu` (0). `--drain` places the logger's drain
//! thread: `other` pins it to `--drain-cpu` (1; it runs beside the writer, as on an idle
//! multi-core machine: pick a CPU that is not the writer's hyper-thread sibling), `same`
//! pins it to the writer's CPU (it only runs when the writer is preempted), `idle` pins it
//! there with `SCHED_IDLE` (it practically never runs while the writer spins: the ring is
//! large enough to hold every record of the run, see `dropped` in the output). It prints:
//!
//! * the timer's own cost (an `lfence; rdtsc; lfence` pair, a bare `rdtsc`, a vDSO
//!   `clock_gettime(CLOCK_MONOTONIC)`), each averaged over a loop;
//! * minor page faults of the calling thread while it writes the ring's first lap
//!   (`getrusage(RUSAGE_THREAD)`), unless the logger pre-faulted its ring, and what
//!   that lap cost per call (`--first-lap-only` stops there);
//! * the instructions of one call: run it under `valgrind --tool=callgrind
//!   --toggle-collect='call_cost::burst'` and divide the count by `--calls` (the untimed
//!   loop is that function);
//! * per call: each call between two timer reads (median, average, p99), the timer pair
//!   included; per batch: 64 calls between two timer reads, divided by 64 (median over
//!   batches, min); untimed: one loop of `--calls` calls, wall time / calls.

use std::time::Instant;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stamp() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence and rdtsc have no preconditions on x86_64.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn stamp() -> u64 {
    mono_ns()
}

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds per tick of [`stamp`], against `Instant` over 50 ms.
fn ns_per_tick() -> f64 {
    let (i0, t0) = (Instant::now(), stamp());
    std::thread::sleep(std::time::Duration::from_millis(50));
    let (t1, i1) = (stamp(), Instant::now());
    i1.duration_since(i0).as_nanos() as f64 / (t1 - t0).max(1) as f64
}

fn pin(tid: libc::pid_t, cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays within it (cpu < 1024).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) != 0 {
            eprintln!("(could not pin tid {tid} to CPU {cpu})");
        }
    }
}

/// The tid of this process's drain thread (named `horus-log`).
fn drain_tid() -> Option<libc::pid_t> {
    std::fs::read_dir("/proc/self/task").ok()?.find_map(|e| {
        let e = e.ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        (comm.trim() == "horus-log")
            .then(|| e.file_name().to_str()?.parse().ok())
            .flatten()
    })
}

fn thread_minflt() -> i64 {
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_minflt
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// `calls` log calls in a loop, not inlined: `valgrind --tool=callgrind
/// --toggle-collect='call_cost::burst'` counts the instructions of exactly these calls.
#[inline(never)]
fn burst(msg: &str, calls: usize) {
    for _ in 0..calls {
        horus_log::info!("{}", std::hint::black_box(msg));
    }
}

fn main() {
    let mut size = 32usize;
    let mut calls = 20_000usize;
    let mut drain = String::from("other");
    let mut ring_kb = 16 * 1024usize;
    let mut past_first_lap = true;
    let mut cpu = 0usize;
    let mut drain_cpu = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().expect("flag needs a value");
        match a.as_str() {
            "--size" => size = val().parse().expect("--size N"),
            "--calls" => calls = val().parse().expect("--calls N"),
            "--drain" => drain = val(),
            "--ring-kb" => ring_kb = val().parse().expect("--ring-kb N"),
            "--first-lap-only" => past_first_lap = false,
            "--cpu" => cpu = val().parse().expect("--cpu N"),
            "--drain-cpu" => drain_cpu = val().parse().expect("--drain-cpu N"),
            other => panic!("unknown argument {other}"),
        }
    }
    let ns = format!("call-cost-{}", std::process::id());
    let null = std::fs::File::options()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null");
    let _guard = horus_log::Builder::new()
        .namespace(&ns)
        .ring_bytes(ring_kb * 1024)
        .console(horus_log::Console::Writer(Box::new(null)))
        .init()
        .expect("logger");
    pin(0, cpu);
    // The drain thread names itself once it runs: wait for it (bounded).
    let dtid = (0..1000)
        .find_map(|_| {
            drain_tid().or_else(|| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                None
            })
        })
        .expect("drain thread");
    match drain.as_str() {
        "other" => pin(dtid, drain_cpu),
        "same" => pin(dtid, cpu),
        "idle" => {
            pin(dtid, cpu);
            // SAFETY: a zeroed sched_param is valid for SCHED_IDLE (priority 0).
            let p: libc::sched_param = unsafe { std::mem::zeroed() };
            // SAFETY: valid tid and parameter.
            if unsafe { libc::sched_setscheduler(dtid, libc::SCHED_IDLE, &p) } != 0 {
                eprintln!("(could not make the drain SCHED_IDLE)");
            }
        }
        other => panic!("--drain other|same|idle, not {other}"),
    }
    let tick = ns_per_tick();
    let msg: String = (0..size).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let msg = msg.as_str();

    // The timer's own cost.
    const LOOP: u64 = 1_000_000;
    let t0 = stamp();
    for _ in 0..LOOP {
        std::hint::black_box(stamp());
    }
    let fenced = (stamp() - t0) as f64 * tick / LOOP as f64;
    let t0 = stamp();
    for _ in 0..LOOP {
        // SAFETY: rdtsc has no preconditions.
        #[cfg(target_arch = "x86_64")]
        std::hint::black_box(unsafe { core::arch::x86_64::_rdtsc() });
    }
    let bare = (stamp() - t0) as f64 * tick / LOOP as f64;
    let t0 = stamp();
    for _ in 0..LOOP {
        std::hint::black_box(mono_ns());
    }
    let vdso = (stamp() - t0) as f64 * tick / LOOP as f64;
    let mut pair = f64::MAX;
    for _ in 0..10_000 {
        let a = stamp();
        let b = stamp();
        pair = pair.min((b - a) as f64 * tick);
    }
    println!(
        "timer: lfence;rdtsc;lfence {fenced:.1} ns/read, bare rdtsc {bare:.1} ns/read, \
         clock_gettime(MONOTONIC) {vdso:.1} ns/read; smallest back-to-back pair {pair:.0} ns"
    );

    // The first lap: page faults of a fresh ring (unless the logger pre-faulted it).
    let record = 24 + 1 + 4 + size;
    let cells = record.div_ceil(32);
    // One whole lap, so that every page of the ring and of its stamps is touched once.
    let lap = ring_kb * 1024 / 32 / cells;
    let f0 = thread_minflt();
    let t0 = stamp();
    for _ in 0..lap {
        horus_log::info!("{}", std::hint::black_box(msg));
    }
    let first = (stamp() - t0) as f64 * tick / lap as f64;
    let faults = thread_minflt() - f0;
    println!(
        "first {lap} calls on a fresh ring ({} KiB written): {first:.1} ns/call average, \
         {faults} minor page faults in the calling thread",
        lap * cells * 32 / 1024
    );
    if !past_first_lap {
        return;
    }
    // Let the drain empty the ring (with `--drain idle` it runs only while we sleep).
    std::thread::sleep(std::time::Duration::from_millis(500));

    // Untimed loop, per-call timing, batch timing.
    for _ in 0..2_000 {
        horus_log::info!("{}", std::hint::black_box(msg));
    }
    let f0 = thread_minflt();
    let t0 = stamp();
    burst(msg, calls);
    let untimed = (stamp() - t0) as f64 * tick / calls as f64;
    let mut per_call = Vec::with_capacity(calls);
    for _ in 0..calls {
        let a = stamp();
        horus_log::info!("{}", std::hint::black_box(msg));
        let b = stamp();
        per_call.push((b - a) as f64 * tick);
    }
    const BATCH: usize = 64;
    let mut per_batch = Vec::with_capacity(calls / BATCH);
    for _ in 0..calls / BATCH {
        let a = stamp();
        for _ in 0..BATCH {
            horus_log::info!("{}", std::hint::black_box(msg));
        }
        let b = stamp();
        per_batch.push((b - a) as f64 * tick / BATCH as f64);
    }
    let faults = thread_minflt() - f0;
    let avg = per_call.iter().sum::<f64>() / per_call.len() as f64;
    per_call.sort_by(f64::total_cmp);
    per_batch.sort_by(f64::total_cmp);
    println!(
        "size {size} B, drain {drain}, {calls} calls each: untimed {untimed:.1} ns/call; \
         per call (timer pair included) median {:.0} avg {avg:.1} p99 {:.0} ns; \
         per call in batches of {BATCH} median {:.1} min {:.1} ns; \
         {faults} minor faults; {} dropped",
        percentile(&per_call, 0.5),
        percentile(&per_call, 0.99),
        percentile(&per_batch, 0.5),
        per_batch[0],
        horus_log::dropped()
    );
}

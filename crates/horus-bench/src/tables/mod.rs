//! Every result table, built once from the rows: the binaries print them as text,
//! the `report` binary writes them as Markdown.
//!
//! One file per benchmark whose tables need more than a few lines: `peers.rs`
//! ([`peers_side_by_side`], [`peers_ratios`]), `pingpong.rs` and `scheduler.rs`
//! (read from their JSON, with their targets), `interleaved.rs` (the rounds),
//! `many_to_many.rs` (4:4 against iceoryx2), `python.rs` (the Python benchmark); the
//! suite binaries' tables here. The tables of `ros_messages` are `horus-bench-ros`'s.

mod interleaved;
mod many_to_many;
mod peers;
mod pingpong;
mod python;
mod scheduler;

pub use interleaved::*;
pub use many_to_many::*;
pub use peers::*;
pub use pingpong::*;
pub use python::*;
pub use scheduler::*;

use crate::markdown::Table;
use crate::report::{ns, size};
use crate::rows::{PathRow, RoboticsRow, ScaleRow, ScaleSweep, SweepRow};
use crate::stats::{Summary, Throughput};
use crate::topology::Placement;

const DASH: &str = "–";

/// A target's verdict cell.
fn met(ok: bool) -> String {
    if ok { "yes" } else { "no" }.to_owned()
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| DASH.to_owned(), f)
}

fn rate(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.2} M", v / 1e6),
        v if v >= 1e4 => format!("{:.0} k", v / 1e3),
        v if v >= 1e3 => format!("{:.1} k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

fn headroom(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1} M×", v / 1e6),
        v if v >= 1e3 => format!("{:.0} k×", v / 1e3),
        v => format!("{v:.0}×"),
    }
}

/// `robotics_messages`.
pub fn robotics(rows: &[RoboticsRow]) -> Table {
    let mut t = Table::new([
        "message",
        "bytes",
        "1:1 p50",
        "1:1 p99",
        "1:1 p99.9",
        "4:4 p50",
        "4:4 p99",
        "4:4 p99.9",
        "1:1 msg/s",
        "4:4 msg/s",
        "typical",
        "headroom",
    ]);
    for r in rows {
        let p = |s: Option<Summary>, f: fn(&Summary) -> u64| opt(s, |s| ns(f(&s)));
        let th = |t: Option<Throughput>| opt(t, |t| rate(t.msgs_per_sec));
        t.row([
            r.message.clone(),
            r.wire_bytes.to_string(),
            p(r.rtt_1to1, |s| s.median_ns),
            p(r.rtt_1to1, |s| s.p99_ns),
            p(r.rtt_1to1, |s| s.p999_ns),
            p(r.rtt_nn, |s| s.median_ns),
            p(r.rtt_nn, |s| s.p99_ns),
            p(r.rtt_nn, |s| s.p999_ns),
            th(r.throughput_1to1),
            th(r.throughput_nn),
            format!("{} Hz", r.typical_hz),
            opt(r.headroom, headroom),
        ]);
    }
    t.note(
        "Round trips between processes: the message goes out, every subscriber reads all of it \
         and acks; 1:1 pinned + busy-poll, 4:4 = 4 publisher and 4 subscriber processes, \
         unpinned, blocking (futex). msg/s: lossless one-way bursts; headroom = 1:1 msg/s ÷ \
         typical rate.",
    );
    t
}

/// `payload_sweep`.
pub fn sweep(rows: &[SweepRow]) -> Table {
    let mut t = Table::new([
        "size", "mode", "msg/s", "MiB/s", "avg RTT", "min", "max", "p99",
    ])
    .left(1);
    for r in rows {
        t.row([
            size(r.size),
            r.mode.label().to_owned(),
            format!("{:.0}", r.msgs_per_sec),
            format!("{:.1}", r.bandwidth_mib_s),
            ns(r.rtt.mean_ns.round() as u64),
            ns(r.rtt.min_ns),
            ns(r.rtt.max_ns),
            ns(r.rtt.p99_ns),
        ]);
    }
    t.note(
        "Ping-pong between two pinned processes, busy-poll, whole payload written and read; \
         msg/s = round trips ÷ wall time, MiB/s = size × msg/s ÷ 2^20.",
    );
    t
}

/// `all_paths`.
pub fn paths(rows: &[PathRow]) -> Table {
    let mut t = Table::new([
        "route",
        "size",
        "wait",
        "pinned",
        "min",
        "median",
        "p99",
        "p99.9",
        "max",
        "send-only median",
        "send-only p99",
    ])
    .left(2)
    .left(3);
    for r in rows {
        let same = r.placement == Placement::SameThread;
        t.row([
            if same {
                format!("{} (loopback, not IPC)", r.route)
            } else {
                r.route.clone()
            },
            size(r.size),
            if same {
                DASH.to_owned()
            } else {
                r.wait.label().to_owned()
            },
            if r.pinned { "yes" } else { "no" }.to_owned(),
            ns(r.rtt.min_ns),
            ns(r.rtt.median_ns),
            ns(r.rtt.p99_ns),
            ns(r.rtt.p999_ns),
            ns(r.rtt.max_ns),
            r.send_only
                .as_ref()
                .map_or(DASH.to_owned(), |s| ns(s.median_ns)),
            r.send_only
                .as_ref()
                .map_or(DASH.to_owned(), |s| ns(s.p99_ns)),
        ]);
    }
    t.note(
        "RTT = the message goes out, every subscriber reads it and acks with 16 bytes, the \
         publisher has every ack. N:1 / 1:N / N:N: all publishers in closed loops at once, \
         samples pooled. min … max are round trips; send-only = ns per send on the \
         publisher alone (a burst of sends timed and divided by its length; the ring has room \
         for the whole burst and the subscribers drain it between bursts), what the \
         reference report calls send-only — a cost, never a latency.",
    );
    t
}

/// `scalability`, one sweep.
pub fn scale(rows: &[ScaleRow], sweep: ScaleSweep) -> Table {
    let mut t = Table::new([
        "topics",
        "subscribers",
        "avg",
        "median",
        "p99",
        "max",
        "sent",
        "received",
        "lost",
        "publisher CPU",
        "subscriber CPU (mean)",
        "subscriber CPU (max)",
    ]);
    for r in rows.iter().filter(|r| r.sweep == sweep) {
        let x = &r.result;
        let subs = &x.subscriber_cpu_percent;
        let mean = subs.iter().sum::<f64>() / subs.len().max(1) as f64;
        let max = subs.iter().copied().fold(0.0, f64::max);
        t.row([
            x.topics.to_string(),
            x.subs.to_string(),
            ns(x.latency.mean_ns.round() as u64),
            ns(x.latency.median_ns),
            ns(x.latency.p99_ns),
            ns(x.latency.max_ns),
            x.sent.to_string(),
            x.received.to_string(),
            x.lost.to_string(),
            format!("{:.1} %", x.publisher_cpu_percent),
            format!("{mean:.1} %"),
            format!("{max:.1} %"),
        ]);
    }
    t.note(
        "One-way latency: publisher stamps CLOCK_MONOTONIC right before send, subscriber reads \
         it right after receipt (one system-wide clock). Every process separate and unpinned; \
         subscribers block (futex). CPU in % of one core over the run.",
    );
    t
}

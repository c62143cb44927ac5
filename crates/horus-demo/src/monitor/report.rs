//! What the monitor prints: the header explaining the method, one block of
//! two aligned tables per second, and the end-of-run summary.

use std::fmt::Write as _;
use std::time::Duration;

use horus::sched::{ExecClass, NodeStats, SchedulerStats};

/// One line of the topic table.
pub(crate) struct TopicRow {
    pub(crate) topic: &'static str,
    pub(crate) ty: &'static str,
    /// Messages the monitor received per second over the window.
    pub(crate) rate: f64,
    /// Latencies of the window, ns (any order).
    pub(crate) latencies_ns: Vec<u64>,
    /// Lost since start: overwritten before a subscriber read them, plus
    /// refused to a publisher.
    pub(crate) lost: u64,
}

/// Nearest-rank percentile `q` of sorted `v`.
fn percentile(v: &[u64], q: f64) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_owned(), |n| format!("{:.1}", n as f64 / 1e3))
}

fn dur_us(d: Duration) -> String {
    format!("{:.1}", d.as_nanos() as f64 / 1e3)
}

/// The explanation printed once before the tables.
pub(crate) fn header(ns: &str, seconds: u64, children: &[(String, u32)]) -> String {
    let procs: Vec<String> = children
        .iter()
        .map(|(n, pid)| format!("{n} (pid {pid})"))
        .collect();
    format!(
        "horus demo robot: {} + this monitor (pid {}), namespace {ns:?}, {seconds} s\n\
         \n\
         topics    msg/s = messages the monitor received in the last second.\n\
         \x20         latency = one-way, cross-process: the stamp (header.stamp of the ROS messages,\n\
         \x20         stamp_ns of EmergencyStop) is taken from CLOCK_REALTIME by the publishing node\n\
         \x20         right before send; the monitor (another process, an extra subscriber sleeping\n\
         \x20         on the topic's futex) reads CLOCK_REALTIME when it receives the message.\n\
         \x20         Includes the monitor's wake-up. p50/p99 over the last second, µs. A Twist has\n\
         \x20         no header: no latency (-).\n\
         \x20         lost = messages overwritten before any subscriber read them (overrun, all\n\
         \x20         subscribers) + messages refused to publishers, since start, from the topic's\n\
         \x20         shared counters. Skipping to the newest on purpose (latest()) is not a loss.\n\
         nodes     read from each process's scheduler statistics in /dev/shm (read_stats):\n\
         \x20         rate = ticks in its last 1 s window; start jitter = start − ideal release\n\
         \x20         time (not the previous tick), p50/p99 since start, µs; exec p99 = tick\n\
         \x20         duration; misses = deadline misses in the last window / since start.\n",
        procs.join(", "),
        std::process::id(),
    )
}

/// One second's block.
pub(crate) fn block(
    second: u64,
    topics: &mut [TopicRow],
    nodes: &[(String, Result<SchedulerStats, String>)],
    robot: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "--- t = {second} s {}", "-".repeat(72));
    let _ = writeln!(
        s,
        "{:<14} {:<13} {:>8} {:>12} {:>12} {:>6}",
        "topic", "type", "msg/s", "lat p50 µs", "lat p99 µs", "lost"
    );
    for t in topics.iter_mut() {
        t.latencies_ns.sort_unstable();
        let _ = writeln!(
            s,
            "{:<14} {:<13} {:>8.1} {:>12} {:>12} {:>6}",
            t.topic,
            t.ty,
            t.rate,
            us(percentile(&t.latencies_ns, 0.5)),
            us(percentile(&t.latencies_ns, 0.99)),
            t.lost
        );
    }
    let _ = writeln!(
        s,
        "{:<11} {:<8} {:>9} {:>8} {:>15} {:>15} {:>12} {:>14}",
        "node",
        "process",
        "target Hz",
        "rate Hz",
        "jitter p50 µs",
        "jitter p99 µs",
        "exec p99 µs",
        "misses 1s/all"
    );
    for (process, stats) in nodes {
        match stats {
            Ok(stats) => {
                for n in &stats.nodes {
                    let _ = writeln!(s, "{}", node_line(process, stats, n));
                }
            }
            Err(e) => {
                let _ = writeln!(s, "{:<11} {process:<8} statistics unavailable: {e}", "?");
            }
        }
    }
    let _ = writeln!(s, "{robot}");
    s
}

fn node_line(process: &str, stats: &SchedulerStats, n: &NodeStats) -> String {
    // The last-window count exists once the node has run a whole window
    // (plus the 200 ms the file may lag); before, show the rate since start.
    let rate = if stats.uptime >= Duration::from_millis(1250) {
        n.window_ticks as f64
    } else {
        n.achieved_hz
    };
    let target = n
        .target_hz
        .map_or_else(|| "event".to_owned(), |hz| format!("{hz:.0}"));
    let (j50, j99) = if n.class == ExecClass::Event {
        ("-".to_owned(), "-".to_owned())
    } else {
        (dur_us(n.jitter.p50), dur_us(n.jitter.p99))
    };
    format!(
        "{:<11} {:<8} {:>9} {:>8.0} {:>15} {:>15} {:>12} {:>14}",
        n.name,
        process,
        target,
        rate,
        j50,
        j99,
        dur_us(n.exec.p99),
        format!("{}/{}", n.window_deadline_misses, n.deadline_misses)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), Some(50));
        assert_eq!(percentile(&v, 0.99), Some(99));
        assert_eq!(percentile(&[7], 0.99), Some(7));
        assert_eq!(percentile(&[], 0.5), None);
    }
}

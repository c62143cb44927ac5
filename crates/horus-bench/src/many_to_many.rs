//! Many to many (N:N): 4 publisher and 4 subscriber processes on one topic, horus
//! against iceoryx2 with the same topology, in interleaved rounds.
//!
//! The reference report's N:N table gives, per robotics message (CmdVel 16 B,
//! BatteryState 104 B, Imu 304 B, Odometry 736 B, LaserScan 1,480 B), a
//! *send-only* time with several publishers and subscribers. A send-only time says
//! nothing about when a subscriber has the message, so this benchmark measures,
//! for the same messages and topology, the round trip every publisher sees: it
//! sends message `seq`, *every* subscriber receives and reads it and acknowledges
//! it, and the sample ends when the publisher holds all acks
//! ([`crate::topology`] for horus, `horus_bench_peer_iceoryx2::many` for
//! iceoryx2; the same protocol on both). The 4 publishers run concurrently, each
//! in a closed loop, and their samples are pooled.
//!
//! Each of the 8 endpoints is a process of its own and busy-polls. Where the
//! machine lets this process use at least 8 CPUs, each is pinned to a CPU of its
//! own ([`pick_cpus`]: distinct physical cores first); otherwise they are left to
//! the scheduler and every row says `pinned: false` (8 spinning processes on fewer
//! CPUs measure the scheduler as much as the middleware).
//!
//! Rows ([`ManyRow`]) are compared like `interleaved`'s ([`compare`] turns them into
//! [`RoundRow`]s): per round and message, ratio = horus median / iceoryx2 median.

use serde::{Deserialize, Serialize};

use crate::harness::Mode;
use crate::interleaved::{self, Comparison, RoundRow};
use crate::stats::Summary;

/// Publishers and subscribers of the topology.
pub const N: usize = 4;

/// One measurement of one system for one message in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManyRow {
    /// Round index, from 0.
    pub round: usize,
    /// Position within its round and message (0 = measured first).
    pub order: usize,
    /// `horus` or `iceoryx2`.
    pub system: String,
    /// The message type (`CmdVel`, …).
    pub message: String,
    /// Payload bytes (the message's size).
    pub size: usize,
    /// Publisher processes.
    pub pubs: usize,
    /// Subscriber processes.
    pub subs: usize,
    /// `busy-poll`.
    pub wait: String,
    /// Whether every endpoint had a CPU of its own.
    pub pinned: bool,
    /// The CPUs, publishers first (empty when not pinned).
    pub cpus: Vec<usize>,
    /// Round trips (send → all subscribers' acks back), all publishers pooled.
    pub rtt: Summary,
}

/// The rows as `interleaved` rows (system, size, round, median), for
/// [`interleaved::compare`].
pub fn as_round_rows(rows: &[ManyRow]) -> Vec<RoundRow> {
    rows.iter()
        .map(|r| RoundRow {
            round: r.round,
            order: r.order,
            system: r.system.clone(),
            size: r.size,
            mode: Mode::Loan,
            wait: r.wait.clone(),
            pinned: r.pinned,
            rtt: r.rtt,
        })
        .collect()
}

/// Per message: the per-round ratios horus / iceoryx2, with the message's name.
pub fn compare(rows: &[ManyRow]) -> Vec<(String, Comparison)> {
    interleaved::compare(&as_round_rows(rows))
        .into_iter()
        .filter(|c| c.pair.peer == "iceoryx2")
        .map(|c| {
            let name = rows
                .iter()
                .find(|r| r.size == c.size)
                .map_or_else(String::new, |r| r.message.clone());
            (name, c)
        })
        .collect()
}

/// How the endpoints were placed, for tables and the method text.
pub fn placement(rows: &[ManyRow]) -> String {
    match rows.first() {
        Some(r) if r.pinned => format!(
            "pinned: publishers on CPUs {}, subscribers on CPUs {}",
            list(&r.cpus[..r.pubs.min(r.cpus.len())]),
            list(&r.cpus[r.pubs.min(r.cpus.len())..])
        ),
        Some(r) => format!(
            "unpinned (fewer usable CPUs than the {} endpoints, or --no-pin)",
            r.pubs + r.subs
        ),
        None => "no rows".to_owned(),
    }
}

fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `n` CPUs this process may run on, one per physical core first (siblings of a
/// hyper-threaded core only once every core has one), in CPU order; `None` if
/// fewer than `n` are usable.
pub fn pick_cpus(n: usize) -> Option<Vec<usize>> {
    let allowed = allowed_cpus();
    if allowed.len() < n {
        return None;
    }
    let core_of = |cpu: usize| -> Option<(u32, u32)> {
        let read = |what: &str| -> Option<u32> {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        Some((read("physical_package_id")?, read("core_id")?))
    };
    let mut seen = Vec::new();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for cpu in allowed {
        match core_of(cpu) {
            Some(core) if seen.contains(&core) => rest.push(cpu),
            Some(core) => {
                seen.push(core);
                first.push(cpu);
            }
            None => first.push(cpu),
        }
    }
    first.extend(rest);
    first.truncate(n);
    Some(first)
}

/// The CPUs of this process's affinity mask, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: all-zero is the valid empty `cpu_set_t`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid `cpu_set_t` of exactly the size passed; pid 0 is
    // the calling thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `CPU_ISSET` reads one bit of `set`; `cpu < max` keeps it in bounds.
    (0..max)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(round: usize, system: &str, message: &str, size: usize, median: u64) -> ManyRow {
        ManyRow {
            round,
            order: 0,
            system: system.to_owned(),
            message: message.to_owned(),
            size,
            pubs: N,
            subs: N,
            wait: "busy-poll".to_owned(),
            pinned: false,
            cpus: Vec::new(),
            rtt: Summary::from_samples(vec![median], 1).unwrap(),
        }
    }

    #[test]
    fn each_message_is_compared_round_by_round_under_its_name() {
        let rows: Vec<ManyRow> = (0..5)
            .flat_map(|k| {
                [
                    row(k, "horus", "CmdVel", 16, 100),
                    row(k, "iceoryx2", "CmdVel", 16, 200),
                    row(k, "horus", "LaserScan", 1480, 300 + k as u64 * 100),
                    row(k, "iceoryx2", "LaserScan", 1480, 500),
                ]
            })
            .collect();
        let c = compare(&rows);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].0, "CmdVel");
        assert_eq!(c[0].1.median, 0.5);
        assert_eq!(c[0].1.horus_faster, 5);
        assert_eq!(c[1].0, "LaserScan");
        assert_eq!(c[1].1.horus_faster, 2); // 300, 400 < 500; 500, 600, 700 not
    }

    #[test]
    fn cpus_are_picked_only_when_there_are_enough() {
        let usable = allowed_cpus().len();
        assert!(usable >= 1);
        let picked = pick_cpus(usable).expect("as many as are usable");
        let mut distinct = picked.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), usable);
        assert!(pick_cpus(usable + 1).is_none());
    }

    #[test]
    fn an_unpinned_run_says_so() {
        let rows = vec![row(0, "horus", "CmdVel", 16, 1)];
        assert!(placement(&rows).starts_with("unpinned"));
    }
}

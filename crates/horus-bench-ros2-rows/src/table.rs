//! Rows of the `ros2` benchmark and its table (median over rounds with the range); the
//! targets are [`crate::targets`].

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::system::System;
use horus_bench_core::stats::Summary;

/// One system at one size in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Round, from 0.
    pub round: usize,
    /// Which system.
    pub system: System,
    /// Its label.
    pub label: String,
    /// Data bytes per message (`UInt8MultiArray.data`; the CDR body is 12 bytes more).
    pub size: usize,
    /// Round-trip statistics of the completed timed round trips.
    pub summary: Summary,
    /// Round trips per second of the timed loop (= `summary.msgs_per_sec`).
    pub msgs_per_sec: f64,
    /// `size × msgs_per_sec / 2^20` (the reference report's MB/s).
    pub mb_per_sec: f64,
    /// Timed round trips whose answer never came.
    pub lost: u64,
    /// Late answers to an earlier (lost) message.
    pub stale: u64,
    /// Messages the bridge counted as dropped (bridged systems).
    pub bridge_dropped: Option<u64>,
}

impl Row {
    /// A measurement without losses: the label, msg/s and MB/s from `system`, `size` and
    /// `summary`; `bridge_dropped` is `Some(0)` for a bridged system. Set the loss fields
    /// after if there were any.
    pub fn new(round: usize, system: System, size: usize, summary: Summary) -> Row {
        Row {
            round,
            system,
            label: system.label().to_owned(),
            size,
            msgs_per_sec: summary.msgs_per_sec,
            mb_per_sec: size as f64 * summary.msgs_per_sec / f64::from(1u32 << 20),
            summary,
            lost: 0,
            stale: 0,
            bridge_dropped: system.bridged().then_some(0),
        }
    }
}

pub(crate) fn us(ns: f64) -> String {
    let us = ns / 1000.0;
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

pub(crate) fn size_label(size: usize) -> String {
    if size >= 1 << 20 && size.is_multiple_of(1 << 20) {
        format!("{} MiB", size >> 20)
    } else if size >= 1024 && size.is_multiple_of(1024) {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}

/// `median [min–max]` of values over rounds.
fn over_rounds(mut v: Vec<f64>, fmt: impl Fn(f64) -> String) -> String {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => "—".to_owned(),
        1 => fmt(v[0]),
        n => format!("{} [{}–{}]", fmt(v[n / 2]), fmt(v[0]), fmt(v[n - 1])),
    }
}

/// The sizes measured, ascending.
pub fn sizes_of(rows: &[Row]) -> Vec<usize> {
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The systems measured, in table order.
pub fn systems_of(rows: &[Row]) -> Vec<System> {
    System::ALL
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.system == *s))
        .collect()
}

/// The markdown table: per size and system, the median over rounds (and range) of each
/// round's average, minimum and maximum round trip, msg/s and MB/s, and the losses summed.
pub fn markdown(rows: &[Row], sizes: &[usize], systems: &[System]) -> String {
    let mut s = String::new();
    s.push_str(
        "| size | system | avg RTT µs | min RTT µs | max RTT µs | msg/s | MB/s | lost (bridge) |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for &size in sizes {
        for &system in systems {
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|r| r.size == size && r.system == system)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let col = |f: &dyn Fn(&Row) -> f64, fmt: &dyn Fn(f64) -> String| {
                over_rounds(mine.iter().map(|r| f(r)).collect(), fmt)
            };
            let lost: u64 = mine.iter().map(|r| r.lost).sum();
            let bridge: Option<u64> = mine
                .iter()
                .filter_map(|r| r.bridge_dropped)
                .reduce(|a, b| a + b);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {}{} |",
                size_label(size),
                system.label(),
                col(&|r| r.summary.mean_ns, &us),
                col(&|r| r.summary.min_ns as f64, &us),
                col(&|r| r.summary.max_ns as f64, &us),
                col(&|r| r.msgs_per_sec, &|x| format!("{x:.0}")),
                col(&|r| r.mb_per_sec, &|x| format!("{x:.2}")),
                lost,
                bridge.map_or(String::new(), |b| format!(" ({b})")),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(round: usize, system: System, mean: u64) -> Row {
        let summary = Summary::from_samples(vec![mean; 3], 3 * mean).unwrap();
        Row::new(round, system, 64, summary)
    }

    #[test]
    fn the_table_has_a_row_per_size_and_system_measured() {
        let rows = vec![row(0, System::RclpyRclpy, 1000)];
        let md = markdown(&rows, &[64], &System::ALL);
        assert!(
            md.contains("| 64 B | rclpy ↔ rclpy (Fast DDS) | 1.0 |"),
            "{md}"
        );
        assert!(!md.contains("horus Python"), "{md}");
    }

    #[test]
    fn sizes_and_systems_come_out_in_table_order_once_each() {
        let mut rows = vec![
            row(0, System::RclpyToHorus, 900),
            row(0, System::RclpyRclpy, 1000),
            row(1, System::RclpyRclpy, 1000),
        ];
        rows[0].size = 1024;
        assert_eq!(sizes_of(&rows), vec![64, 1024]);
        assert_eq!(
            systems_of(&rows),
            vec![System::RclpyRclpy, System::RclpyToHorus]
        );
    }
}

//! The `block_wake` benchmark's `--json` document (a publisher under `Overflow::Block`
//! waiting for room: its wake-up latency and its CPU while waiting), its table and its
//! method. The binary measures and prints them; `horus-bench-report` renders the same.

use serde::{Deserialize, Serialize};

use crate::markdown::Table;
use crate::units::ns;

/// A wake-up slower than this counts as a slow round (the woken publisher ran only
/// milliseconds later: its CPU was busy).
pub const SLOW_NS: u64 = 5_000_000;

/// The wake-up latencies over all rounds, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakeNs {
    /// Fastest.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Slowest.
    pub max: u64,
}

/// What `block_wake --json` writes. The fields after `cpu_ms_per_s` were added later:
/// absent from older documents, whose method line then leaves them out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockWakeDoc {
    /// Wake-up rounds.
    pub rounds: usize,
    /// The wake-up latencies, ns.
    pub wake_ns: WakeNs,
    /// CPU of the waiting publisher thread, ms per s of wall time (mean over the waits).
    pub cpu_ms_per_s: f64,
    /// The same, each wait of 1 s.
    #[serde(default)]
    pub cpu_ms_per_s_each: Vec<f64>,
    /// How long the subscriber waited before freeing the slot, ms.
    #[serde(default)]
    pub gap_ms: Option<u64>,
    /// Rounds whose wake-up took over [`SLOW_NS`].
    #[serde(default)]
    pub slow_rounds: Option<usize>,
    /// Whether the publisher and subscriber threads were pinned to CPUs 0 and 1 (`None` in
    /// older documents, or when the run failed before it knew).
    #[serde(default)]
    pub pinned: Option<bool>,
    /// `--quick`: a smoke run.
    #[serde(default)]
    pub quick: bool,
    /// Every measurement that failed, one line each (the figures hold what was measured
    /// before it).
    #[serde(default)]
    pub errors: Vec<String>,
}

/// The wake-up latencies and the CPU while waiting, one table each.
pub fn tables(d: &BlockWakeDoc) -> [Table; 2] {
    let mut wake = Table::new([
        "wake-up latency",
        "rounds",
        "min",
        "median",
        "p99",
        "max",
        "rounds over 5 ms",
    ]);
    let w = d.wake_ns;
    // No round measured (the run failed first): no latency to show.
    let lat = |v: u64| {
        if d.rounds == 0 {
            "—".to_owned()
        } else {
            ns(v)
        }
    };
    wake.row([
        "subscriber frees the slot → publisher's send returns".to_owned(),
        d.rounds.to_string(),
        lat(w.min),
        lat(w.p50),
        lat(w.p99),
        lat(w.max),
        d.slow_rounds.map_or("?".to_owned(), |n| n.to_string()),
    ]);
    let mut cpu = Table::new([
        "CPU while waiting",
        "waits of 1 s",
        "ms per s (mean)",
        "each wait, ms per s",
    ]);
    // No wait measured because the run failed first: no mean to show (an older document
    // without the waits' figures, and without errors, keeps its mean).
    let failed_first = d.cpu_ms_per_s_each.is_empty() && !d.errors.is_empty();
    cpu.row([
        "the publisher thread, during a send that waits for room".to_owned(),
        if failed_first {
            "0".to_owned()
        } else if d.cpu_ms_per_s_each.is_empty() {
            "?".to_owned()
        } else {
            d.cpu_ms_per_s_each.len().to_string()
        },
        if failed_first {
            "—".to_owned()
        } else {
            format!("{:.1}", d.cpu_ms_per_s)
        },
        if failed_first {
            "—".to_owned()
        } else if d.cpu_ms_per_s_each.is_empty() {
            "?".to_owned()
        } else {
            d.cpu_ms_per_s_each
                .iter()
                .map(|c| format!("{c:.1}"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    ]);
    if d.quick {
        cpu.note("`--quick` run: a smoke run, not a measurement.");
    }
    [wake, cpu]
}

/// How the document was measured, one sentence.
pub fn method(d: &BlockWakeDoc) -> String {
    let threads = match d.pinned {
        Some(true) => "pinned to CPUs 0 and 1",
        Some(false) => "not pinned: a pin call failed or fewer than 2 CPUs",
        // The run failed before it knew (a thread panicked).
        None if !d.errors.is_empty() => "pinning not recorded: the run failed",
        // Older documents, written before it was recorded.
        None => "pinned to CPUs 0 and 1 where the machine has them",
    };
    let gap = d.gap_ms.map_or("a gap".to_owned(), |g| format!("{g} ms"));
    let waits = match d.cpu_ms_per_s_each.len() {
        0 => String::new(),
        n => format!(", over {n} waits"),
    };
    format!(
        "Method: one topic of depth 1 under `Block {{ timeout: 5 s }}`, a publisher thread and a \
         futex subscriber thread ({threads}), the ring kept full so every send waits. Wake-up \
         latency: the publisher starts a send on the full ring, the subscriber waits {gap} (the \
         publisher is asleep by then), takes `t0` and frees the slot with one receive; the \
         publisher takes `t1` as its send returns; `t1 - t0` over {} rounds (one monotonic \
         clock). CPU while waiting: the publisher thread's `CLOCK_THREAD_CPUTIME_ID` time over \
         a send that waits 1 s for room, per s of wall time{waits}{}.\n",
        d.rounds,
        if d.quick { "; `--quick`" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> BlockWakeDoc {
        BlockWakeDoc {
            rounds: 2000,
            wake_ns: WakeNs {
                min: 21_300,
                p50: 52_800,
                p99: 131_000,
                max: 12_400_000,
            },
            cpu_ms_per_s: 4.1,
            cpu_ms_per_s_each: vec![3.04, 6.4, 2.9],
            gap_ms: Some(2),
            slow_rounds: Some(1),
            pinned: Some(true),
            quick: false,
            errors: Vec::new(),
        }
    }

    #[test]
    fn the_tables_show_the_latencies_and_each_wait() {
        let [wake, cpu] = tables(&doc()).map(|t| t.to_markdown());
        assert!(
            wake.contains("| 2000 | 21.3 µs | 52.8 µs | 131.0 µs | 12.4 ms | 1 |"),
            "{wake}"
        );
        assert!(cpu.contains("| 3 | 4.1 | 3.0, 6.4, 2.9 |"), "{cpu}");
        assert!(!cpu.contains("--quick"), "{cpu}");
    }

    #[test]
    fn the_method_says_how_and_older_documents_parse() {
        let m = method(&doc());
        assert!(m.contains("(pinned to CPUs 0 and 1)"), "{m}");
        assert!(m.contains("waits 2 ms"), "{m}");
        assert!(m.contains("over 2000 rounds"), "{m}");
        assert!(m.ends_with("per s of wall time, over 3 waits.\n"), "{m}");
        // The shape the binary wrote before it wrote the method's fields.
        let old: BlockWakeDoc = serde_json::from_str(
            r#"{"rounds":500,"wake_ns":{"min":1,"p50":2,"p99":3,"max":4},"cpu_ms_per_s":5.000}"#,
        )
        .unwrap();
        assert_eq!((old.gap_ms, old.pinned, old.quick), (None, None, false));
        let [wake, cpu] = tables(&old).map(|t| t.to_markdown());
        assert!(
            wake.contains("| 500 | 1 ns | 2 ns | 3 ns | 4 ns | ? |"),
            "{wake}"
        );
        assert!(cpu.contains("| ? | 5.0 | ? |"), "{cpu}");
        assert!(method(&old).contains("waits a gap"));
        assert!(old.errors.is_empty());
    }

    #[test]
    fn a_run_that_failed_before_any_round_shows_no_latency() {
        let d = BlockWakeDoc {
            rounds: 0,
            wake_ns: WakeNs {
                min: 0,
                p50: 0,
                p99: 0,
                max: 0,
            },
            slow_rounds: Some(0),
            errors: vec!["send: timed out".to_owned()],
            ..doc()
        };
        let [wake, _] = tables(&d).map(|t| t.to_markdown());
        assert!(wake.contains("| 0 | — | — | — | — | 0 |"), "{wake}");
    }

    #[test]
    fn a_run_that_failed_before_its_cpu_waits_shows_no_cpu() {
        let d = BlockWakeDoc {
            cpu_ms_per_s: 0.0,
            cpu_ms_per_s_each: Vec::new(),
            pinned: None,
            errors: vec!["wake-up round 7: send: timed out".to_owned()],
            ..doc()
        };
        let [_, cpu] = tables(&d).map(|t| t.to_markdown());
        assert!(cpu.contains("| 0 | — | — |"), "{cpu}");
        assert!(!cpu.contains("0.0"), "{cpu}");
        let m = method(&d);
        assert!(m.contains("(pinning not recorded: the run failed)"), "{m}");
        // A run that failed after some waits shows those.
        let d = BlockWakeDoc {
            cpu_ms_per_s: 3.0,
            cpu_ms_per_s_each: vec![3.0],
            ..d
        };
        let [_, cpu] = tables(&d).map(|t| t.to_markdown());
        assert!(cpu.contains("| 1 | 3.0 | 3.0 |"), "{cpu}");
    }

    #[test]
    fn unpinned_threads_do_not_claim_why() {
        let d = BlockWakeDoc {
            pinned: Some(false),
            ..doc()
        };
        assert!(
            method(&d).contains("(not pinned: a pin call failed or fewer than 2 CPUs)"),
            "{}",
            method(&d)
        );
    }

    #[test]
    fn the_document_round_trips_through_json() {
        let d = BlockWakeDoc {
            quick: true,
            ..doc()
        };
        let back: BlockWakeDoc = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
        assert!(tables(&d)[1].to_markdown().contains("`--quick` run"));
    }
}

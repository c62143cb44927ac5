//! The rows of the `tf` benchmark's `--json` document (lookups; the host CPU of the lookup
//! processes) and what is drawn from them: medians over rounds and the per-round CPU ratio
//! shared ÷ per-process. The `tf` binary measures and prints them ([`crate::tf_tables`]);
//! `horus-bench-report` renders the same tables from the document.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Broadcast rate of every frame, Hz.
pub const RATE_HZ: u64 = 100;
/// Lookups per second of each process of the CPU scene.
pub const LOOKUPS_HZ: u64 = 100;
/// Lookups are made this far in the past: between two samples of every frame.
pub const LOOKBACK_NS: i64 = 500_000_000 + 5_000_000;

/// The two buffers measured, in the order of the tables.
pub const BUFFERS: [&str; 2] = ["shared", "per-process"];
/// The two languages measured, in the order of the tables.
pub const LANGUAGES: [&str; 2] = ["Rust", "Python"];

/// One language and buffer in one round: lookups of the 5-deep chain, each timed alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupRow {
    /// Round (0-based).
    pub round: usize,
    /// `Rust` or `Python`.
    pub language: String,
    /// `shared` or `per-process`.
    pub buffer: String,
    /// Lookups timed.
    pub lookups: u64,
    /// Median of the per-lookup times, ns (two clock reads included).
    pub median_ns: f64,
    /// 99th percentile of the per-lookup times, ns.
    pub p99_ns: f64,
    /// Wall time of all lookups / lookups, ns.
    pub mean_ns: f64,
}

/// One buffer in one round of the CPU scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuRow {
    /// Round (0-based).
    pub round: usize,
    /// `shared` or `per-process`.
    pub buffer: String,
    /// Lookup processes.
    pub processes: usize,
    /// Frames changing.
    pub frames: usize,
    /// The measured window, s of wall time.
    pub window_s: f64,
    /// CPU seconds of the lookup processes per second of wall time.
    pub cpu_cores: f64,
    /// Of which the process(es) feeding the buffer (shared: the one holding the feeder
    /// claim; per-process: all of them). `None` in documents written before it was measured.
    #[serde(default)]
    pub feeder_cores: Option<f64>,
    /// Lookup processes that fed the buffer (`None`: as `feeder_cores`).
    #[serde(default)]
    pub feeding_processes: Option<usize>,
    /// CPU seconds of the publisher process per second (the same work in both modes).
    pub publisher_cores: f64,
}

impl CpuRow {
    /// CPU of each lookup process that did not feed, cores; `None` when all fed.
    /// `None` too in documents without the feeders' figures.
    pub fn others_per_process(&self) -> Option<f64> {
        let n = self.processes.checked_sub(self.feeding_processes?)?;
        let feeder = self.feeder_cores?;
        (n > 0).then(|| (self.cpu_cores - feeder) / n as f64)
    }
}

/// What `tf --json` writes that the report reads (the document also holds the ratios the
/// binary drew from the rows, which [`cpu_ratios`] draws again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TfDoc {
    /// Rounds run.
    pub rounds: usize,
    /// `--quick`: a smoke run (its CPU window falls in the rings' first lap).
    #[serde(default)]
    pub quick: bool,
    /// Every lookup row.
    pub lookups: Vec<LookupRow>,
    /// Every CPU row.
    pub cpu: Vec<CpuRow>,
    /// The Python interpreter the Python lookups ran with; `None` when none with horus was
    /// found (or in documents written before it was recorded).
    #[serde(default)]
    pub python: Option<String>,
    /// Every measurement that failed, one line each (the rows hold what could be measured),
    /// listed for the reader: the verdicts go by the rows alone.
    #[serde(default)]
    pub errors: Vec<String>,
}

/// The median of `v` (the mean of the two middle values when their number is even; NaN
/// when empty): the statistics' shared median, so every section takes the same.
pub fn median(v: Vec<f64>) -> f64 {
    horus_bench::stats::median(&v)
}

/// The median of the values that are there; `None` when none is.
fn median_of_some(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = v.flatten().collect();
    (!v.is_empty()).then(|| median(v))
}

/// How many distinct rounds `rounds` holds.
fn distinct_rounds(rounds: impl Iterator<Item = usize>) -> usize {
    rounds.collect::<BTreeSet<usize>>().len()
}

/// One language and buffer: the medians over rounds of each statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupStat {
    /// `Rust` or `Python`.
    pub language: String,
    /// `shared` or `per-process`.
    pub buffer: String,
    /// Rounds measured: the distinct rounds of its rows.
    pub rounds: usize,
    /// Median over rounds of the per-round medians, ns.
    pub median_ns: f64,
    /// Median over rounds of the per-round p99s, ns.
    pub p99_ns: f64,
    /// Median over rounds of the per-round means, ns.
    pub mean_ns: f64,
}

/// The lookup statistics of every language and buffer measured, Rust first, shared first.
pub fn lookup_stats(rows: &[LookupRow]) -> Vec<LookupStat> {
    let mut out = Vec::new();
    for language in LANGUAGES {
        for buffer in BUFFERS {
            let rows: Vec<&LookupRow> = rows
                .iter()
                .filter(|r| r.language == language && r.buffer == buffer)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let of = |f: fn(&LookupRow) -> f64| median(rows.iter().map(|r| f(r)).collect());
            out.push(LookupStat {
                language: language.to_owned(),
                buffer: buffer.to_owned(),
                rounds: distinct_rounds(rows.iter().map(|r| r.round)),
                median_ns: of(|r| r.median_ns),
                p99_ns: of(|r| r.p99_ns),
                mean_ns: of(|r| r.mean_ns),
            });
        }
    }
    out
}

/// One buffer of the CPU scene: the medians over rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuStat {
    /// `shared` or `per-process`.
    pub buffer: String,
    /// Rounds measured: the distinct rounds of its rows.
    pub rounds: usize,
    /// Lookup processes, cores.
    pub cores: f64,
    /// Of which feeding, cores (`None`: not in the document).
    pub feeder_cores: Option<f64>,
    /// Feeding processes (`None`: not in the document).
    pub feeding_processes: Option<f64>,
    /// Each other lookup process, cores (`None`: all fed).
    pub others_per_process: Option<f64>,
    /// The publisher, cores.
    pub publisher_cores: f64,
}

/// The CPU statistics of each buffer measured, shared first.
pub fn cpu_stats(rows: &[CpuRow]) -> Vec<CpuStat> {
    BUFFERS
        .iter()
        .filter_map(|&buffer| {
            let rows: Vec<&CpuRow> = rows.iter().filter(|r| r.buffer == buffer).collect();
            if rows.is_empty() {
                return None;
            }
            let of = |f: fn(&CpuRow) -> f64| median(rows.iter().map(|r| f(r)).collect());
            Some(CpuStat {
                buffer: buffer.to_owned(),
                rounds: distinct_rounds(rows.iter().map(|r| r.round)),
                cores: of(|r| r.cpu_cores),
                feeder_cores: median_of_some(rows.iter().map(|r| r.feeder_cores)),
                feeding_processes: median_of_some(
                    rows.iter().map(|r| r.feeding_processes.map(|n| n as f64)),
                ),
                others_per_process: median_of_some(rows.iter().map(|r| r.others_per_process())),
                publisher_cores: of(|r| r.publisher_cores),
            })
        })
        .collect()
}

/// Shared ÷ per-process CPU in one round (the two modes ran one after the other).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundRatio {
    /// Round (0-based).
    pub round: usize,
    /// The lookup processes alone.
    pub lookups: f64,
    /// With the publisher added (the whole host).
    pub whole_host: f64,
}

/// The per-round ratios, in round order, of every round that measured both modes.
pub fn cpu_ratios(rows: &[CpuRow]) -> Vec<RoundRatio> {
    let mut rounds: Vec<usize> = rows.iter().map(|r| r.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    rounds
        .into_iter()
        .filter_map(|round| {
            let row = |mode: &str| rows.iter().find(|r| r.round == round && r.buffer == mode);
            let (s, p) = (row("shared")?, row("per-process")?);
            Some(RoundRatio {
                round,
                lookups: s.cpu_cores / p.cpu_cores,
                whole_host: (s.cpu_cores + s.publisher_cores) / (p.cpu_cores + p.publisher_cores),
            })
        })
        .collect()
}

/// Which of the document's rounds a figure is over, from the rounds of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// Rounds run: the document's `rounds`.
    pub run: usize,
    /// The distinct rounds `r` in `0..run` with a row of the figure.
    pub measured: usize,
    /// A row of the figure is outside `0..run`, or repeats a round: the document does not
    /// add up (edited, or written by a faulty run).
    pub inconsistent: bool,
}

impl Coverage {
    /// The coverage of a figure whose rows are of `rounds`, of `run` rounds run.
    pub fn of(run: usize, rounds: impl IntoIterator<Item = usize>) -> Coverage {
        let mut seen = BTreeSet::new();
        let mut inconsistent = false;
        for round in rounds {
            inconsistent |= round >= run || !seen.insert(round);
        }
        Coverage {
            run,
            measured: seen.iter().filter(|&&r| r < run).count(),
            inconsistent,
        }
    }

    /// Every round run (at least one) has the figure, once, and no other round does.
    pub fn complete(&self) -> bool {
        !self.inconsistent && self.run > 0 && self.measured == self.run
    }
}

/// The coverage of the lookups of `language` on `buffer`.
pub fn lookup_coverage(d: &TfDoc, language: &str, buffer: &str) -> Coverage {
    let rows = d.lookups.iter();
    Coverage::of(
        d.rounds,
        rows.filter(|r| r.language == language && r.buffer == buffer)
            .map(|r| r.round),
    )
}

/// The coverage of the CPU scene on `buffer`.
pub fn cpu_coverage(d: &TfDoc, buffer: &str) -> Coverage {
    Coverage::of(
        d.rounds,
        d.cpu.iter().filter(|r| r.buffer == buffer).map(|r| r.round),
    )
}

/// The coverage of the CPU ratio: the rounds with both scenes ([`cpu_ratios`]);
/// inconsistent when either scene's rows are.
pub fn ratio_coverage(d: &TfDoc) -> Coverage {
    let ratios = Coverage::of(d.rounds, cpu_ratios(&d.cpu).iter().map(|r| r.round));
    Coverage {
        inconsistent: ratios.inconsistent
            || BUFFERS.iter().any(|b| cpu_coverage(d, b).inconsistent),
        ..ratios
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(round: usize, buffer: &str, cores: f64, feeding: usize) -> CpuRow {
        CpuRow {
            round,
            buffer: buffer.to_owned(),
            processes: 20,
            frames: 200,
            window_s: 10.0,
            cpu_cores: cores,
            feeder_cores: Some(0.01 * feeding as f64),
            feeding_processes: Some(feeding),
            publisher_cores: 0.02,
        }
    }

    fn lookup(round: usize, language: &str, buffer: &str, median_ns: f64) -> LookupRow {
        LookupRow {
            round,
            language: language.to_owned(),
            buffer: buffer.to_owned(),
            lookups: 1000,
            median_ns,
            p99_ns: 2.0 * median_ns,
            mean_ns: median_ns + 1.0,
        }
    }

    #[test]
    fn lookup_stats_take_the_median_over_rounds_in_table_order() {
        let rows = [
            lookup(0, "Python", "shared", 1500.0),
            lookup(0, "Rust", "per-process", 950.0),
            lookup(0, "Rust", "shared", 900.0),
            lookup(1, "Rust", "shared", 700.0),
            lookup(2, "Rust", "shared", 800.0),
        ];
        let s = lookup_stats(&rows);
        let order: Vec<(&str, &str)> = s
            .iter()
            .map(|s| (s.language.as_str(), s.buffer.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("Rust", "shared"),
                ("Rust", "per-process"),
                ("Python", "shared")
            ]
        );
        assert_eq!(
            (s[0].rounds, s[0].median_ns, s[0].p99_ns),
            (3, 800.0, 1600.0)
        );
        assert_eq!((s[2].rounds, s[2].median_ns), (1, 1500.0));
    }

    #[test]
    fn the_median_is_the_shared_one_the_mean_of_the_two_middle_values() {
        assert_eq!(median(vec![0.231, 0.1]), (0.1 + 0.231) / 2.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn an_older_document_without_the_feeders_parses() {
        // The shape `tf --json` wrote at e1eb4df: no feeder figures, no python, no errors.
        let old = r#"{"benchmark":"tf","rounds":1,"quick":true,
            "lookups":[{"round":0,"language":"Rust","buffer":"shared","lookups":20000,
                "median_ns":900.0,"p99_ns":1300.0,"mean_ns":950.0}],
            "cpu":[{"round":0,"buffer":"shared","processes":20,"frames":200,"window_s":3.0,
                "cpu_cores":0.1,"publisher_cores":0.02}],
            "cpu_ratio_shared_over_per_process":null}"#;
        let d: TfDoc = serde_json::from_str(old).unwrap();
        assert_eq!(
            (d.cpu[0].feeder_cores, d.cpu[0].feeding_processes),
            (None, None)
        );
        assert!(d.errors.is_empty() && d.python.is_none());
        assert_eq!(d.cpu[0].others_per_process(), None);
        let s = cpu_stats(&d.cpu);
        assert_eq!((s[0].feeder_cores, s[0].feeding_processes), (None, None));
        assert_eq!(s[0].cores, 0.1);
    }

    #[test]
    fn cpu_ratios_pair_the_two_modes_of_each_round() {
        let rows = [
            cpu(0, "shared", 0.1, 1),
            cpu(0, "per-process", 0.5, 20),
            cpu(1, "per-process", 0.4, 20),
            cpu(1, "shared", 0.2, 1),
            cpu(2, "shared", 0.2, 1),
        ];
        let r = cpu_ratios(&rows);
        assert_eq!(r.len(), 2, "round 2 has no per-process row");
        assert_eq!((r[0].round, r[0].lookups), (0, 0.1 / 0.5));
        assert_eq!(r[1].lookups, 0.2 / 0.4);
        assert_eq!(r[0].whole_host, (0.1 + 0.02) / (0.5 + 0.02));
        let s = cpu_stats(&rows);
        assert_eq!(s[0].buffer, "shared");
        assert_eq!(s[0].cores, 0.2);
        assert!(s[1].others_per_process.is_none(), "all 20 fed");
        assert!(s[0].others_per_process.is_some());
    }

    #[test]
    fn coverage_counts_each_round_run_once_and_marks_rows_that_do_not_add_up() {
        let c = |run, rounds: &[usize]| Coverage::of(run, rounds.iter().copied());
        let all = c(3, &[2, 0, 1]);
        assert_eq!((all.measured, all.inconsistent), (3, false));
        assert!(all.complete());
        let some = c(3, &[0, 2]);
        assert_eq!((some.measured, some.inconsistent), (2, false));
        assert!(!some.complete());
        // A round repeated: counted once, and inconsistent.
        let repeated = c(3, &[0, 2, 0]);
        assert_eq!((repeated.measured, repeated.inconsistent), (2, true));
        assert!(!repeated.complete());
        // Rows of rounds not run: not counted, and inconsistent.
        let outside = c(3, &[0, 2, 7]);
        assert_eq!((outside.measured, outside.inconsistent), (2, true));
        let over = c(1, &[0, 1, 2]);
        assert_eq!((over.measured, over.inconsistent), (1, true));
        assert!(!over.complete());
        let none_run = c(0, &[0, 1, 2]);
        assert_eq!((none_run.measured, none_run.inconsistent), (0, true));
        // No round run and no row: consistent, but never complete.
        assert!(!c(0, &[]).inconsistent && !c(0, &[]).complete());
    }

    #[test]
    fn the_ratio_is_inconsistent_when_a_scene_repeats_a_round() {
        let d = TfDoc {
            rounds: 2,
            quick: false,
            lookups: vec![lookup(0, "Rust", "shared", 900.0)],
            cpu: vec![
                cpu(0, "shared", 0.1, 1),
                cpu(0, "per-process", 0.5, 20),
                cpu(1, "shared", 0.1, 1),
                cpu(1, "per-process", 0.5, 20),
            ],
            python: None,
            errors: Vec::new(),
        };
        assert!(ratio_coverage(&d).complete());
        assert_eq!(lookup_coverage(&d, "Rust", "shared").measured, 1);
        let mut twice = d.clone();
        twice.cpu.push(cpu(1, "shared", 0.1, 1));
        let c = ratio_coverage(&twice);
        assert_eq!((c.measured, c.inconsistent), (2, true));
        assert!(cpu_coverage(&twice, "shared").inconsistent);
        assert!(!cpu_coverage(&twice, "per-process").inconsistent);
        // The statistics count the distinct rounds of their rows.
        assert_eq!(cpu_stats(&twice.cpu)[0].rounds, 2);
        let rows = [
            lookup(0, "Rust", "shared", 1.0),
            lookup(0, "Rust", "shared", 2.0),
        ];
        assert_eq!(lookup_stats(&rows)[0].rounds, 1);
    }
}

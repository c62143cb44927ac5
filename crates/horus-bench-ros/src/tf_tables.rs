//! What the `tf` binary prints and `docs/benchmarks.md` shows of its document: the lookup
//! table, the host-CPU tables, the targets with their verdicts, and the method.

use std::fmt;

use horus_bench::markdown::Table;

use crate::tf_rows::{
    cpu_coverage, cpu_ratios, cpu_stats, lookup_coverage, lookup_stats, median, ratio_coverage,
    Coverage, TfDoc, LOOKBACK_NS, LOOKUPS_HZ, RATE_HZ,
};

/// Target: the median Rust lookup on the shared buffer, ns.
pub const RUST_LOOKUP_TARGET_NS: f64 = 1_000.0;
/// Target: the median Python lookup on the shared buffer, ns.
pub const PYTHON_LOOKUP_TARGET_NS: f64 = 5_000.0;
/// Target: the lookup processes' CPU, shared buffer ÷ per-process buffers (median over
/// rounds).
pub const CPU_RATIO_TARGET: f64 = 0.2;

/// A figure's `rounds` cell: `measured of run`, marked when its rows do not add up.
struct RoundsCell(Coverage);

impl fmt::Display for RoundsCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Coverage {
            run,
            measured,
            inconsistent,
        } = self.0;
        write!(f, "{measured} of {run}")?;
        if inconsistent {
            f.write_str(" (inconsistent)")?;
        }
        Ok(())
    }
}

/// Per language and buffer: the medians over rounds of the per-round median, p99 and mean,
/// and the rounds they are over.
pub fn lookups(d: &TfDoc) -> Table {
    let mut t = Table::new([
        "language",
        "buffer",
        "median ns",
        "p99 ns",
        "mean ns",
        "rounds",
    ])
    .left(1);
    for s in lookup_stats(&d.lookups) {
        let rounds = RoundsCell(lookup_coverage(d, &s.language, &s.buffer));
        t.row([
            s.language,
            s.buffer,
            format!("{:.0}", s.median_ns),
            format!("{:.0}", s.p99_ns),
            format!("{:.0}", s.mean_ns),
            rounds.to_string(),
        ]);
    }
    t
}

/// Per buffer: the lookup processes' CPU (medians over rounds), of which feeding, each
/// other process, and the publisher; and the rounds they are over.
pub fn cpu(d: &TfDoc) -> Table {
    let processes = d.cpu.first().map_or(0, |r| r.processes);
    let mut t = Table::new([
        "buffer".to_owned(),
        format!("{processes} lookup processes, cores"),
        "of which feeding (processes)".to_owned(),
        "the others, per process".to_owned(),
        "publisher, cores".to_owned(),
        "rounds".to_owned(),
    ]);
    for s in cpu_stats(&d.cpu) {
        let rounds = RoundsCell(cpu_coverage(d, &s.buffer));
        t.row([
            s.buffer,
            format!("{:.3}", s.cores),
            format!(
                "{} ({})",
                s.feeder_cores.map_or("?".to_owned(), |c| format!("{c:.3}")),
                s.feeding_processes
                    .map_or("?".to_owned(), |n| format!("{n:.0}"))
            ),
            s.others_per_process
                .map_or("—".to_owned(), |c| format!("{c:.4}")),
            format!("{:.3}", s.publisher_cores),
            rounds.to_string(),
        ]);
    }
    t
}

/// Per round: shared ÷ per-process CPU, the lookup processes and the whole host.
pub fn cpu_per_round(d: &TfDoc) -> Table {
    let mut t = Table::new([
        "round",
        "shared / per-process, lookup processes",
        "whole host (with the publisher)",
    ]);
    for r in cpu_ratios(&d.cpu) {
        t.row([
            (r.round + 1).to_string(),
            format!("{:.3} ×", r.lookups),
            format!("{:.3} ×", r.whole_host),
        ]);
    }
    t
}

/// The verdict on a figure within (`ok`) or over its target: PASS or MISS when every round
/// run measured it once ([`Coverage::complete`]); a MISS, marked incomplete, when some round
/// did not (whatever the errors say, and whatever the other rounds measured), or when no
/// round was run; a MISS marked inconsistent when a row of it is outside the rounds run or
/// repeats a round.
fn verdict(ok: bool, c: Coverage) -> String {
    if c.inconsistent {
        "MISS (inconsistent rounds)".to_owned()
    } else if !c.complete() {
        format!("MISS (incomplete: {} of {} rounds)", c.measured, c.run)
    } else if ok {
        "PASS".to_owned()
    } else {
        "MISS".to_owned()
    }
}

/// The `measured` and `verdict` cells of a figure, `None`: no round measured it. Not
/// measured by any round: a MISS, but for Python lookups that no interpreter with horus was
/// found to run (`not run`, not judged).
fn judged(figure: Option<(String, bool)>, r: Coverage, not_run: bool) -> [String; 2] {
    match figure {
        Some((value, ok)) => [value, verdict(ok, r)],
        None if not_run => ["not run".to_owned(), "—".to_owned()],
        None => ["not measured".to_owned(), verdict(false, r)],
    }
}

/// The targets: Rust and Python lookup medians on the shared buffer, the host CPU ratio
/// (median over rounds, with its range) and the same with the publisher added; each with
/// the rounds it is over. A figure that some round did not measure, or whose rows do not
/// add up to one per round run, is never PASS.
pub fn targets(d: &TfDoc) -> Table {
    let mut t = Table::new(["target", "measured", "verdict", "rounds"]).left(2);
    let stats = lookup_stats(&d.lookups);
    for (language, limit) in [
        ("Rust", RUST_LOOKUP_TARGET_NS),
        ("Python", PYTHON_LOOKUP_TARGET_NS),
    ] {
        let what = format!(
            "{language} lookup median ≤ {} µs (shared buffer)",
            limit / 1e3
        );
        let s = stats
            .iter()
            .find(|s| s.language == language && s.buffer == "shared");
        let r = lookup_coverage(d, language, "shared");
        let figure = s.map(|s| (format!("{:.0} ns", s.median_ns), s.median_ns <= limit));
        let not_run = language == "Python" && d.python.is_none();
        let [measured, verdict] = judged(figure, r, not_run);
        t.row([what, measured, verdict, RoundsCell(r).to_string()]);
    }
    let ratios = cpu_ratios(&d.cpu);
    let lookups: Vec<f64> = ratios.iter().map(|r| r.lookups).collect();
    let (lo, hi) = lookups
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| {
            (a.min(r), b.max(r))
        });
    let what = format!(
        "host CPU shared ≤ {CPU_RATIO_TARGET} × per-process (lookup processes; median of {} \
         rounds{})",
        lookups.len(),
        if lookups.is_empty() {
            String::new()
        } else {
            format!(", range {lo:.3}–{hi:.3}")
        }
    );
    let whole = "the same with the publisher added (whole host)".to_owned();
    let r = ratio_coverage(d);
    let ratio = |v: Vec<f64>| {
        (!v.is_empty()).then(|| {
            let m = median(v);
            (format!("{m:.3} ×"), m <= CPU_RATIO_TARGET)
        })
    };
    for (what, figure) in [
        (what, ratio(lookups)),
        (whole, ratio(ratios.iter().map(|r| r.whole_host).collect())),
    ] {
        let [measured, verdict] = judged(figure, r, false);
        t.row([what, measured, verdict, RoundsCell(r).to_string()]);
    }
    if d.quick {
        t.note(
            "`--quick` run: a smoke run, not a measurement (its CPU window falls in the rings' \
             first lap, when every process also pays a page fault per new ring page).",
        );
    }
    t
}

/// How the document was measured, one line each.
pub fn method(d: &TfDoc) -> Vec<String> {
    let lookups = d.lookups.first().map_or(0, |r| r.lookups);
    vec![
        format!(
            "lookups: a 5-deep chain `map → c0_f1 → … → c0_f5`, every frame broadcast at \
             {RATE_HZ} Hz, looked up {} ms in the past (between two samples: interpolation on \
             every hop); {lookups} lookups per language and buffer and round, each between two \
             clock reads, after an untimed warm-up (Rust: this process; Python: {})",
            LOOKBACK_NS / 1_000_000,
            match (d.lookups.iter().any(|r| r.language == "Python"), &d.python) {
                (true, _) => "a child interpreter, `horus.tf.Buffer.lookup`".to_owned(),
                (false, Some(py)) =>
                    format!("failed with `{py}`, see the measurements that failed"),
                (false, None) => "not run, no interpreter with horus found".to_owned(),
            }
        ),
        cpu_method(d),
        format!(
            "{} rounds, the two buffers in alternating order each round; each figure is the \
             median over the rounds that measured it (its `rounds` column: a round that failed \
             leaves it out, and a target it leaves out of is never PASS){}",
            d.rounds,
            if d.quick {
                "; `--quick` (a smoke run)"
            } else {
                ""
            }
        ),
    ]
}

/// The method line of the host CPU scene: not measured when no round has a CPU row (its
/// processes, frames and window are in the rows).
fn cpu_method(d: &TfDoc) -> String {
    let Some(first) = d.cpu.first() else {
        return "host CPU: not measured (no round has a CPU scene's row)".to_owned();
    };
    let window = median(d.cpu.iter().map(|r| r.window_s).collect());
    format!(
        "host CPU: {} processes each doing {LOOKUPS_HZ} lookups/s of 5-deep chains while {} \
         frames change at {RATE_HZ} Hz; each process's CPU clock (`clock_getcpuclockid`: every \
         thread, ns) over a {window:.1} s window, {}; the publisher is the same in both modes \
         and reported apart",
        first.processes,
        first.frames,
        if d.quick {
            "`--quick`: the start-up window, in the rings' first lap"
        } else {
            "in the steady state: the window opens once every frame's ring has been written \
             round once"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tf_rows::{CpuRow, LookupRow};

    fn lookup_row(round: usize, language: &str, buffer: &str, median_ns: f64) -> LookupRow {
        LookupRow {
            round,
            language: language.to_owned(),
            buffer: buffer.to_owned(),
            lookups: 200_000,
            median_ns,
            p99_ns: 1300.0,
            mean_ns: 970.4,
        }
    }

    fn cpu_row(round: usize, buffer: &str, cores: f64, feeding: usize) -> CpuRow {
        CpuRow {
            round,
            buffer: buffer.to_owned(),
            processes: 20,
            frames: 200,
            window_s: 10.01,
            cpu_cores: cores,
            feeder_cores: Some(0.008 * feeding as f64),
            feeding_processes: Some(feeding),
            publisher_cores: 0.014,
        }
    }

    fn doc() -> TfDoc {
        TfDoc {
            rounds: 2,
            quick: false,
            lookups: vec![
                lookup_row(0, "Rust", "shared", 901.0),
                lookup_row(0, "Rust", "per-process", 961.0),
                lookup_row(1, "Rust", "shared", 880.0),
                lookup_row(1, "Rust", "per-process", 990.0),
            ],
            cpu: vec![
                cpu_row(0, "shared", 0.125, 1),
                cpu_row(0, "per-process", 0.542, 20),
                cpu_row(1, "per-process", 0.5, 20),
                cpu_row(1, "shared", 0.05, 1),
            ],
            python: None,
            errors: Vec::new(),
        }
    }

    #[test]
    fn the_lookup_table_has_a_row_per_language_and_buffer_measured() {
        let md = lookups(&doc()).to_markdown();
        assert!(md.contains("| Rust | shared | 890 | 1300 | 970 |"), "{md}");
        assert!(md.contains("| Rust | per-process | 976 |"), "{md}");
        assert!(!md.contains("Python"), "{md}");
    }

    #[test]
    fn the_cpu_tables_show_each_buffer_and_each_round() {
        let md = cpu(&doc()).to_markdown();
        assert!(
            md.contains("| buffer | 20 lookup processes, cores |"),
            "{md}"
        );
        assert!(
            md.contains("| shared | 0.087 | 0.008 (1) | 0.0042 | 0.014 |"),
            "{md}"
        );
        assert!(
            md.contains("| per-process | 0.521 | 0.160 (20) | — | 0.014 |"),
            "{md}"
        );
        let md = cpu_per_round(&doc()).to_markdown();
        assert!(md.contains("| 1 | 0.231 × | 0.250 × |"), "{md}");
        assert!(md.contains("| 2 | 0.100 × |"), "{md}");
    }

    #[test]
    fn the_targets_are_judged_and_an_absent_python_says_not_run() {
        let md = targets(&doc()).to_markdown();
        assert!(
            md.contains("| Rust lookup median ≤ 1 µs (shared buffer) | 890 ns | PASS |"),
            "{md}"
        );
        assert!(
            md.contains("| Python lookup median ≤ 5 µs (shared buffer) | not run | — |"),
            "{md}"
        );
        // Rounds 0.100 and 0.231: the median is their mean, 0.165, within the target.
        assert!(
            md.contains("median of 2 rounds, range 0.100–0.231) | 0.165 × | PASS |"),
            "{md}"
        );
        assert!(!md.contains("--quick"), "{md}");
        let mut d = doc();
        d.lookups[0].median_ns = 1000.0;
        d.lookups[2].median_ns = 1200.0;
        d.cpu[3].cpu_cores = 0.15;
        let md = targets(&d).to_markdown();
        assert!(md.contains("| 1100 ns | MISS |"), "{md}");
        // Rounds 0.231 and 0.300: 0.265, over the target.
        assert!(md.contains("| 0.265 × | MISS |"), "{md}");
    }

    #[test]
    fn a_doc_without_cpu_rows_says_not_measured_and_quick_says_so() {
        let mut d = doc();
        d.cpu.clear();
        d.quick = true;
        let md = targets(&d).to_markdown();
        assert!(
            md.contains(
                "median of 0 rounds) | not measured | MISS (incomplete: 0 of 2 rounds) | 0 of 2 |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| the same with the publisher added (whole host) | not measured | MISS \
                 (incomplete: 0 of 2 rounds) | 0 of 2 |"
            ),
            "{md}"
        );
        assert!(md.contains("`--quick` run: a smoke run"), "{md}");
        let m = method(&d);
        assert!(m[2].ends_with("`--quick` (a smoke run)"));
        // No processes, frames or NaN window to report.
        assert_eq!(
            m[1],
            "host CPU: not measured (no round has a CPU scene's row)"
        );
    }

    #[test]
    fn a_python_given_that_measured_nothing_is_a_miss_not_absent() {
        let mut d = doc();
        d.python = Some(".venv/bin/python".to_owned());
        let md = targets(&d).to_markdown();
        assert!(
            md.contains(
                "| Python lookup median ≤ 5 µs (shared buffer) | not measured | MISS \
                 (incomplete: 0 of 2 rounds) | 0 of 2 |"
            ),
            "{md}"
        );
        let m = method(&d);
        assert!(
            m[0].ends_with(
                "(Rust: this process; Python: failed with `.venv/bin/python`, see the \
                 measurements that failed)"
            ),
            "{}",
            m[0]
        );
    }

    #[test]
    fn an_older_document_renders_unknown_feeders_as_a_question_mark() {
        let mut d = doc();
        for r in &mut d.cpu {
            r.feeder_cores = None;
            r.feeding_processes = None;
        }
        let md = cpu(&d).to_markdown();
        assert!(
            md.contains("| shared | 0.087 | ? (?) | — | 0.014 |"),
            "{md}"
        );
    }

    #[test]
    fn the_method_names_the_scene() {
        let m = method(&doc());
        assert!(m[0].contains("looked up 505 ms in the past"), "{}", m[0]);
        assert!(m[0].contains("200000 lookups per language"), "{}", m[0]);
        assert!(
            m[1].contains("20 processes each doing 100 lookups/s"),
            "{}",
            m[1]
        );
        assert!(
            m[1].contains("over a 10.0 s window, in the steady state"),
            "{}",
            m[1]
        );
        assert!(m[2].starts_with("2 rounds"), "{}", m[2]);
        assert!(
            m[0].ends_with(
                "(Rust: this process; Python: not run, no interpreter with horus found)"
            ),
            "{}",
            m[0]
        );
    }

    /// The Rust shared-buffer target of `d`: its `measured | verdict | rounds` cells.
    fn rust_target(d: &TfDoc) -> String {
        let md = targets(d).to_markdown();
        let row = md
            .lines()
            .find(|l| l.starts_with("| Rust lookup median"))
            .unwrap()
            .to_owned();
        row.split(" | ").skip(1).collect::<Vec<_>>().join(" | ")
    }

    #[test]
    fn a_figure_missing_from_a_round_without_an_error_is_never_pass() {
        // Round 2's Rust shared lookups are absent and no error names them: 880 ns in
        // round 1 is within the target, but the figure is over 1 of the 2 rounds.
        let mut d = doc();
        d.lookups
            .retain(|r| !(r.round == 1 && r.buffer == "shared"));
        assert_eq!(
            rust_target(&d),
            "901 ns | MISS (incomplete: 1 of 2 rounds) | 1 of 2 |"
        );
        // The per-process figure, measured in both rounds, is in the table as before.
        let md = lookups(&d).to_markdown();
        assert!(md.contains("| Rust | per-process | 976 |"), "{md}");
        assert!(
            md.contains("| Rust | shared | 901 | 1300 | 970 | 1 of 2 |"),
            "{md}"
        );
    }

    #[test]
    fn a_figure_missing_from_a_round_with_an_error_is_never_pass_whatever_the_error_says() {
        let mut d = doc();
        d.lookups
            .retain(|r| !(r.round == 1 && r.buffer == "shared"));
        let incomplete = "901 ns | MISS (incomplete: 1 of 2 rounds) | 1 of 2 |";
        for error in [
            "round 2: lookups: no map <- c0_f5 after 20 s",
            // Naming another figure, or no figure at all: the same verdict.
            "round 2: host CPU (shared): a lookup process failed",
            "something else",
        ] {
            d.errors = vec![error.to_owned()];
            assert_eq!(rust_target(&d), incomplete, "{error}");
        }
        // A CPU scene missing from a round: its ratio is over the other round only.
        let mut d = doc();
        d.cpu
            .retain(|r| !(r.round == 1 && r.buffer == "per-process"));
        d.errors = vec!["round 2: host CPU (per-process): a lookup process failed".to_owned()];
        let md = targets(&d).to_markdown();
        assert!(
            md.contains(
                "median of 1 rounds, range 0.231–0.231) | 0.231 × | MISS (incomplete: 1 of 2 \
                 rounds) | 1 of 2 |"
            ),
            "{md}"
        );
    }

    #[test]
    fn a_figure_present_in_every_round_is_judged_whatever_the_errors_say() {
        let mut d = doc();
        d.errors = vec!["round 2: lookups: no map <- c0_f5 after 20 s".to_owned()];
        assert_eq!(rust_target(&d), "890 ns | PASS | 2 of 2 |");
        d.lookups[0].median_ns = 1000.0;
        d.lookups[2].median_ns = 1200.0;
        assert_eq!(rust_target(&d), "1100 ns | MISS | 2 of 2 |");
    }

    #[test]
    fn each_table_says_the_rounds_its_figures_are_over() {
        // `--rounds 3`: the Rust lookups failed in rounds 2 and 3, Python's per-process
        // lookups in round 1, the per-process CPU scene in round 2.
        let mut d = doc();
        d.rounds = 3;
        d.python = Some(".venv/bin/python".to_owned());
        d.lookups = vec![
            lookup_row(0, "Rust", "shared", 901.0),
            lookup_row(0, "Rust", "per-process", 961.0),
            lookup_row(0, "Python", "shared", 1500.0),
            lookup_row(1, "Python", "shared", 1400.0),
            lookup_row(1, "Python", "per-process", 1400.0),
            lookup_row(2, "Python", "shared", 1450.0),
            lookup_row(2, "Python", "per-process", 1400.0),
        ];
        d.cpu = vec![
            cpu_row(0, "shared", 0.05, 1),
            cpu_row(0, "per-process", 0.5, 20),
            cpu_row(1, "shared", 0.3, 1),
            cpu_row(2, "per-process", 0.5, 20),
            cpu_row(2, "shared", 0.05, 1),
        ];
        let md = targets(&d).to_markdown();
        assert!(
            md.contains(
                "| Rust lookup median ≤ 1 µs (shared buffer) | 901 ns | MISS (incomplete: 1 of 3 \
                 rounds) | 1 of 3 |"
            ),
            "{md}"
        );
        // Two rounds of 0.100 each are within the target; the third round did not measure it.
        assert!(
            md.contains(
                "median of 2 rounds, range 0.100–0.100) | 0.100 × | MISS (incomplete: 2 of 3 \
                 rounds) | 2 of 3 |"
            ),
            "{md}"
        );
        // Python's shared buffer was measured in every round: judged.
        assert!(
            md.contains(
                "| Python lookup median ≤ 5 µs (shared buffer) | 1450 ns | PASS | 3 of 3 |"
            ),
            "{md}"
        );
        let md = lookups(&d).to_markdown();
        assert!(
            md.contains("| Python | per-process | 1400 | 1300 | 970 | 2 of 3 |"),
            "{md}"
        );
        let md = cpu(&d).to_markdown();
        assert!(
            md.contains("| per-process | 0.500 | 0.160 (20) | — | 0.014 | 2 of 3 |"),
            "{md}"
        );
        // Nothing measured at all: a MISS; Python without an interpreter is not run.
        d.lookups.clear();
        d.cpu.clear();
        d.python = None;
        assert_eq!(
            rust_target(&d),
            "not measured | MISS (incomplete: 0 of 3 rounds) | 0 of 3 |"
        );
        let md = targets(&d).to_markdown();
        assert!(
            md.contains("| Python lookup median ≤ 5 µs (shared buffer) | not run | — | 0 of 3 |"),
            "{md}"
        );
    }

    #[test]
    fn a_round_repeated_is_never_pass() {
        // `rounds: 3`, the Rust shared lookups of rounds 0, 2 and 0 again: three rows, but
        // round 1 is missing.
        let mut d = doc();
        d.rounds = 3;
        d.lookups = vec![
            lookup_row(0, "Rust", "shared", 901.0),
            lookup_row(2, "Rust", "shared", 880.0),
            lookup_row(0, "Rust", "shared", 901.0),
        ];
        assert_eq!(
            rust_target(&d),
            "901 ns | MISS (inconsistent rounds) | 2 of 3 (inconsistent) |"
        );
        let md = lookups(&d).to_markdown();
        assert!(md.contains("| 2 of 3 (inconsistent) |"), "{md}");
    }

    #[test]
    fn cpu_rows_of_a_round_not_run_are_never_pass() {
        // `rounds: 3`, both CPU scenes in rounds 0, 2 and 7: three ratios, two of rounds run.
        let mut d = doc();
        d.rounds = 3;
        d.cpu = [0, 2, 7]
            .into_iter()
            .flat_map(|r| {
                [
                    cpu_row(r, "shared", 0.05, 1),
                    cpu_row(r, "per-process", 0.5, 20),
                ]
            })
            .collect();
        let md = targets(&d).to_markdown();
        assert!(
            md.contains(
                "median of 3 rounds, range 0.100–0.100) | 0.100 × | MISS (inconsistent \
                 rounds) | 2 of 3 (inconsistent) |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| the same with the publisher added (whole host) | 0.125 × | MISS \
                 (inconsistent rounds) | 2 of 3 (inconsistent) |"
            ),
            "{md}"
        );
        let md = cpu(&d).to_markdown();
        assert!(md.contains("| 2 of 3 (inconsistent) |"), "{md}");
    }

    #[test]
    fn more_rounds_of_rows_than_rounds_run_are_never_pass() {
        // `rounds: 1` with three rounds of rows.
        let mut d = doc();
        d.rounds = 1;
        d.lookups = (0..3)
            .map(|r| lookup_row(r, "Rust", "shared", 900.0))
            .collect();
        assert_eq!(
            rust_target(&d),
            "900 ns | MISS (inconsistent rounds) | 1 of 1 (inconsistent) |"
        );
    }

    #[test]
    fn rows_without_a_round_run_are_never_pass() {
        // `rounds: 0` with rows; and with none.
        let mut d = doc();
        d.rounds = 0;
        d.lookups = (0..3)
            .map(|r| lookup_row(r, "Rust", "shared", 900.0))
            .collect();
        assert_eq!(
            rust_target(&d),
            "900 ns | MISS (inconsistent rounds) | 0 of 0 (inconsistent) |"
        );
        d.lookups.clear();
        assert_eq!(
            rust_target(&d),
            "not measured | MISS (incomplete: 0 of 0 rounds) | 0 of 0 |"
        );
    }
}

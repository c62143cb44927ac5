//! The `logging` benchmark: the cost of one log call on the calling thread, for horus-log
//! beside `tracing` (with `tracing-appender`'s non-blocking writer) and `log` +
//! `env_logger`, at message sizes 32 B … 8 KiB, in interleaved rounds.
//!
//! The crate `horus-bench-loggers` sets the loggers up, measures and is the `logging`
//! binary; this file holds the rows, the tables and the per-call cost targets at 32 B
//! (the report reads them without linking any logger).

use serde::{Deserialize, Serialize};

use crate::markdown::Table;

/// Message sizes of the reference report's table.
pub const SIZES: [usize; 9] = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
/// The per-call cost targets at 32 B: median and p99 per call, ns.
pub const TARGET_MEDIAN_NS: u64 = 25;
/// See [`TARGET_MEDIAN_NS`].
pub const TARGET_P99_NS: u64 = 100;
/// Calls timed together in the batch pass (one timer pair per batch, divided by this).
pub const BATCH_CALLS: u64 = 64;

/// One system at one size in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogRow {
    /// `horus`, `tracing`, `env_logger`.
    pub system: String,
    /// Message bytes.
    pub size: usize,
    /// Round (0-based).
    pub round: usize,
    /// Calls measured (each of the two passes).
    pub calls: u64,
    /// Untimed pass: wall time of all calls / calls, ns.
    pub avg_ns: f64,
    /// Timed pass: per-call median, ns (one timer read included).
    pub median_ns: u64,
    /// Timed pass: per-call 99th percentile, ns.
    pub p99_ns: u64,
    /// Timed pass: slowest call, ns.
    pub max_ns: u64,
    /// Batch pass: calls timed together [`BATCH_CALLS`] at a time, per call: the median
    /// over batches, ns (one timer pair per batch, i.e. 1/64 of one per call). `None` in
    /// results from before the batch pass existed.
    #[serde(default)]
    pub batch_median_ns: Option<f64>,
    /// Batch pass: the 99th percentile over batches, per call, ns.
    #[serde(default)]
    pub batch_p99_ns: Option<f64>,
    /// Cost of the timer pair inside every timed sample (the clock's calibration), ns.
    #[serde(default)]
    pub timer_pair_ns: f64,
    /// Records the system dropped during both passes (ring or channel full); `None`
    /// when it does not count them.
    pub dropped: Option<u64>,
}

/// Median of `v` with its range, as a cell.
fn cell(mut v: Vec<f64>) -> String {
    if v.is_empty() {
        return "—".into();
    }
    v.sort_by(f64::total_cmp);
    let med = v[v.len() / 2];
    if v.len() == 1 {
        format!("{med:.0}")
    } else {
        format!("{med:.0} [{:.0}–{:.0}]", v[0], v[v.len() - 1])
    }
}

fn values(rows: &[LogRow], system: &str, size: usize, f: Stat) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.system == system && r.size == size)
        .filter_map(f)
        .collect()
}

/// A statistic of a row (`None`: not in that row).
type Stat = fn(&LogRow) -> Option<f64>;

/// The systems present in `rows`, in first-seen order.
pub fn systems_of(rows: &[LogRow]) -> Vec<String> {
    let mut s: Vec<String> = Vec::new();
    for r in rows {
        if !s.contains(&r.system) {
            s.push(r.system.clone());
        }
    }
    s
}

/// One table: a row per system, a column per size, the statistic `f` as the median over
/// rounds with its [min–max].
pub fn table(rows: &[LogRow], f: Stat) -> Table {
    let sizes: Vec<usize> = SIZES
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.size == *s))
        .collect();
    let mut t = Table::new(
        std::iter::once("system".to_owned()).chain(sizes.iter().map(|s| format!("{s} B"))),
    );
    for sys in systems_of(rows) {
        t.row(
            std::iter::once(sys.clone())
                .chain(sizes.iter().map(|&s| cell(values(rows, &sys, s, f)))),
        );
    }
    t
}

/// The statistics tables and the drops: `(title, table)`.
pub fn tables(rows: &[LogRow]) -> Vec<(&'static str, Table)> {
    vec![
        (
            "average ns per call (untimed loop of calls: wall time / calls)",
            table(rows, |r| Some(r.avg_ns)),
        ),
        (
            "median ns per call, batches of 64 calls timed together (time of a batch / 64; \
             one timer pair per 64 calls)",
            table(rows, |r| r.batch_median_ns),
        ),
        (
            "median ns per call (each call timed; one timer pair inside every sample)",
            table(rows, |r| Some(r.median_ns as f64)),
        ),
        (
            "p99 ns per call, batches of 64 calls timed together (per call)",
            table(rows, |r| r.batch_p99_ns),
        ),
        (
            "p99 ns per call (each call timed)",
            table(rows, |r| Some(r.p99_ns as f64)),
        ),
        (
            "max ns per call (each call timed)",
            table(rows, |r| Some(r.max_ns as f64)),
        ),
        (
            "records dropped per round (ring or channel full; — = not counted by the system)",
            drops(rows),
        ),
    ]
}

fn drops(rows: &[LogRow]) -> Table {
    let sizes: Vec<usize> = SIZES
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.size == *s))
        .collect();
    let mut t = Table::new(
        std::iter::once("system".to_owned()).chain(sizes.iter().map(|s| format!("{s} B"))),
    );
    for sys in systems_of(rows) {
        t.row(std::iter::once(sys.clone()).chain(sizes.iter().map(|&s| {
            let d: Vec<u64> = rows
                .iter()
                .filter(|r| r.system == sys && r.size == s)
                .filter_map(|r| r.dropped)
                .collect();
            if d.is_empty() {
                "—".to_owned()
            } else {
                format!("{}", d.iter().max().copied().unwrap_or(0))
            }
        })));
    }
    t
}

/// The per-call cost targets for horus at 32 B (median over rounds): PASS/MISS, judged on the
/// per-call time net of the timer pair inside each sample (both shown).
pub fn targets(rows: &[LogRow]) -> Table {
    let mut t = Table::new(["target", "measured (raw)", "timer pair", "net", "verdict"]).left(4);
    let med = |f: Stat| {
        let mut v = values(rows, "horus", 32, f);
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let timer = med(|r| Some(r.timer_pair_ns)).unwrap_or(0.0);
    if let Some(b) = med(|r| r.batch_median_ns) {
        let share = timer / BATCH_CALLS as f64;
        let net = (b - share).max(0.0);
        t.row([
            "median per call at 32 B ≤ 25 ns (batches of 64 calls timed together)".to_owned(),
            format!("{b:.1} ns"),
            format!("{share:.1} ns"),
            format!("{net:.1} ns"),
            if net <= TARGET_MEDIAN_NS as f64 {
                "PASS"
            } else {
                "MISS"
            }
            .to_owned(),
        ]);
        if let Some(worst) = values(rows, "horus", 32, |r| r.batch_median_ns)
            .into_iter()
            .max_by(f64::total_cmp)
        {
            t.row([
                "the same, in the slowest round".to_owned(),
                format!("{worst:.1} ns"),
                format!("{share:.1} ns"),
                format!("{:.1} ns", (worst - share).max(0.0)),
                if worst - share <= TARGET_MEDIAN_NS as f64 {
                    "PASS"
                } else {
                    "MISS"
                }
                .to_owned(),
            ]);
        }
    }
    for (what, limit, got) in [
        (
            "median per call at 32 B ≤ 25 ns (each call timed)",
            TARGET_MEDIAN_NS,
            med(|r| Some(r.median_ns as f64)),
        ),
        (
            "p99 per call at 32 B ≤ 100 ns (each call timed)",
            TARGET_P99_NS,
            med(|r| Some(r.p99_ns as f64)),
        ),
    ] {
        match got {
            Some(g) => {
                let net = (g - timer).max(0.0);
                t.row([
                    what.to_owned(),
                    format!("{g:.0} ns"),
                    format!("{timer:.0} ns"),
                    format!("{net:.0} ns"),
                    if net <= limit as f64 { "PASS" } else { "MISS" }.to_owned(),
                ])
            }
            None => t.row([what.to_owned(), "not measured".to_owned()]),
        }
    }
    if let Some(avg) = med(|r| Some(r.avg_ns)) {
        t.row([
            "average per call at 32 B ≤ 25 ns (untimed loop; no timer inside)".to_owned(),
            format!("{avg:.0} ns"),
            "—".to_owned(),
            format!("{avg:.0} ns"),
            if avg <= TARGET_MEDIAN_NS as f64 {
                "PASS"
            } else {
                "MISS"
            }
            .to_owned(),
        ]);
    }
    t.note(
        "net = raw − the timer pair each sample contains (per call: one pair; in batches: one \
         pair per 64 calls); the lfence-ordered timer also stops the CPU from overlapping the \
         call with its neighbours, so the per-call figures are upper bounds; the untimed \
         average has no timer inside",
    );
    t
}

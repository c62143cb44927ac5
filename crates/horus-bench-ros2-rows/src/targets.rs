//! The `ros2` benchmark's two targets, judged from its rows and its failed measurements:
//! horus ↔ rclpy through the bridge never slower than rclpy ↔ rclpy (average round trip,
//! same round, same size), and zero loss under reliable QoS.
//!
//! A measurement that failed has no row (or a partial one), so it is judged from the run's
//! errors, each named by [`measurement`]: a comparison that could not be made is never a
//! pass, and a failed measurement is never zero loss.

use std::fmt::Write;

use crate::system::System;
use crate::table::{size_label, us, Row};

/// How a ping that gave up (round trips lost in a row) begins its error, after the
/// measurement's name.
pub const GAVE_UP: &str = "ping gave up after";

/// The name of one measurement, as the binary reports it and its errors begin:
/// `round R S B system` (`R` from 1).
pub fn measurement(round: usize, size: usize, system: System) -> String {
    format!("round {} {size} B {}", round + 1, system.name())
}

/// A failed measurement named in a run's errors (`<measurement>: <error>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// Round, from 0.
    pub round: usize,
    /// Size.
    pub size: usize,
    /// Which system.
    pub system: System,
}

impl Failed {
    /// The measurement an error names, `None` if it names none.
    pub fn parse(error: &str) -> Option<Failed> {
        let (name, _) = error.split_once(": ")?;
        let mut words = name.strip_prefix("round ")?.split(' ');
        let round: usize = words.next()?.parse().ok()?;
        let size: usize = words.next()?.parse().ok()?;
        if words.next()? != "B" {
            return None;
        }
        let system = System::parse(words.next()?).ok()?;
        if words.next().is_some() || round == 0 {
            return None;
        }
        Some(Failed {
            round: round - 1,
            size,
            system,
        })
    }
}

/// One comparison of the speed target: a bridged system's average round trip against rclpy
/// ↔ rclpy's in the same round at the same size.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Round, from 0.
    pub round: usize,
    /// Size.
    pub size: usize,
    /// The bridged system.
    pub system: System,
    /// Its average round trip, ns.
    pub bridged_mean_ns: f64,
    /// rclpy ↔ rclpy's, ns.
    pub rclpy_mean_ns: f64,
    /// Whether bridged ≤ rclpy.
    pub pass: bool,
}

/// Every comparison the rows allow.
pub fn comparisons(rows: &[Row]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.system.bridged()) {
        let Some(base) = rows
            .iter()
            .find(|b| b.system == System::RclpyRclpy && b.round == r.round && b.size == r.size)
        else {
            continue;
        };
        out.push(Comparison {
            round: r.round,
            size: r.size,
            system: r.system,
            bridged_mean_ns: r.summary.mean_ns,
            rclpy_mean_ns: base.summary.mean_ns,
            pass: r.summary.mean_ns <= base.summary.mean_ns,
        });
    }
    out
}

/// One target's verdict: its headline and what is listed under it (each missed comparison,
/// each failed measurement).
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Whether the target was met.
    pub pass: bool,
    /// The target, its verdict and its counts.
    pub headline: String,
    /// The misses and failures, one line each.
    pub details: Vec<String>,
}

/// Both targets of a run with these rows and these errors (`<measurement>: <error>` each).
pub fn verdicts(rows: &[Row], errors: &[String]) -> Vec<Verdict> {
    vec![speed(rows, errors), zero_loss(rows, errors)]
}

/// The verdicts as the binary prints them: `target: …` lines, each detail indented under
/// its target.
pub fn to_text(verdicts: &[Verdict]) -> String {
    let mut s = String::new();
    for v in verdicts {
        let _ = writeln!(s, "target: {}", v.headline);
        for d in &v.details {
            let _ = writeln!(s, "  {d}");
        }
    }
    s
}

/// The run's failed measurements, each once (the first error naming it), with what it is;
/// an error that names no measurement counts as one of its own.
fn failures(errors: &[String]) -> Vec<(Option<Failed>, &String)> {
    let mut out: Vec<(Option<Failed>, &String)> = Vec::new();
    for e in errors {
        let f = Failed::parse(e);
        if f.is_none() || !out.iter().any(|(g, _)| *g == f) {
            out.push((f, e));
        }
    }
    out
}

fn speed(rows: &[Row], errors: &[String]) -> Verdict {
    let checks = comparisons(rows);
    // A failed measurement of a bridged system or of rclpy ↔ rclpy is a comparison not made
    // (or made on the samples before it failed); an error naming no measurement may be one.
    let failed: Vec<(Option<Failed>, &String)> = failures(errors)
        .into_iter()
        .filter(|(f, _)| {
            f.as_ref()
                .is_none_or(|f| f.system.bridged() || f.system == System::RclpyRclpy)
        })
        .collect();
    let target = "horus ↔ rclpy through the bridge never slower (average round trip) than \
                  rclpy ↔ rclpy at any size, in every round";
    let bridged_in_run = rows.iter().any(|r| r.system.bridged())
        || failed
            .iter()
            .any(|(f, _)| f.as_ref().is_none_or(|f| f.system.bridged()));
    if !bridged_in_run {
        return Verdict {
            pass: false,
            headline: format!("{target}: not measured (no bridged system in this run)"),
            details: failed
                .iter()
                .map(|(_, e)| format!("failed measurement: {e}"))
                .collect(),
        };
    }
    let misses: Vec<&Comparison> = checks.iter().filter(|c| !c.pass).collect();
    let mut details: Vec<String> = misses
        .iter()
        .map(|m| {
            format!(
                "miss: round {} {} {}: {} µs vs rclpy {} µs",
                m.round + 1,
                size_label(m.size),
                m.system.label(),
                us(m.bridged_mean_ns),
                us(m.rclpy_mean_ns)
            )
        })
        .collect();
    details.extend(failed.iter().map(|(f, e)| {
        let partial = f.as_ref().is_some_and(|f| {
            rows.iter()
                .any(|r| r.round == f.round && r.size == f.size && r.system == f.system)
        });
        if partial {
            format!("compared on the round trips before it failed: {e}")
        } else {
            format!("not compared (measurement failed): {e}")
        }
    }));
    let pass = misses.is_empty() && failed.is_empty();
    let mut headline = format!(
        "{target}: {} ({} of {} comparisons pass",
        if pass { "PASS" } else { "MISS" },
        checks.len() - misses.len(),
        checks.len()
    );
    if !failed.is_empty() {
        let _ = write!(headline, "; {} measurements failed", failed.len());
    }
    headline.push(')');
    Verdict {
        pass,
        headline,
        details,
    }
}

fn zero_loss(rows: &[Row], errors: &[String]) -> Verdict {
    let lost: u64 = rows.iter().map(|r| r.lost).sum();
    let dropped: u64 = rows.iter().filter_map(|r| r.bridge_dropped).sum();
    let failed = failures(errors);
    // Measurements one of whose errors says the ping gave up.
    let gave_up = failed
        .iter()
        .filter(|(f, e)| match f {
            None => e.contains(GAVE_UP),
            Some(f) => errors
                .iter()
                .any(|x| x.contains(GAVE_UP) && Failed::parse(x).as_ref() == Some(f)),
        })
        .count();
    // A failed measurement did not show its messages all arrived: never zero loss.
    let pass = lost == 0 && dropped == 0 && failed.is_empty();
    Verdict {
        pass,
        headline: format!(
            "zero loss under reliable QoS: {} ({lost} round trips lost, {dropped} messages \
             dropped by the bridge, {} measurements failed, {gave_up} of them given up after \
             losses in a row)",
            if pass { "PASS" } else { "MISS" },
            failed.len()
        ),
        details: failed
            .iter()
            .map(|(_, e)| format!("failed measurement: {e}"))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_bench_core::stats::Summary;

    fn row(round: usize, system: System, mean: u64) -> Row {
        let summary = Summary::from_samples(vec![mean; 3], 3 * mean).unwrap();
        Row::new(round, system, 64, summary)
    }

    fn error(round: usize, system: System, what: &str) -> String {
        format!("{}: {what}", measurement(round, 64, system))
    }

    #[test]
    fn the_target_compares_within_a_round() {
        let rows = vec![
            row(0, System::RclpyRclpy, 1000),
            row(0, System::HorusToRclpy, 900),
            row(1, System::RclpyRclpy, 800),
            row(1, System::HorusToRclpy, 900),
        ];
        let checks = comparisons(&rows);
        assert_eq!(checks.len(), 2);
        assert!(checks[0].pass);
        assert!(!checks[1].pass);
        let v = verdicts(&rows, &[]);
        assert!(!v[0].pass);
        assert!(
            v[0].headline.ends_with("MISS (1 of 2 comparisons pass)"),
            "{}",
            v[0].headline
        );
        assert_eq!(
            v[0].details,
            vec![
                "miss: round 2 64 B horus Rust ping ↔ bridge ↔ rclpy pong: 0.9 µs vs rclpy 0.8 µs"
            ]
        );
        assert!(v[1].pass);
    }

    #[test]
    fn a_failed_bridged_measurement_is_a_comparison_not_made_and_not_zero_loss() {
        // Round 2's bridged measurement failed: no row, only its error.
        let rows = vec![
            row(0, System::RclpyRclpy, 1000),
            row(0, System::HorusToRclpy, 900),
            row(1, System::RclpyRclpy, 1000),
        ];
        let errors = vec![error(1, System::HorusToRclpy, "bridge child exited with 1")];
        let v = verdicts(&rows, &errors);
        assert!(!v[0].pass, "{}", v[0].headline);
        assert!(
            v[0].headline
                .ends_with("MISS (1 of 1 comparisons pass; 1 measurements failed)"),
            "{}",
            v[0].headline
        );
        assert_eq!(
            v[0].details,
            vec![format!("not compared (measurement failed): {}", errors[0])]
        );
        assert!(!v[1].pass);
        assert!(v[1]
            .headline
            .contains("1 measurements failed, 0 of them given up"));
    }

    #[test]
    fn a_failed_rclpy_measurement_voids_its_rounds_comparisons() {
        let rows = vec![row(0, System::HorusToRclpy, 900)];
        let errors = vec![error(
            0,
            System::RclpyRclpy,
            "no round trip completed (3 lost)",
        )];
        let v = verdicts(&rows, &errors);
        assert!(!v[0].pass);
        assert!(v[0]
            .headline
            .contains("0 of 0 comparisons pass; 1 measurements failed"));
    }

    #[test]
    fn a_failed_horus_only_measurement_leaves_the_speed_target_but_not_zero_loss() {
        let rows = vec![
            row(0, System::RclpyRclpy, 1000),
            row(0, System::RclpyToHorus, 900),
        ];
        let errors = vec![error(
            0,
            System::HorusPython,
            &format!("{GAVE_UP} 5 round trips lost in a row (5 lost, 0 completed)"),
        )];
        let v = verdicts(&rows, &errors);
        assert!(v[0].pass, "{}", v[0].headline);
        assert!(!v[1].pass);
        assert!(
            v[1].headline
                .contains("1 measurements failed, 1 of them given up after losses"),
            "{}",
            v[1].headline
        );
    }

    #[test]
    fn a_measurement_with_two_errors_counts_once() {
        let errors = vec![
            error(
                1,
                System::RclpyToHorus,
                &format!("{GAVE_UP} 5 round trips lost in a row"),
            ),
            error(1, System::RclpyToHorus, "no round trip completed (5 lost)"),
        ];
        let rows = vec![row(1, System::RclpyRclpy, 1000)];
        let v = verdicts(&rows, &errors);
        assert!(
            v[0].headline.ends_with("1 measurements failed)"),
            "{}",
            v[0].headline
        );
        assert_eq!(v[0].details.len(), 1, "{:?}", v[0].details);
        assert!(
            v[1].headline
                .contains("1 measurements failed, 1 of them given up"),
            "{}",
            v[1].headline
        );
        assert_eq!(v[1].details.len(), 1);
    }

    #[test]
    fn a_bridged_measurement_that_gave_up_after_some_round_trips_is_compared_and_listed() {
        let rows = vec![
            row(0, System::RclpyRclpy, 1000),
            row(0, System::HorusToRclpy, 900),
        ];
        let errors = vec![error(
            0,
            System::HorusToRclpy,
            &format!("{GAVE_UP} 5 round trips lost in a row (5 lost, 40 completed)"),
        )];
        let v = verdicts(&rows, &errors);
        assert!(!v[0].pass);
        assert!(
            v[0].headline
                .ends_with("MISS (1 of 1 comparisons pass; 1 measurements failed)"),
            "{}",
            v[0].headline
        );
        assert_eq!(
            v[0].details,
            vec![format!(
                "compared on the round trips before it failed: {}",
                errors[0]
            )]
        );
    }

    #[test]
    fn nothing_measured_is_no_pass() {
        let v = verdicts(&[row(0, System::HorusRust, 500)], &[]);
        assert!(!v[0].pass);
        assert!(v[0]
            .headline
            .ends_with("not measured (no bridged system in this run)"));
        assert!(v[1].pass);
    }

    #[test]
    fn failed_measurements_parse_back_from_their_errors() {
        let e = error(2, System::RclpyToHorus, "ping gave up: x: y");
        assert_eq!(
            Failed::parse(&e),
            Some(Failed {
                round: 2,
                size: 64,
                system: System::RclpyToHorus
            })
        );
        for bad in [
            "round 0 64 B rclpy-rclpy: x",
            "round 1 64 KiB rclpy-rclpy: x",
            "round 1 64 B zenoh: x",
            "round 1 64 B rclpy-rclpy extra: x",
            "skipped: rclpy",
        ] {
            assert_eq!(Failed::parse(bad), None, "{bad}");
        }
        // An error naming no measurement still counts against the speed target.
        let v = verdicts(
            &[
                row(0, System::RclpyRclpy, 1),
                row(0, System::HorusToRclpy, 1),
            ],
            &["setup: x".to_owned()],
        );
        assert!(!v[0].pass);
    }

    #[test]
    fn the_text_puts_each_detail_under_its_target() {
        let rows = vec![
            row(0, System::RclpyRclpy, 800),
            row(0, System::HorusToRclpy, 900),
        ];
        let text = to_text(&verdicts(&rows, &[]));
        assert!(
            text.starts_with("target: horus ↔ rclpy through the bridge"),
            "{text}"
        );
        assert!(text.contains("\n  miss: round 1 64 B"), "{text}");
        assert!(
            text.contains("\ntarget: zero loss under reliable QoS: PASS"),
            "{text}"
        );
    }
}

//! Ratios of median round trips, derived from the rows of one run.
//!
//! Each [`RatioDef`] divides the median RTT of one system by the median RTT of a
//! reference in the same pass (pinned or not) at the same size (or the reference's
//! size-independent row). A ratio whose rows are missing is reported as such, never
//! silently dropped, so "horus / floor" shows up as a placeholder until horus rows
//! exist.

use crate::harness::Mode;
use crate::report::{size, Kind, Row};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Picks round-trip rows by system name and (optionally) mode.
#[derive(Debug, Clone, Copy)]
pub struct Selector {
    /// Row system name.
    pub system: &'static str,
    /// Row mode, or any.
    pub mode: Option<Mode>,
}

impl Selector {
    const fn any(system: &'static str) -> Self {
        Self { system, mode: None }
    }

    const fn mode(system: &'static str, mode: Mode) -> Self {
        Self {
            system,
            mode: Some(mode),
        }
    }

    fn matches(&self, r: &Row) -> bool {
        r.kind == Kind::RoundTrip
            && r.system == self.system
            && self.mode.is_none_or(|m| m == r.mode)
            && r.rtt.is_some()
    }
}

/// One ratio: `numerator median / denominator median`.
#[derive(Debug, Clone, Copy)]
pub struct RatioDef {
    /// Printed label.
    pub label: &'static str,
    /// Measured system.
    pub numerator: Selector,
    /// Reference.
    pub denominator: Selector,
}

/// The ratios every run reports.
pub const RATIOS: &[RatioDef] = &[
    RatioDef {
        label: "horus(loan) / floor:cacheline",
        numerator: Selector::mode("horus", Mode::Loan),
        denominator: Selector::any("floor:cacheline"),
    },
    RatioDef {
        label: "horus(loan) / ref:touch",
        numerator: Selector::mode("horus", Mode::Loan),
        denominator: Selector::any("ref:touch"),
    },
    RatioDef {
        label: "horus(copy) / ref:copy",
        numerator: Selector::mode("horus", Mode::Copy),
        denominator: Selector::any("ref:copy"),
    },
    RatioDef {
        label: "horus(loan) / iceoryx2",
        numerator: Selector::mode("horus", Mode::Loan),
        denominator: Selector::any("iceoryx2"),
    },
    RatioDef {
        label: "iceoryx2 / floor:cacheline",
        numerator: Selector::any("iceoryx2"),
        denominator: Selector::any("floor:cacheline"),
    },
    RatioDef {
        label: "iceoryx2 / ref:touch",
        numerator: Selector::any("iceoryx2"),
        denominator: Selector::any("ref:touch"),
    },
    RatioDef {
        label: "uds / ref:wake",
        numerator: Selector::any("uds"),
        denominator: Selector::any("ref:wake"),
    },
    RatioDef {
        label: "uds / ref:copy",
        numerator: Selector::any("uds"),
        denominator: Selector::any("ref:copy"),
    },
];

/// One computed ratio (or the reason it could not be computed).
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// The definition's label.
    pub label: &'static str,
    /// Pass.
    pub pinned: bool,
    /// Message size; `None` for a placeholder.
    pub size: Option<usize>,
    /// `numerator median / denominator median`.
    pub value: Option<f64>,
    /// Why `value` is absent.
    pub missing: Option<String>,
}

/// Computes every [`RATIOS`] entry for every pass present in `rows`.
pub fn compute(rows: &[Row]) -> Vec<Ratio> {
    let passes: BTreeSet<bool> = rows.iter().map(|r| r.pinned).collect();
    let mut out = Vec::new();
    for &pinned in passes.iter().rev() {
        let in_pass: Vec<&Row> = rows.iter().filter(|r| r.pinned == pinned).collect();
        for def in RATIOS {
            let numerators: Vec<&&Row> = in_pass
                .iter()
                .filter(|r| def.numerator.matches(r))
                .collect();
            if numerators.is_empty() {
                out.push(Ratio {
                    label: def.label,
                    pinned,
                    size: None,
                    value: None,
                    missing: Some(format!("no {} rows", def.numerator.system)),
                });
                continue;
            }
            for num in numerators {
                let den = in_pass.iter().find(|r| {
                    def.denominator.matches(r) && (r.size.is_none() || r.size == num.size)
                });
                let median = |r: &Row| r.rtt.map_or(0, |s| s.median_ns) as f64;
                out.push(Ratio {
                    label: def.label,
                    pinned,
                    size: num.size,
                    value: den.map(|d| median(num) / median(d).max(1.0)),
                    missing: den
                        .is_none()
                        .then(|| format!("no {} row", def.denominator.system)),
                });
            }
        }
    }
    out
}

/// Renders ratios as one table per pass: a line per ratio, a column per size.
pub fn render(ratios: &[Ratio]) -> String {
    let sizes: BTreeSet<usize> = ratios.iter().filter_map(|r| r.size).collect();
    let mut out = String::new();
    for pinned in [true, false] {
        let in_pass: Vec<&Ratio> = ratios.iter().filter(|r| r.pinned == pinned).collect();
        if in_pass.is_empty() {
            continue;
        }
        let pass = if pinned { "pinned" } else { "unpinned" };
        let _ = write!(out, "ratios of median RTT ({pass})\n{:<30}", "");
        for &s in &sizes {
            let _ = write!(out, " {:>8}", size(s));
        }
        out.push('\n');
        let mut labels: Vec<&str> = in_pass.iter().map(|r| r.label).collect();
        labels.dedup();
        for label in labels {
            let _ = write!(out, "{label:<30}");
            let of_label: Vec<&&Ratio> = in_pass.iter().filter(|r| r.label == label).collect();
            if let Some(placeholder) = of_label.iter().find(|r| r.size.is_none()) {
                let why = placeholder.missing.as_deref().unwrap_or("-");
                let _ = writeln!(out, " n/a ({why})");
                continue;
            }
            for &s in &sizes {
                let cell = of_label.iter().find(|r| r.size == Some(s)).map_or_else(
                    || "-".to_owned(),
                    |r| r.value.map_or("n/a".into(), |v| format!("{v:.2}x")),
                );
                let _ = write!(out, " {cell:>8}");
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Touch;
    use crate::stats::Summary;

    fn row(system: &str, size: Option<usize>, median: u64) -> Row {
        let s = Summary::from_samples(vec![median], median).unwrap();
        Row::round_trip(system, size, Mode::Loan, Some(Touch::Full), true, s)
    }

    #[test]
    fn ratio_uses_same_size_or_size_independent_reference() {
        let rows = [
            row("floor:cacheline", None, 100),
            row("ref:touch", Some(16), 200),
            row("iceoryx2", Some(16), 1000),
        ];
        let r = compute(&rows);
        let get = |l: &str| r.iter().find(|x| x.label == l).unwrap().value;
        assert_eq!(get("iceoryx2 / floor:cacheline"), Some(10.0));
        assert_eq!(get("iceoryx2 / ref:touch"), Some(5.0));
    }

    #[test]
    fn missing_system_is_a_placeholder_not_an_omission() {
        let r = compute(&[row("floor:cacheline", None, 100)]);
        let horus = r
            .iter()
            .find(|x| x.label.starts_with("horus(loan) / floor:c"))
            .unwrap();
        assert_eq!(horus.value, None);
        assert!(render(&r).contains("n/a (no horus rows)"));
    }
}

//! How sizes and times are written in the benchmarks' tables.

/// `16`, `1480`, `64Ki`, `1Mi`.
pub fn size(bytes: usize) -> String {
    const KI: usize = 1024;
    match bytes {
        b if b >= KI * KI && b % (KI * KI) == 0 => format!("{}Mi", b / (KI * KI)),
        b if b >= 8 * KI && b % KI == 0 => format!("{}Ki", b / KI),
        b => b.to_string(),
    }
}

/// Nanoseconds with a unit and three significant digits.
pub fn ns(v: u64) -> String {
    let v = v as f64;
    match v {
        v if v < 1e3 => format!("{v:.0} ns"),
        v if v < 1e4 => format!("{:.2} µs", v / 1e3),
        v if v < 1e6 => format!("{:.1} µs", v / 1e3),
        v if v < 1e7 => format!("{:.2} ms", v / 1e6),
        v => format!("{:.1} ms", v / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(ns(123), "123 ns");
        assert_eq!(ns(1_234), "1.23 µs");
        assert_eq!(ns(123_456), "123.5 µs");
        assert_eq!(ns(2_500_000), "2.50 ms");
        assert_eq!(size(16), "16");
        assert_eq!(size(4096), "4096");
        assert_eq!(size(65536), "64Ki");
        assert_eq!(size(1 << 20), "1Mi");
    }
}

//! How figures are written in the monitor's cells.

use std::time::Duration;

/// Microseconds: one decimal under 100 µs, none above; `-` for none.
pub(crate) fn us(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() && v < 100.0 => format!("{v:.1}"),
        Some(v) if v.is_finite() => format!("{v:.0}"),
        _ => "-".into(),
    }
}

/// A duration in microseconds (see [`us`]).
pub(crate) fn dur_us(d: Duration) -> String {
    us(Some(d.as_secs_f64() * 1e6))
}

/// Messages per second: one decimal.
pub(crate) fn hz(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "-".into()
    }
}

/// Bytes per second, `-` for nothing.
pub(crate) fn bandwidth(v: f64) -> String {
    if v > 0.0 && v.is_finite() {
        crate::text::human_rate(v)
    } else {
        "-".into()
    }
}

/// The type's short name, without its package: `horus/Imu` → `Imu` (the detail view and
/// the JSON give it whole).
pub(crate) fn short_type(t: Option<&str>, schema: &str) -> String {
    match t {
        Some(t) => t.rsplit('/').next().unwrap_or(t).to_owned(),
        None => schema.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        assert_eq!(us(Some(12.345)), "12.3");
        assert_eq!(us(Some(1234.5)), "1234");
        assert_eq!(us(None), "-");
        assert_eq!(hz(999.96), "1000.0");
        assert_eq!(bandwidth(0.0), "-");
        assert_eq!(bandwidth(2048.0), "2.00 KiB/s");
        assert_eq!(short_type(Some("horus/Imu"), "x"), "Imu");
        assert_eq!(short_type(Some("me/Thing"), "x"), "Thing");
        assert_eq!(short_type(None, "raw"), "raw");
    }
}

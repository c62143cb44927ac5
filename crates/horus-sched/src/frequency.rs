//! Tick rates: [`Frequency`] and the `.hz()` extension on numbers.

use std::fmt;
use std::time::Duration;

/// A tick rate in hertz: finite and strictly positive.
///
/// Build one with `.hz()` on any integer or float (`1000_u64.hz()`, `2.5.hz()`)
/// or fallibly with [`Frequency::try_from_hz`].
#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub struct Frequency {
    hz: f64,
}

/// A rate that is zero, negative, NaN or infinite.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("invalid frequency {hz} Hz: a rate must be finite and greater than zero")]
pub struct InvalidFrequency {
    /// The rejected value.
    pub hz: f64,
}

impl Frequency {
    /// `hz` hertz, or an error if `hz` is not finite and positive.
    pub fn try_from_hz(hz: f64) -> Result<Frequency, InvalidFrequency> {
        // The period must also be representable as at least one nanosecond.
        if hz.is_finite() && hz > 0.0 && hz <= 1e9 {
            Ok(Frequency { hz })
        } else {
            Err(InvalidFrequency { hz })
        }
    }

    /// `hz` hertz.
    ///
    /// # Panics
    /// If `hz` is not finite, not positive, or above 1 GHz (like
    /// [`Duration::from_secs_f64`] panics on a negative value). Use
    /// [`Frequency::try_from_hz`] for untrusted input.
    pub fn from_hz(hz: f64) -> Frequency {
        match Frequency::try_from_hz(hz) {
            Ok(f) => f,
            Err(e) => panic!("{e}"),
        }
    }

    /// The frequency whose period is `period` (which must be non-zero).
    pub fn from_period(period: Duration) -> Result<Frequency, InvalidFrequency> {
        Frequency::try_from_hz(1.0 / period.as_secs_f64())
    }

    /// The rate in hertz.
    pub fn as_hz(self) -> f64 {
        self.hz
    }

    /// The period, rounded to the nearest nanosecond (at least 1 ns).
    pub fn period(self) -> Duration {
        Duration::from_nanos(self.period_ns())
    }

    /// The period in nanoseconds, rounded, at least 1.
    pub(crate) fn period_ns(self) -> u64 {
        ((1e9 / self.hz).round() as u64).max(1)
    }
}

impl fmt::Debug for Frequency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} Hz", self.hz)
    }
}

impl fmt::Display for Frequency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} Hz", self.hz)
    }
}

/// `.hz()` on numbers: `1000_u64.hz()`, `30.hz()`, `2.5.hz()`.
pub trait FrequencyExt {
    /// This number as a rate in hertz.
    ///
    /// # Panics
    /// If the value is zero, negative, NaN, infinite or above 1 GHz; see
    /// [`Frequency::from_hz`].
    fn hz(self) -> Frequency;
}

macro_rules! impl_hz {
    ($($t:ty),*) => {$(
        impl FrequencyExt for $t {
            fn hz(self) -> Frequency {
                Frequency::from_hz(self as f64)
            }
        }
    )*};
}

impl_hz!(u8, u16, u32, u64, usize, i32, i64, f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_of_common_rates() {
        assert_eq!(1000_u64.hz().period(), Duration::from_millis(1));
        assert_eq!(100.hz().period(), Duration::from_millis(10));
        assert_eq!(3.hz().period_ns(), 333_333_333);
        assert_eq!(2.5.hz().period(), Duration::from_millis(400));
    }

    #[test]
    fn invalid_rates_are_rejected() {
        assert!(Frequency::try_from_hz(0.0).is_err());
        assert!(Frequency::try_from_hz(-1.0).is_err());
        assert!(Frequency::try_from_hz(f64::NAN).is_err());
        assert!(Frequency::try_from_hz(f64::INFINITY).is_err());
        assert!(Frequency::from_period(Duration::ZERO).is_err());
    }

    #[test]
    #[should_panic(expected = "invalid frequency")]
    fn zero_hz_panics() {
        let _ = 0_u32.hz();
    }
}

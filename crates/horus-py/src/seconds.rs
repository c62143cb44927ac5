//! Seconds as Python gives them (a float) made durations and deadlines: the one place a
//! timeout or a duration argument is checked, so every endpoint accepts and refuses the
//! same values with the same message.
//!
//! A timeout of `inf` waits for ever, as `None` does where `None` is accepted
//! (`float('inf')` is how Python code spells "no limit": `threading.Event.wait`,
//! `queue.Queue.get` and `socket.settimeout` all take `None`, and `math.inf` is the number
//! that means it). NaN and negative numbers are a `ValueError` that says so.

use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::PyResult;

/// What a timeout of `inf` waits where the Rust call needs a [`Duration`]: longer than any
/// process runs (34 years), small enough that `Instant::now() + FOR_EVER`, its
/// nanoseconds as `u64` or `i64`, and a futex timespec cannot overflow.
pub(crate) const FOR_EVER: Duration = Duration::from_secs(1 << 30);

/// `t` seconds of a duration that must be finite (a budget, a retention):
/// `ValueError` naming `what` if `t` is NaN, negative or infinite. Beyond [`FOR_EVER`]
/// it is [`FOR_EVER`].
pub(crate) fn duration(what: &str, t: f64) -> PyResult<Duration> {
    if t == f64::INFINITY {
        return Err(PyValueError::new_err(format!(
            "{what} must be a finite number of seconds >= 0, not inf"
        )));
    }
    checked(what, t)
}

/// A timeout of `t` seconds where the Rust call needs a [`Duration`]: `inf` (or anything
/// beyond [`FOR_EVER`]) waits for ever; `ValueError` naming `what` if `t` is NaN or
/// negative.
pub(crate) fn timeout(what: &str, t: f64) -> PyResult<Duration> {
    checked(what, t)
}

/// A timeout where `None` waits for ever: `None` and `inf` are `None`; `ValueError`
/// naming `what` if `t` is NaN or negative.
pub(crate) fn optional(what: &str, t: Option<f64>) -> PyResult<Option<Duration>> {
    match t {
        None => Ok(None),
        Some(t) if t == f64::INFINITY => Ok(None),
        Some(t) => checked(what, t).map(Some),
    }
}

/// When a wait of [`optional`] `t` seconds from now ends (`None`: never).
pub(crate) fn deadline(what: &str, t: Option<f64>) -> PyResult<Option<Instant>> {
    Ok(optional(what, t)?.map(|d| Instant::now() + d))
}

/// Reads back a [`timeout`] as Python gave it: [`FOR_EVER`] is `inf`.
pub(crate) fn as_secs(d: Duration) -> f64 {
    if d >= FOR_EVER {
        f64::INFINITY
    } else {
        d.as_secs_f64()
    }
}

/// `t` >= 0 seconds, at most [`FOR_EVER`] (so that adding it to an `Instant` never
/// panics); `ValueError` naming `what` for NaN and negative numbers.
fn checked(what: &str, t: f64) -> PyResult<Duration> {
    if t.is_nan() || t < 0.0 {
        // As Python writes the float: `nan`, `-inf`, `-1.0`.
        let shown = if t.is_nan() {
            "nan".to_owned()
        } else {
            format!("{t:?}")
        };
        return Err(PyValueError::new_err(format!(
            "{what} must be a number of seconds >= 0, not {shown}"
        )));
    }
    Ok(Duration::try_from_secs_f64(t).map_or(FOR_EVER, |d| d.min(FOR_EVER)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inf_waits_for_ever_and_nan_or_negative_is_refused() {
        assert_eq!(optional("t", Some(f64::INFINITY)).unwrap(), None);
        assert_eq!(optional("t", None).unwrap(), None);
        assert_eq!(timeout("t", f64::INFINITY).unwrap(), FOR_EVER);
        assert_eq!(timeout("t", 1.5).unwrap(), Duration::from_millis(1500));
        assert_eq!(as_secs(FOR_EVER), f64::INFINITY);
        assert!(Instant::now().checked_add(FOR_EVER).is_some());
        assert!(u64::try_from(FOR_EVER.as_nanos()).is_ok());
        for bad in [f64::NAN, -1.0, f64::NEG_INFINITY] {
            assert!(timeout("t", bad).is_err());
            assert!(optional("t", Some(bad)).is_err());
            assert!(duration("t", bad).is_err());
        }
        assert!(duration("t", f64::INFINITY).is_err());
        assert_eq!(timeout("t", 1e300).unwrap(), FOR_EVER);
        assert_eq!(optional("t", Some(1e18)).unwrap(), Some(FOR_EVER));
        assert!(deadline("t", Some(1e18)).unwrap().is_some());
    }
}

//! The tf frames of the namespace for the monitor's tf view: the survey `horus tf frames`
//! makes (a [`SurveyReader`] observing `tf` and `tf_static`), kept running for the
//! monitor's whole life, with each dynamic frame marked stale when it stops being updated.

use std::time::{Duration, Instant};

use horus_tf::{SeenFrame, SurveyReader};
use serde_json::{json, Value};

/// A dynamic frame is stale when nothing of it was received for longer than this many of
/// its periods…
pub(crate) const STALE_PERIODS: f64 = 5.0;
/// …and longer than this (a fast frame's jitter is not staleness; a frame seen once has no
/// period, so this alone).
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(1);

/// How long after its last transform a dynamic frame at `rate_hz` becomes stale.
pub(crate) fn stale_limit(rate_hz: Option<f64>) -> Duration {
    let periods = rate_hz
        .filter(|r| r.is_finite() && *r > 0.0)
        .and_then(|r| Duration::try_from_secs_f64(STALE_PERIODS / r).ok());
    periods.map_or(STALE_AFTER, |p| p.max(STALE_AFTER))
}

/// Whether `f` is a dynamic frame that stopped being updated (statics never are).
pub(crate) fn is_stale(f: &SeenFrame) -> bool {
    !f.is_static && f.since_received > stale_limit(f.rate_hz)
}

/// The frames at one refresh.
#[derive(Clone, Debug, Default)]
pub(crate) struct TfFrames {
    /// Every frame seen since the monitor started, by name.
    pub(crate) frames: Vec<SeenFrame>,
    /// Frames that are only parents.
    pub(crate) roots: Vec<String>,
    /// Messages overwritten before the monitor read them (both topics).
    pub(crate) missed: u64,
    /// Messages that were not `TFMessage`s.
    pub(crate) undecodable: u64,
    /// Transforms of frames past the survey's limit, not kept.
    pub(crate) frames_dropped: u64,
    /// Why the topics cannot be observed, if they cannot.
    pub(crate) error: Option<String>,
}

impl TfFrames {
    /// What `reader` has seen, as of `now`.
    pub(crate) fn of(reader: &SurveyReader, error: Option<String>, now: Instant) -> TfFrames {
        let s = reader.survey();
        TfFrames {
            frames: s.frames(now),
            roots: s.roots(),
            missed: reader.missed(),
            undecodable: s.undecodable(),
            frames_dropped: s.frames_dropped(),
            error,
        }
    }

    /// Stale dynamic frames.
    pub(crate) fn stale(&self) -> usize {
        self.frames.iter().filter(|f| is_stale(f)).count()
    }

    /// As JSON (`horus monitor --once --json`'s `tf`): `horus tf frames --json`'s frame
    /// fields plus `stale`.
    pub(crate) fn to_json(&self) -> Value {
        let frames: Vec<Value> = self
            .frames
            .iter()
            .map(|f| {
                json!({
                    "frame": f.frame,
                    "parent": f.parent,
                    "static": f.is_static,
                    "transforms": f.transforms,
                    "rate_hz": f.rate_hz,
                    "last_stamp_ns": f.last_stamp_ns,
                    "age_s": f.since_received.as_secs_f64(),
                    "stale": is_stale(f),
                    "publisher_pid": f.publisher_pid,
                    "publisher": f.publisher_name,
                })
            })
            .collect();
        json!({
            "roots": self.roots,
            "frames": frames,
            "missed": self.missed,
            "undecodable": self.undecodable,
            "frames_dropped": self.frames_dropped,
            "error": self.error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dynamic(rate_hz: Option<f64>, since: Duration) -> SeenFrame {
        SeenFrame {
            frame: "base_link".into(),
            parent: "odom".into(),
            is_static: false,
            transforms: 10,
            rate_hz,
            last_stamp_ns: 0,
            since_received: since,
            publisher_pid: None,
            publisher_name: None,
        }
    }

    #[test]
    fn a_dynamic_frame_is_stale_after_five_periods_and_at_least_a_second() {
        let ms = Duration::from_millis;
        // 100 Hz: five periods are 50 ms, under the floor of 1 s.
        assert!(!is_stale(&dynamic(Some(100.0), ms(900))));
        assert!(is_stale(&dynamic(Some(100.0), ms(1100))));
        // 0.5 Hz: five periods are 10 s.
        assert!(!is_stale(&dynamic(Some(0.5), ms(9000))));
        assert!(is_stale(&dynamic(Some(0.5), ms(10_100))));
        // Seen once (no rate): the floor.
        assert!(is_stale(&dynamic(None, ms(1100))));
        // Nonsense rates fall back to the floor instead of panicking.
        assert_eq!(stale_limit(Some(f64::NAN)), STALE_AFTER);
        assert_eq!(stale_limit(Some(0.0)), STALE_AFTER);
        assert_eq!(stale_limit(Some(1e-300)), STALE_AFTER);
        // A static frame is never stale.
        let mut s = dynamic(None, Duration::from_secs(3600));
        s.is_static = true;
        assert!(!is_stale(&s));
    }
}

//! Restart policy: whether a process that ended is started again, and after how long.

use std::process::ExitStatus;
use std::time::Duration;

use std::os::unix::process::ExitStatusExt;

/// When a process is started again after it ends (while the launch is not shutting down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Never.
    Never,
    /// When it exits non-zero or is killed by a signal, at most `max` times.
    OnFailure {
        /// Most restarts.
        max: u32,
        /// Delay before each restart.
        backoff: Backoff,
    },
    /// Whenever it ends, at most `max` times (`None`: without limit).
    Always {
        /// Most restarts (`None`: without limit).
        max: Option<u32>,
        /// Delay before each restart.
        backoff: Backoff,
    },
}

/// Delay before restart `n` (0-based): `initial × 2ⁿ`, at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Delay before the first restart.
    pub initial: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl Backoff {
    /// Delay before the restart that follows `done` earlier restarts.
    pub(crate) fn delay(&self, done: u32) -> Duration {
        let factor = 1u32.checked_shl(done.min(31)).unwrap_or(u32::MAX);
        self.initial.saturating_mul(factor).min(self.max)
    }
}

/// What to do with a process that just ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Start it again after this delay.
    Restart(Duration),
    /// Leave it ended: the policy does not restart it.
    Stay,
    /// Leave it ended: it would be restarted, but has used all its restarts.
    Exhausted,
}

/// Whether `status` is a failure: a non-zero exit or death by a signal.
pub(crate) fn failed(status: ExitStatus) -> bool {
    !status.success() || status.signal().is_some()
}

impl Policy {
    /// What to do after the process ended with `status`, having been restarted `done`
    /// times already.
    pub(crate) fn decide(&self, status: ExitStatus, done: u32) -> Decision {
        let (max, backoff) = match *self {
            Policy::Never => return Decision::Stay,
            Policy::OnFailure { .. } if !failed(status) => return Decision::Stay,
            Policy::OnFailure { max, backoff } => (Some(max), backoff),
            Policy::Always { max, backoff } => (max, backoff),
        };
        if max.is_some_and(|m| done >= m) {
            Decision::Exhausted
        } else {
            Decision::Restart(backoff.delay(done))
        }
    }

    /// How it is shown: `never`, `on-failure (max 5)`, `always`.
    pub fn describe(&self) -> String {
        match self {
            Policy::Never => "never".into(),
            Policy::OnFailure { max, .. } => format!("on-failure (max {max})"),
            Policy::Always { max: Some(m), .. } => format!("always (max {m})"),
            Policy::Always { max: None, .. } => "always".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    const B: Backoff = Backoff {
        initial: Duration::from_millis(100),
        max: Duration::from_millis(1000),
    };

    #[test]
    fn backoff_doubles_up_to_its_maximum() {
        let d: Vec<u128> = (0..6).map(|n| B.delay(n).as_millis()).collect();
        assert_eq!(d, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(B.delay(u32::MAX), B.max);
    }

    #[test]
    fn policies_decide() {
        let on_failure = Policy::OnFailure { max: 2, backoff: B };
        assert_eq!(on_failure.decide(exit(0), 0), Decision::Stay);
        assert_eq!(
            on_failure.decide(exit(1), 1),
            Decision::Restart(Duration::from_millis(200))
        );
        assert_eq!(on_failure.decide(exit(1), 2), Decision::Exhausted);
        // Killed by SIGSEGV: a failure.
        assert!(matches!(
            on_failure.decide(ExitStatus::from_raw(11), 0),
            Decision::Restart(_)
        ));
        let always = Policy::Always {
            max: None,
            backoff: B,
        };
        assert!(matches!(always.decide(exit(0), 1000), Decision::Restart(_)));
        assert_eq!(Policy::Never.decide(exit(3), 0), Decision::Stay);
    }
}

//! Time stamps and the common message header.
//!
//! horus represents time everywhere as **unsigned nanoseconds since the UNIX epoch** in a `u64`
//! (good until the year 2554). Standard messages carry it inline as `stamp_ns`; [`Time`] is the
//! same value as a message of its own.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::fixed_str::{self, FixedStrError};

crate::message! {
    /// A point in time: nanoseconds since the UNIX epoch (1970-01-01T00:00:00Z).
    ///
    /// Unsigned and 64-bit, like every `stamp_ns` field in the standard messages. Under a
    /// simulated clock the epoch is whatever the simulation says it is.
    pub struct Time: "horus/Time", version 1 {
        /// Nanoseconds since the UNIX epoch.
        pub nanos: u64,
    }
}

impl Time {
    /// The epoch itself.
    pub const ZERO: Self = Self { nanos: 0 };

    /// A time from nanoseconds since the UNIX epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self { nanos }
    }

    /// The current wall-clock time. Times before the epoch read as [`Time::ZERO`]; times past
    /// the year 2554 saturate at `u64::MAX`.
    pub fn now() -> Self {
        Self::from_system_time(SystemTime::now())
    }

    /// Convert a [`SystemTime`], clamping to the representable range.
    pub fn from_system_time(t: SystemTime) -> Self {
        let since = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        Self {
            nanos: u64::try_from(since.as_nanos()).unwrap_or(u64::MAX),
        }
    }

    /// This time as a [`Duration`] since the UNIX epoch.
    pub const fn as_duration(self) -> Duration {
        Duration::from_nanos(self.nanos)
    }

    /// This time as seconds since the UNIX epoch (loses sub-microsecond precision today).
    pub fn as_secs_f64(self) -> f64 {
        self.as_duration().as_secs_f64()
    }
}

/// Capacity of [`Header::frame_id`], in bytes.
pub const FRAME_ID_LEN: usize = 32;

crate::message! {
    /// Common header: when a measurement was taken, a sequence number and its coordinate frame.
    pub struct Header: "horus/Header", version 1 {
        /// Time the data was acquired, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Sequence number set by the publisher, incremented per message.
        pub seq: u32,
        /// Reserved; keeps `frame_id` 8-byte aligned. Write zero.
        pub _pad: u32,
        /// Coordinate frame name, UTF-8, NUL-padded to [`FRAME_ID_LEN`] bytes (a name of exactly
        /// 32 bytes has no terminator). Use [`Header::frame_id_str`] / [`Header::set_frame_id`].
        pub frame_id: [u8; 32],
    }
}

impl Header {
    /// A header with the given stamp and frame, sequence number 0.
    ///
    /// # Errors
    /// As [`Header::set_frame_id`].
    pub fn new(stamp_ns: u64, frame_id: &str) -> Result<Self, FixedStrError> {
        let mut h = Self {
            stamp_ns,
            seq: 0,
            _pad: 0,
            frame_id: [0; FRAME_ID_LEN],
        };
        h.set_frame_id(frame_id)?;
        Ok(h)
    }

    /// The frame name.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] if the stored bytes are not UTF-8 (a misbehaving peer).
    pub fn frame_id_str(&self) -> Result<&str, FixedStrError> {
        fixed_str::read(&self.frame_id)
    }

    /// Store `frame_id`, NUL-padding the rest. On error the header is unchanged.
    ///
    /// # Errors
    /// [`FixedStrError::TooLong`] if longer than [`FRAME_ID_LEN`] bytes,
    /// [`FixedStrError::InteriorNul`] if it contains a NUL byte.
    pub fn set_frame_id(&mut self, frame_id: &str) -> Result<(), FixedStrError> {
        fixed_str::write(&mut self.frame_id, frame_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_frame_id_round_trip() {
        let mut h = Header::new(42, "base_link").unwrap();
        assert_eq!(h.frame_id_str(), Ok("base_link"));
        h.set_frame_id("odom").unwrap();
        assert_eq!(h.frame_id_str(), Ok("odom"));
        assert_eq!(h.frame_id[4..], [0u8; 28]);
    }

    #[test]
    fn header_rejects_long_frame_id_and_keeps_old_one() {
        let mut h = Header::new(0, "map").unwrap();
        let long = "x".repeat(33);
        assert_eq!(
            h.set_frame_id(&long),
            Err(FixedStrError::TooLong {
                len: 33,
                capacity: 32
            })
        );
        assert_eq!(h.frame_id_str(), Ok("map"));
        assert!(h.set_frame_id(&"y".repeat(32)).is_ok());
    }

    #[test]
    fn time_conversions() {
        let t = Time::from_nanos(1_500_000_000);
        assert_eq!(t.as_duration(), Duration::from_millis(1500));
        assert_eq!(t.as_secs_f64(), 1.5);
        let before = UNIX_EPOCH - Duration::from_secs(1);
        assert_eq!(Time::from_system_time(before), Time::ZERO);
        assert!(Time::now().nanos > 1_600_000_000_000_000_000);
    }
}

//! Actuation commands and safety: [`CmdVel`] and [`EmergencyStop`].

use crate::fixed_str::{self, FixedStrError};

crate::message! {
    /// Velocity command for a differential-drive (or any planar) base. 16 bytes.
    pub struct CmdVel: "horus/CmdVel", version 1 {
        /// Time the command was issued, ns since the UNIX epoch. Drivers should ignore commands
        /// older than their command timeout.
        pub stamp_ns: u64,
        /// Forward speed, m/s (negative: reverse).
        pub linear: f32,
        /// Turn rate about +z, rad/s (positive: counter-clockwise).
        pub angular: f32,
    }
}

impl CmdVel {
    /// Stop: zero speed, stamp 0.
    pub const STOP: Self = Self::new(0, 0.0, 0.0);

    /// A command from its components.
    pub const fn new(stamp_ns: u64, linear: f32, angular: f32) -> Self {
        Self {
            stamp_ns,
            linear,
            angular,
        }
    }
}

/// Capacity of [`EmergencyStop::source`], in bytes.
pub const ESTOP_SOURCE_LEN: usize = 32;

crate::message! {
    /// Emergency stop: every actuator driver that sees `engaged != 0` must enter its safe state
    /// and stay there until it sees a release (`engaged == 0`) from the same source.
    pub struct EmergencyStop: "horus/EmergencyStop", version 1 {
        /// Time the stop was raised or released, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Why: one of the `EmergencyStop::REASON_*` codes. Unknown codes must be treated as
        /// [`EmergencyStop::REASON_UNSPECIFIED`], never ignored.
        pub reason: u32,
        /// Nonzero: stop engaged. Zero: released. Any nonzero value means engaged.
        pub engaged: u32,
        /// Name of the node that raised it, UTF-8, NUL-padded to [`ESTOP_SOURCE_LEN`] bytes.
        /// Use [`EmergencyStop::source_str`] / [`EmergencyStop::set_source`].
        pub source: [u8; 32],
    }
}

impl EmergencyStop {
    /// No reason given (also what unknown codes mean).
    pub const REASON_UNSPECIFIED: u32 = 0;
    /// A person pressed a stop button.
    pub const REASON_MANUAL: u32 = 1;
    /// Software decided to stop (planner, supervisor …).
    pub const REASON_SOFTWARE: u32 = 2;
    /// A watchdog expired or a node missed its deadline.
    pub const REASON_WATCHDOG: u32 = 3;
    /// Imminent or detected collision.
    pub const REASON_COLLISION: u32 = 4;
    /// Battery too low to continue safely.
    pub const REASON_LOW_BATTERY: u32 = 5;
    /// A hardware fault (motor driver, sensor …).
    pub const REASON_HARDWARE_FAULT: u32 = 6;
    /// Lost contact with the operator or a required peer.
    pub const REASON_COMMUNICATION_LOST: u32 = 7;

    /// An engaged stop from `source`.
    ///
    /// # Errors
    /// As [`EmergencyStop::set_source`].
    pub fn engage(stamp_ns: u64, reason: u32, source: &str) -> Result<Self, FixedStrError> {
        let mut m = Self {
            stamp_ns,
            reason,
            engaged: 1,
            source: [0; ESTOP_SOURCE_LEN],
        };
        m.set_source(source)?;
        Ok(m)
    }

    /// A release from `source`.
    ///
    /// # Errors
    /// As [`EmergencyStop::set_source`].
    pub fn release(stamp_ns: u64, source: &str) -> Result<Self, FixedStrError> {
        let mut m = Self::engage(stamp_ns, Self::REASON_UNSPECIFIED, source)?;
        m.engaged = 0;
        Ok(m)
    }

    /// Whether this message asserts the stop.
    pub const fn is_engaged(&self) -> bool {
        self.engaged != 0
    }

    /// Name of the node that raised the stop.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] if the stored bytes are not UTF-8.
    pub fn source_str(&self) -> Result<&str, FixedStrError> {
        fixed_str::read(&self.source)
    }

    /// Store the source node name. On error the message is unchanged.
    ///
    /// # Errors
    /// [`FixedStrError::TooLong`] beyond [`ESTOP_SOURCE_LEN`] bytes,
    /// [`FixedStrError::InteriorNul`] if `source` contains a NUL byte.
    pub fn set_source(&mut self, source: &str) -> Result<(), FixedStrError> {
        fixed_str::write(&mut self.source, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engage_and_release() {
        let e = EmergencyStop::engage(5, EmergencyStop::REASON_WATCHDOG, "safety_node").unwrap();
        assert!(e.is_engaged());
        assert_eq!(e.source_str(), Ok("safety_node"));
        let r = EmergencyStop::release(6, "safety_node").unwrap();
        assert!(!r.is_engaged());
        let any_nonzero = EmergencyStop { engaged: 7, ..r };
        assert!(any_nonzero.is_engaged());
    }

    #[test]
    fn source_too_long() {
        let name = "n".repeat(ESTOP_SOURCE_LEN + 1);
        assert!(matches!(
            EmergencyStop::engage(0, 0, &name),
            Err(FixedStrError::TooLong { capacity: 32, .. })
        ));
    }
}

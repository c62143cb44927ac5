//! Battery monitoring: [`BatteryState`].
//!
//! Fields and status codes follow ROS `sensor_msgs/BatteryState`, so bridges can map them 1:1.
//! Quantities that a battery does not report are `NaN`.

/// Capacity of [`BatteryState::cell_voltage`].
pub const BATTERY_MAX_CELLS: usize = 12;

crate::message! {
    /// State of one battery pack. 104 bytes.
    pub struct BatteryState: "horus/BatteryState", version 1 {
        /// Time of the reading, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Pack voltage, V.
        pub voltage: f32,
        /// Current, A; negative while discharging.
        pub current: f32,
        /// Remaining charge, Ah.
        pub charge: f32,
        /// Capacity when last fully charged, Ah.
        pub capacity: f32,
        /// Capacity as designed, Ah.
        pub design_capacity: f32,
        /// Charge fraction, `0.0 ..= 1.0`.
        pub percentage: f32,
        /// Pack temperature, °C.
        pub temperature: f32,
        /// Number of cells in series; only the first `cell_count` entries of `cell_voltage`
        /// are meaningful (see [`BatteryState::cell_voltages`]).
        pub cell_count: u32,
        /// One of the `BatteryState::STATUS_*` codes.
        pub status: u32,
        /// One of the `BatteryState::HEALTH_*` codes.
        pub health: u32,
        /// One of the `BatteryState::TECHNOLOGY_*` codes.
        pub technology: u32,
        /// Per-cell voltage, V; `NaN` if a cell is not measured.
        pub cell_voltage: [f32; 12],
        /// Nonzero if a battery is present in the slot.
        pub present: u32,
    }
}

impl BatteryState {
    /// Charging state not known.
    pub const STATUS_UNKNOWN: u32 = 0;
    /// Charging.
    pub const STATUS_CHARGING: u32 = 1;
    /// Discharging.
    pub const STATUS_DISCHARGING: u32 = 2;
    /// Connected to a charger but not charging.
    pub const STATUS_NOT_CHARGING: u32 = 3;
    /// Fully charged.
    pub const STATUS_FULL: u32 = 4;

    /// Health not known.
    pub const HEALTH_UNKNOWN: u32 = 0;
    /// Healthy.
    pub const HEALTH_GOOD: u32 = 1;
    /// Too hot.
    pub const HEALTH_OVERHEAT: u32 = 2;
    /// Dead.
    pub const HEALTH_DEAD: u32 = 3;
    /// Over voltage.
    pub const HEALTH_OVERVOLTAGE: u32 = 4;
    /// Failed for an unspecified reason.
    pub const HEALTH_UNSPEC_FAILURE: u32 = 5;
    /// Too cold.
    pub const HEALTH_COLD: u32 = 6;
    /// The pack's watchdog timer expired.
    pub const HEALTH_WATCHDOG_TIMER_EXPIRE: u32 = 7;
    /// The pack's safety timer expired.
    pub const HEALTH_SAFETY_TIMER_EXPIRE: u32 = 8;

    /// Chemistry not known.
    pub const TECHNOLOGY_UNKNOWN: u32 = 0;
    /// Nickel-metal hydride.
    pub const TECHNOLOGY_NIMH: u32 = 1;
    /// Lithium-ion.
    pub const TECHNOLOGY_LION: u32 = 2;
    /// Lithium-polymer.
    pub const TECHNOLOGY_LIPO: u32 = 3;
    /// Lithium iron phosphate.
    pub const TECHNOLOGY_LIFE: u32 = 4;
    /// Nickel-cadmium.
    pub const TECHNOLOGY_NICD: u32 = 5;
    /// Lithium manganese.
    pub const TECHNOLOGY_LIMN: u32 = 6;

    /// The meaningful cell voltages (`cell_count` clamped to [`BATTERY_MAX_CELLS`], since the
    /// count may come from a misbehaving peer).
    pub fn cell_voltages(&self) -> &[f32] {
        let n = (self.cell_count as usize).min(BATTERY_MAX_CELLS);
        &self.cell_voltage[..n]
    }

    /// Whether a battery is present.
    pub const fn is_present(&self) -> bool {
        self.present != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;

    #[test]
    fn cell_voltages_clamped() {
        let mut b = BatteryState::zeroed();
        b.cell_count = 4;
        b.cell_voltage[..4].copy_from_slice(&[3.7, 3.8, 3.7, 3.9]);
        assert_eq!(b.cell_voltages(), &[3.7, 3.8, 3.7, 3.9]);
        b.cell_count = 1000;
        assert_eq!(b.cell_voltages().len(), BATTERY_MAX_CELLS);
        assert!(!b.is_present());
    }
}

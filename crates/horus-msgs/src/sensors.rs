//! Fixed-size sensor readings: [`Imu`] and [`LaserScan`].

crate::message! {
    /// Inertial measurement. 304 bytes.
    ///
    /// Covariances are row-major 3×3 matrices packed one after another in
    /// [`covariance`](Imu::covariance): orientation (about x, y, z), angular velocity, linear
    /// acceleration. As in ROS, a covariance whose element `[0]` is `-1` means "this quantity is
    /// not provided"; all zeros means "unknown".
    pub struct Imu: "horus/Imu", version 1 {
        /// Time of the measurement, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Orientation as a quaternion `[x, y, z, w]`.
        pub orientation: [f64; 4],
        /// Angular velocity about x, y, z, rad/s.
        pub angular_velocity: [f64; 3],
        /// Linear acceleration along x, y, z, m/s² (including gravity).
        pub linear_acceleration: [f64; 3],
        /// Three row-major 3×3 covariances: orientation, angular velocity, linear acceleration.
        pub covariance: [f64; 27],
    }
}

impl Imu {
    /// Index in [`covariance`](Imu::covariance) where the orientation block starts.
    pub const ORIENTATION_COV: usize = 0;
    /// Index in [`covariance`](Imu::covariance) where the angular-velocity block starts.
    pub const ANGULAR_VELOCITY_COV: usize = 9;
    /// Index in [`covariance`](Imu::covariance) where the linear-acceleration block starts.
    pub const LINEAR_ACCELERATION_COV: usize = 18;

    fn block(&self, i: usize) -> &[f64; 9] {
        &self.covariance.as_chunks::<9>().0[i]
    }

    /// Orientation covariance, row-major 3×3.
    pub fn orientation_covariance(&self) -> &[f64; 9] {
        self.block(0)
    }

    /// Angular-velocity covariance, row-major 3×3.
    pub fn angular_velocity_covariance(&self) -> &[f64; 9] {
        self.block(1)
    }

    /// Linear-acceleration covariance, row-major 3×3.
    pub fn linear_acceleration_covariance(&self) -> &[f64; 9] {
        self.block(2)
    }
}

/// Capacity of [`LaserScan::ranges`].
pub const LASER_SCAN_MAX_RANGES: usize = 360;

crate::message! {
    /// One sweep of a planar range finder, up to 360 beams. 1,480 bytes.
    ///
    /// Beam `i` points at `angle_min + i * angle_increment` and was measured
    /// `i * time_increment` after `stamp_ns`. Only the first
    /// [`num_ranges`](LaserScan::num_ranges) entries of `ranges` are meaningful; use
    /// [`LaserScan::valid_ranges`], which also clamps a corrupt count.
    pub struct LaserScan: "horus/LaserScan", version 1 {
        /// Time of the first beam, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Angle of the first beam, rad.
        pub angle_min: f32,
        /// Angle of the last beam, rad.
        pub angle_max: f32,
        /// Angle between beams, rad.
        pub angle_increment: f32,
        /// Time between beams, s.
        pub time_increment: f32,
        /// Time between sweeps, s.
        pub scan_time: f32,
        /// Minimum valid range, m.
        pub range_min: f32,
        /// Maximum valid range, m.
        pub range_max: f32,
        /// Number of meaningful entries at the start of `ranges` (at most 360).
        pub num_ranges: u32,
        /// Measured ranges, m. Values outside `[range_min, range_max]` are invalid readings
        /// (`inf`: nothing within range, `NaN`: no return).
        pub ranges: [f32; 360],
    }
}

impl LaserScan {
    /// Number of meaningful ranges, clamped to the capacity (the count may come from a
    /// misbehaving peer).
    pub fn len(&self) -> usize {
        (self.num_ranges as usize).min(LASER_SCAN_MAX_RANGES)
    }

    /// Whether the scan has no meaningful ranges.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The meaningful ranges.
    pub fn valid_ranges(&self) -> &[f32] {
        &self.ranges[..self.len()]
    }

    /// Angle of beam `i`, rad.
    pub fn angle_of(&self, i: usize) -> f32 {
        self.angle_min + i as f32 * self.angle_increment
    }

    /// Whether `range` is a valid reading for this scanner.
    pub fn is_valid_range(&self, range: f32) -> bool {
        range >= self.range_min && range <= self.range_max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;

    #[test]
    fn imu_covariance_blocks() {
        let mut imu = Imu::zeroed();
        for (i, c) in imu.covariance.iter_mut().enumerate() {
            *c = i as f64;
        }
        assert_eq!(imu.orientation_covariance()[0], 0.0);
        assert_eq!(imu.angular_velocity_covariance()[0], 9.0);
        assert_eq!(imu.linear_acceleration_covariance()[8], 26.0);
    }

    #[test]
    fn laser_scan_clamps_corrupt_count() {
        let mut scan = LaserScan::zeroed();
        assert!(scan.is_empty());
        scan.num_ranges = 10;
        assert_eq!(scan.valid_ranges().len(), 10);
        scan.num_ranges = u32::MAX;
        assert_eq!(scan.valid_ranges().len(), LASER_SCAN_MAX_RANGES);
    }

    #[test]
    fn laser_scan_angles() {
        let scan = LaserScan {
            angle_min: -1.0,
            angle_increment: 0.5,
            range_min: 0.1,
            range_max: 10.0,
            ..LaserScan::zeroed()
        };
        assert_eq!(scan.angle_of(4), 1.0);
        assert!(scan.is_valid_range(5.0));
        assert!(!scan.is_valid_range(f32::INFINITY));
        assert!(!scan.is_valid_range(f32::NAN));
    }
}

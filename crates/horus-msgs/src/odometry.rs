//! Estimated motion of a robot: [`Odometry`].

use crate::fixed_str::{self, FixedStrError};
use crate::geometry::{Pose, Twist};

/// Capacity of [`Odometry::frame_id`] and [`Odometry::child_frame_id`], in bytes.
pub const ODOM_FRAME_ID_LEN: usize = 24;

crate::message! {
    /// Pose and velocity estimate with uncertainty. 736 bytes.
    ///
    /// `pose` is the pose of `child_frame_id` (usually `base_link`) expressed in `frame_id`
    /// (usually `odom`); `twist` is the velocity of `child_frame_id` expressed in
    /// `child_frame_id`. Covariances are row-major 6×6 over `(x, y, z, rot_x, rot_y, rot_z)`.
    pub struct Odometry: "horus/Odometry", version 1 {
        /// Time of the estimate, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Parent frame of `pose`, UTF-8, NUL-padded to [`ODOM_FRAME_ID_LEN`] bytes.
        pub frame_id: [u8; 24],
        /// Frame whose pose and velocity are estimated, UTF-8, NUL-padded to
        /// [`ODOM_FRAME_ID_LEN`] bytes.
        pub child_frame_id: [u8; 24],
        /// Pose of `child_frame_id` in `frame_id`.
        pub pose: Pose,
        /// Velocity of `child_frame_id`, expressed in `child_frame_id`.
        pub twist: Twist,
        /// Row-major 6×6 covariance of `pose`.
        pub pose_covariance: [f64; 36],
        /// Row-major 6×6 covariance of `twist`.
        pub twist_covariance: [f64; 36],
    }
}

impl Odometry {
    /// Parent frame name.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] if the stored bytes are not UTF-8.
    pub fn frame_id_str(&self) -> Result<&str, FixedStrError> {
        fixed_str::read(&self.frame_id)
    }

    /// Store the parent frame name. On error the message is unchanged.
    ///
    /// # Errors
    /// [`FixedStrError::TooLong`] beyond [`ODOM_FRAME_ID_LEN`] bytes,
    /// [`FixedStrError::InteriorNul`] if the name contains a NUL byte.
    pub fn set_frame_id(&mut self, frame_id: &str) -> Result<(), FixedStrError> {
        fixed_str::write(&mut self.frame_id, frame_id)
    }

    /// Child frame name.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] if the stored bytes are not UTF-8.
    pub fn child_frame_id_str(&self) -> Result<&str, FixedStrError> {
        fixed_str::read(&self.child_frame_id)
    }

    /// Store the child frame name. On error the message is unchanged.
    ///
    /// # Errors
    /// As [`Odometry::set_frame_id`].
    pub fn set_child_frame_id(&mut self, child_frame_id: &str) -> Result<(), FixedStrError> {
        fixed_str::write(&mut self.child_frame_id, child_frame_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;

    #[test]
    fn frame_names() {
        let mut o = Odometry::zeroed();
        o.set_frame_id("odom").unwrap();
        o.set_child_frame_id("base_link").unwrap();
        assert_eq!(o.frame_id_str(), Ok("odom"));
        assert_eq!(o.child_frame_id_str(), Ok("base_link"));
        assert!(o.set_frame_id(&"f".repeat(25)).is_err());
        assert_eq!(o.frame_id_str(), Ok("odom"));
    }
}

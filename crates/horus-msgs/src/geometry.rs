//! Geometry primitives: vectors, orientations, poses and velocities.
//!
//! Conventions follow REP 103: SI units (metres, radians, seconds), right-handed frames,
//! x forward, y left, z up.

crate::message! {
    /// A 3-D vector (position in m, velocity in m/s, … depending on use).
    pub struct Vector3: "horus/Vector3", version 1 {
        /// X component.
        pub x: f64,
        /// Y component.
        pub y: f64,
        /// Z component.
        pub z: f64,
    }
}

impl Vector3 {
    /// The zero vector.
    pub const ZERO: Self = Self::new(0.0, 0.0, 0.0);

    /// A vector from its components.
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Self { x, y, z }
    }

    /// Euclidean length.
    pub fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y + self.z * self.z).sqrt()
    }
}

crate::message! {
    /// An orientation as a unit quaternion, stored `x, y, z, w` (vector part first, as in ROS).
    pub struct Quaternion: "horus/Quaternion", version 1 {
        /// X of the vector part.
        pub x: f64,
        /// Y of the vector part.
        pub y: f64,
        /// Z of the vector part.
        pub z: f64,
        /// Scalar part.
        pub w: f64,
    }
}

impl Quaternion {
    /// No rotation. Note that a zeroed `Quaternion` is *not* a valid rotation; start from this.
    pub const IDENTITY: Self = Self::new(0.0, 0.0, 0.0, 1.0);

    /// A quaternion from its components (not normalised).
    pub const fn new(x: f64, y: f64, z: f64, w: f64) -> Self {
        Self { x, y, z, w }
    }

    /// Rotation of `yaw` radians about +z.
    pub fn from_yaw(yaw: f64) -> Self {
        let (s, c) = (yaw / 2.0).sin_cos();
        Self::new(0.0, 0.0, s, c)
    }

    /// Rotation about +z (heading), in radians in `(-π, π]`.
    pub fn yaw(&self) -> f64 {
        let siny_cosp = 2.0 * (self.w * self.z + self.x * self.y);
        let cosy_cosp = 1.0 - 2.0 * (self.y * self.y + self.z * self.z);
        siny_cosp.atan2(cosy_cosp)
    }

    /// Euclidean norm; 1 for a valid rotation.
    pub fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y + self.z * self.z + self.w * self.w).sqrt()
    }
}

crate::message! {
    /// A pose in the plane.
    pub struct Pose2D: "horus/Pose2D", version 1 {
        /// X position, m.
        pub x: f64,
        /// Y position, m.
        pub y: f64,
        /// Heading about +z, rad.
        pub theta: f64,
    }
}

impl Pose2D {
    /// A planar pose from its components.
    pub const fn new(x: f64, y: f64, theta: f64) -> Self {
        Self { x, y, theta }
    }
}

crate::message! {
    /// A pose in 3-D: position and orientation.
    pub struct Pose: "horus/Pose", version 1 {
        /// Position, m.
        pub position: Vector3,
        /// Orientation.
        pub orientation: Quaternion,
    }
}

impl Pose {
    /// At the origin, not rotated.
    pub const IDENTITY: Self = Self {
        position: Vector3::ZERO,
        orientation: Quaternion::IDENTITY,
    };

    /// The 3-D pose lying in the plane that corresponds to `p`.
    pub fn from_pose2d(p: Pose2D) -> Self {
        Self {
            position: Vector3::new(p.x, p.y, 0.0),
            orientation: Quaternion::from_yaw(p.theta),
        }
    }
}

crate::message! {
    /// A velocity in 3-D: linear and angular parts.
    pub struct Twist: "horus/Twist", version 1 {
        /// Linear velocity, m/s.
        pub linear: Vector3,
        /// Angular velocity about each axis, rad/s.
        pub angular: Vector3,
    }
}

impl Twist {
    /// At rest.
    pub const ZERO: Self = Self {
        linear: Vector3::ZERO,
        angular: Vector3::ZERO,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaw_round_trip() {
        for yaw in [-3.0, -1.0, 0.0, 0.5, 3.0] {
            let q = Quaternion::from_yaw(yaw);
            assert!((q.yaw() - yaw).abs() < 1e-12);
            assert!((q.norm() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn pose_from_pose2d() {
        let p = Pose::from_pose2d(Pose2D::new(1.0, 2.0, 0.25));
        assert_eq!(p.position, Vector3::new(1.0, 2.0, 0.0));
        assert!((p.orientation.yaw() - 0.25).abs() < 1e-12);
        assert_eq!(Pose::IDENTITY.orientation.yaw(), 0.0);
    }
}

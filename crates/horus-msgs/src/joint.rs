//! Joint positions, velocities and efforts: [`JointState`], fixed capacity of 16 joints.

use core::fmt;

use crate::fixed_str::{self, FixedStrError};

/// Maximum number of joints in one [`JointState`].
pub const JOINT_STATE_CAPACITY: usize = 16;
/// Capacity of one joint name in [`JointState::names`], in bytes.
pub const JOINT_NAME_LEN: usize = 32;

crate::message! {
    /// State of up to [`JOINT_STATE_CAPACITY`] (16) joints. 912 bytes.
    ///
    /// Joint `i < count` has name `names[i]`, position `position[i]` (rad or m), velocity
    /// `velocity[i]` (rad/s or m/s) and effort `effort[i]` (N·m or N). Entries at and beyond
    /// `count` are ignored. Use [`JointState::push`] to fill and [`JointState::len`] /
    /// [`JointState::name`] to read: they clamp a corrupt `count`.
    pub struct JointState: "horus/JointState", version 1 {
        /// Time of the reading, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Number of meaningful joints (at most 16).
        pub count: u32,
        /// Reserved; keeps the arrays 8-byte aligned. Write zero.
        pub _pad: u32,
        /// Joint names, each UTF-8 NUL-padded to [`JOINT_NAME_LEN`] bytes.
        pub names: [[u8; 32]; 16],
        /// Joint positions, rad (revolute) or m (prismatic).
        pub position: [f64; 16],
        /// Joint velocities, rad/s or m/s.
        pub velocity: [f64; 16],
        /// Joint efforts, N·m or N.
        pub effort: [f64; 16],
    }
}

/// Error adding a joint to a [`JointState`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointStateError {
    /// All [`JOINT_STATE_CAPACITY`] slots are used.
    Full,
    /// The joint name does not fit or contains a NUL byte.
    Name(FixedStrError),
}

impl fmt::Display for JointStateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => write!(f, "joint state is full ({JOINT_STATE_CAPACITY} joints)"),
            Self::Name(e) => write!(f, "invalid joint name: {e}"),
        }
    }
}

impl std::error::Error for JointStateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Full => None,
            Self::Name(e) => Some(e),
        }
    }
}

impl JointState {
    /// Number of meaningful joints, clamped to [`JOINT_STATE_CAPACITY`].
    pub fn len(&self) -> usize {
        (self.count as usize).min(JOINT_STATE_CAPACITY)
    }

    /// Whether there are no joints.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Append a joint. On error the message is unchanged.
    ///
    /// # Errors
    /// [`JointStateError::Full`] when all slots are used, [`JointStateError::Name`] when the
    /// name is longer than [`JOINT_NAME_LEN`] bytes or contains a NUL byte.
    pub fn push(
        &mut self,
        name: &str,
        position: f64,
        velocity: f64,
        effort: f64,
    ) -> Result<(), JointStateError> {
        let i = self.len();
        if i == JOINT_STATE_CAPACITY {
            return Err(JointStateError::Full);
        }
        fixed_str::write(&mut self.names[i], name).map_err(JointStateError::Name)?;
        self.position[i] = position;
        self.velocity[i] = velocity;
        self.effort[i] = effort;
        self.count = i as u32 + 1;
        Ok(())
    }

    /// Name of joint `i`, or `None` if `i >= len()`.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] inside the `Some` if the stored bytes are not UTF-8.
    pub fn name(&self, i: usize) -> Option<Result<&str, FixedStrError>> {
        (i < self.len()).then(|| fixed_str::read(&self.names[i]))
    }

    /// Index of the joint called `name`, if present.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        (0..self.len()).find(|&i| fixed_str::read(&self.names[i]) == Ok(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;

    #[test]
    fn push_and_lookup() {
        let mut js = JointState::zeroed();
        js.push("left_wheel", 1.0, 2.0, 3.0).unwrap();
        js.push("right_wheel", 4.0, 5.0, 6.0).unwrap();
        assert_eq!(js.len(), 2);
        assert_eq!(js.name(1), Some(Ok("right_wheel")));
        assert_eq!(js.name(2), None);
        assert_eq!(js.index_of("right_wheel"), Some(1));
        assert_eq!(js.position[1], 4.0);
    }

    #[test]
    fn full_and_bad_names() {
        let mut js = JointState::zeroed();
        for i in 0..JOINT_STATE_CAPACITY {
            js.push(&format!("j{i}"), 0.0, 0.0, 0.0).unwrap();
        }
        assert_eq!(js.push("extra", 0.0, 0.0, 0.0), Err(JointStateError::Full));

        let mut js = JointState::zeroed();
        let long = "n".repeat(JOINT_NAME_LEN + 1);
        assert!(matches!(
            js.push(&long, 0.0, 0.0, 0.0),
            Err(JointStateError::Name(FixedStrError::TooLong { .. }))
        ));
        assert!(js.is_empty());
    }

    #[test]
    fn corrupt_count_is_clamped() {
        let js = JointState {
            count: u32::MAX,
            ..JointState::zeroed()
        };
        assert_eq!(js.len(), JOINT_STATE_CAPACITY);
        assert_eq!(js.name(15), Some(Ok("")));
    }
}

//! The systems compared: which program runs each end, and whether the bridge is between.

/// The program at one end of a ping-pong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// An rclpy node (ROS 2 kilted wheels, rmw_fastrtps_cpp) through `scripts/ros2-python`.
    Rclpy,
    /// `horus.RosTopic` in the repository's `.venv` Python.
    HorusPython,
    /// `horus::Topic<Ros<UInt8MultiArray>>` in this binary.
    HorusRust,
}

impl End {
    /// Whether the end speaks DDS (needs the ROS 2 venv).
    pub fn is_ros(self) -> bool {
        self == End::Rclpy
    }
}

/// A name that is no [`System::name`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown system {0:?} (one of rclpy-rclpy, horus-python, horus-rust, horus-to-rclpy, rclpy-to-horus)")]
pub struct UnknownSystem(pub String);

/// One ping-pong setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    /// rclpy ping ↔ rclpy pong over Fast DDS.
    RclpyRclpy,
    /// horus Python ping ↔ horus Python pong over shared memory.
    HorusPython,
    /// horus Rust ping ↔ horus Rust pong over shared memory.
    HorusRust,
    /// horus Rust ping → bridge → rclpy pong → bridge → horus Rust ping.
    HorusToRclpy,
    /// rclpy ping → bridge → horus Rust pong → bridge → rclpy ping.
    RclpyToHorus,
}

impl System {
    /// Every system, in table order.
    pub const ALL: [System; 5] = [
        System::RclpyRclpy,
        System::HorusPython,
        System::HorusRust,
        System::HorusToRclpy,
        System::RclpyToHorus,
    ];

    /// Command-line and JSON name.
    pub fn name(self) -> &'static str {
        match self {
            System::RclpyRclpy => "rclpy-rclpy",
            System::HorusPython => "horus-python",
            System::HorusRust => "horus-rust",
            System::HorusToRclpy => "horus-to-rclpy",
            System::RclpyToHorus => "rclpy-to-horus",
        }
    }

    /// Label in tables.
    pub fn label(self) -> &'static str {
        match self {
            System::RclpyRclpy => "rclpy ↔ rclpy (Fast DDS)",
            System::HorusPython => "horus Python ↔ horus Python",
            System::HorusRust => "horus Rust ↔ horus Rust",
            System::HorusToRclpy => "horus Rust ping ↔ bridge ↔ rclpy pong",
            System::RclpyToHorus => "rclpy ping ↔ bridge ↔ horus Rust pong",
        }
    }

    /// Parses [`System::name`].
    pub fn parse(s: &str) -> Result<System, UnknownSystem> {
        System::ALL
            .into_iter()
            .find(|x| x.name() == s.trim())
            .ok_or_else(|| UnknownSystem(s.to_owned()))
    }

    /// The (ping, pong) ends.
    pub fn ends(self) -> (End, End) {
        match self {
            System::RclpyRclpy => (End::Rclpy, End::Rclpy),
            System::HorusPython => (End::HorusPython, End::HorusPython),
            System::HorusRust => (End::HorusRust, End::HorusRust),
            System::HorusToRclpy => (End::HorusRust, End::Rclpy),
            System::RclpyToHorus => (End::Rclpy, End::HorusRust),
        }
    }

    /// Whether the bridge runs between the ends.
    pub fn bridged(self) -> bool {
        matches!(self, System::HorusToRclpy | System::RclpyToHorus)
    }

    /// Whether an rclpy end is involved (needs the ROS 2 venv).
    pub fn needs_ros(self) -> bool {
        let (a, b) = self.ends();
        a.is_ros() || b.is_ros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for s in System::ALL {
            assert_eq!(System::parse(s.name()).unwrap(), s);
        }
        let e = System::parse("zenoh").unwrap_err();
        for s in System::ALL {
            assert!(
                e.to_string().contains(s.name()),
                "{e} does not name {}",
                s.name()
            );
        }
    }
}

//! Names on both sides: horus topic `demo/scan` ↔ ROS 2 topic `/demo/scan` ↔ DDS topic
//! `rt/demo/scan`, and ROS 2 type `pkg/msg/Type` ↔ DDS type `pkg::msg::dds_::Type_`.
//!
//! A horus namespace (`HORUS_NAMESPACE`) is a separate world of topics; it is not part of
//! the ROS 2 name. ROS 2 namespaces are the leading parts of the name: the ROS 2 node
//! `/robot1/lidar` publishing `scan` in namespace `/robot1` is topic `/robot1/scan`, horus
//! topic `robot1/scan`.

/// The DDS topic prefix rmw puts before a ROS 2 topic name (`rt` + the name).
const TOPIC_PREFIX: &str = "rt";

/// Why a name has no counterpart on the other side.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// A horus topic name that is not a valid ROS 2 name (ROS 2 allows only
    /// `[A-Za-z0-9_]` parts, not starting with a digit, separated by single `/`).
    #[error("horus topic {0:?} has no ROS 2 name: ROS 2 names are parts of [A-Za-z0-9_], not starting with a digit, separated by '/'")]
    NotRos(String),
    /// A DDS topic that is not a ROS 2 topic (no `rt/` prefix) or whose name horus cannot
    /// carry.
    #[error("DDS topic {0:?} is not a ROS 2 topic horus can carry")]
    NotRosTopic(String),
    /// A DDS type name that is not a ROS 2 interface type (`pkg::msg::dds_::Type_`).
    #[error("DDS type {0:?} is not a ROS 2 message type (pkg::msg::dds_::Type_)")]
    NotRosType(String),
}

/// Whether `name` (without leading `/`) is made of valid ROS 2 name tokens.
fn is_ros_relative(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= horus_shm::name::MAX_TOPIC_NAME
        && name.split('/').all(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                }
                _ => false,
            }
        })
}

/// The ROS 2 name of horus topic `horus` (`demo/scan` → `/demo/scan`).
pub fn ros_topic_name(horus: &str) -> Result<String, NameError> {
    let trimmed = horus.trim_matches('/');
    if !is_ros_relative(trimmed) {
        return Err(NameError::NotRos(horus.to_owned()));
    }
    Ok(format!("/{trimmed}"))
}

/// The DDS topic name of horus topic `horus` (`demo/scan` → `rt/demo/scan`).
pub fn dds_topic_name(horus: &str) -> Result<String, NameError> {
    Ok(format!("{TOPIC_PREFIX}{}", ros_topic_name(horus)?))
}

/// The horus topic of DDS topic `dds` (`rt/demo/scan` → `demo/scan`).
pub fn horus_topic_of_dds(dds: &str) -> Result<String, NameError> {
    dds.strip_prefix(TOPIC_PREFIX)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| is_ros_relative(rest))
        .map(str::to_owned)
        .ok_or_else(|| NameError::NotRosTopic(dds.to_owned()))
}

/// The DDS type name of ROS 2 type `ros` (`sensor_msgs/msg/LaserScan` →
/// `sensor_msgs::msg::dds_::LaserScan_`). `None` for a name that is not `pkg/kind/Type`.
pub fn dds_type_name(ros: &str) -> Option<String> {
    let mut parts = ros.split('/');
    let (pkg, kind, ty) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || [pkg, kind, ty].iter().any(|p| p.is_empty()) {
        return None;
    }
    Some(format!("{pkg}::{kind}::dds_::{ty}_"))
}

/// The ROS 2 type of DDS type `dds` (`sensor_msgs::msg::dds_::LaserScan_` →
/// `sensor_msgs/msg/LaserScan`).
pub fn ros_type_name(dds: &str) -> Result<String, NameError> {
    let bad = || NameError::NotRosType(dds.to_owned());
    let mut parts = dds.split("::");
    let (pkg, kind, dds_, ty) = (
        parts.next().ok_or_else(bad)?,
        parts.next().ok_or_else(bad)?,
        parts.next().ok_or_else(bad)?,
        parts.next().ok_or_else(bad)?,
    );
    let ty = ty.strip_suffix('_').ok_or_else(bad)?;
    if parts.next().is_some() || dds_ != "dds_" || [pkg, kind, ty].iter().any(|p| p.is_empty()) {
        return Err(bad());
    }
    Ok(format!("{pkg}/{kind}/{ty}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_map_both_ways() {
        assert_eq!(ros_topic_name("demo/scan").unwrap(), "/demo/scan");
        assert_eq!(dds_topic_name("/tf_static").unwrap(), "rt/tf_static");
        assert_eq!(horus_topic_of_dds("rt/demo/scan").unwrap(), "demo/scan");
        for bad in ["demo.scan", "demo-scan", "1scan", "a//b", ""] {
            assert!(ros_topic_name(bad).is_err(), "{bad}");
        }
        for bad in [
            "rq/add_two_intsRequest",
            "rt",
            "rt/",
            "rtx/a",
            "rt/a//b",
            "chatter",
        ] {
            assert!(horus_topic_of_dds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn type_names_map_both_ways() {
        let d = dds_type_name("sensor_msgs/msg/LaserScan").unwrap();
        assert_eq!(d, "sensor_msgs::msg::dds_::LaserScan_");
        assert_eq!(ros_type_name(&d).unwrap(), "sensor_msgs/msg/LaserScan");
        assert!(dds_type_name("LaserScan").is_none());
        for bad in [
            "a::b::c::D",
            "a::msg::dds_::D",
            "a::msg::dds_::_",
            "x",
            "a::b::dds_::C_::d",
        ] {
            assert!(ros_type_name(bad).is_err(), "{bad}");
        }
    }
}
